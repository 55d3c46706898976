"""Three Thirteen rules, one test per rule or ruling, each on the exact position it needs.

Positions are built with `GAME.position(hands, stock, discard_pile, ...)`; cards are
written as text ("7H", "10S") and the same face written twice gets the next deck's copy.
Stocks and discard piles are listed bottom first: the last card is the top.
"""

from __future__ import annotations

import json
import random

import pytest

from engine import BadOption, GameError, IllegalAction, get_game
from engine.players import random_action
from engine.three_thirteen import GAME, parse_cards

DRAW_STOCK = {"type": "draw", "source": "stock"}
DRAW_DISCARD = {"type": "draw", "source": "discard"}


def cards(*texts):
    """Parse several groups of cards together, so repeated faces get distinct decks."""
    ids = list(parse_cards(" ".join(texts)))
    out = []
    for text in texts:
        count = len(text.split())
        out.append(tuple(ids[:count]))
        del ids[:count]
    return out


def one(text):
    return parse_cards(text)[0]


def position(hands, stock, pile, **kwargs):
    parsed = cards(*hands, stock, pile)
    return GAME.position(parsed[: len(hands)], parsed[-2], parsed[-1], **kwargs)


def discard(card):
    return {"type": "discard", "card": card}


def go_out(card):
    return {"type": "go_out", "card": card}


def ids(view_cards):
    return [c["id"] for c in view_cards]


def last_event(state, kind, seat=None):
    return [e for e in state.events(seat) if e["type"] == kind][-1]


# -- players and cards ------------------------------------------------------------------------
@pytest.mark.parametrize("players,decks", [(2, 1), (3, 2), (4, 2), (5, 3), (6, 3)])
def test_ceil_players_over_two_decks_with_stable_distinct_ids(players, decks):
    state = get_game("three-thirteen").new_game(players, seed=5)
    view = state.spectator_view()
    every = [c["id"] for hand in view["hands"] for c in hand]
    every += ids(view["stock"]) + ids(view["discard_pile"])
    assert sorted(every) == list(range(52 * decks))


def test_identical_cards_from_two_decks_stay_distinct():
    state = get_game("three-thirteen").new_game(4, seed=2)
    view = state.spectator_view()
    faces = [(c["rank"], c["suit"]) for hand in view["hands"] for c in hand]
    faces += [(c["rank"], c["suit"]) for c in view["stock"] + view["discard_pile"]]
    assert all(faces.count(face) == 2 for face in faces)


def test_decks_option_overrides_the_count_but_must_hold_the_last_deal():
    state = get_game("three-thirteen").new_game(2, {"decks": 2}, seed=1)
    assert state.spectator_view()["stock"] and state.decks == 2
    with pytest.raises(BadOption, match="6 players need at least 2 decks"):
        get_game("three-thirteen").new_game(6, {"decks": 1}, seed=1)


# -- rounds -----------------------------------------------------------------------------------
def play_out(state, seed=0):
    rng = random.Random(seed)
    while not state.is_over:
        state.apply(random_action(state, rng))
    return state


def test_eleven_rounds_deal_r_plus_2_cards_with_wild_rank_r_plus_2():
    state = play_out(get_game("three-thirteen").new_game(3, {"max_turns_per_round": 9}, seed=4))
    starts = [e for e in state.events(1) if e["type"] == "round_start"]
    assert [e["round"] for e in starts] == list(range(1, 12))
    assert [e["wild_rank"] for e in starts] == list(range(3, 14))
    assert [len(e["hand"]) for e in starts] == list(range(3, 14))
    assert len([e for e in state.events() if e["type"] == "round_end"]) == 11


