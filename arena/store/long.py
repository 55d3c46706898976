"""The store read in parts, for a league that has stored a million games: counts, the
games after a round streamed from a cursor, and the state a league saves to resume from
(`arena.run.league_state`). `arena.store.db.Store` has these methods (this class is its
base: the queries of a long store kept apart from the rest)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator


class LongStoreReads:
    """Reads that never hold a whole store's games or seats in memory (`Store`'s base)."""

    _db: sqlite3.Connection


    def done_count(self) -> int:
        """How many games are finished (a COUNT: no key is loaded)."""
        return self._db.execute("SELECT COUNT(*) FROM games WHERE status = 'done'").fetchone()[0]

    def last_round(self) -> int:
        """The highest round (a league's batch) scheduled; 0 before the first."""
        return self._db.execute("SELECT COALESCE(MAX(round), 0) FROM games").fetchone()[0]

    def tables_after(self, round_no: int) -> Iterator[tuple[int, tuple[str, ...]]]:
        """(round, bots in seat order) of every game scheduled after round `round_no`, in
        schedule order, read from a cursor as the caller goes (never all at once)."""
        cursor = self._db.execute(
            "SELECT round, bots FROM games WHERE round > ? ORDER BY round, table_no, rotation", (round_no,)
        )
        for round_of, bots in cursor:
            yield round_of, tuple(json.loads(bots))

    def results_after(self, round_no: int) -> Iterator[tuple[str, str, list[tuple[str, int, bool]]]]:
        """(key, deal, [(bot, place, forfeit) per seat]) of every finished game after round
        `round_no`, in schedule order, read from a cursor as the caller goes (a million
        games are never in memory at once)."""
        cursor = self._db.execute(
            "SELECT g.key, g.deal, s.seat, s.bot, s.place, s.forfeit FROM games AS g "
            "JOIN seats AS s ON s.game_key = g.key WHERE g.round > ? AND g.status = 'done' "
            "ORDER BY g.round, g.table_no, g.rotation, s.seat",
            (round_no,),
        )
        key, deal, seats = None, "", []
        for game_key, game_deal, _seat, bot, place, forfeit in cursor:
            if game_key != key:
                if key is not None:
                    yield key, deal, seats
                key, deal, seats = game_key, game_deal, []
            seats.append((bot, place, bool(forfeit)))
        if key is not None:
            yield key, deal, seats

    def games_through(self, round_no: int) -> tuple[int, str | None]:
        """How many games rounds 1 .. `round_no` hold (done or not), and the last one's key
        in schedule order (None: none): from the schedule's index alone."""
        count = self._db.execute("SELECT COUNT(*) FROM games WHERE round <= ?", (round_no,)).fetchone()[0]
        last = self._db.execute(
            "SELECT key FROM games WHERE round <= ? ORDER BY round DESC, table_no DESC, rotation DESC LIMIT 1",
            (round_no,),
        ).fetchone()
        return count, None if last is None else last[0]

    def saved_state(self, name: str) -> bytes | None:
        """The state saved under `name` (`save_state`), None when there is none. The store
        only keeps it: whoever reads it checks it before trusting it."""
        try:
            row = self._db.execute("SELECT value FROM saved_state WHERE name = ?", (name,)).fetchone()
        except sqlite3.OperationalError:
            return None  # a store opened read-only from before states were saved
        return None if row is None else bytes(row[0])

    def save_state(self, name: str, value: bytes) -> None:
        """Keep `value` under `name`, replacing what was kept (one transaction)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR REPLACE INTO saved_state (name, value) VALUES (?, ?)", (name, value))

    def forget_state(self, name: str) -> None:
        """Remove the state saved under `name` (none: nothing happens)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM saved_state WHERE name = ?", (name,))
