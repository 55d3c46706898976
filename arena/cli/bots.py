"""A bot's way in: `arena new` (a starter kit), `arena submit` (checked into a registry, or
a served arena's) and `arena bots` (a registry's list)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli.console import UsageError, console, say
from arena.cli.flags import DecisionFlag, MemoryFlag, RuntimeFlag, StartupFlag, TimeBankFlag, sandbox_settings
from arena.cli.tables import compact_table, fitting
from arena.cli.langs import new_command


def new_bot_command(
    bot_dir: Annotated[str, typer.Argument(help="The new bot's folder (made; must not hold anything).")],
    language: Annotated[str, typer.Option(
        "--language", "-l", help="c, cpp, rust, go, java, node (or javascript) or python.")] = "python",
) -> None:
    """Start a bot in BOT_DIR from arena's starter kit for LANGUAGE.

    The kit is a complete bot for both games (the protocol, JSON, a legal random move,
    Three Thirteen's deadwood), one function for your strategy and a README; its
    `bot.toml` is named after BOT_DIR."""
    new_command(bot_dir, language)


def submit_command(
    bot_dir: Annotated[Path, typer.Argument(help="The bot's folder (with its bot.toml).")],
    registry: Annotated[
        Optional[Path],
        typer.Option(help="Registry folder (default: $ARENA_REGISTRY, else ./bots in the current folder, made if missing)."),
    ] = None,
    sandbox: Annotated[str, typer.Option(help="local or docker (builds the bot's image if it has a Dockerfile).")] = "local",
    decision_s: DecisionFlag = None,
    time_bank_s: TimeBankFlag = None,
    startup_s: StartupFlag = None,
    memory_mb: MemoryFlag = None,
    runtime: RuntimeFlag = None,
    tournament: Annotated[
        Optional[Path], typer.Option(help="Take the limits and sandbox from this tournament file instead.")
    ] = None,
    league: Annotated[
        Optional[Path],
        typer.Option(
            help="A league's folder: submit to its registry with its limits and sandbox, then say where the bot "
            "stands there (games, provisional rank and interval, settled or not)."
        ),
    ] = None,
    wait_s: Annotated[
        float, typer.Option(help="With --league: seconds to wait for the bot's first games before saying where it stands.")
    ] = 30.0,
    max_bot_mb: Annotated[
        Optional[int], typer.Option(help="Most MB a bot folder may hold in all (default: $ARENA_BOT_MAX_MB, else 200).")
    ] = None,
    max_bot_files: Annotated[
        Optional[int],
        typer.Option(help="Most files and folders in a bot folder (default: $ARENA_BOT_MAX_FILES, else 10000)."),
    ] = None,
    max_file_mb: Annotated[
        Optional[int], typer.Option(help="Most MB of one file of a bot (default: $ARENA_BOT_MAX_FILE_MB, else 50).")
    ] = None,
    to: Annotated[
        Optional[str],
        typer.Option(
            help="A served arena's address (https://...): upload the bot there instead, follow its checks and "
            "print each stage; exit 0 accepted, 1 refused, 2 usage or connection error. The token comes from "
            "$ARENA_TOKEN or --token-file; with --to, --league (any value) says where it stands there."
        ),
    ] = None,
    token_file: Annotated[Optional[Path], typer.Option(help="With --to: a file holding your token.")] = None,
) -> None:
    """Check a bot (its folder, bot.toml, sandbox, a smoke match against random) and copy it
    into the registry. The folder may hold only files and folders (no link of any kind, no
    device, fifo or socket), within the size limits; as root, it is read with its owner's
    rights. With --to URL the same checks run on a served arena instead (`arena serve
    --submissions`): ARENA_TOKEN=... arena submit my-bot --to https://arena.example.org"""
    if to is not None:
        from arena.web.client import read_token, submit_remote

        raise typer.Exit(
            submit_remote(bot_dir, to, read_token(token_file), say=say, league=league is not None, wait_s=wait_s)
        )
    from arena.botcopy import FolderLimits
    from arena.limits import limits_from_flags
    from arena.registry.submit import submit_bot
    from arena.play.tournament import load_tournament

    folder_limits = FolderLimits.from_env(total_mb=max_bot_mb, files=max_bot_files, file_mb=max_file_mb)
    limits = limits_from_flags(decision_s=decision_s, time_bank_s=time_bank_s, startup_s=startup_s, memory_mb=memory_mb)
    # A tournament's or a league's file sets the limits and the sandbox instead (a league's, its registry too).
    config = load_tournament(tournament) if tournament is not None else None
    if league is not None:
        from arena.config.league_file import load_league

        config = load_league(league)
        registry = registry or config.registry_dir()
    if config is not None:
        limits, sandbox = config.limits.limits(), config.sandbox
        runtime = runtime or config.runtime
    settings = sandbox_settings(sandbox, runtime)
    done = submit_bot(bot_dir, registry, sandbox=sandbox, limits=limits, folder_limits=folder_limits, **settings)
    smoke = ", ".join(f"{game}: {count} games" for game, count in done.smoke_games.items())
    if done.already_there:  # known by its content hash: nothing built or played again
        say(f"{done.already_line()} ({done.folder})")
    else:
        say(f"{done.name} {done.version} accepted: {done.folder} (sha256 {done.content_hash[:16]}; smoke match {smoke})")
    if league is not None:
        from arena.league.ladder import where_it_stands

        say(where_it_stands(league, done.name, done.version, wait_s))


def bots_command(
    registry: Annotated[
        Optional[Path], typer.Option(help="Registry folder (default: $ARENA_REGISTRY, else ./bots in the current folder).")
    ] = None,
) -> None:
    """List the bots of a registry: name, version, games, content hash, date."""
    from arena.config.botfolder import shown_path
    from arena.resources import bots_dir
    from arena.registry.submit import REGISTRY_ENV, default_registry, list_registry

    where = registry or default_registry()
    if not where.is_dir():
        raise UsageError(
            f"registry {where} is not a folder"
            + ("" if registry else f" (`arena submit BOT_DIR` makes it; or give --registry DIR, or set {REGISTRY_ENV}); "
               f"arena's example bots are in {bots_dir()}")
        )
    broken: list = []
    rows = [
        {"name": entry.name, "version": entry.version, "games": ",".join(entry.games), "hash": entry.content_hash[:12],
         "date": entry.date[:16].replace("T", " ")}
        for entry in list_registry(where, broken)
    ]
    say(f"bots in {where}")
    columns = ["name", "version", "games", "hash", "date"]
    console.print(compact_table(fitting(columns, rows, ("date", "hash")), rows, left=tuple(columns)))
    for error in broken:
        say(f"not listed: {shown_path(error.folder)}: {error.why()}")