def test_first_dealer_comes_from_the_seed_and_the_deal_passes_left():
    game = get_game("three-thirteen")
    firsts = {game.new_game(4, seed=seed).dealer for seed in range(40)}
    assert firsts == {0, 1, 2, 3}
    assert game.new_game(4, seed=9).dealer == game.new_game(4, seed=9).dealer
    state = play_out(game.new_game(4, {"max_turns_per_round": 5}, seed=9))
    starts = [e for e in state.events() if e["type"] == "round_start"]
    first = starts[0]["dealer"]
    assert [e["dealer"] for e in starts] == [(first + r) % 4 for r in range(11)]
    assert [e["first_player"] for e in starts] == [(first + r + 1) % 4 for r in range(11)]


def test_the_top_of_the_stock_is_turned_up_to_start_the_discard_pile():
    state = get_game("three-thirteen").new_game(3, seed=8)
    view = state.observation(0)
    assert len(view["discard_pile"]) == 1
    assert view["stock_size"] == 104 - 3 * 3 - 1
    assert view["current_player"] == (state.dealer + 1) % 3


def test_the_deal_goes_one_card_at_a_time_from_the_dealers_left():
    # Replay the documented deal with the same seeded generator and compare exactly.
    state = get_game("three-thirteen").new_game(3, seed=21)
    rng = random.Random(21)
    dealer = rng.randrange(3)
    deck = list(range(104))
    rng.shuffle(deck)
    hands = [[], [], []]
    for _ in range(3):
        for step in (1, 2, 3):
            hands[(dealer + step) % 3].append(deck.pop())
    assert state.dealer == dealer
    assert [sorted(h) for h in state.hands] == [sorted(h) for h in hands]
    assert state.discard_pile == [deck.pop()] and state.stock == deck


# -- a turn -------------------------------------------------------------------------------------
def test_drawing_from_the_stock_takes_its_top_card_privately():
    state = position(["2C 5D 9H", "3S 8S KD"], "4C JH", "6H", dealer=1)
    assert state.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]
    state.apply(DRAW_STOCK)
    assert one("JH") in state.hands[0] and state.stock == [one("4C")]
    assert state.events(0)[-1] == {
        "type": "draw", "seat": 0, "source": "stock", "card": {"id": one("JH"), "rank": 11, "suit": "H"}
    }
    assert state.events(1)[-1] == {"type": "draw", "seat": 0, "source": "stock"}
    assert state.events()[-1] == {"type": "draw", "seat": 0, "source": "stock"}


def test_drawing_from_the_discard_pile_takes_its_top_card_publicly():
    state = position(["2C 5D 9H", "3S 8S KD"], "4C JH", "7C 6H", dealer=1)
    state.apply(DRAW_DISCARD)
    assert one("6H") in state.hands[0] and state.discard_pile == [one("7C")]
    assert state.events(1)[-1]["card"]["id"] == one("6H")
    assert state.observation(1)["taken_from_discard"]["id"] == one("6H")


def test_after_drawing_the_player_must_discard_and_play_passes_left():
    state = position(["2C 5D 9H", "3S 8S KD", "AC AD 4H"], "4C JH", "6H", dealer=2)
    state.apply(DRAW_STOCK)
    assert state.legal_actions() == [discard(c) for c in sorted(state.hands[0])]
    state.apply(discard(one("9H")))
    assert state.discard_pile[-1] == one("9H") and state.current_player == 1
    assert state.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]


def test_the_card_just_taken_from_the_discard_pile_cannot_be_discarded():
    state = position(["2C 5D 9H", "3S 8S KD"], "4C JH", "6H", dealer=1)
    state.apply(DRAW_DISCARD)
    assert discard(one("6H")) not in state.legal_actions()
    assert len(state.legal_actions()) == 3
    before = state.spectator_view()
    with pytest.raises(IllegalAction, match="just taken from the discard pile"):
        state.apply(discard(one("6H")))
    assert state.spectator_view() == before


def test_option_discard_taken_card_allows_discarding_it_again():
    state = position(["2C 5D 9H", "3S 8S KD"], "4C JH", "6H", dealer=1,
                     options={"discard_taken_card": True})
    state.apply(DRAW_DISCARD)
    state.apply(discard(one("6H")))
    assert state.discard_pile == [one("6H")]


