"""Each game's declared shapes (`Game.observation_type`, `Game.action_type`), as the JSON
Schema `arena schema --game G` prints, accept every observation and legal action of real
games (every seat, every step, both phases of 3UP 3DOWN, every round of Three Thirteen
with its go-outs) and refuse wrong ones."""

from __future__ import annotations

import copy
import json
import random

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from arena.game.protocol import game_adapters, game_json_schema, json_schema
from engine import GameError, all_games, get_game
from tests.command import arena

GAMES = [game.name for game in all_games()]


class Shapes:
    """A game's declared shapes two ways: pydantic's validators (fast: every step) and the
    JSON Schema they print, read by the jsonschema package (slow: a sample of steps)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.observation_type, self.action_type = game_adapters(get_game(name))
        schema = game_json_schema(get_game(name))
        for part in ("observation", "action"):
            Draft202012Validator.check_schema(schema[part])
        self.observation_schema = Draft202012Validator(schema["observation"])
        self.action_schema = Draft202012Validator(schema["action"])

    def check(self, views: list[dict], legal: list[dict], *, schema: bool) -> None:
        """Every view and action fits (as the JSON a bot reads); with `schema` also the JSON Schema."""
        for view in views:
            self.observation_type.validate_json(json.dumps(view), strict=True)
            if schema:
                errors = [error.message for error in self.observation_schema.iter_errors(view)]
                assert errors == [], f"{self.name} turn {view['turn']} seat {view['seat']}: {errors[:3]}"
        for action in legal:
            self.action_type.validate_json(json.dumps(action), strict=True)
            if schema:
                assert self.action_schema.is_valid(action), action

    def refuses_observation(self, view: dict) -> bool:
        return not self.observation_schema.is_valid(view) and not _pydantic_ok(self.observation_type, view)

    def refuses_action(self, action: dict) -> bool:
        return not self.action_schema.is_valid(action) and not _pydantic_ok(self.action_type, action)


def _pydantic_ok(adapter, value: dict) -> bool:
    try:
        adapter.validate_json(json.dumps(value), strict=True)
    except ValidationError:
        return False
    return True


def play_and_check(name: str, players: int, seed: int, rules: dict) -> list[tuple[list[dict], list[dict]]]:
    """Play a seeded random game, checking every seat's observation and every legal action at
    every step; returns each step's views (every seat) and legal actions."""
    shapes = Shapes(name)
    state = get_game(name).new_game(players, rules, seed)
    rng = random.Random(seed)
    seen = []
    step = 0
    while True:
        views = [state.observation(seat) for seat in range(players)]
        legal = state.legal_actions()
        shapes.check(views, legal, schema=step % 40 == 0 or state.is_over)
        seen.append((views, legal))
        if state.is_over:
            return seen
        state.apply(legal[rng.randrange(len(legal))])
        step += 1


def test_every_game_declares_its_shapes():
    for name in GAMES:
        game = get_game(name)
        assert game.observation_type is not None and game.action_type is not None, name
        schema = game_json_schema(game)
        assert schema["game"] == name
        game_field = schema["observation"]["properties"]["game"]
        # pydantic 2.6 leaves out the "type": "string" newer ones put beside the const: arena says the const
        assert (game_field["const"], game_field["title"], game_field.get("type", "string")) == (name, "Game", "string")


THREEUP_GAMES = [
    (2, 1, {}),
    (4, 2, {"colour_run_swap": True, "may_draw_instead": True, "refill": "one_card", "secret_setup": False, "ones_reverse": True}),
    (3, 3, {"play_for_places": False, "choose_for_others": True, "swap_stacks": True, "points": True}),
    (5, 5, {"deck": "classic", "max_turns": 200}),
    (6, 4, {"max_turns": 60, "first_player": "random", "clears_together": True}),
]


def test_every_3up3down_observation_and_legal_action_fits_the_declared_shapes():
    phases, types, reasons, keys = set(), set(), set(), set()
    for players, seed, rules in THREEUP_GAMES:
        for views, legal in play_and_check("3up3down", players, seed, rules):
            phases.add(views[0]["phase"])
            types.update(action["type"] for action in legal)
            for view in views:
                keys.update(view)
            if views[0]["phase"] == "over":
                reasons.add(views[0]["end_reason"])
    assert phases == {"setup", "play", "refill", "swap", "over"}
    assert types == {"choose_up", "play", "play_down", "pickup", "draw", "refill", "no_refill", "swap", "keep"}
    assert reasons == {"finished", "first_finisher", "max_turns"}
    # Every key the shape declares, the optional ones included, occurred.
    assert keys == set(get_game("3up3down").observation_type.__annotations__)


