"""One shared API test that runs against every registered game (as PettingZoo does)."""

from __future__ import annotations

import json
import random

import pytest

from engine import (
    BadOption,
    BadPlayerCount,
    IllegalAction,
    OptionSpec,
    UnknownGame,
    all_games,
    get_game,
)
from engine.players import random_action

GAMES = [game.name for game in all_games()]


def test_both_games_are_registered():
    assert GAMES == ["3up3down", "three-thirteen"]


def test_unknown_game_names_the_known_ones():
    with pytest.raises(UnknownGame) as caught:
        get_game("chess")
    assert "chess" in str(caught.value)
    for name in GAMES:
        assert name in str(caught.value)


def test_option_spec_checks_type_range_and_choices():
    count = OptionSpec("max_turns", int, 1000, "cap", min=1)
    assert count.parse("12") == 12
    with pytest.raises(BadOption, match=r"'max_turns' got 'lots'; allowed: an integer >= 1"):
        count.parse("lots")
    with pytest.raises(BadOption, match=r"allowed: an integer >= 1"):
        count.check(0)
    with pytest.raises(BadOption):
        count.check(True)
    deck = OptionSpec("deck", str, "box", "which deck", choices=("box", "classic"))
    assert deck.parse("classic") == "classic"
    with pytest.raises(BadOption, match=r'allowed: one of "box", "classic"'):
        deck.parse("poker")
    flag = OptionSpec("points", bool, False, "score")
    assert flag.parse("on") is True and flag.parse("false") is False
    with pytest.raises(BadOption, match="true or false"):
        flag.parse("maybe")


@pytest.mark.parametrize("name", GAMES)
def test_unknown_option_is_refused_with_the_known_ones(name):
    game = get_game(name)
    with pytest.raises(BadOption) as caught:
        game.new_game(game.min_players, {"no_such_rule": True}, seed=1)
    for spec in game.options:
        assert spec.name in str(caught.value)


@pytest.mark.parametrize("name", GAMES)
def test_every_option_default_passes_its_own_check(name):
    game = get_game(name)
    resolved = game.resolve_options({})
    assert resolved == {spec.name: spec.default for spec in game.options}
    for spec in game.options:
        assert spec.help and spec.check(spec.default) == spec.default


@pytest.mark.parametrize("name", GAMES)
def test_player_count_outside_the_range_is_refused(name):
    game = get_game(name)
    for players in (game.min_players - 1, game.max_players + 1):
        with pytest.raises(BadPlayerCount, match=f"{game.min_players} to {game.max_players}"):
            game.new_game(players, seed=1)


@pytest.mark.parametrize("name", GAMES)
def test_illegal_action_leaves_the_state_unchanged(name):
    game = get_game(name)
    state = game.new_game(game.min_players, seed=3)
    before = [state.observation(seat) for seat in range(state.players)]
    with pytest.raises(IllegalAction, match="legal:"):
        state.apply({"type": "no-such-action"})
    with pytest.raises(IllegalAction, match="out of range"):
        state.apply_index(len(state.legal_actions()))
    assert [state.observation(seat) for seat in range(state.players)] == before
    assert state.history == []


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_a_random_game_is_json_clean_and_ends_with_places(name, players):
    game = get_game(name)
    state = game.new_game(players, seed=players * 11)
    rng = random.Random(players)
    steps = 0
    while not state.is_over:
        seat = state.current_player
        assert seat is not None and 0 <= seat < players
        legal = state.legal_actions()
        assert legal and legal == state.legal_actions()  # stable order
        json.dumps(legal)
        json.dumps(state.observation(seat))
        state.apply(random_action(state, rng))
        steps += 1
    assert state.current_player is None and state.legal_actions() == []
    places = state.places()
    assert len(places) == players and min(places) == 1
    assert all(1 <= place <= players for place in places)
    json.dumps(state.events())
    json.dumps(state.scores())
    json.dumps(state.spectator_view())
    replayed = game.replay(players, state.options, state.seed, state.actions)
    assert replayed.places() == places and replayed.events() == state.events()
    assert len(state.actions) == steps