# -- going out ----------------------------------------------------------------------------------
def test_go_out_is_offered_only_for_discards_that_leave_all_cards_melded():
    state = position(["5H 6H KS", "3S 8S KD"], "4C 7H", "2D", dealer=1)
    state.apply(DRAW_STOCK)  # 7H: 5-6-7H, KS spare
    legal = state.legal_actions()
    assert [a for a in legal if a["type"] == "go_out"] == [go_out(one("KS"))]
    assert [a["card"] for a in legal if a["type"] == "discard"] == sorted(state.hands[0])
    with pytest.raises(IllegalAction, match="does not leave all other cards in combinations"):
        state.apply(go_out(one("5H")))


def test_no_go_out_when_the_hand_cannot_meld():
    state = position(["5H 6H KS", "3S 8S KD"], "4C 9C", "2D", dealer=1)
    state.apply(DRAW_STOCK)
    assert all(a["type"] == "discard" for a in state.legal_actions())


def test_going_out_lays_the_combinations_down_publicly():
    state = position(["5H 6H KS", "3S 8S KD"], "4C 7H", "2D", dealer=1)
    state.apply(DRAW_STOCK)
    state.apply(go_out(one("KS")))
    event = state.events(None)[-1]
    assert event["type"] == "go_out" and event["seat"] == 0 and event["card"]["id"] == one("KS")
    assert event["melds"] == [{
        "kind": "run",
        "cards": [{"id": one("5H"), "rank": 5, "suit": "H"}, {"id": one("6H"), "rank": 6, "suit": "H"},
                  {"id": one("7H"), "rank": 7, "suit": "H"}],
        "ranks": [5, 6, 7],
    }]
    view = state.observation(1)
    assert view["went_out"] == 0 and view["hand_sizes"] == [0, 3]
    assert view["laid_down"] == event["melds"] and view["discard_pile"][-1]["id"] == one("KS")


def test_after_going_out_every_other_player_gets_exactly_one_more_turn():
    state = position(["2C 5D 9H", "5H 6H KS", "AC AD 4H", "3S 8S KD"], "4C 10D JD QD 7H", "2D",
                     dealer=0, current=1)
    state.apply(DRAW_STOCK)
    state.apply(go_out(one("KS")))
    for seat, card in ((2, "4H"), (3, "8S"), (0, "9H")):
        assert state.current_player == seat and state.round == 1
        state.apply(DRAW_STOCK)
        state.apply(discard(one(card)))
    end = last_event(state, "round_end")
    assert end["reason"] == "went_out" and end["went_out"] == 1 and end["round"] == 1
    assert state.round == 2
    assert [e["type"] for e in state.events()].count("draw") == 4


def test_no_one_else_goes_out_during_the_final_turns():
    state = position(["5S 6S 7S", "5H 6H KS", "AC AD 4H"], "4C 8S 7H", "2D", dealer=0, current=1)
    state.apply(DRAW_STOCK)
    state.apply(go_out(one("KS")))
    state.apply(DRAW_DISCARD)  # seat 2 takes KS
    state.apply(discard(one("4H")))
    state.apply(DRAW_STOCK)  # seat 0 draws 8S: 5-8S would go out, but only discards are offered
    assert all(a["type"] == "discard" for a in state.legal_actions())
    with pytest.raises(IllegalAction, match="has gone out"):
        state.apply(go_out(one("8S")))
    state.apply(discard(one("8S")))
    end = last_event(state, "round_end")
    assert end["penalties"] == [0, 0, 12] and end["totals"] == [0, 0, 12]