THIRTEEN_GAMES = [
    (2, 2, {"max_turns_per_round": 30}),
    (3, 1, {"empty_stock": "end_round", "decks": 1, "ace_high": True, "max_turns_per_round": 40}),
    (4, 2, {"max_turns_per_round": 24}),
    (5, 3, {"max_turns_per_round": 10}),
    (6, 4, {"max_turns_per_round": 10, "wild_penalty": 20}),
]


def test_every_three_thirteen_observation_and_legal_action_fits_the_declared_shapes():
    phases, types, rounds, endings = set(), set(), set(), set()
    went_out_seen = False
    for players, seed, rules in THIRTEEN_GAMES:
        for views, legal in play_and_check("three-thirteen", players, seed, rules):
            view = views[0]
            phases.add(view["phase"])
            types.update(action["type"] for action in legal)
            rounds.add(view["round"])
            if view["last_round"] is not None:
                endings.add(view["last_round"]["reason"])
            went_out_seen = went_out_seen or bool(view["laid_down"])
    assert phases == {"draw", "discard", "over"}
    assert types == {"draw", "discard", "go_out"}
    assert rounds == set(range(1, 12))
    assert endings == {"went_out", "turn_cap", "stock_exhausted"}
    assert went_out_seen  # an observation with the combinations laid down by a player going out


def view_after(name: str, players: int, seed: int, steps: int) -> dict:
    """The current seat's observation after the first legal action `steps` times, as JSON."""
    state = get_game(name).new_game(players, {}, seed)
    for _ in range(steps):
        state.apply(state.legal_actions()[0])
    return json.loads(json.dumps(state.observation(state.current_player)))


def changed(view: dict, change) -> dict:
    wrong = copy.deepcopy(view)
    change(wrong)
    return wrong


def test_the_3up3down_shapes_refuse_wrong_ones():
    shapes = Shapes("3up3down")
    view = view_after("3up3down", 3, 7, 5)
    assert view["phase"] == "play" and not shapes.refuses_observation(view)
    assert not shapes.refuses_action({"type": "play", "cards": [58]})
    for wrong in (
        {"type": "play"},  # no cards
        {"type": "play", "cards": [5.5]},
        {"type": "play", "cards": 58},
        {"type": "play_down", "position": "0"},
        {"type": "pickup", "cards": []},  # a key the action does not have
        {"type": "swap", "up": 3},
        {"type": "fly"},
        {"cards": [58]},
    ):
        assert shapes.refuses_action(wrong), wrong
    for change in (
        lambda v: v["hand"][0].update(colour="purple"),
        lambda v: v.pop("turn"),
        lambda v: v.update(draw_pile=[]),  # hidden: never a key of an observation
        lambda v: v.update(phase="draw"),
        lambda v: v.update(direction=2),
        lambda v: v["down"][0].__setitem__(0, 17),
    ):
        assert shapes.refuses_observation(changed(view, change))


def test_the_three_thirteen_shapes_refuse_wrong_ones():
    shapes = Shapes("three-thirteen")
    view = view_after("three-thirteen", 3, 7, 1)
    assert view["phase"] == "discard" and not shapes.refuses_observation(view)
    assert not shapes.refuses_action({"type": "go_out", "card": 8})
    for wrong in (
        {"type": "draw", "source": "deck"},
        {"type": "draw"},
        {"type": "discard", "card": True},
        {"type": "discard", "card": "8"},
        {"type": "discard", "card": 8, "source": "stock"},
        {"type": "pickup"},
    ):
        assert shapes.refuses_action(wrong), wrong
    for change in (
        lambda v: v["hand"][0].update(suit="X"),
        lambda v: v.update(stock=[]),  # the stock's order is never shown
        lambda v: v.update(phase="play"),
        lambda v: v.pop("last_round"),
        lambda v: v.update(laid_down=[{"kind": "pair", "cards": [], "ranks": []}]),
    ):
        assert shapes.refuses_observation(changed(view, change))


def test_arena_schema_game_prints_the_games_shapes_and_plain_schema_the_protocol():
    for name in GAMES:
        run = arena("schema", "--game", name)
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout) == game_json_schema(get_game(name))
    plain = arena("schema")
    assert plain.returncode == 0 and json.loads(plain.stdout) == json_schema()
    unknown = arena("schema", "--game", "chess")
    assert unknown.returncode == 2
    assert unknown.stderr == "arena: error: unknown game 'chess'; known games: 3up3down, three-thirteen\n"


def test_a_game_without_declared_shapes_says_so():
    class Bare(type(get_game("3up3down"))):
        name = "bare"
        action_type = None

    with pytest.raises(GameError, match="game 'bare' does not declare the shapes of its observations and actions"):
        game_json_schema(Bare())
