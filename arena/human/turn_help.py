"""What a game adds to a person's turn, computed from that seat's own observation and
legal actions only (never from the state): Three Thirteen's combinations that each way of
going out would lay down. A game without an entry adds nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.api import Action, Observation

Hint = Callable[[Observation, list[Action]], dict[str, Any]]


def _three_thirteen(rules: dict[str, Any]) -> Hint:
    from engine.three_thirteen.game import meld_view
    from engine.three_thirteen.melds import best_arrangement

    def hint(observation: Observation, legal: list[Action]) -> dict[str, Any]:
        hand = [card["id"] for card in observation["hand"]]
        going_out = {}
        for action in legal:
            if action["type"] != "go_out":
                continue
            rest = list(hand)
            rest.remove(action["card"])
            arrangement = best_arrangement(
                rest, observation["wild_rank"], rules["ace_high"], wild_penalty=rules["wild_penalty"] or None,
                all_wild=rules["all_wild_combinations"],
            )
            going_out[str(action["card"])] = [meld_view(meld) for meld in arrangement.melds]
        return {"go_out": going_out} if going_out else {}

    return hint


HINTS: dict[str, Callable[[dict[str, Any]], Hint]] = {"three-thirteen": _three_thirteen}


def hint_for(game: str, rules: dict[str, Any]) -> Hint | None:
    """The game's turn hint under these (resolved) rules, or None."""
    make = HINTS.get(game)
    return None if make is None else make(rules)