# -- the stock ------------------------------------------------------------------------------------
def test_an_empty_stock_is_refilled_from_all_but_the_top_discard():
    state = position(["2C 5D 9H", "3S 8S KD"], "JH", "4D 7C 6H", dealer=1, seed=3)
    state.apply(DRAW_STOCK)  # the stock is now empty
    state.apply(discard(one("9H")))
    assert sorted(state.stock) == sorted(parse_cards("4D 7C 6H"))
    assert state.discard_pile == [one("9H")]
    assert state.events()[-1] == {"type": "reshuffle", "stock_size": 3}
    assert state.observation(1)["stock_size"] == 3 and "stock" not in state.observation(1)


def test_the_refilled_stock_is_shuffled_by_the_seed():
    orders = set()
    for seed in range(12):
        state = position(["2C 5D 9H", "3S 8S KD"], "JH", "4D 7C 6H 10S 2S QC", dealer=1, seed=seed)
        state.apply(DRAW_STOCK)
        state.apply(discard(one("9H")))
        orders.add(tuple(state.stock))
    assert len(orders) > 1


def test_nothing_to_reshuffle_ends_the_round_as_it_stands():
    state = position(["2C 5D 9H", "3S 8S KD"], "", "6H", dealer=1)
    end = last_event(state, "round_end")
    assert end["reason"] == "stock_exhausted" and end["penalties"] == [16, 21]
    assert state.round == 2


def test_option_empty_stock_end_round_ends_the_round_when_the_stock_runs_out():
    state = position(["2C 5D 9H", "3S 8S KD"], "JH", "4D 7C 6H", dealer=1,
                     options={"empty_stock": "end_round"})
    state.apply(DRAW_STOCK)
    state.apply(discard(one("JH")))
    end = last_event(state, "round_end")
    assert end["reason"] == "stock_exhausted" and end["penalties"] == [16, 21]


def test_a_round_that_reaches_the_turn_cap_ends_and_is_scored():
    state = position(["2C 5D 9H", "3S 8S KD"], "4C 10D JD QD", "AH",
                     dealer=1, options={"max_turns_per_round": 3})
    state.apply(DRAW_STOCK)
    state.apply(discard(one("QD")))  # seat 0, turn 1
    state.apply(DRAW_STOCK)
    state.apply(discard(one("JD")))  # seat 1, turn 2
    assert state.round == 1
    state.apply(DRAW_STOCK)
    state.apply(discard(one("10D")))  # seat 0, turn 3: the cap
    end = last_event(state, "round_end")
    assert end["reason"] == "turn_cap" and end["penalties"] == [16, 21]
    assert state.round == 2 and state.dealer == 0 and state.current_player == 1


# -- scoring --------------------------------------------------------------------------------------
def test_round_end_scores_each_hand_by_its_best_arrangement_with_wilds():
    # Round 3: fives are wild; each seat holds one wild that completes a run.
    state = position(["2C 3C 5S 9D KH", "QS 5H 7D 8D JC"], "4C 6S", "AH", round=3, dealer=1,
                     options={"max_turns_per_round": 1})
    state.apply(DRAW_STOCK)  # 6S
    state.apply(discard(one("KH")))
    end = last_event(state, "round_end")
    # Seat 0: 2C-3C-5S(as 4C) run, 9D 6S left: 15. Seat 1: 7D-8D-5H run, QS JC left: 20.
    assert end["penalties"] == [15, 20] and end["totals"] == [15, 20]
    scored = end["hands"][1]
    assert scored["melds"][0]["ranks"] in ([6, 7, 8], [7, 8, 9])
    assert sorted(ids(scored["deadwood"])) == sorted(parse_cards("QS JC"))


def test_ace_high_makes_queen_king_ace_a_run_and_an_unmatched_ace_15():
    hands = ["QH KH AH", "AS 9D 9C"]
    for ace_high, penalties in ((False, [21, 19]), (True, [0, 33])):
        state = position(hands, "4C 6S", "2D", dealer=1,
                         options={"max_turns_per_round": 1, "ace_high": ace_high})
        state.apply(DRAW_STOCK)
        state.apply(discard(one("6S")))
        assert last_event(state, "round_end")["penalties"] == penalties


