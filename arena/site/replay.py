"""Replay data for the site's game pages: a stored game re-simulated once into compact frames.

The referee stores a game as its seed, rules and actions. Here the engine replays it and,
after every action, records the table as a spectator sees it (everything) and, for each
seat, what `state.observation(seat)` showed that seat. Each game turns both into the same
small "table" of zones (lists of card ids, counts, flags) with the builders its
`Game.replay_tables()` returns (they live in the game's folder, `engine/<game>/replay.py`;
the zones' contract is engine/replay_tables.py), so this module knows no game and the
browser needs no copy of the rules.

Beside the frames: the record's facts (seed, rules, places, scores; what the page's
download gives, enough to re-simulate the game) and, per step, the acting bot's decision
as the referee recorded it (`decisions`: [think_s, legal, stderr lines], or None; None as a
whole for a game stored before these were kept); the legal actions the acting bot chose
from (`legal`: per step the number of the chosen action then those of the legal
actions, numbers into `actions`, where each distinct action is written once; None for a
fallback step; at most LEGAL_SHOWN a step, `decisions` says how many there were); and each forfeit at the step where it shows (`faults`: [step, seat, reason,
detail, the bot's last stderr lines]: the first step of that seat from its fault on).

Compactness (a long game is over 3,000 actions):
- cards are ids; each card's face (the game's `card_face`) is written once, in `cards`;
- a frame stores only the zones that changed since the previous frame, and a list that
  only grew or shrank at its end is stored as `{"k": kept, "t": [new tail]}`;
- a seat's view is the full view passed through `mask` (other hands become counts,
  face-down cards become backs, only the seat's own setup offer is kept); only where the
  seat's real observation differs from that (e.g. setup choices hidden until a reveal)
  is an exception stored, itself diffed. `replay_frames` checks every seat's view
  rebuilt this way equals the observation-derived one.
The same `mask` and diff rules are implemented in `templates/assets/replay.js`.

Speed: a game whose seats' tables are exactly the mask of its full table (no exceptions)
gives `ReplayTables.state`, the full table read from the state; then only every
SPOT_CHECK-th step asks the engine for every seat's observation, to check that claim (a
step where it fails starts the game again the slow way, every step checked).

On disk (`script_text`): the small facts as JSON (format, game, rules, seed, seats,
places, scores, forfeits, faults, or error) and the bulk (PACKED: decisions, actions,
legal, cards, steps, frames) as one zlib-compressed JSON, base64, in `z`; the viewer
inflates it (DecompressionStream) before it draws. A long game's replay is 5-7x smaller
so (docs/performance.md, "The site"); `read_script` gives the data back.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable
from typing import Any

from arena.game.record import GameResult
from engine.api import GameError
from engine.registry import get_game
from engine.replay_tables import ReplayTables, Table

FORMAT = 4  # bump when the data shape changes: cached replay files carry it in their name

PACKED = ("decisions", "actions", "legal", "cards", "steps", "frames")  # compressed into `z`
SPOT_CHECK = 64  # with a state table: every seat's observation checked at this step interval
UNPACKED_LIMIT = 256 * 1024 * 1024  # read_script refuses a `z` that inflates beyond this


LEGAL_SHOWN = 200  # legal actions kept per step (the count of all of them is in `decisions`)
FAULT_LINES = 20  # stderr lines kept with a forfeit


class ReplayUnavailable(Exception):
    """A stored game cannot be shown as a replay (its actions do not re-simulate)."""


# --- masking and diffs (mirrored in replay.js) -------------------------------------------


def mask(full: Table, seat: int) -> Table:
    """What a seat sees of the full table by the general rule: others' hands (`h<seat>`) as
    counts, every face-down card (`down`) as a back, only its own setup offer (`setup`).
    Exceptions are stored per frame."""
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


def _collect_cards(value: Any, card_face: Callable[[dict[str, Any]], list[Any] | None], cards: dict[int, list[Any]]) -> Any:
    """Replace every card object in an event by its id, remembering the card's face."""
    if isinstance(value, dict):
        face = card_face(value)
        if face is not None:
            cards.setdefault(value["id"], face)
            return value["id"]
        return {key: _collect_cards(item, card_face, cards) for key, item in value.items()}
    if isinstance(value, list):
        return [_collect_cards(item, card_face, cards) for item in value]
    return value


