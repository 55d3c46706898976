"""What a game gives the site's replay viewer: its "tables", the contract they follow, and helpers.

A replay table is one moment of a game as a small dict of zones (JSON-able: card ids,
counts, flags), built from what the engine shows. A game builds two (`ReplayTables`):
the full table from the state and every seat's observation, and a seat's table from that
seat's observation alone. The site (arena/site/replay.py) stores the full table per
step and rebuilds a seat's view from it by a general mask, storing only where the seat's
own table differs, so a game's zones follow these names:

- `h0`, `h1`, ...: one zone per seat's hand, a list of card ids in the full table and in
  the seat's own view, a count of cards (an int) in other seats' views;
- `down`: per seat, a list of face-down card ids (None: an empty position); every seat
  sees each card as a back (-1);
- `setup`: per seat, the cards it was offered privately; a seat sees only its own list;
- anything else: the same for every seat, unless the seat's own table says otherwise.

Cards are ids in tables; `card_face` turns a card object of an observation or event into
the compact face the game's viewer script draws (written once per card in the replay).
Each game's builders live in its folder (`engine/<game>/replay.py`), beside its viewer
script (`engine/<game>/replay.js`): the site's generic viewer (templates/assets/replay.js)
steps through the frames and loads that script, as `assets/replay-<game>.js`, to draw the
game's cards, words and table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Table = dict[str, Any]


@dataclass(frozen=True)
class ReplayTables:
    """A game's replay-table builders (returned by `Game.replay_tables()`)."""

    full: Callable[[Any, list[dict[str, Any]]], Table]
    """The full table: everything a spectator may see, from (state, every seat's observation)."""
    seat: Callable[[dict[str, Any], int], Table]
    """A seat's table, from (that seat's observation, seat)."""
    card_face: Callable[[dict[str, Any]], list[Any] | None]
    """The compact face of a card object (a list of its public fields); None when the dict is not a card."""
    script: Path
    """The game's viewer script (`replay.js` beside its builders), which draws these tables and
    faces in the browser; the site serves it as `assets/replay-<game>.js`."""
    state: Callable[[Any], Table] | None = None
    """Optional, for speed: the full table read from the state alone, for a game whose every
    seat's table is exactly the mask of the full table (no exceptions). The site then asks
    for no observation at most steps; it still compares the seats' own tables with the mask
    at the first step and every `SPOT_CHECK`-th one, and goes the slow way if one differs."""


def card_ids(cards: Sequence[dict[str, Any]] | None) -> list[int] | None:
    """The ids of a list of card objects (None stays None)."""
    return None if cards is None else [card["id"] for card in cards]


def hand_zones(hands: Sequence[Any]) -> Table:
    """One zone per seat (h0, h1, ...) so a frame stores only the hand that changed."""
    return {f"h{seat}": cards for seat, cards in enumerate(hands)}
