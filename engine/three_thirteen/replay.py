"""Three Thirteen's replay tables for the site's viewer (drawn by `replay.js` beside this file).

Zones and their rules: engine/replay_tables.py. Both tables come from observations: the
union of every seat's observation is everything but the stock's order, which a
spectator does not need (`spectator_view()` would cost 5x more per frame).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.replay_tables import ReplayTables, Table, card_ids, hand_zones


def _melds(melds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"kind": m["kind"], "cards": card_ids(m["cards"]), "ranks": m["ranks"]} for m in melds]


def _last_round(last: dict[str, Any] | None) -> dict[str, Any] | None:
    if last is None:
        return None
    return {
        "round": last["round"],
        "wild": last["wild_rank"],
        "reason": last["reason"],
        "went_out": last["went_out"],
        "hands": [
            {"melds": _melds(hand["melds"]), "deadwood": card_ids(hand["deadwood"]), "penalty": hand["penalty"]}
            for hand in last["hands"]
        ],
        "penalties": last["penalties"],
        "totals": last["totals"],
    }


def _table(view: dict[str, Any], hands: list[Any]) -> Table:
    taken = view["taken_from_discard"]
    table: Table = {
        "phase": view["phase"],
        "cur": view["current_player"],
        "round": view["round"],
        "wild": view["wild_rank"],
        "dealer": view["dealer"],
        "turn": view["turn"],
        "stock": view["stock_size"],
        "discard": card_ids(view["discard_pile"]),
        "taken": None if taken is None else taken["id"],
        "went_out": view["went_out"],
        "laid": _melds(view["laid_down"]),
        "final_left": view["final_turns_left"],
        "totals": list(view["totals"]),
        "last": _last_round(view["last_round"]),
    }
    table.update(hand_zones(hands))
    return table


def full_table(state: Any, views: list[dict[str, Any]]) -> Table:
    """Everything a spectator needs: every hand, from every seat's observation."""
    return _table(views[0], [card_ids(view["hand"]) for view in views])


def seat_table(view: dict[str, Any], seat: int) -> Table:
    """What `seat` saw: its observation as a table."""
    sizes = view["hand_sizes"]
    return _table(view, [card_ids(view["hand"]) if s == seat else sizes[s] for s in range(len(sizes))])


def card_face(card: dict[str, Any]) -> list[Any] | None:
    """[rank, suit] of a card object; None for any other dict."""
    if "id" in card and "suit" in card:
        return [card["rank"], card["suit"]]
    return None


TABLES = ReplayTables(full=full_table, seat=seat_table, card_face=card_face, script=Path(__file__).with_name("replay.js"))