def _tables(name: str) -> ReplayTables:
    """The game's replay-table builders, or ReplayUnavailable when it has no viewer."""
    try:
        tables = get_game(name).replay_tables()
    except GameError:
        tables = None
    if tables is None:
        raise ReplayUnavailable(f"no replay viewer for game {name!r}")
    return tables


class _NotMasked(Exception):
    """A game's `state` table, or a seat's own table, differs from what the fast path assumes."""


def _action_key(action: dict[str, Any]) -> Any:
    """A hashable key equal for equal actions (type-exact: 1, 1.0 and True differ)."""
    items = sorted(action.items())
    key = (tuple(items), tuple([value.__class__ for _, value in items]))
    try:
        hash(key)
        return key
    except TypeError:  # a list or dict inside: compare by JSON
        return json.dumps(action, sort_keys=True)


def replay_frames(result: GameResult) -> dict[str, Any]:
    """Re-simulate a stored game into the viewer's data (see the module docstring)."""
    tables = _tables(result.game)
    if tables.state is not None:
        try:
            return _replay_frames(result, tables, fast=True)
        except _NotMasked:
            pass
    return _replay_frames(result, tables, fast=False)


def _replay_frames(result: GameResult, tables: ReplayTables, fast: bool) -> dict[str, Any]:
    full_table, seat_table, card_face, state_table = tables.full, tables.seat, tables.card_face, tables.state
    try:
        game = get_game(result.game)
        if result.rules_version is not None and result.rules_version != game.rules_version:
            raise ReplayUnavailable(
                f"the game was played under rules version {result.rules_version}; this arena plays version "
                f"{game.rules_version} and cannot show it again"
            )
        state = game.new_game(result.players, result.rules, result.seed)
    except GameError as error:
        raise ReplayUnavailable(f"the stored game cannot be set up again: {error}") from None
    players = state.players
    cards: dict[int, list[Any]] = {}
    steps: list[list[Any]] = []  # [seat, action, events?, "fallback"?] per action
    frames: list[list[Any]] = []
    seen_events = 0
    distinct: dict[Any, int] = {}  # an action's key -> its number in `actions`
    listed: list[dict[str, Any]] = []  # the distinct actions, in that order
    legal_steps: list[list[int] | None] = []
    previous_full: Table = {}
    previous_exceptions: list[Table] = [{} for _ in range(players)]
    no_exceptions = [{} for _ in range(players)]

    def number_of(action: dict[str, Any]) -> int:
        key = _action_key(action)
        number = distinct.get(key)
        if number is None:
            number = distinct[key] = len(listed)
            listed.append(action)
        return number

    def snapshot() -> None:
        nonlocal previous_full
        if fast:
            full = state_table(state)  # type: ignore[misc]
            if len(frames) % SPOT_CHECK == 0:
                views = [state.observation(seat) for seat in range(players)]
                if full != full_table(state, views) or any(
                    seat_table(views[seat], seat) != mask(full, seat) for seat in range(players)
                ):
                    raise _NotMasked
            frames.append([diff(previous_full, full), *no_exceptions])
            previous_full = full
            return
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
        options = None
        if step.by == "bot":  # [the chosen one, then each legal action], as numbers into `actions`
            options = [number_of(step.action), *(number_of(a) for a in state.legal_actions()[:LEGAL_SHOWN])]
        legal_steps.append(options)
        try:
            state.apply(step.action)
        except GameError as error:
            raise ReplayUnavailable(f"action {number + 1} of the stored game does not replay: {error}") from None
        public = state.events_since(None, seen_events)
        fresh = _collect_cards(public, card_face, cards)
        seen_events += len(public)
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
    if fast and (len(frames) - 1) % SPOT_CHECK != 0:  # the end is checked too
        views = [state.observation(seat) for seat in range(players)]
        if previous_full != full_table(state, views) or any(
            seat_table(views[seat], seat) != mask(previous_full, seat) for seat in range(players)
        ):
            raise _NotMasked
    # Every card the game dealt, so frames can name any id they show.
    deal_cards: dict[int, list[Any]] = {}
    _collect_cards(state.spectator_view(), card_face, deal_cards)
    _collect_cards(state.full_events(), card_face, deal_cards)
    deal_cards.update(cards)
    decisions = [
        None if step.think_s is None and step.legal is None and step.stderr is None
        else [step.think_s, step.legal, step.stderr]
        for step in result.replay.actions
    ]
    return {
        "format": FORMAT,
        "game": result.game,
        "rules": result.rules,
        "rules_version": result.rules_version,
        "seed": result.seed,
        "players": players,
        "seats": list(result.seats),
        "places": list(result.places),
        "scores": list(result.scores),
        "forfeits": list(result.forfeits),
        # Per step, the acting bot's decision (None for every step of an older game).
        "decisions": decisions if any(decisions) else None,
        "actions": listed,
        "legal": legal_steps if distinct else None,
        "faults": _faults(result),
        "cards": {str(card_id): face for card_id, face in sorted(deal_cards.items())},
        "steps": steps,
        "frames": frames,
    }


