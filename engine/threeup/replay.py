"""3UP 3DOWN's replay tables for the site's viewer (drawn by `replay.js` beside this file).

Zones and their rules: engine/replay_tables.py. The full table comes from
`spectator_view()` (3DOWN cards, every setup offer); a seat's table from its own
observation (other hands as counts, 3DOWN positions as backs, its own setup offer and,
before the reveal, its own 3UP choice).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.replay_tables import ReplayTables, Table, card_ids, hand_zones


def _common(view: dict[str, Any]) -> Table:
    table: Table = {
        "phase": view["phase"],
        "cur": view["current_player"],
        "turn": view["turn"],
        "dir": view["direction"],
        "draw": view["draw_pile_size"],
        "discard": card_ids(view["discard_pile"]),
        "removed": card_ids(view["removed"]),
        "finished": list(view["finished"]),
        "chosen": list(view["chosen_up"]),
        "up": None if view["up"] is None else [card_ids(cards) for cards in view["up"]],
        "left": view.get("actions_left"),
        "src": view.get("source"),
    }
    if view["phase"] == "over":
        table["end"] = {"places": view["places"], "scores": view["scores"], "reason": view.get("end_reason")}
    return table


def full_table(state: Any, views: list[dict[str, Any]]) -> Table:
    """Everything: every hand, the 3DOWN cards, every setup offer."""
    view = state.spectator_view()
    table = _common(view)
    table.update(hand_zones([card_ids(cards) for cards in view["hands"]]))
    table["down"] = [[None if card is None else card["id"] for card in slots] for slots in view["down_cards"]]
    table["setup"] = [card_ids(cards) for cards in view["setup_cards"]]
    return table


def seat_table(view: dict[str, Any], seat: int) -> Table:
    """What `seat` saw: its observation as a table."""
    table = _common(view)
    sizes = view["hand_sizes"]
    table.update(hand_zones([card_ids(view["hand"]) if s == seat else sizes[s] for s in range(len(sizes))]))
    table["down"] = [[-1 if present else None for present in slots] for slots in view["down"]]
    # A seat knows only its own setup offer; the mask keeps only that one too.
    table["setup"] = None
    if view.get("setup_cards") is not None:
        table["setup"] = card_ids(view["setup_cards"])
    if view.get("own_up") is not None:
        table["own_up"] = card_ids(view["own_up"])
    return table


def card_face(card: dict[str, Any]) -> list[Any] | None:
    """[kind, value, colour] of a card object; None for any other dict."""
    if "id" in card and "kind" in card:
        return [card["kind"], card["value"], card["colour"]]
    return None


TABLES = ReplayTables(full=full_table, seat=seat_table, card_face=card_face, script=Path(__file__).with_name("replay.js"))
