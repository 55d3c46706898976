"""The store read by key range, for the site's state (`arena.site.state`): the games after
a key (the keys sort in schedule order, so the primary key's index finds them, never a
scan), a range of finished games (a game-list page), and the seats and incidents of a
few games. `arena.store.db.Store` has these methods (this class is one of its bases);
rows come back as the tuples the tables hold, in the tables' column order, and the site
makes them into the store's records."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

GAME_COLUMNS = "key, round, table_no, rotation, deal, seed, bots, status, finished_at, duration_s, rules_version, seq"
SEAT_COLUMNS = "game_key, seat, bot, place, score, engine_place, forfeit"
INCIDENT_COLUMNS = "game_key, seat, bot, reason, detail, decision, forfeit, log_tail, request"


class RangeReads:
    """Reads of a part of the store by key (`Store`'s base)."""

    _db: sqlite3.Connection

    def game_rows_after(self, key: str, limit: int = -1) -> list[tuple[Any, ...]]:
        """The scheduled games after `key` ('' from the first), done or not, in key order
        (GAME_COLUMNS), at most `limit` (-1: all)."""
        return self._db.execute(
            f"SELECT {GAME_COLUMNS} FROM games WHERE key > ? ORDER BY key LIMIT ?", (key, limit)
        ).fetchall()

    def done_game_rows(self, offset: int, limit: int) -> list[tuple[Any, ...]]:
        """Finished games `offset` to `offset + limit` in key order (GAME_COLUMNS)."""
        return self._db.execute(
            f"SELECT {GAME_COLUMNS} FROM games WHERE status = 'done' ORDER BY key LIMIT ? OFFSET ?", (limit, offset)
        ).fetchall()

    def result_rows(self, keys: Sequence[str]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """The seats (SEAT_COLUMNS, by game and seat) and incidents (INCIDENT_COLUMNS, in
        stored order) of these games."""
        seats: list[tuple[Any, ...]] = []
        incidents: list[tuple[Any, ...]] = []
        for start in range(0, len(keys), 500):
            part = list(keys[start : start + 500])
            marks = ",".join("?" * len(part))
            seats += self._db.execute(
                f"SELECT {SEAT_COLUMNS} FROM seats WHERE game_key IN ({marks}) ORDER BY game_key, seat", part
            ).fetchall()
            incidents += self._db.execute(
                f"SELECT {INCIDENT_COLUMNS} FROM incidents WHERE game_key IN ({marks}) ORDER BY id", part
            ).fetchall()
        return seats, incidents

    def done_through(self, key: str) -> int:
        """How many finished games there are up to `key`, included (a count on the keys' index)."""
        return self._db.execute("SELECT COUNT(*) FROM games WHERE key <= ? AND status = 'done'", (key,)).fetchone()[0]

    def count_games(self) -> int:
        """How many games are scheduled, finished or not."""
        return self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
