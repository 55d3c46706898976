"""The limits a bot plays under: one definition, `Limits`.

Each field of `Limits` carries its default, what it means (`help`: the words of the
tournament file's `limits` table, of the commands' limit flags and of the docs), and, when
an organiser may set it, its bounds (`SETTABLE`); when a bot is told it in `hello`, the
words the protocol's schema gives it (`TOLD`). Two views are made from it, not written
beside it: `LimitsSettings`, the pydantic model of the settable part (the tournament and
league files' `limits` table; it checks the bounds, and its `limits()` is the `Limits`),
and `LimitsInfo`, the part told to the bot (`Limits.told()`).

`limits_from_flags(**flags)` is the one way a command turns its limit flags into `Limits`
(`LimitsError` names each bad flag); `LIMIT_FLAGS` gives each flag's type and help.

What `cpu_s` means, as the code enforces it: CPU seconds one bot may use **per game**. A
bot process that plays one game (a tournament's or a league's with `bot_process =
"per-game"`, `arena play`) has it as its process's CPU limit (RLIMIT_CPU, SIGXCPU ->
TIMEOUT); a process kept for many games (`per-slot`) is measured game by game (the CPU
time since its previous game, `arena.game.seats.RemoteBot`), with the sum of its games'
budgets as its process limit. Only `arena match`, whose bot process plays every game of
the match, counts the budget for the whole match (it has no `--cpu-s`: the default).

A leaf module: the standard library and pydantic only, and `ArenaError` (arena/errors.py)
for its one error (the sandboxes, the protocol and the config all import it).
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from arena.errors import ArenaError


def _limit(default: float | int, help: str, *, told: str | None = None, **bounds: float) -> Any:  # noqa: A002
    """A field of `Limits`: its default, its meaning, the bot's words for it if the bot is
    told it, and its bounds if an organiser may set it (pydantic's gt, ge, le)."""
    return field(default=default, metadata={"help": help, "told": told, "bounds": bounds})


@dataclass(frozen=True)
class Limits:
    """Resource and time limits of one bot (see the module docstring for `cpu_s`)."""

    startup_s: float = _limit(
        10.0, "Seconds from start to the bot's `ready`.", told="From process start to the `ready` answer.",
        gt=0, le=600,
    )
    decision_s: float = _limit(
        1.0, "Seconds per decision before the time bank.", told="Per decision, before the time bank is drawn on.",
        gt=0, le=600,
    )
    time_bank_s: float = _limit(
        10.0, "Extra seconds per game, spent on overruns.",
        told="Extra time for the whole match, spent on overruns.", ge=0, le=3600,
    )
    max_line_bytes: int = _limit(1 << 20, "One line of output, bytes.", told="Longest line the bot may write.")
    max_decision_bytes: int = _limit(4 << 20, "All output while one decision is awaited, bytes.")
    stderr_keep_bytes: int = _limit(64 << 10, "Kept of the bot's log, bytes (the rest is drained and dropped).")
    memory_mb: int = _limit(
        512, "Memory per bot, MB.", told="Memory limit of the bot (all its processes).", ge=16, le=65536
    )
    cpu_s: int = _limit(600, "CPU seconds per bot per game.", ge=1, le=86400)
    cpus: float = _limit(1.0, "CPU share in the docker sandbox.", gt=0, le=64)
    pids: int = _limit(64, "Processes and threads of the bot.")
    file_size_mb: int = _limit(16, "Largest file the bot may write, MB (and its /tmp).")
    open_files: int = _limit(64, "Open files per process of the bot.")

    def told(self) -> LimitsInfo:
        """The part of the limits a bot is told in `hello`."""
        return LimitsInfo(**{name: getattr(self, name) for name in TOLD})

    def settings(self) -> dict[str, Any]:
        """The settable part, as a tournament file's `limits` table holds it."""
        return {name: getattr(self, name) for name in SETTABLE}


_FIELDS = {item.name: item for item in dataclasses.fields(Limits)}
_TYPES = typing.get_type_hints(Limits)
SETTABLE = tuple(name for name, item in _FIELDS.items() if item.metadata["bounds"])
TOLD = tuple(name for name, item in _FIELDS.items() if item.metadata["told"])


def help_of(name: str) -> str:
    """What limit `name` means (its flag's help, its key's description)."""
    return _FIELDS[name].metadata["help"]


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def limits(self) -> Limits:
        """The `Limits` of these settings (the rest at their defaults)."""
        return Limits(**self.model_dump())


# The tournament and league files' `limits` table: the settable fields, their defaults and bounds.
LimitsSettings = create_model(
    "LimitsSettings",
    __base__=_Settings,
    __doc__="Per bot per game: start-up, per decision, time bank, memory, CPU (`arena.limits.Limits`).",
    **{
        name: (_TYPES[name], Field(_FIELDS[name].default, description=help_of(name), **_FIELDS[name].metadata["bounds"]))
        for name in SETTABLE
    },
)

# What `hello` tells the bot (the protocol's `limits`; its schema is the bot's contract).
LimitsInfo = create_model(
    "LimitsInfo",
    __config__=ConfigDict(extra="forbid"),
    __doc__="The limits a bot plays under, told in `hello` (seconds and bytes).",
    **{name: (_TYPES[name], Field(description=_FIELDS[name].metadata["told"])) for name in TOLD},
)


class LimitsError(ArenaError, ValueError):
    """Limit flags out of their bounds; `mistakes` has one line per flag."""

    def __init__(self, mistakes: list[str]):
        self.mistakes = mistakes
        super().__init__(
            mistakes[0] if len(mistakes) == 1 else f"{len(mistakes)} mistakes in the limit flags:\n"
            + "\n".join(f"  - {line}" for line in mistakes)
        )


@dataclass(frozen=True)
class LimitFlag:
    """A command's flag for one settable limit: `--decision-s` for decision_s."""

    name: str
    type: type
    help: str

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


LIMIT_FLAGS = {name: LimitFlag(name, _TYPES[name], help_of(name)) for name in SETTABLE}


def limits_from_flags(**flags: float | int | None) -> Limits:
    """The Limits of a command's limit flags, by field name (None: the default); LimitsError
    names each bad flag (`--decision-s 0: must be greater than 0`)."""
    try:
        return LimitsSettings(**{key: value for key, value in flags.items() if value is not None}).limits()
    except ValidationError as invalid:
        raise LimitsError(
            [
                f"--{str(error['loc'][0]).replace('_', '-')} {_shown(error.get('input'))}: "
                + error["msg"].removeprefix("Input should be ").replace("greater", "must be greater")
                .replace("less", "must be less")
                for error in invalid.errors()
            ]
        ) from None


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


__all__ = [
    "LIMIT_FLAGS", "SETTABLE", "TOLD", "LimitFlag", "Limits", "LimitsError", "LimitsInfo", "LimitsSettings",
    "help_of", "limits_from_flags",
]