def test_totals_add_up_and_equal_totals_share_a_place():
    state = position(["AC 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC 5S", "2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH KS"],
                     "AD", "2D", round=11, dealer=1, totals=[25, 30],
                     options={"max_turns_per_round": 1})
    state.apply(DRAW_STOCK)
    state.apply(discard(one("AD")))
    assert state.is_over and state.current_player is None and state.legal_actions() == []
    assert state.scores() == [30.0, 30.0] and state.places() == [1, 1]
    assert state.events()[-1] == {"type": "game_over", "totals": [30, 30], "places": [1, 1]}


def test_places_go_by_lowest_total():
    state = position(["AC 2C 3C", "9S 9D 2H", "KD QD 7C"], "4S", "2D", round=11, dealer=2,
                     totals=[40, 10, 30], options={"max_turns_per_round": 1})
    state.apply(DRAW_STOCK)
    state.apply(discard(one("4S")))
    assert state.scores() == [40.0, 10.0 + 20, 30.0 + 27] and state.places() == [2, 1, 3]


def test_places_are_refused_before_the_end():
    with pytest.raises(GameError, match="only when the game is over"):
        get_game("three-thirteen").new_game(2, seed=1).places()


# -- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "action,message",
    [
        ({"type": "fold"}, "actions are"),
        ("draw", "actions are"),
        ({"type": "discard", "card": 3}, "must draw first"),
        ({"type": "draw", "source": "deck"}, 'source must be "stock" or "discard"'),
        ({"type": "draw", "source": "stock", "extra": 1}, "actions are"),
    ],
)
def test_bad_actions_at_the_draw_step_say_what_is_allowed(action, message):
    state = position(["2C 5D 9H", "3S 8S KD"], "4C JH", "6H", dealer=1)
    before = state.spectator_view()
    with pytest.raises(IllegalAction, match=message) as caught:
        state.apply(action)
    assert "legal: " in str(caught.value) and '"source": "stock"' in str(caught.value)
    assert state.spectator_view() == before and state.history == []


@pytest.mark.parametrize(
    "action,message",
    [
        ({"type": "draw", "source": "stock"}, "has drawn already"),
        ({"type": "discard", "card": 9999}, "card 9999 is not in this seat's hand"),
        ({"type": "discard", "card": True}, "actions are"),
        ({"type": "discard", "card": 4.0}, "actions are"),
        ({"type": "discard"}, "actions are"),
    ],
)
def test_bad_actions_at_the_discard_step_say_what_is_allowed(action, message):
    state = position(["2C 5D 9H", "3S 8S KD"], "4C JH", "6H", dealer=1)
    state.apply(DRAW_STOCK)
    before = state.spectator_view()
    with pytest.raises(IllegalAction, match=message):
        state.apply(action)
    assert state.spectator_view() == before and len(state.history) == 1


def test_another_seats_card_is_refused_without_revealing_anything():
    state = position(["2C 5D 9H", "3S 8S KD"], "4C JH", "6H", dealer=1)
    state.apply(DRAW_STOCK)
    with pytest.raises(IllegalAction) as caught:
        state.apply(discard(one("KD")))
    # The message lists only the mover's own legal actions: no other hidden card shows up.
    text = str(caught.value)
    hidden = set(state.hands[1]) | set(state.stock)
    assert not any(f'"card": {c}}}' in text for c in hidden - {one("KD")})


@pytest.mark.parametrize(
    "options,message",
    [
        ({"ace_high": "yes"}, "true or false"),
        ({"max_turns_per_round": 0}, "an integer >= 1"),
        ({"empty_stock": "burn"}, 'one of "reshuffle", "end_round"'),
        ({"decks": 9}, "<= 4"),
    ],
)
def test_bad_rule_options_are_refused_saying_what_is_allowed(options, message):
    with pytest.raises(BadOption, match=message):
        get_game("three-thirteen").new_game(2, options, seed=1)


