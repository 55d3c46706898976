"""Replay data for the site's game pages: a stored game re-simulated once into compact frames.

The referee stores a game as its seed, rules and actions. Here the engine replays it and,
after every action, records the table as a spectator sees it (everything) and, for each
seat, what `state.observation(seat)` showed that seat. Both are normalised into the same
small "table" of zones (lists of card ids, counts, flags), so the browser draws any frame
with one function and needs no copy of the rules.

Compactness (a Three Thirteen game is over 3,000 actions):
- cards are ids; each card's face is written once, in `cards`;
- a frame stores only the zones that changed since the previous frame, and a list that
  only grew or shrank at its end is stored as `{"k": kept, "t": [new tail]}`;
- a seat's view is the full view passed through `mask` (other hands become counts,
  3DOWN cards become backs, only the seat's own setup offer is kept); only where the
  seat's real observation differs from that (e.g. 3UP choices hidden until the reveal)
  is an exception stored, itself diffed. `replay_frames` checks every seat's view
  rebuilt this way equals the observation-derived one.
The same `mask` and diff rules are implemented in `templates/assets/replay.js`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from arena.referee import GameResult
from engine.api import GameError
from engine.registry import get_game

FORMAT = 1  # bump when the data shape changes: cached replay files carry it in their name

Table = dict[str, Any]


class ReplayUnavailable(Exception):
    """A stored game cannot be shown as a replay (its actions do not re-simulate)."""


def _ids(cards: list[dict[str, Any]] | None) -> list[int] | None:
    return None if cards is None else [card["id"] for card in cards]


def _hands(hands: list[Any]) -> Table:
    """One zone per seat (h0, h1, ...) so a frame stores only the hand that changed."""
    return {f"h{seat}": cards for seat, cards in enumerate(hands)}


# --- 3UP 3DOWN ---------------------------------------------------------------------------


def _threeup_common(view: dict[str, Any]) -> Table:
    table: Table = {
        "phase": view["phase"],
        "cur": view["current_player"],
        "turn": view["turn"],
        "dir": view["direction"],
        "draw": view["draw_pile_size"],
        "discard": _ids(view["discard_pile"]),
        "removed": _ids(view["removed"]),
        "finished": list(view["finished"]),
        "chosen": list(view["chosen_up"]),
        "up": None if view["up"] is None else [_ids(cards) for cards in view["up"]],
        "left": view.get("actions_left"),
        "src": view.get("source"),
    }
    if view["phase"] == "over":
        table["end"] = {"places": view["places"], "scores": view["scores"], "reason": view.get("end_reason")}
    return table


def _threeup_full(state: Any, views: list[dict[str, Any]]) -> Table:
    view = state.spectator_view()
    table = _threeup_common(view)
    table.update(_hands([_ids(cards) for cards in view["hands"]]))
    table["down"] = [[None if card is None else card["id"] for card in slots] for slots in view["down_cards"]]
    table["setup"] = [_ids(cards) for cards in view["setup_cards"]]
    return table


def _threeup_seat(view: dict[str, Any], seat: int) -> Table:
    table = _threeup_common(view)
    sizes = view["hand_sizes"]
    table.update(_hands([_ids(view["hand"]) if s == seat else sizes[s] for s in range(len(sizes))]))
    table["down"] = [[-1 if present else None for present in slots] for slots in view["down"]]
    # A seat knows only its own setup offer; the mask keeps only that one too.
    table["setup"] = None
    if view.get("setup_cards") is not None:
        table["setup"] = _ids(view["setup_cards"])
    if view.get("own_up") is not None:
        table["own_up"] = _ids(view["own_up"])
    return table


# --- Three Thirteen ----------------------------------------------------------------------


def _melds(melds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"kind": m["kind"], "cards": _ids(m["cards"]), "ranks": m["ranks"]} for m in melds]


def _last_round(last: dict[str, Any] | None) -> dict[str, Any] | None:
    if last is None:
        return None
    return {
        "round": last["round"],
        "wild": last["wild_rank"],
        "reason": last["reason"],
        "went_out": last["went_out"],
        "hands": [
            {"melds": _melds(hand["melds"]), "deadwood": _ids(hand["deadwood"]), "penalty": hand["penalty"]}
            for hand in last["hands"]
        ],
        "penalties": last["penalties"],
        "totals": last["totals"],
    }


def _thirteen_table(view: dict[str, Any], hands: list[Any]) -> Table:
    taken = view["taken_from_discard"]
    table: Table = {
        "phase": view["phase"],
        "cur": view["current_player"],
        "round": view["round"],
        "wild": view["wild_rank"],
        "dealer": view["dealer"],
        "turn": view["turn"],
        "stock": view["stock_size"],
        "discard": _ids(view["discard_pile"]),
        "taken": None if taken is None else taken["id"],
        "went_out": view["went_out"],
        "laid": _melds(view["laid_down"]),
        "final_left": view["final_turns_left"],
        "totals": list(view["totals"]),
        "last": _last_round(view["last_round"]),
    }
    table.update(_hands(hands))
    return table


def _thirteen_full(state: Any, views: list[dict[str, Any]]) -> Table:
    # The union of every seat's observation is everything but the stock's order, which a
    # spectator does not need; spectator_view() would cost 5x more per frame.
    return _thirteen_table(views[0], [_ids(view["hand"]) for view in views])


def _thirteen_seat(view: dict[str, Any], seat: int) -> Table:
    sizes = view["hand_sizes"]
    return _thirteen_table(view, [_ids(view["hand"]) if s == seat else sizes[s] for s in range(len(sizes))])


# Per game: the full table from (state, every seat's observation), and a seat's table
# from its observation.
_TABLES: dict[str, tuple[Callable[[Any, list[dict[str, Any]]], Table], Callable[[dict[str, Any], int], Table]]] = {
    "3up3down": (_threeup_full, _threeup_seat),
    "three-thirteen": (_thirteen_full, _thirteen_seat),
}


# --- masking and diffs (mirrored in replay.js) -------------------------------------------


def mask(full: Table, seat: int) -> Table:
    """What a seat sees of the full table by the general rule: others' hands as counts,
    every 3DOWN card as a back, only its own setup offer. Exceptions are stored per frame."""
    out = dict(full)
    for zone, cards in full.items():
        if zone[0] == "h" and zone[1:].isdigit() and int(zone[1:]) != seat and isinstance(cards, list):
            out[zone] = len(cards)
    if "down" in full:
        out["down"] = [[None if card is None else -1 for card in slots] for slots in full["down"]]
    if "setup" in full:
        out["setup"] = full["setup"][seat] if full["setup"] is not None else None
    return out


def _list_diff(old: Any, new: list[Any]) -> Any:
    """`new`, or {"k": n, "t": tail} when new keeps old's first n items (shorter to store)."""
    if not isinstance(old, list):
        return new
    kept = 0
    for a, b in zip(old, new):
        if a != b:
            break
        kept += 1
    if kept == 0:
        return new
    return {"k": kept, "t": new[kept:]}


