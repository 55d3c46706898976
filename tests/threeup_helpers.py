"""Helpers for the 3UP 3DOWN tests: name cards by face, build positions, find ids in views."""

from __future__ import annotations

import json
import re

from engine.threeup import GAME, build_deck

_SPEC = re.compile(r"^(C\+2|C\+1|C|10|[1-9])([rbg]?)$")
_COLOUR = {"r": "red", "b": "blue", "g": "green", "": None}
_KIND = {"C": "clear", "C+1": "clear1", "C+2": "clear2"}


class Cards:
    """Hands out distinct card ids by face: `cards("7r", "7", "C+1")` (lowest unused id first)."""

    def __init__(self, deck: str = "box", colours: int = 3):
        self.deck = build_deck(deck, colours)
        self.used: set[int] = set()

    def __call__(self, *specs: str) -> list[int]:
        return [self.one(spec) for spec in specs]

    def one(self, spec: str) -> int:
        match = _SPEC.match(spec)
        if not match:
            raise ValueError(f"bad card spec {spec!r}")
        head, colour = match.groups()
        if head in _KIND:
            ids = self.deck.ids(_KIND[head], colour=_COLOUR[colour])
        else:
            ids = self.deck.ids("number", int(head), _COLOUR[colour])
        for card in ids:
            if card not in self.used:
                self.used.add(card)
                return card
        raise ValueError(f"no unused card {spec!r} left")


def position(players: int = 2, options=None, **kwargs):
    """A constructed position (see ThreeUpGame.from_position); seats default to empty."""
    for name in ("hands", "up", "down"):
        kwargs.setdefault(name, [[] for _ in range(players)])
    return GAME.from_position(players, options, **kwargs)


def ids_in(view) -> set[int]:
    """Every card id that appears anywhere in an observation or event list."""
    found: set[int] = set()

    def walk(node):
        if isinstance(node, dict):
            if "id" in node and "kind" in node:
                found.add(node["id"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(json.dumps(view)))
    return found


def play(*cards: int) -> dict:
    """The play action for these ids (as the engine lists it: ids sorted)."""
    return {"type": "play", "cards": sorted(cards)}
