"""The 3UP 3DOWN decks: which cards exist, their stable ids, and how a card is shown.

A deck is built in a fixed order (numbers by value and copy, then the Clear cards), so a
card id means the same card in every game played with the same `deck` and `colours`
options. That is handy for bots and a hazard for hiding: an id gives its card away, so
the id of a hidden card (3DOWN, draw pile, another seat's hand) is never shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

COLOURS = ("red", "blue", "green")

# Kinds as small ints on the hot path; their public names below.
NUMBER, CLEAR, CLEAR1, CLEAR2 = 0, 1, 2, 3
KIND_NAMES = ("number", "clear", "clear1", "clear2")
# Points of a card still held when the `points` option is on (numbers score face value).
CLEAR_POINTS = {CLEAR: 15, CLEAR1: 20, CLEAR2: 25}


@dataclass(frozen=True)
class Deck:
    """One deck: per-id tables of kind, value (0 for Clear cards), colour and points."""

    name: str
    colours: int
    kind: tuple[int, ...]
    value: tuple[int, ...]
    colour: tuple[int, ...]
    points: tuple[int, ...]
    # Cards with the same face (kind, value, colour) are interchangeable; plays list one of each.
    face: tuple[int, ...]
    # One number per card for the hot path: the value of a number card, 11/12/13 for
    # Clear/Clear +1/Clear +2 (which are above every number, so they play on anything).
    rank: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.kind)

    def card(self, card_id: int) -> dict[str, Any]:
        """The public face of a card: id, kind, value (None for Clear cards), colour."""
        return self._faces[card_id].copy()

    def cards(self, card_ids) -> list[dict[str, Any]]:
        """The public faces of several cards, in the given order."""
        faces = self._faces
        return [faces[card_id].copy() for card_id in card_ids]

    def shared_cards(self, card_ids) -> list[dict[str, Any]]:
        """`cards(card_ids)` sharing the deck's own face dicts: read-only, for observations.

        An observation is written to JSON and never changed; copying each face (eight
        piles and hands, some 40 cards, before every decision) cost more than the rest of
        building it.
        """
        return list(map(self._faces.__getitem__, card_ids))

    @cached_property
    def _faces(self) -> tuple[dict[str, Any], ...]:
        # Built once per deck; every caller gets its own copy (observations are the caller's).
        return tuple(
            {
                "id": card_id,
                "kind": KIND_NAMES[kind],
                "value": self.value[card_id] if kind == NUMBER else None,
                "colour": COLOURS[self.colour[card_id]],
            }
            for card_id, kind in enumerate(self.kind)
        )

    def ids(self, kind: str = "number", value: int | None = None, colour: str | None = None) -> list[int]:
        """Every id of the cards matching kind, value and colour (for tests and tools)."""
        if kind not in KIND_NAMES:
            raise ValueError(f"unknown card kind {kind!r}; kinds: {', '.join(KIND_NAMES)}")
        if colour is not None and colour not in COLOURS[: self.colours]:
            raise ValueError(f"colour {colour!r} is not in this deck; colours: {COLOURS[: self.colours]}")
        wanted_kind = KIND_NAMES.index(kind)
        return [
            card_id
            for card_id in range(len(self))
            if self.kind[card_id] == wanted_kind
            and (value is None or self.value[card_id] == value)
            and (colour is None or COLOURS[self.colour[card_id]] == colour)
        ]

    def describe(self, card_id: int) -> str:
        """A short human name of a card, e.g. `7r#40` or `C+1b#75` (for golden replays)."""
        kind = self.kind[card_id]
        head = str(self.value[card_id]) if kind == NUMBER else ("C", "C+1", "C+2")[kind - 1]
        return f"{head}{COLOURS[self.colour[card_id]][0]}#{card_id}"


def _box_cards(colours: int) -> list[tuple[int, int, int]]:
    """The boxed game [004]: 7 of each value 1-10, 7 Clear, 6 Clear +1, 1 Clear +2 (84)."""
    cards: list[tuple[int, int, int]] = []
    # Ruling: copies are coloured red, blue, green in turn; the one Clear +2 is green.
    # Not an option: the box page gives no split, so there is no other reading to offer.
    for value in range(1, 11):
        cards += [(NUMBER, value, copy % 3) for copy in range(7)]
    cards += [(CLEAR, 0, copy % 3) for copy in range(7)]
    cards += [(CLEAR1, 0, copy % 3) for copy in range(6)]
    cards.append((CLEAR2, 0, 2))
    return [card for card in cards if card[2] < colours]


def _classic_cards(colours: int) -> list[tuple[int, int, int]]:
    """The web pages' deck [000-002]: per colour two of 1-10, two Clear, two Clear +1;
    green also two Clear +2. That is 74 cards, not the 84 the pages claim."""
    cards: list[tuple[int, int, int]] = []
    for value in range(1, 11):
        cards += [(NUMBER, value, colour) for colour in range(3) for _ in range(2)]
    cards += [(CLEAR, 0, colour) for colour in range(3) for _ in range(2)]
    cards += [(CLEAR1, 0, colour) for colour in range(3) for _ in range(2)]
    cards += [(CLEAR2, 0, 2), (CLEAR2, 0, 2)]
    return [card for card in cards if card[2] < colours]


@lru_cache(maxsize=None)
def build_deck(name: str, colours: int) -> Deck:
    """The deck `name` ("box" or "classic") with the first `colours` colours (red, blue, green)."""
    if name == "box":
        cards = _box_cards(colours)
    elif name == "classic":
        cards = _classic_cards(colours)
    else:
        raise ValueError(f"unknown deck {name!r}; decks: box, classic")
    kind = tuple(card[0] for card in cards)
    value = tuple(card[1] for card in cards)
    colour = tuple(card[2] for card in cards)
    points = tuple(v if k == NUMBER else CLEAR_POINTS[k] for k, v in zip(kind, value))
    face = tuple(k * 1000 + v * 10 + c for k, v, c in cards)
    rank = tuple(v if k == NUMBER else 10 + k for k, v in zip(kind, value))
    return Deck(name, colours, kind, value, colour, points, face, rank)
