"""A league's finished games read a page at a time, for the server that answers its game
pages and lists from the store (`arena.web.games`) instead of a file per game.

Queries on a `Store`'s connection, beside its own (arena/store/db.py holds the schema and
the writes). Order is key order, which is schedule order while rounds (a league's
batches) have at most five digits (keys are zero-padded to five): the order
`Store.games()` gives. Each query is one indexed lookup or a short range of the games'
key index: a count or an OFFSET would walk every finished game before a point, so
`DoneIndex` keeps where each list page starts, read once and then as games finish.
"""

from __future__ import annotations

import bisect
import json

from arena.store.db import GameRow, Store

_COLUMNS = "key, round, table_no, rotation, deal, seed, bots, status, finished_at, duration_s, rules_version, seq"


def _row(row: tuple) -> GameRow:
    return GameRow(*row[:6], tuple(json.loads(row[6])), *row[7:])


def game_row(store: Store, key: str) -> GameRow | None:
    """One scheduled or finished game by its key (None: no such game)."""
    row = store._db.execute(f"SELECT {_COLUMNS} FROM games WHERE key = ?", (key,)).fetchone()
    return None if row is None else _row(row)


def done_neighbours(store: Store, key: str) -> tuple[str | None, str | None]:
    """The keys of the finished games just before and just after `key` (None: none)."""
    before = store._db.execute(
        "SELECT key FROM games WHERE status = 'done' AND key < ? ORDER BY key DESC LIMIT 1", (key,)
    ).fetchone()
    after = store._db.execute(
        "SELECT key FROM games WHERE status = 'done' AND key > ? ORDER BY key LIMIT 1", (key,)
    ).fetchone()
    return (before[0] if before else None, after[0] if after else None)


def deal_open(store: Store, deal: str) -> bool:
    """True while a game of deal `deal` (a duplicate deal's seat rotations) has no result."""
    return store._db.execute(
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

    def __init__(self, store: Store, page: int):
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
            f"SELECT {_COLUMNS} FROM games WHERE status = 'done' AND key >= ? ORDER BY key LIMIT ?",
            (self.starts[number - 1], self.page),
        ).fetchall()
        return [_row(row) for row in rows]
