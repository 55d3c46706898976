"""The record of a played game: what the referee returns, the store keeps and the report shows.

A leaf module (pydantic and the fault reasons only), so the referee, the store, the report
and the tools that read stored games share one definition without importing each other.
A `GameResult` is stored once and never edited; its `replay` re-simulates the game
(`arena.game.referee.verify_replay`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from arena.faults import Reason, explain_fault


class Incident(BaseModel):
    """A bot's fault: which seat and bot, why, and at which decision of the game."""

    game_number: int = Field(description="1-based number of the game in its match.")
    seat: int
    bot: str
    reason: Reason
    detail: str
    decision: int = Field(description="Actions taken in the game before the fault (0 = at the start).")
    request: int | None = Field(
        None,
        description="The id of the request the bot was asked and had not answered when it faulted (ids as the bot "
        "saw them: they count up through its match); None for a fault outside a request (at the start of a game, "
        "between requests, after the game).",
    )
    forfeit: bool = Field(True, description="False for a fault after the game had ended (the result stands).")
    log_tail: str = Field("", description="The end of the bot's stderr log when it faulted.")

    def when(self) -> str:
        """When it happened, in the bot's own terms: `at request 5 (after 12 moves of the game)`."""
        moves = f"after {self.decision} move{'' if self.decision == 1 else 's'} of the game"
        if self.request is not None:
            return f"at request {self.request} ({moves})"
        if not self.forfeit:
            return "after the game"
        return "at the start of the game" if self.decision == 0 else f"between requests ({moves})"

    def headline(self) -> str:
        """One line: `p4: CRASH at the start of the game: exited with code 127`."""
        return f"{self.bot}: {self.reason.value} {self.when()}: {self.detail}"

    def explained(self, sandbox: str | None = None) -> list[str]:
        """The lines shown under it: the end of the bot's stderr and, where arena knows one, a hint."""
        return explain_fault(self.reason, self.detail, self.log_tail, sandbox)


class ReplayAction(BaseModel):
    """One action of the game: whose, what, and whether the bot or the fallback chose it.

    The last three fields describe the bot's decision, for its author; each is None when
    not known (a fallback action, a seat that does not measure, a game stored before
    they were kept). They are not part of the game: `verify_replay` ignores them.
    """

    seat: int
    action: dict[str, Any]
    by: str = Field(description="'bot', or 'fallback' for a forfeited seat.")
    think_s: float | None = Field(None, description="Seconds from the request to the bot's answer.")
    legal: int | None = Field(None, description="How many legal actions the bot chose from.")
    stderr: list[str] | None = Field(
        None, description="Lines the bot wrote to stderr while it decided (capped; None: none)."
    )


class Replay(BaseModel):
    """Enough to re-simulate and to show the game: the actions and the public event log."""

    actions: list[ReplayAction]
    events: list[dict[str, Any]] = Field(description="The public event log (state.events(None)).")


class GameResult(BaseModel):
    """The record of one game, stored once and never edited."""

    game: str
    seed: int
    rules: dict[str, Any]
    rules_version: str | None = Field(
        None, description="The engine's rules version the game was played under (None: stored before it was kept)."
    )
    game_number: int = 1
    seats: list[str] = Field(description="Bot name in each seat.")
    places: list[int] = Field(description="Arena places: forfeits share the last place (the table's size), others ranked by the game.")
    scores: list[float] = Field(description="The game's own scores.")
    engine_places: list[int] = Field(description="The game's own places, forfeits ignored.")
    forfeits: list[int]
    incidents: list[Incident]
    replay: Replay

    @property
    def players(self) -> int:
        """Number of seats."""
        return len(self.seats)
