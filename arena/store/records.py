"""The store's rows as records: a bot, a scheduled or finished game, a league's member and
a finished game's seat (`arena.store.db` re-exports them; the store's reads in parts,
`arena.store.partial`, build them too)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.store.keys import ScheduledGame


@dataclass(frozen=True)
class BotRecord:
    """A bot of the tournament as stored."""

    bot: str
    name: str
    version: str
    content_hash: str
    folder: str
    kind: str = "folder"


@dataclass(frozen=True)
class GameRow:
    """A scheduled game and, once done, when it finished."""

    key: str
    round: int
    table_no: int
    rotation: int
    deal: str
    seed: int
    bots: tuple[str, ...]
    status: str
    finished_at: str | None
    duration_s: float | None
    rules_version: str | None = None  # the engine's rules version it was played under (when done)
    seq: int | None = None  # a league's schedule sequence number (None in a tournament)

    @classmethod
    def of_row(cls, row: Sequence[Any]) -> GameRow:
        """The record of a `games` row read in GAME_COLUMNS' order (bots as stored: JSON)."""
        return cls(*row[:6], tuple(json.loads(row[6])), *row[7:])

    def scheduled(self) -> ScheduledGame:
        """The schedule's view of this game."""
        return ScheduledGame(self.round, self.table_no, self.rotation, self.bots, self.seed)


@dataclass(frozen=True)
class MemberRow:
    """A league's bot: which bot it is a version of, and when it played."""

    bot: str
    lineage: str  # the bot's name: every version of one bot shares it
    joined: int  # the first batch it could be matched in
    left_at: int | None  # the batch from which it was no longer matched (None: active)
    status: str  # 'active', 'retired', 'removed' or 'suspended'
    reason: str = ""


@dataclass(frozen=True)
class SeatRow:
    """One seat of a finished game."""

    game_key: str
    seat: int
    bot: str
    place: int
    score: float
    engine_place: int
    forfeit: bool


# The columns the reads select, in each table's order (the records are built from them).
GAME_COLUMNS = "key, round, table_no, rotation, deal, seed, bots, status, finished_at, duration_s, rules_version, seq"
SEAT_COLUMNS = "game_key, seat, bot, place, score, engine_place, forfeit"
INCIDENT_COLUMNS = "game_key, seat, bot, reason, detail, decision, forfeit, log_tail, request"
