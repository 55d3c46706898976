"""Randomised invariants of Three Thirteen (hypothesis): cards are conserved, a seat's view
does not depend on what it may not know, every game ends with places, and a seed plus
the actions replay a game exactly."""

from __future__ import annotations

import copy
import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import get_game
from engine.players import random_action
from engine.three_thirteen.game import DISCARD

GAME = get_game("three-thirteen")

games = st.fixed_dictionaries(
    {
        "players": st.integers(2, 6),
        "seed": st.integers(0, 2**32),
        "player_seed": st.integers(0, 2**16),
        "options": st.fixed_dictionaries(
            {
                "ace_high": st.booleans(),
                "max_turns_per_round": st.integers(1, 40),
                "discard_taken_card": st.booleans(),
                "empty_stock": st.sampled_from(["reshuffle", "end_round"]),
                "all_wild_combinations": st.booleans(),
                "wild_penalty": st.sampled_from([0, 20]),
            }
        ),
    }
)

FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def all_cards(state):
    laid = [c for meld in state.laid_down for c in meld.cards]
    return sorted([c for hand in state.hands for c in hand] + state.stock + state.discard_pile + laid)


@FEW
@given(games)
def test_cards_are_conserved_and_hands_have_the_right_size(game):
    state = GAME.new_game(game["players"], game["options"], game["seed"])
    rng = random.Random(game["player_seed"])
    every = list(range(52 * state.decks))
    while not state.is_over:
        assert all_cards(state) == every
        dealt = state.round + 2
        for seat, hand in enumerate(state.hands):
            if seat == state.went_out:
                assert hand == []
            else:
                extra = 1 if (seat == state.current_player and state.phase == DISCARD) else 0
                assert len(hand) == dealt + extra
        state.apply(random_action(state, rng))


def hidden_twin(state, seat, rng):
    """A copy of `state` whose cards unknown to `seat` (other hands, stock) are re-dealt."""
    twin = copy.deepcopy(state)
    holders = [s for s in range(state.players) if s != seat]
    pool = [c for s in holders for c in twin.hands[s] if c != twin.taken] + twin.stock
    rng.shuffle(pool)
    for s in holders:
        for i, card in enumerate(twin.hands[s]):
            if card != twin.taken:
                twin.hands[s][i] = pool.pop()
    twin.stock = pool
    twin._legal = None
    return twin


@FEW
@given(games, st.integers(0, 2**16))
def test_no_seat_sees_hidden_cards(game, twin_seed):
    state = GAME.new_game(game["players"], game["options"], game["seed"])
    rng = random.Random(game["player_seed"])
    twin_rng = random.Random(twin_seed)
    steps = 0
    while not state.is_over:
        if steps % 7 == 0:
            for seat in range(state.players):
                twin = hidden_twin(state, seat, twin_rng)
                assert twin.observation(seat) == state.observation(seat)
                if seat == state.current_player and state.went_out is None and state.phase == DISCARD:
                    assert twin.legal_actions() == state.legal_actions()
        state.apply(random_action(state, rng))
        steps += 1
    public = state.events()
    for seat in range(state.players):
        mine = state.events(seat)
        assert len(mine) == len(public)
        for entry, seen, shown in zip(state._log, mine, public):
            if entry[0] == "draw" and entry[2] == "stock":
                assert "card" not in shown
                assert ("card" in seen) == (entry[1] == seat)
            elif entry[0] == "round_start":
                assert "hand" not in shown
                assert {k: v for k, v in seen.items() if k != "hand"} == shown
            else:
                assert seen == shown


@FEW
@given(games)
def test_every_game_ends_with_places_and_replays_identically(game):
    state = GAME.new_game(game["players"], game["options"], game["seed"])
    rng = random.Random(game["player_seed"])
    while not state.is_over:
        state.apply(random_action(state, rng))
    places, totals = state.places(), state.scores()
    assert sorted(places)[0] == 1 and len(places) == game["players"]
    for seat, total in enumerate(totals):
        assert places[seat] == 1 + sum(other < total for other in totals)
    assert state.round == 11 and len(state.round_results) == 11
    assert totals == [float(sum(r["penalties"][s] for r in state.round_results)) for s in range(state.players)]
    json.dumps([state.events(s) for s in range(state.players)])
    replayed = GAME.replay(game["players"], state.options, game["seed"], state.actions)
    assert replayed.events() == state.events()
    assert replayed.spectator_view() == state.spectator_view()
    assert [replayed.events(s) for s in range(state.players)] == [state.events(s) for s in range(state.players)]
