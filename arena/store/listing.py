"""A league's finished games read a page at a time, for the server that answers its game
pages and lists from the store (`arena.web.games`) instead of a file per game.

Queries on a `Store`'s connection, beside its own (arena/store/db.py holds the schema and
the writes). Order is key order, which is schedule order while rounds (a league's
batches) have at most five digits (keys are zero-padded to five): the order
`Store.games()` gives. Each query is one indexed lookup or range of the games' key index,
except the counts, which walk the finished games' keys before a point.
"""

from __future__ import annotations

import json

from arena.store.db import GameRow, Store

_COLUMNS = "key, round, table_no, rotation, deal, seed, bots, status, finished_at, duration_s, rules_version, seq"


def _row(row: tuple) -> GameRow:
    return GameRow(*row[:6], tuple(json.loads(row[6])), *row[7:])


def game_row(store: Store, key: str) -> GameRow | None:
    """One scheduled or finished game by its key (None: no such game)."""
    row = store._db.execute(f"SELECT {_COLUMNS} FROM games WHERE key = ?", (key,)).fetchone()
    return None if row is None else _row(row)


def done_count(store: Store, before: str | None = None) -> int:
    """How many games are finished (of those whose key sorts before `before`, if given)."""
    if before is None:
        return store._db.execute("SELECT COUNT(*) FROM games WHERE status = 'done'").fetchone()[0]
    return store._db.execute("SELECT COUNT(*) FROM games WHERE status = 'done' AND key < ?", (before,)).fetchone()[0]


def done_page(store: Store, offset: int, limit: int) -> list[GameRow]:
    """`limit` finished games in key order, from the `offset`-th (0 is the first)."""
    rows = store._db.execute(
        f"SELECT {_COLUMNS} FROM games WHERE status = 'done' ORDER BY key LIMIT ? OFFSET ?", (limit, offset)
    ).fetchall()
    return [_row(row) for row in rows]


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
