"""The store's rows as records: a bot, a scheduled or finished game, a league's member, a
finished game's seat, and an incident as the referee's record (`arena.store.db` re-exports
the records; the store's reads in parts, `arena.store.partial`, and the site's state,
which reads rows by key range, build them with these too)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.game.record import Incident
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

    @classmethod
    def of_row(cls, row: Sequence[Any]) -> SeatRow:
        """The record of a `seats` row read in SEAT_COLUMNS' order."""
        return cls(*row[:6], bool(row[6]))


def incident_of_row(row: Sequence[Any]) -> Incident:
    """The referee's record of an `incidents` row read in INCIDENT_COLUMNS' order (its
    game's key, row[0], is the caller's)."""
    return Incident(
        game_number=1,
        seat=row[1],
        bot=row[2],
        reason=row[3],
        detail=row[4],
        decision=row[5],
        forfeit=bool(row[6]),
        log_tail=row[7],
        request=row[8],
    )


# The columns the reads select, in each table's order (the records are built from them).
GAME_COLUMNS = "key, round, table_no, rotation, deal, seed, bots, status, finished_at, duration_s, rules_version, seq"
SEAT_COLUMNS = "game_key, seat, bot, place, score, engine_place, forfeit"
INCIDENT_COLUMNS = "game_key, seat, bot, reason, detail, decision, forfeit, log_tail, request"