def test_observing_a_seat_that_does_not_exist_is_refused():
    state = get_game("three-thirteen").new_game(2, seed=1)
    with pytest.raises(GameError, match="seat must be an integer from 0 to 1"):
        state.observation(2)
    with pytest.raises(GameError, match="seat must be an integer from 0 to 1"):
        state.events(-1)


# -- what each seat sees --------------------------------------------------------------------------
def test_an_observation_shows_the_own_hand_and_only_counts_of_others():
    state = position(["2C 5D 9H", "3S 8S KD"], "4C JH", "7C 6H", dealer=1, totals=[3, 4])
    view = state.observation(1)
    text = json.dumps(view)
    assert ids(view["hand"]) == sorted(parse_cards("3S 8S KD"))
    assert view["hand_sizes"] == [3, 3] and view["stock_size"] == 2
    assert ids(view["discard_pile"]) == list(parse_cards("7C 6H"))
    for hidden in parse_cards("2C 5D 9H 4C JH"):
        assert f'"id": {hidden},' not in text
    assert view["totals"] == [3, 4] and view["wild_rank"] == 3 and view["round"] == 1
    assert view["phase"] == "draw" and view["current_player"] == 0 and view["dealer"] == 1


def test_every_hand_scored_at_a_rounds_end_is_public():
    state = position(["2C 5D 9H", "3S 8S KD"], "4C 10D", "AH", dealer=1,
                     options={"max_turns_per_round": 1})
    state.apply(DRAW_STOCK)
    state.apply(discard(one("10D")))
    public = last_event(state, "round_end")
    assert sorted(ids(public["hands"][1]["deadwood"])) == sorted(parse_cards("3S 8S KD"))
    assert state.observation(0)["last_round"] == {k: v for k, v in public.items() if k != "type"}


def test_changing_a_returned_legal_action_cannot_change_what_is_played():
    state = position(["2C 5D 9H", "3S 8S KD"], "4C JH", "6H", dealer=1)
    state.apply(DRAW_STOCK)
    legal = state.legal_actions()
    legal[0]["card"] = one("KD")  # a hostile caller edits the list it was given
    state.apply(discard(one("2C")))
    assert one("2C") in state.discard_pile and one("KD") in state.hands[1]
    assert state.history[-1] == (0, discard(one("2C")))


def test_option_wild_penalty_fixes_what_an_unmatched_wild_scores():
    # Round 1, threes wild: seat 0 keeps 3H unmatched beside 9D KS.
    for options, penalty in (({}, 3 + 9 + 10), ({"wild_penalty": 20}, 20 + 9 + 10)):
        state = position(["3H 9D KS", "AC 5D 8S"], "4C 6S", "2D", dealer=1,
                         options={"max_turns_per_round": 1, **options})
        state.apply(DRAW_STOCK)
        state.apply(discard(one("6S")))
        assert last_event(state, "round_end")["penalties"] == [penalty, 1 + 5 + 8]


def test_option_all_wild_combinations_off_bars_going_out_on_three_wilds():
    # Round 1, threes wild: 3H 3S 3D plus KS drawn. Three wilds alone are a combination by
    # our ruling (go out with KS); with the option off they are not.
    for all_wild, can_go in ((True, True), (False, False)):
        state = position(["3H 3S 3D", "AC 5D 8S"], "4C KS", "2D", dealer=1,
                         options={"all_wild_combinations": all_wild})
        state.apply(DRAW_STOCK)
        assert (go_out(one("KS")) in state.legal_actions()) is can_go


def test_the_example_in_the_rules_doc_is_real():
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "rules" / "three-thirteen.md").read_text(encoding="utf-8")
    block = doc.split("```json\n", 1)[1].split("```", 1)[0]
    state = get_game("three-thirteen").new_game(3, seed=7)
    state.apply(DRAW_STOCK)
    assert json.loads(block) == state.observation(2)
    assert json.dumps(state.legal_actions()) in doc
    assert json.dumps(state.events()) in doc