def diff(old: Table, new: Table) -> Table:
    """The zones of `new` that differ from `old`; a zone gone from `new` is stored as {"x": 1}."""
    out: Table = {}
    for zone, value in new.items():
        if zone in old and old[zone] == value:
            continue
        scalars = isinstance(value, list) and value and not isinstance(value[0], (list, dict))
        out[zone] = _list_diff(old.get(zone), value) if scalars else value
    for zone in old:
        if zone not in new:
            out[zone] = {"x": 1}
    return out


def patch(old: Table, change: Table) -> Table:
    """Apply a `diff` result to `old` (the inverse of `diff`)."""
    out = dict(old)
    for zone, value in change.items():
        if isinstance(value, dict) and set(value) == {"k", "t"}:
            out[zone] = list(old[zone][: value["k"]]) + list(value["t"])
        elif isinstance(value, dict) and set(value) == {"x"}:
            out.pop(zone, None)
        else:
            out[zone] = value
    return out


# --- the frames --------------------------------------------------------------------------


def _collect_cards(value: Any, cards: dict[int, Any]) -> Any:
    """Replace every card object in an event by its id, remembering the card's face."""
    if isinstance(value, dict):
        if "id" in value and ("suit" in value or "kind" in value):
            cards.setdefault(value["id"], value)
            return value["id"]
        return {key: _collect_cards(item, cards) for key, item in value.items()}
    if isinstance(value, list):
        return [_collect_cards(item, cards) for item in value]
    return value


