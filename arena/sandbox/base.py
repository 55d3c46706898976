"""The one interface both sandboxes (local process, Docker container) implement.

A `Sandbox` starts a bot and returns a `BotProcess`: a running bot that takes lines on
stdin and gives lines on stdout, within `Limits` (their one definition: `arena.limits`).
Every fault of the bot is a `BotFault` with a `Reason`; a failure of arena's own
machinery (e.g. the Docker engine) is a `SandboxError` and is never charged to the bot
(both in arena/faults.py).

Shared building blocks for implementations (line caps, stderr log, time bank, exit
words) are in `arena.sandbox.common`, the send and receive loop every sandbox's process
runs (`BotStdio`) in `arena.sandbox.stdio`; the registry is `arena.sandbox.get_sandbox`.
Added after the first version (compatible): `BotProcess.poll_line()` (concrete, built on
`receive_line(0.0)`), the rule that `send_line` restarts the per-decision byte count, and
`Sandbox.hide_paths()` (concrete, does nothing unless a sandbox needs it), warm slots:
`start(..., slot=)` and `Sandbox.close()` (concrete, frees what slots hold), and
`BotProcess.cpu_time_s()` (concrete, None: unknown), what a long-lived process is charged
per game, and `BotProcess.stderr_mark()` / `stderr_since()` (concrete, say nothing unless
overridden), what the replay shows of stderr per decision.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

# The fault vocabulary is shared with the protocol and the game record: import it from its
# home, arena/faults.py (tests/project/test_errors.py checks that nobody imports it from here).
from arena.faults import BotFault, Reason
from arena.limits import Limits  # noqa: F401 (their one definition; imported from here too)


@dataclass(frozen=True)
class BotSpec:
    """What a sandbox needs to start a bot: its folder and the command from bot.toml."""

    name: str
    folder: Path
    command: tuple[str, ...]
    dockerfile: str | None = None
    language: str | None = None  # arena's image for it (arena.sandbox.languages)
    build: tuple[str, ...] = ()  # run before the bot plays (arena.langs.build)
    extra: dict[str, str] = field(default_factory=dict)


class BotProcess(ABC):
    """A running bot. Not thread-safe: one referee talks to it."""

    @abstractmethod
    def send_line(self, line: bytes) -> None:
        """Write one line (without its newline) to the bot's stdin; BotFault(CRASH) if gone.

        `line` may hold several lines joined by newlines: they are written at once (the
        referee sends a seat's `events` with the request that follows them)."""

    @abstractmethod
    def receive_line(self, timeout_s: float) -> bytes:
        """The bot's next stdout line (without newline), waiting at most `timeout_s`.

        Raises BotFault: TIMEOUT, OUTPUT_LIMIT (line or per-decision bytes), CRASH
        (stdout closed / exited, with the code or signal), OUT_OF_MEMORY.
        The per-decision byte count restarts at every `send_line` (see
        `arena.sandbox.common.LineBuffer`). `timeout_s=0` must not block.
        """

    def poll_line(self) -> bytes | None:
        """A line the bot already wrote, without waiting; None if there is none.

        Added for the referee's "spoke out of turn" check. Works for any sandbox whose
        `receive_line(0.0)` returns a waiting line (or reads what is ready) and raises
        TIMEOUT otherwise.
        """
        try:
            return self.receive_line(0.0)
        except BotFault as fault:
            if fault.reason is Reason.TIMEOUT:
                return None
            raise

    def cpu_time_s(self) -> float | None:
        """CPU seconds the bot (all its processes) has used since it started; None if the
        sandbox cannot tell (then only its own CPU limit, set at start, holds)."""
        return None

    @abstractmethod
    def stderr_text(self) -> str:
        """The kept part of the bot's stderr log (drained continuously, capped)."""

    def stderr_mark(self) -> int:
        """A mark in the bot's stderr stream (bytes received so far), for `stderr_since`."""
        return 0

    def stderr_since(self, mark: int) -> str:
        """What the bot wrote to stderr after `mark`, as far as kept (the replay shows it per
        decision). The default says nothing; a sandbox with a `StderrLog` answers from it."""
        return ""

    @abstractmethod
    def close(self) -> Reason | None:
        """Kill the bot and everything it started; free all resources. Idempotent.

        Returns OUT_OF_MEMORY if the bot was killed for memory, else None.
        """


class Sandbox(ABC):
    """Starts bots. `local` or `docker`."""

    name: str

    @abstractmethod
    def start(self, bot: BotSpec, limits: Limits, *, slot: str | None = None) -> BotProcess:
        """Start the bot; SandboxError if arena's machinery fails.

        `slot=None` starts cold: everything made for this process goes with it. A string
        names a warm slot: the caller promises at most one process at a time per slot,
        always of the same bot with the same limits, and the sandbox may keep resources for
        the slot between processes (a container, a process started ahead of need). Every
        process still starts fresh, and nothing a process leaves behind may reach the next
        one of its slot. `close()` frees what the slots hold.
        """

    def close(self) -> None:
        """Free everything kept for warm slots (end of a run, Ctrl-C). Idempotent; the
        default has nothing to free."""

    def cleanup_leftovers(self) -> int:
        """Remove what a killed earlier run left behind; returns how many were removed."""
        return 0

    def hide_paths(self, paths: Iterable[str | Path]) -> None:
        """Keep these folders (or files) out of every bot's sight from now on; a bot still
        sees its own folder. Callers pass the field's bot folders, the registry and the
        run's output folder. The default does nothing: a sandbox that shows each bot only
        its own folder (Docker) has nothing more to hide.
        """