def _faults(result: GameResult) -> list[list[Any]]:
    """Each forfeit at the step where the viewer shows it: the first action of the seat
    from its fault on (the fallback player's first choice), with the bot's last lines."""
    from arena.site.pages import last_lines

    out = []
    for incident in result.incidents:
        if not incident.forfeit:
            continue
        step = next(
            (n for n, action in enumerate(result.replay.actions, 1) if n > incident.decision and action.seat == incident.seat),
            None,
        )
        if step is not None:
            out.append([step, incident.seat, incident.reason.value, incident.detail, last_lines(incident.log_tail, FAULT_LINES)])
    return out


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
    """A value as a data script holds it (a replay, a site's data, a bot's rows): compact
    JSON, ASCII, with nothing that closes a <script>."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")


def pack(data: dict[str, Any]) -> dict[str, Any]:
    """The replay data as stored: the PACKED keys compressed into `z` (see the docstring)."""
    bulk = {key: data[key] for key in PACKED if key in data}
    if not bulk:
        return dict(data)
    text = json.dumps(bulk, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    out = {key: value for key, value in data.items() if key not in bulk}
    out["z"] = base64.b64encode(zlib.compress(text, 6)).decode("ascii")
    return out


def unpack(stored: dict[str, Any]) -> dict[str, Any]:
    """`pack`'s inverse; ValueError for a `z` that is not one (or inflates past UNPACKED_LIMIT)."""
    if "z" not in stored:
        return dict(stored)
    try:
        inflater = zlib.decompressobj()
        text = inflater.decompress(base64.b64decode(stored["z"], validate=True), UNPACKED_LIMIT)
        if inflater.unconsumed_tail or not inflater.eof:
            raise ValueError("the replay's packed data is cut short or too large")
        bulk = json.loads(text)
    except (zlib.error, ValueError, TypeError) as error:
        raise ValueError(f"the replay's packed data does not read: {error}") from None
    if not isinstance(bulk, dict):
        raise ValueError("the replay's packed data is not an object")
    out = {key: value for key, value in stored.items() if key != "z"}
    out.update(bulk)
    return out


def script_text(data: dict[str, Any], key: str) -> str:
    """The replay as a script that registers it (file:// pages cannot fetch JSON)."""
    # Escaped for a <script> context: nothing in the data can close the tag or open a comment
    # (the packed part is base64: letters, digits, '+', '/', '=').
    payload = _script_json(pack(data))
    name = _script_json(key)
    return f"window.ARENA_REPLAYS=window.ARENA_REPLAYS||{{}};window.ARENA_REPLAYS[{name}]={payload};\n"


def read_script(text: str) -> dict[str, Any]:
    """The data of a replay script as `script_text` wrote it (unpacked); ValueError otherwise."""
    head, _, rest = text.partition("]=")
    if not head.startswith("window.ARENA_REPLAYS") or not rest:
        raise ValueError("not a replay script")
    try:
        stored = json.loads(rest.rstrip().rstrip(";"))
    except json.JSONDecodeError as error:
        raise ValueError(f"the replay script's data does not read: {error}") from None
    if not isinstance(stored, dict):
        raise ValueError("the replay script's data is not an object")
    return unpack(stored)
