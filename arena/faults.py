"""Why a bot forfeits, and how arena tells a bot's fault from its own: one vocabulary for
the sandboxes (which detect most faults), the protocol (a bad line), the referee and the
game record (`Incident.reason`). A leaf module: the standard library only.
"""

from __future__ import annotations

import enum


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


class SandboxError(Exception):
    """arena's own machinery failed (not the bot's fault): an internal error."""
