"""The limit flags, declared once for every command that takes them. A match's (`arena
match`, `arena play`, `arena submit`'s smoke match) show their default; a tournament's and
a league's (`arena run`, `arena league`) override the file's `[limits]` table. None is a
flag not given; arena.limits checks the values (`limits_from_flags`, the file's loader)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from typer.core import TyperCommand

from arena.limits import Limits, help_of

_LIMITS = Limits()  # the defaults shown in --help (one definition: arena.limits.Limits)

# A match's limit flags (and `arena submit`'s smoke match's).
DecisionFlag = Annotated[
    Optional[float], typer.Option(help=f"Seconds per decision before the time bank is used (default {_LIMITS.decision_s:g}).")
]
TimeBankFlag = Annotated[
    Optional[float],
    typer.Option(help=f"Extra seconds per bot for the whole match, spent on overruns (default {_LIMITS.time_bank_s:g})."),
]
StartupFlag = Annotated[
    Optional[float], typer.Option(help=f"Seconds from start to the bot's `ready` (default {_LIMITS.startup_s:g}).")
]
MemoryFlag = Annotated[Optional[int], typer.Option(help=f"Memory limit per bot, in MB (default {_LIMITS.memory_mb}).")]

# A tournament's and a league's: each overrides its file's value.
FileDecisionFlag = Annotated[Optional[float], typer.Option(help="Seconds per decision.")]
FileTimeBankFlag = Annotated[Optional[float], typer.Option(help="Time bank per bot per game, seconds.")]
FileStartupFlag = Annotated[Optional[float], typer.Option(help="Seconds from start to `ready`.")]
FileMemoryFlag = Annotated[Optional[int], typer.Option(help="Memory per bot, MB.")]
FileCpuFlag = Annotated[Optional[int], typer.Option(help=help_of("cpu_s"))]  # what cpu_s means: arena.limits


# How bots' processes live, in a tournament and a league alike (arena/config/: each kind's
# default is its own, said here).
BotProcessFlag = Annotated[
    Optional[str],
    typer.Option(
        "--bot-process",
        help="per-game: a fresh process per bot per game; per-slot: one process per bot slot for the whole "
        "run, so a bot may carry memory between games (default: a tournament's per-slot for local, per-game "
        "for docker; a league's per-game).",
    ),
]
# The docker sandbox's runtime (arena match, run, league, submit; a file's `runtime`).
RuntimeFlag = Annotated[
    Optional[str],
    typer.Option(
        "--runtime",
        help="With --sandbox docker: runc (the host's kernel) or runsc (gVisor's: a second kernel between "
        "the bots and the host, slower; .ci/docker-up installs it). Default: $ARENA_DOCKER_RUNTIME, else runc.",
    ),
]
WarmStartFlag = Annotated[
    Optional[bool],
    typer.Option(
        "--warm-start/--no-warm-start",
        help="Start bot processes (docker: containers) ahead of need; --no-warm-start starts each one when "
        "its game needs it (default: on in a tournament, off in a league).",
    ),
]


def sandbox_settings(sandbox: str, runtime: str | None) -> dict[str, Any]:
    """The sandbox's settings for --runtime (a match's, a submission's); UsageError if
    --runtime is given for another sandbox than docker."""
    if runtime is None:
        return {}
    if sandbox != "docker":
        from arena.cli.console import UsageError

        raise UsageError(f"--runtime {runtime} is a setting of --sandbox docker, not of --sandbox {sandbox}")
    return {"runtime": runtime}


def overrides_of(settings: dict[str, Any], limits: dict[str, Any]) -> dict[str, Any]:
    """What a tournament's or a league's flags override in its file: the settings given (not
    None), and the limits given as its `limits` table."""
    overrides = {key: value for key, value in settings.items() if value is not None}
    limits = {key: value for key, value in limits.items() if value is not None}
    if limits:
        overrides["limits"] = limits
    return overrides


class SeveralAfterOneFlag(TyperCommand):
    """A command whose list flags (SEVERAL) take every word after them up to the next flag,
    as the README writes them: `--bots a b c` is `--bots a --bots b --bots c` (a shell's
    glob gives several words). A word that names an existing file is not taken (a bot is a
    folder or a glob): `arena run --bots a b ladder.toml` still reads ladder.toml."""

    SEVERAL = ("--bots", "--bot", "--challenger")

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, several_after_one(args, self.SEVERAL))


def several_after_one(args: list[str], flags: tuple[str, ...]) -> list[str]:
    """`args` with each flag of `flags` repeated before every further word it takes."""
    spread: list[str] = []
    taking: str | None = None  # the list flag whose words these are
    taken = 0
    for number, word in enumerate(args):
        if word == "--":
            spread.extend(args[number:])
            break
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            taking = name if name in flags else None
            taken = 1 if "=" in word else 0
            spread.append(word)
            continue
        if taking is not None and not Path(word).is_file():
            if taken:
                spread.append(taking)
            taken += 1
        else:
            taking = None
        spread.append(word)
    return spread
