"""The store read in parts: a store may hold a million games, and no reader here ever
holds all of them (or their seats) in memory. `arena.store.db.Store` has these methods
(`PartialReads` is its base: the queries of a long store kept apart from the schema and
the writes). Three kinds of reader, one concept:

- streamed, for a league (`arena.league.ladder`, `arena.league.saved_state`): counts, the
  games after a round read from a cursor in schedule order (index `games_in_schedule`),
  and the state a league saves to resume from, so that a resume reads no history;
- ranged by key, for the site's state (`arena.site.state`): the games after a key (the
  keys sort in schedule order, so the primary key's index finds them, never a scan), a
  range of finished games (a game-list page), the finished games' keys (a tournament's
  site looks for its files deleted by hand), and the seats and incidents of a few games; rows come back as the tuples the tables hold, in the tables' column order
  (`arena.store.records`: GAME_COLUMNS, SEAT_COLUMNS, INCIDENT_COLUMNS), and the site
  makes them into the store's records;
- listed a page at a time, for the server that answers a league's game pages and lists
  from the store (`arena.web.league_games`) instead of a file per game: one game by its key,
  its finished neighbours, whether a deal is still open, and `DoneIndex`, where each
  list page starts.

Key order is schedule order while rounds (a league's batches) have at most five digits
(keys are zero-padded to five): the order `Store.games()` gives. Each listed query is one
indexed lookup or a short range of the games' key index: a count or an OFFSET would walk
every finished game before a point, so `DoneIndex` keeps where each list page starts,
read once and then as games finish.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from arena.diskfull import waits_for_space
from arena.store.records import GAME_COLUMNS, INCIDENT_COLUMNS, SEAT_COLUMNS, GameRow


class PartialReads:
    """Reads that never hold a whole store's games or seats in memory (`Store`'s base)."""

    _db: sqlite3.Connection

    # -- streamed: a league's history from a cursor -----------------------------------------

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

    @waits_for_space
    def save_state(self, name: str, value: bytes) -> None:
        """Keep `value` under `name`, replacing what was kept (one transaction)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR REPLACE INTO saved_state (name, value) VALUES (?, ?)", (name, value))

    @waits_for_space
    def forget_state(self, name: str) -> None:
        """Remove the state saved under `name` (none: nothing happens)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM saved_state WHERE name = ?", (name,))

    # -- ranged by key: the site's state ----------------------------------------------------

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

    def done_keys_in_order(self, limit: int = -1) -> Iterator[str]:
        """The keys of the first `limit` finished games (-1: all) in key order, read from a
        cursor as the caller goes (the keys only: a tournament's site checks its files)."""
        yield from (key for (key,) in self._db.execute(
            "SELECT key FROM games WHERE status = 'done' ORDER BY key LIMIT ?", (limit,)
        ))

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

    # -- listed a page at a time: the served league's game pages ------------------------------

    def game_row(self, key: str) -> GameRow | None:
        """One scheduled or finished game by its key (None: no such game)."""
        row = self._db.execute(f"SELECT {GAME_COLUMNS} FROM games WHERE key = ?", (key,)).fetchone()
        return None if row is None else GameRow.of_row(row)

    def done_neighbours(self, key: str) -> tuple[str | None, str | None]:
        """The keys of the finished games just before and just after `key` (None: none)."""
        before = self._db.execute(
            "SELECT key FROM games WHERE status = 'done' AND key < ? ORDER BY key DESC LIMIT 1", (key,)
        ).fetchone()
        after = self._db.execute(
            "SELECT key FROM games WHERE status = 'done' AND key > ? ORDER BY key LIMIT 1", (key,)
        ).fetchone()
        return (before[0] if before else None, after[0] if after else None)

    def data_version(self) -> int:
        """A number that moves when another connection commits to the store (SQLite's
        data_version): what a reader's answers as of it are still good for."""
        return self._db.execute("PRAGMA data_version").fetchone()[0]

    def deal_open(self, deal: str) -> bool:
        """True while a game of deal `deal` (a duplicate deal's seat rotations) has no result."""
        return self._db.execute(
            "SELECT 1 FROM games WHERE deal = ? AND status != 'done' AND key >= ? AND key < ? LIMIT 1",
            (deal, deal + "-", deal + "."),  # the deal's keys: a range of the key index
        ).fetchone() is not None


class DoneIndex:
    """Where each list page of `page` finished games starts, kept up to date as games
    finish, so that a list page or a game's place in the list is a short range of the key
    index instead of a count over every finished game before it.

    Built by one pass over the finished games' keys (the first use); then, when the store
    changed (SQLite's data_version), only what changed is read: the games not finished
    at the last look, and the rows scheduled since (by rowid). A finished game never
    changes nor goes away, so only the pages from the first newly finished key on are read
    again (in a league: the last page or two). Not thread-safe: its owner locks."""

    def __init__(self, store: PartialReads, page: int):
        self.store, self.page = store, page
        self.starts: list[str] = []  # the first key of each page
        self.total = 0  # finished games
        self.pending: dict[str, int] = {}  # games scheduled and not finished: key -> rowid
        self.rowid = 0  # rows up to this rowid have been read
        self.version: int | None = None

    def refresh(self) -> None:
        """Bring the index up to date with the store (one cheap query when nothing changed)."""
        db = self.store._db
        version = db.execute("PRAGMA data_version").fetchone()[0]
        if version == self.version:
            return
        self.version = version
        changed: list[str] = []
        for key, rowid in sorted(self.pending.items()):
            row = db.execute("SELECT status FROM games WHERE key = ?", (key,)).fetchone()
            if row is None:  # dropped unplayed: a row scheduled later may take its rowid
                del self.pending[key]
                self.rowid = min(self.rowid, rowid - 1)
            elif row[0] == "done":
                del self.pending[key]
                changed.append(key)
        for rowid, key, status in db.execute("SELECT rowid, key, status FROM games WHERE rowid > ?", (self.rowid,)):
            if status == "done":
                changed.append(key)
            else:
                self.pending[key] = rowid
            self.rowid = max(self.rowid, rowid)
        if self.starts and not changed:
            return
        kept = max(0, bisect.bisect_right(self.starts, min(changed)) - 1) if self.starts else 0
        start = self.starts[kept] if kept else ""  # pages before it hold no key that changed
        del self.starts[kept:]
        self.total = kept * self.page
        for (key,) in db.execute("SELECT key FROM games WHERE status = 'done' AND key >= ? ORDER BY key", (start,)):
            if self.total % self.page == 0:
                self.starts.append(key)
            self.total += 1

    def place(self, key: str) -> int:
        """How many finished games come before finished game `key` (refresh first)."""
        page = max(0, bisect.bisect_right(self.starts, key) - 1)
        if not self.starts:
            return 0
        return page * self.page + self.store._db.execute(
            "SELECT COUNT(*) FROM games WHERE status = 'done' AND key >= ? AND key < ?", (self.starts[page], key)
        ).fetchone()[0]

    def games_of_page(self, number: int) -> list[GameRow]:
        """The finished games of list page `number` (1 is the first; refresh first)."""
        if not 1 <= number <= len(self.starts):
            return []
        rows = self.store._db.execute(
            f"SELECT {GAME_COLUMNS} FROM games WHERE status = 'done' AND key >= ? ORDER BY key LIMIT ?",
            (self.starts[number - 1], self.page),
        ).fetchall()
        return [GameRow.of_row(row) for row in rows]
