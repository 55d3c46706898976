"""The site state's ratings (`arena.site.state`): the rating ledger saved with the
confidence's window of updates, and the last confidence computed.

- The ledger (`RatingLedger.snapshot`, without its history and its window, and which bots
  have a rating point) is one JSON value in the state's `meta`.
- Its window (the last `confidence.WINDOW` updates the confidence's sweep re-rates) is a
  row per update in the table `updates` (n, bots and ranks as JSON, the natural
  parameters' changes as little-endian doubles: exact, and read back without parsing
  80,000 floats as text): a save appends the updates made since the last one and deletes
  those fallen out of the window, never rewriting the rest.
- The confidence (`RatingLedger.confidence()`, about 2 CPU-s with a full window) is kept
  with the digest of the ratings it is of (`standings.confidence_key`): a new process
  with nothing new reads it instead of computing it again.
Docs: docs/report.md, "The site's state".
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import struct
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from arena.ratings import confidence as _confidence
from arena.ratings.confidence import Confidence
from arena.ratings.ledger import RatingLedger
from arena.ratings.skills import RatingSettings

SCHEMA = "CREATE TABLE IF NOT EXISTS updates (n INTEGER PRIMARY KEY, bots TEXT NOT NULL, ranks TEXT NOT NULL, added BLOB NOT NULL);"


class Window(deque):  # type: ignore[type-arg]
    """The ledger's window of updates, counting the updates appended since it was saved."""

    appended = 0

    def append(self, update: Any) -> None:
        super().append(update)
        self.appended += 1


def load_ledger(
    db: sqlite3.Connection, saved: Mapping[str, Any] | None, settings: RatingSettings, *, duplicate: bool,
    bots: Iterable[str], swiss: bool, inherit: Mapping[str, str],
) -> RatingLedger:
    """The ledger as `save_ledger` left it (`saved`: its JSON; None: a new one), with its
    history empty (each bot that has a rating point marked) and its window counting."""
    if saved is None:
        ledger = RatingLedger(
            settings, duplicate=duplicate, bots=list(bots), history=True, swiss=swiss, record=True, inherit=dict(inherit),
        )
        ledger.history = {}
        ledger.ratings.updates = Window(maxlen=_confidence.WINDOW)
        return ledger
    ledger = RatingLedger.restore(saved)
    ledger.duplicate = duplicate
    ledger.listed.update(bots)
    ledger.ratings.inherit.update(inherit)
    rows = db.execute("SELECT bots, ranks, added FROM updates ORDER BY n").fetchall()
    names = json.loads("[" + ",".join(itertools.chain.from_iterable((seats, ranks) for seats, ranks, _ in rows)) + "]")
    window = Window(maxlen=_confidence.WINDOW)
    for at, (_, _, added) in enumerate(rows):
        changes = struct.unpack(f"<{len(added) // 8}d", added)
        window.append((tuple(names[2 * at]), tuple(names[2 * at + 1]), tuple(zip(changes[::2], changes[1::2]))))
    window.appended = 0
    ledger.ratings.updates = window
    # Which bots have a rating point (a version's inherited point at 0 is made once).
    ledger.history = {bot: [None] for bot in saved["pointed"]}  # type: ignore[list-item]
    return ledger


def save_ledger(db: sqlite3.Connection, ledger: RatingLedger, made: int) -> tuple[dict[str, Any], int]:
    """The ledger's JSON for the state's meta, its window's new updates appended as rows
    (`made`: the updates saved so far, numbering them; the new count is returned)."""
    state = ledger.snapshot(history=False, window=False)
    window = ledger.ratings.updates
    assert isinstance(window, Window)
    fresh = list(window)[len(window) - min(window.appended, len(window)):] if window.appended else []
    first = made + window.appended - len(fresh) + 1
    db.executemany("INSERT OR REPLACE INTO updates VALUES (?, ?, ?, ?)", [
        (first + i, json.dumps(list(seats)), json.dumps(list(ranks)),
         struct.pack(f"<{2 * len(added)}d", *itertools.chain.from_iterable(added)))
        for i, (seats, ranks, added) in enumerate(fresh)
    ])
    made += window.appended
    window.appended = 0
    db.execute("DELETE FROM updates WHERE n <= ?", (made - (window.maxlen or 0),))
    state["pointed"] = sorted(ledger.history or {})
    return state, made


def kept_confidence(ledger: RatingLedger, kept: Any) -> tuple[Confidence, str | None]:
    """The ledger's confidence: computed once per state of the ratings in a process, else
    `kept` (what the state saved: [key, its JSON]) when it is of these same ratings, else
    computed; and what to save for the next render (None: what is kept is it)."""
    from arena.ratings.standings import confidence_key, confidence_of

    key = confidence_key(ledger)
    saved = None
    if isinstance(kept, list) and len(kept) == 2 and kept[0] == key:
        try:
            saved = Confidence.from_json(kept[1])
        except (ValueError, KeyError, TypeError, AttributeError):  # another method's, or damaged: computed again
            saved = None
    confidence = confidence_of(ledger, key=key, saved=saved)
    return confidence, None if saved is not None else json.dumps([key, confidence.to_json()], separators=(",", ":"))