def _face(card: dict[str, Any]) -> list[Any]:
    if "suit" in card:
        return [card["rank"], card["suit"]]
    return [card["kind"], card["value"], card["colour"]]


def replay_frames(result: GameResult) -> dict[str, Any]:
    """Re-simulate a stored game into the viewer's data (see the module docstring)."""
    if result.game not in _TABLES:
        raise ReplayUnavailable(f"no replay viewer for game {result.game!r}")
    full_table, seat_table = _TABLES[result.game]
    try:
        game = get_game(result.game)
        state = game.new_game(result.players, result.rules, result.seed)
    except GameError as error:
        raise ReplayUnavailable(f"the stored game cannot be set up again: {error}") from None
    players = state.players
    cards: dict[int, Any] = {}
    steps: list[list[Any]] = []  # [seat, action, events?, "fallback"?] per action
    frames: list[list[Any]] = []
    seen_events = 0
    previous_full: Table = {}
    previous_exceptions: list[Table] = [{} for _ in range(players)]

    def snapshot() -> None:
        nonlocal previous_full
        views = [state.observation(seat) for seat in range(players)]
        full = full_table(state, views)
        frame: list[Any] = [diff(previous_full, full)]
        for seat in range(players):
            own = seat_table(views[seat], seat)
            masked = mask(full, seat)
            exceptions = {zone: value for zone, value in own.items() if zone not in masked or masked[zone] != value}
            frame.append(diff(previous_exceptions[seat], exceptions))
            previous_exceptions[seat] = exceptions
        frames.append(frame)
        previous_full = full

    snapshot()
    for number, step in enumerate(result.replay.actions):
        try:
            state.apply(step.action)
        except GameError as error:
            raise ReplayUnavailable(f"action {number + 1} of the stored game does not replay: {error}") from None
        public = state.events(None)
        fresh = _collect_cards(public[seen_events:], cards)
        seen_events = len(public)
        # The event that only repeats the action (a draw, a discard) is left out: the
        # viewer describes the action itself.
        if fresh and fresh[0].get("type") == step.action.get("type") and set(fresh[0]) <= {"type", "seat", "source", "card"}:
            fresh = fresh[1:]
        entry: list[Any] = [step.seat, step.action]
        if fresh or step.by != "bot":
            entry.append(fresh)
        if step.by != "bot":
            entry.append(step.by)
        steps.append(entry)
        snapshot()
    if not state.is_over:
        raise ReplayUnavailable("the stored actions end before the game is over")
    # Every card the game dealt, so frames can name any id they show.
    deal_cards: dict[int, Any] = {}
    _collect_cards(state.spectator_view(), deal_cards)
    _collect_cards(state.full_events(), deal_cards)
    deal_cards.update(cards)
    return {
        "format": FORMAT,
        "game": result.game,
        "players": players,
        "seats": list(result.seats),
        "cards": {str(card_id): _face(card) for card_id, card in sorted(deal_cards.items())},
        "steps": steps,
        "frames": frames,
    }


def rebuild(data: dict[str, Any], index: int, seat: int | None) -> Table:
    """The table shown at frame `index` (None = full view): what replay.js computes."""
    full: Table = {}
    exceptions: list[Table] = [{} for _ in range(data["players"])]
    for frame in data["frames"][: index + 1]:
        full = patch(full, frame[0])
        for s in range(data["players"]):
            exceptions[s] = patch(exceptions[s], frame[s + 1])
    if seat is None:
        return full
    out = mask(full, seat)
    out.update(exceptions[seat])
    return out


def _script_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")


def script_text(data: dict[str, Any], key: str) -> str:
    """The replay as a script that registers it (file:// pages cannot fetch JSON)."""
    # Escaped for a <script> context: nothing in the data can close the tag or open a comment.
    payload = _script_json(data)
    name = _script_json(key)
    return f"window.ARENA_REPLAYS=window.ARENA_REPLAYS||{{}};window.ARENA_REPLAYS[{name}]={payload};\n"
