"""Three Thirteen's replay tables for the site's viewer (drawn by `replay.js` beside this file).

Zones and their rules: engine/replay_tables.py. Both tables come from observations: the
union of every seat's observation is everything but the stock's order, which a
spectator does not need (`spectator_view()` would cost 5x more per frame).

A seat's table is exactly the mask of the full table (other hands as counts, nothing
else private), so the site builds the full table straight from the state
(`state_table`, the same table without the four observations a step: 5x faster) and
stores no per-seat exceptions; tests/site/test_report.py checks both against the observations
at every step.
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


def _meld_ids(melds: Any) -> list[dict[str, Any]]:
    return [{"kind": m.kind, "cards": list(m.cards), "ranks": list(m.ranks)} for m in melds]


_scored: list[Any] = [None, None]  # the last round result converted, and the dict it came from


def state_table(state: Any) -> Table:
    """`full_table` read from the state itself (equal to it at every step; no observations)."""
    results = state.round_results
    if not results:
        last = None
    elif _scored[0] is results[-1]:
        last = _scored[1]
    else:
        last = _last_round(results[-1])
        _scored[0], _scored[1] = results[-1], last
    taken = state.taken
    table: Table = {
        "phase": state.phase,
        "cur": state.current,
        "round": state.round,
        "wild": state.wild_rank,
        "dealer": state.dealer,
        "turn": state.turns,
        "stock": len(state.stock),
        "discard": list(state.discard_pile),
        "taken": taken,
        "went_out": state.went_out,
        "laid": _meld_ids(state.laid_down),
        "final_left": state.final_turns_left,
        "totals": list(state.totals),
        "last": last,
    }
    table.update(hand_zones([sorted(hand) for hand in state.hands]))
    return table


def card_face(card: dict[str, Any]) -> list[Any] | None:
    """[rank, suit] of a card object; None for any other dict."""
    if "id" in card and "suit" in card:
        return [card["rank"], card["suit"]]
    return None


TABLES = ReplayTables(
    full=full_table, seat=seat_table, card_face=card_face, script=Path(__file__).with_name("replay.js"), state=state_table
)
