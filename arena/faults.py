"""Why a bot forfeits, and how arena tells a bot's fault from its own: one vocabulary for
the sandboxes (which detect most faults), the protocol (a bad line), the referee and the
game record (`Incident.reason`). A leaf module: the standard library only (and
arena/errors.py, below it: arena's own failure is an `ArenaError` shown as one line).
"""

from __future__ import annotations

import enum

from arena.errors import ArenaError


class Reason(str, enum.Enum):
    """Why a bot forfeited (the incident's reason)."""

    TIMEOUT = "TIMEOUT"
    CRASH = "CRASH"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    INVALID_JSON = "INVALID_JSON"
    BAD_MESSAGE = "BAD_MESSAGE"
    ILLEGAL_ACTION = "ILLEGAL_ACTION"


class BotFault(Exception):
    """The bot broke a rule of the sandbox or protocol; it forfeits."""

    def __init__(self, reason: Reason, detail: str):
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


class SandboxError(ArenaError):
    """arena's own machinery failed (not the bot's fault): an internal error."""

    exit_code = 1
    kind = "internal error"


# ------------------------------------------------------------- what a fault tells its author

# A log line that says the bot's program could not be found (the shells', the local
# sandbox's shim's and the Docker sandbox's own words).
_NOT_FOUND = ("cannot run", "not found", "no such file or directory", "executable file not found")


def log_lines(log: str, count: int = 5) -> list[str]:
    """The last `count` non-blank lines of a bot's stderr log (each cut to 200 characters)."""
    lines = [line.rstrip()[:200] for line in log.splitlines() if line.strip()]
    return lines[-count:]


def fault_hint(reason: Reason | str, detail: str, log: str = "", sandbox: str | None = None) -> str | None:
    """What the bot's author most likely has to fix, when arena can tell from the fault
    and the end of its log; None when it cannot."""
    reason = Reason(reason)
    tail = "\n".join(log_lines(log, 10)).lower()
    if reason is Reason.CRASH and "exited with code 127" in detail:
        if sandbox == "docker":
            return (
                "the program in bot.toml's `command` is missing from the Docker image (arena's base image has "
                "python3 and nothing else): name the bot's `language` in bot.toml (arena's image for it: c, cpp, "
                "rust, go, java, node) and `build` it there, or give it a Dockerfile that COPYs the program in; "
                "builds have no network (docs/protocol.md, Your language)"
            )
        if any(words in tail for words in _NOT_FOUND) or not tail:
            return (
                "the program in bot.toml's `command` was not found: check its first word (looked up on PATH, "
                "or a path inside the bot's folder) and that it is installed on this machine"
            )
    if reason is Reason.CRASH and "exec format error" in tail:
        return (
            "the program in bot.toml's `command` was built for another system (another processor, macOS, "
            "Windows): build it where it runs, with `build` in bot.toml (docs/protocol.md, Your language)"
        )
    if reason is Reason.CRASH and "code 126" in detail:
        return "the program in bot.toml's `command` cannot be run: make it executable (chmod a+x FILE)"
    if reason is Reason.TIMEOUT and ("did not answer" in detail or "gave no answer" in detail):
        return (
            "if the bot did answer, its answer may be stuck in its output buffer: flush stdout after every line "
            "(Python: print(..., flush=True); C: fflush(stdout); jq: --unbuffered)"
        )
    logged_to_stdout = (reason is Reason.INVALID_JSON and "not JSON" in detail) or (
        reason is Reason.BAD_MESSAGE and "out of turn" in detail and "wrote '{" not in detail
    )
    if logged_to_stdout:
        return (
            "arena reads every line the bot writes to stdout as a protocol message: write logs and debugging "
            "output to stderr instead (Python: print(..., file=sys.stderr))"
        )
    return None


def explain_fault(reason: Reason | str, detail: str, log: str = "", sandbox: str | None = None) -> list[str]:
    """The lines shown under a fault in the terminal: the end of the bot's stderr and a hint."""
    lines = log_lines(log)
    shown = ["its stderr ends with:", *(f"| {line}" for line in lines)] if lines else ["it wrote nothing to stderr"]
    hint = fault_hint(reason, detail, log, sandbox)
    return shown + ([f"hint: {hint}"] if hint else [])
