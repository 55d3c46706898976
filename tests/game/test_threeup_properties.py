"""3UP 3DOWN invariants over seeds, 2-6 players and option sets (hypothesis).

- every card is in exactly one place after every action;
- a seat's observation (and legal actions) is identical in a twin state whose hidden
  cards (other hands, every 3DOWN, the draw pile, setup choices not yet revealed while
  `secret_setup` is on) are re-shuffled among themselves;
- no hidden card's id appears in the events a seat is shown;
- every game ends with complete, consistent places;
- a seed plus the action list replays identically.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from threeup_helpers import ids_in

from engine.threeup import GAME
from engine.threeup.state import OVER, SETUP

FLAGS = ("may_draw_instead", "ones_reverse", "points", "swap_stacks", "choose_for_others", "colour_run_swap", "clears_together", "clear_drops_pending", "secret_setup")


@st.composite
def tables(draw):
    """A player count and a valid option set for it."""
    players = draw(st.integers(2, 6))
    options = {flag: draw(st.booleans()) for flag in FLAGS}
    options["deck"] = draw(st.sampled_from(["box", "classic"]))
    options["play_for_places"] = draw(st.booleans())
    options["refill"] = draw(st.sampled_from(["up_to_three", "one_card", "off"]))
    options["max_turns"] = draw(st.sampled_from([1000, 60, 7]))
    options["first_player"] = draw(st.sampled_from(["seat0", "random"]))
    options["points_count"] = draw(st.sampled_from(["all", "hand"]))
    colours = [3]
    if players <= 4:
        size = {("box", 1): 35, ("box", 2): 59, ("classic", 1): 24, ("classic", 2): 48}
        colours += [k for k in (1, 2) if size[(options["deck"], k)] >= 9 * players]
    options["colours"] = draw(st.sampled_from(colours))
    return players, options


def hidden_from(state, seat):
    """(list, index) slots of every card `seat` may not know, and the cards in them."""
    slots = []
    for other in range(state.players):
        if other != seat:
            slots += [(state.hands, other, i) for i in range(len(state.hands[other]))]
            slots += [(state.offer, other, i) for i in range(len(state.offer[other]))]
        secret = state.options["secret_setup"]
        if state.phase == SETUP and secret and (other != seat or state.options["choose_for_others"]):
            slots += [(state.up, other, i) for i in range(len(state.up[other]))]
        slots += [(state.down, other, i) for i in range(3) if state.down[other][i] is not None]
    return slots


def twin_of(state, seat, rng):
    """A copy of `state` whose cards hidden from `seat` are re-shuffled among themselves."""
    twin = state.clone()
    slots = hidden_from(twin, seat)
    cards = [table[owner][i] for table, owner, i in slots] + list(twin.draw_pile)
    rng.shuffle(cards)
    for (table, owner, i), card in zip(slots, cards):
        table[owner][i] = card
    twin.draw_pile = cards[len(slots):]
    for seat_up in twin.up:
        seat_up.sort()  # the engine keeps 3UP sorted; a hidden 3UP is shown to nobody
    return twin, set(cards)


def check_hiding(state, rng):
    """Hidden cards never named to a seat; twin states look the same to it."""
    public_ids = ids_in(state.events(None))
    never_public = set(state.draw_pile)
    for slots in state.down:
        never_public |= {card for card in slots if card is not None}
    assert not public_ids & never_public
    for seat in range(state.players):
        hidden = set(state.draw_pile) | {table[owner][i] for table, owner, i in hidden_from(state, seat)}
        # A seat knows the six it was dealt even after giving three away (choose_for_others).
        dealt = ids_in([e for e in state.events(seat) if e["type"] == "dealt"])
        assert not ids_in(state.events(seat)) & (hidden - public_ids - dealt)
        assert not ids_in(state.observation(seat)) & hidden
        if not state.is_over:
            twin, _ = twin_of(state, seat, rng)
            assert twin.observation(seat) == state.observation(seat)
            if seat == state.current_player:
                assert twin.legal_actions() == state.legal_actions()


def check_places(state):
    places = state.places()
    players = state.players
    assert len(places) == players and all(1 <= p <= players for p in places)
    for index, seat in enumerate(state.finished):
        assert places[seat] == index + 1
    still_in = [seat for seat in range(players) if seat not in state.finished]
    held = {seat: state.cards_held(seat) for seat in still_in}
    for seat in still_in:
        assert held[seat] > 0
        assert places[seat] == len(state.finished) + 1 + sum(held[o] < held[seat] for o in still_in)
    if state.end_reason == "finished":
        assert sorted(places) == list(range(1, players + 1)) and len(still_in) == 1
    elif state.end_reason == "first_finisher":
        assert len(state.finished) == 1 and not state.options["play_for_places"]
    else:
        assert state.end_reason == "max_turns" and state.turn == state.options["max_turns"]
    scores = state.scores()
    for seat in state.finished:
        assert scores[seat] == 0
    for seat in still_in:
        counted = state.hands[seat]
        if state.options["points_count"] == "all":
            counted = counted + state.up[seat] + [card for card in state.down[seat] if card is not None]
        expected = sum(state.deck.points[card] for card in counted) if state.options["points"] else held[seat]
        assert scores[seat] == expected


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), seed=st.integers(0, 2**32), player_seed=st.integers(0, 1000))
def test_random_games_keep_every_invariant(table, seed, player_seed):
    players, options = table
    state = GAME.new_game(players, options, seed)
    rng = random.Random(player_seed)
    twin_rng = random.Random(seed)
    steps = 0
    everything = list(range(len(state.deck)))
    check_hiding(state, twin_rng)
    while not state.is_over:
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
        steps += 1
        assert sorted(state.all_card_locations()) == everything
        # The hiding checks are costly; run them through setup, then at every 11th decision.
        if state.phase == SETUP or steps % 11 == 0:
            check_hiding(state, twin_rng)
    check_hiding(state, twin_rng)
    assert state.phase == OVER and state.current_player is None
    check_places(state)
    replayed = GAME.replay(players, options, seed, state.actions)
    assert replayed.spectator_view() == state.spectator_view()
    for seat in [None, *range(players)]:
        assert replayed.events(seat) == state.events(seat)
    assert replayed.places() == state.places() and replayed.scores() == state.scores()


def test_a_finished_game_leaves_nothing_behind():
    """Memory per game stays constant: no module-level cache keeps a state alive."""
    import gc
    import weakref

    refs = []
    for seed in range(5):
        state = GAME.new_game(4, seed=seed)
        rng = random.Random(seed)
        while not state.is_over:
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        state.events(0), state.observation(1), state.spectator_view()
        refs.append(weakref.ref(state))
        del state
    gc.collect()
    assert [ref() for ref in refs] == [None] * 5
