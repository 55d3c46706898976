"""A league's own state, saved in its store after each batch so that a resume rates only
the games stored after it (issue 27, part 4: a league of a million games resumes without
rating its history, nor holding it in memory).

What is saved (one row of the store's `saved_state` table, `NAME`): the matchmaker's
ledger (batches 1 .. `lag_through`) and the standings' ledger (batches 1 ..
`full_through`, with the last `confidence.WINDOW` updates its confidence re-rates), each
bit for bit (`RatingLedger.snapshot`); the forfeit streaks as of `lag_through`; how many
games each bot was scheduled for, by seat, through batch `counted_through`, and how many
games that is (`counted`).

It is never trusted blindly (`load`): the blob starts with the sha256 of what follows; it
names the league's settings fingerprint, the rating settings, the confidence window and
the digest of the code that rates (`CODE`); each ledger's count of games and its last key
must be the store's for its batches (`arena.league.ladder` checks those). Anything else (an
older arena's, another league's, a torn or edited row) is ignored and the league rates its
history from the start, streaming it (`rated_after`), as it does without a saved state.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zlib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import trueskill

from arena.ratings import confidence
from arena.ratings.ledger import RatedGame, RatingSettings

NAME = "league"  # the row of `saved_state`
FORMAT = 1  # of the saved JSON; another one is ignored


@cache
def code_digest() -> str:
    """sha256 of the code whose results a saved ledger holds: the ledger, its TrueSkill
    updates and maths (`arena.ratings.skills`, `trueskill_ffa`), how it is saved
    (`RatingLedger.snapshot`, in the ledger's module), this module, and the trueskill package's version (any
    change: rate again)."""
    here = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(trueskill.__version__.encode())
    for part in (
        "ratings/ledger.py", "ratings/skills.py", "ratings/trueskill_ffa.py", "league/saved_state.py",
    ):
        digest.update((here / part).read_bytes())
    return digest.hexdigest()


def _label(fingerprint: str | None, rating: RatingSettings, duplicate: bool) -> dict[str, Any]:
    """What a saved state must have been made under to be used."""
    return {
        "format": FORMAT,
        "fingerprint": fingerprint,
        "rating": dataclasses.asdict(rating),
        "duplicate": duplicate,
        "window": confidence.WINDOW,
        "code": code_digest(),
    }


def encode(state: dict[str, Any], fingerprint: str | None, rating: RatingSettings, duplicate: bool) -> bytes:
    """The blob kept in the store: sha256 of the JSON, then the JSON compressed."""
    body = json.dumps({**_label(fingerprint, rating, duplicate), **state}, separators=(",", ":")).encode()
    return hashlib.sha256(body).digest() + zlib.compress(body, 1)


def decode(blob: bytes | None, fingerprint: str | None, rating: RatingSettings, duplicate: bool) -> dict[str, Any] | None:
    """The state in `blob` when it is whole and was made under these settings and this
    code; None otherwise (never an exception: a bad state only means rating again)."""
    if blob is None or len(blob) <= 32:
        return None
    try:
        body = zlib.decompress(blob[32:])
    except zlib.error:
        return None
    if hashlib.sha256(body).digest() != blob[:32]:
        return None
    try:
        state = json.loads(body)
    except ValueError:
        return None
    if not isinstance(state, dict):
        return None
    label = _label(fingerprint, rating, duplicate)
    if any(state.get(key) != value for key, value in label.items()):
        return None
    return state


def rated_after(store: Any, batch: int, duplicate: bool) -> Iterator[RatedGame]:
    """Every finished game after batch `batch` as the rating takes it, in schedule order,
    streamed from the store (`Store.results_after`): one game in memory at a time."""
    for key, deal, seats in store.results_after(batch):
        yield RatedGame(
            key=key,
            bots=tuple(bot for bot, _, _ in seats),
            places=tuple(place for _, place, _ in seats),
            forfeits=tuple(forfeit for _, _, forfeit in seats),
            deal=deal if duplicate else None,
        )
