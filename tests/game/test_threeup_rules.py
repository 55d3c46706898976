"""3UP 3DOWN: one test per rule paragraph and ruling of docs/rules/3up3down.md.

Each test builds the exact position it needs (`position(...)`, or a seeded deal) and
checks the exact outcome.
"""

from __future__ import annotations

import pytest
from threeup_helpers import Cards, ids_in, play, position

from engine import BadOption, BadPlayerCount, GameError, IllegalAction, get_game
from engine.threeup import GAME, build_deck

PICKUP = {"type": "pickup"}


def hand_plays(state):
    return [a for a in state.legal_actions() if a["type"] == "play"]


# ---------------------------------------------------------------- components


def test_box_deck_has_seven_of_each_number_seven_clear_six_clear1_one_clear2():
    deck = build_deck("box", 3)
    assert len(deck) == 84
    for value in range(1, 11):
        ids = deck.ids("number", value)
        assert len(ids) == 7
        # Ruling: copies coloured red, blue, green in turn.
        assert [deck.card(i)["colour"] for i in ids] == ["red", "blue", "green", "red", "blue", "green", "red"]
    assert len(deck.ids("clear")) == 7 and len(deck.ids("clear1")) == 6
    assert [deck.card(i)["colour"] for i in deck.ids("clear2")] == ["green"]


def test_classic_deck_is_the_74_cards_the_pages_list():
    deck = build_deck("classic", 3)
    assert len(deck) == 74
    for colour in ("red", "blue", "green"):
        for value in range(1, 11):
            assert len(deck.ids("number", value, colour)) == 2
        assert len(deck.ids("clear", colour=colour)) == 2
        assert len(deck.ids("clear1", colour=colour)) == 2
    assert len(deck.ids("clear2", colour="green")) == 2 and len(deck.ids("clear2")) == 2


def test_fewer_colours_leave_whole_colours_out():
    box2 = build_deck("box", 2)
    # Per value 3 red + 2 blue; Clear 3 red + 2 blue; Clear +1 2 red + 2 blue; no Clear +2.
    assert len(box2) == 50 + 5 + 4
    assert len(box2.ids("number", 7, "red")) == 3 and len(box2.ids("number", 7, "blue")) == 2
    assert box2.ids("clear2") == []
    assert len(build_deck("classic", 1)) == 24
    state = GAME.new_game(2, {"colours": 1}, seed=5)
    assert len(state.all_card_locations()) == 35
    assert {state.deck.card(c)["colour"] for c in state.all_card_locations()} == {"red"}


def test_fewer_colours_are_refused_for_five_or_six_players():
    with pytest.raises(BadOption, match=r"'colours' = 2 is for 2 to 4 players only, not 5; allowed with 5 or 6 players: colours = 3"):
        GAME.new_game(5, {"colours": 2})


def test_a_deck_too_small_for_the_table_is_refused():
    with pytest.raises(BadOption, match=r"box deck with colours = 1 has 35 cards, too few .* 4 players; allowed: at most 3 players"):
        GAME.new_game(4, {"colours": 1})


def test_card_ids_are_stable_between_games():
    one = GAME.new_game(3, seed=1)
    two = GAME.new_game(3, seed=2)
    assert one.deck is two.deck
    seven = one.deck.ids("number", 7, "blue")[0]
    assert one.deck.card(seven) == {"id": seven, "kind": "number", "value": 7, "colour": "blue"}
    clear1 = one.deck.ids("clear1")[0]
    assert one.deck.card(clear1) == {"id": clear1, "kind": "clear1", "value": None, "colour": "red"}


# ---------------------------------------------------------------- setup


def test_setup_deals_three_down_six_to_choose_and_the_rest_is_the_draw_pile():
    state = GAME.new_game(4, seed=11)
    assert state.phase == "setup" and state.current_player == 0
    for seat in range(4):
        assert sum(c is not None for c in state.down[seat]) == 3
        assert len(state.offer[seat]) == 6 and state.hands[seat] == [] and state.up[seat] == []
    assert len(state.draw_pile) == 84 - 36 and state.discard_pile == []


def test_each_seat_chooses_its_three_up_of_six_in_seat_order_then_seat_zero_starts():
    state = GAME.new_game(3, seed=4)
    chosen = {}
    for seat in range(3):
        assert state.current_player == seat
        offer = list(state.offer[seat])
        action = state.legal_actions()[-1]
        assert action["type"] == "choose_up" and set(action["cards"]) <= set(offer)
        state.apply(action)
        chosen[seat] = (sorted(action["cards"]), sorted(set(offer) - set(action["cards"])))
    for seat, (up, hand) in chosen.items():
        assert state.up[seat] == up and sorted(state.hands[seat]) == hand
    assert state.phase == "play" and state.current_player == 0 and state.turn == 0


def test_first_player_seat0_starts_without_drawing_from_the_seed():
    state = GAME.new_game(4, {"first_player": "seat0"}, seed=3)
    before = state.rng.getstate()
    _setup(state)
    assert state.current_player == 0 and state.rng.getstate() == before
    assert "first_player" not in {e["type"] for e in state.events()}


def test_first_player_random_draws_the_starting_seat_from_the_seed_after_setup():
    starters = set()
    for seed in range(12):
        state = GAME.new_game(4, {"first_player": "random"}, seed=seed)
        while state.chosen.count(False) > 1:
            state.apply(state.legal_actions()[0])
        # The draw happens after the last choice: predict it from the seed's generator now.
        expected = state.rng.__class__()
        expected.setstate(state.rng.getstate())
        first = expected.randrange(4)
        state.apply(state.legal_actions()[0])
        assert state.phase == "play" and state.current_player == first and state.turn == 0
        assert state.events(2)[-1] == {"type": "first_player", "seat": first}
        state.apply(state.legal_actions()[0])  # play goes on in seat order from the starter
        assert state.current_player == (first + 1) % 4
        starters.add(first)
    assert len(starters) > 1  # not seat 0 every time


def test_setup_lists_each_distinct_choice_once():
    state = GAME.new_game(2, seed=0)
    cards = Cards()
    # Six cards with two identical faces (two red 7s): trios with no 7 (4), one 7 (6), both (4).
    state.offer[0] = sorted(cards("7r", "7r", "2", "3", "4", "5"))
    state._legal = None
    trios = state.legal_actions()
    assert len(trios) == 14
    faces = {tuple(sorted(state.deck.face[c] for c in a["cards"])) for a in trios}
    assert len(faces) == 14


def test_a_seat_does_not_learn_another_seats_up_before_choosing_its_own():
    state = GAME.new_game(2, seed=9)
    seat0_choice = state.legal_actions()[0]
    state.apply(seat0_choice)
    view = state.observation(1)
    assert view["up"] is None and view["chosen_up"] == [True, False]
    seen = ids_in(view) | ids_in(state.events(1))
    assert not seen & set(seat0_choice["cards"])
    assert {e["type"] for e in state.events(1)} >= {"choose_up"}
    state.apply(state.legal_actions()[0])
    # Setup complete: every 3UP is revealed to everyone.
    assert set(seat0_choice["cards"]) <= ids_in(state.observation(1)["up"])
    assert state.events(1)[-1]["type"] == "reveal_up"


def test_secret_setup_on_hides_each_choice_until_all_have_chosen():
    state = GAME.new_game(3, {"secret_setup": True}, seed=9)
    choice = state.legal_actions()[0]
    state.apply(choice)
    for seat in (1, 2):
        view = state.observation(seat)
        assert view["up"] is None
        assert not (ids_in(view) | ids_in(state.events(seat))) & set(choice["cards"])
    assert state.events(1)[-1] == {"type": "choose_up", "seat": 0}
    assert state.observation(0)["own_up"] == state.deck.cards(choice["cards"])


def test_secret_setup_off_shows_each_choice_as_it_is_made_and_keeps_the_hand_hidden():
    state = GAME.new_game(3, {"secret_setup": False}, seed=9)
    choice = state.legal_actions()[0]
    kept = set(state.offer[0]) - set(choice["cards"])
    state.apply(choice)
    public = {"type": "choose_up", "seat": 0, "for_seat": 0, "cards": state.deck.cards(choice["cards"])}
    for seat in (None, 1, 2):
        assert state.events(seat)[-1] == public
    for seat in (1, 2):
        view = state.observation(seat)
        assert view["up"] == [state.deck.cards(choice["cards"]), [], []]
        # What stays hidden: the three seat 0 kept, and every other seat's six.
        assert not (ids_in(view) | ids_in(state.events(seat))) & kept
    assert not ids_in(state.observation(1)) & set(state.offer[2])
    state.apply(state.legal_actions()[0])
    assert state.observation(2)["up"][1] == state.deck.cards(state.up[1])


# ---------------------------------------------------------------- sources


def test_the_hand_is_the_source_while_it_has_cards():
    c = Cards()
    up = c("9", "9", "C")
    state = position(hands=[c("4", "6"), c("5")], up=[up, []], down=[c("2"), c("2")], discard_pile=c("3"))
    assert state.legal_actions() == [play(state.hands[0][0]), play(state.hands[0][1])]


def test_no_up_play_while_the_draw_pile_has_cards():
    c = Cards()
    low = c("2")
    state = position(hands=[low, c("5")], up=[c("9", "C"), []], down=[c("2"), c("2")], discard_pile=c("8"), draw_pile=c("6"))
    assert state.legal_actions() == [PICKUP]


def test_up_cards_are_the_source_when_hand_and_draw_pile_are_empty():
    c = Cards()
    up = c("9", "4", "C")
    state = position(hands=[[], c("5")], up=[up, []], down=[c("2"), c("2")], discard_pile=c("6"))
    nine, _, clear = up
    assert state.legal_actions() == [play(nine), play(clear)]
    state.apply(play(nine))
    assert sorted(state.up[0]) == sorted([up[1], clear]) and state.discard_pile[-1] == nine
    assert state.events()[-1] == {"type": "play", "seat": 0, "source": "up", "cards": [state.deck.card(nine)]}


def test_up_cards_of_the_same_value_play_together():
    c = Cards()
    up = c("7r", "7b", "9")
    state = position(hands=[[], c("5")], up=[up, []], down=[c("2"), c("2")], discard_pile=c("5"))
    r, b, nine = up
    assert state.legal_actions() == [play(r), play(b), play(r, b), play(nine)]
    state.apply(play(r, b))
    assert state.up[0] == [nine] and state.discard_pile[-2:] == [r, b]


def test_up_and_hand_cards_never_go_together():
    c = Cards()
    hand, up = c("7"), c("7")
    state = position(hands=[hand, c("5")], up=[up, []], down=[c("2"), c("2")])
    with pytest.raises(IllegalAction):
        state.apply(play(hand[0], up[0]))
    assert state.legal_actions() == [play(hand[0])]


def test_down_cards_only_after_every_up_card_is_gone_one_per_action():
    c = Cards()
    state = position(hands=[[], c("5")], up=[c("9"), []], down=[c("3", "4", "6"), c("2")])
    assert [a["type"] for a in state.legal_actions()] == ["play"]
    state = position(hands=[[], c("5")], up=[[], []], down=[[None] + c("4", "6"), c("2")])
    assert state.legal_actions() == [{"type": "play_down", "position": 1}, {"type": "play_down", "position": 2}]


def test_a_blind_down_card_that_fits_is_played():
    c = Cards()
    ten, other = c("10", "4")
    state = position(hands=[[], c("5", "5", "5")], up=[[], []], down=[[ten, other], c("2")], discard_pile=c("7"))
    state.apply({"type": "play_down", "position": 0})
    assert state.discard_pile[-1] == ten and state.down[0] == [None, other, None]
    assert state.events()[-1]["type"] == "play" and state.events()[-1]["position"] == 0
    assert state.current_player == 1


def test_a_failed_down_card_goes_into_the_hand_and_others_see_only_a_pickup():
    c = Cards()
    pile = c("6", "7")
    low, keep = c("3", "8")
    state = position(3, hands=[[], c("5"), c("5")], up=[[], [], []], down=[[low, keep], c("2"), c("2")], discard_pile=pile)
    state.apply({"type": "play_down", "position": 0})
    assert sorted(state.hands[0]) == sorted(pile + [low]) and state.discard_pile == []
    assert state.down[0] == [None, keep, None] and state.current_player == 1
    public = state.events(1)[-2:]
    assert public == [
        {"type": "down_failed", "seat": 0, "position": 0},
        {"type": "pickup", "seat": 0, "cards": state.deck.cards(pile)},
    ]
    assert state.events(2)[-2:] == public and state.events(None)[-2:] == public
    assert state.events(0)[-2]["card"] == state.deck.card(low)
    for seat in (1, 2):
        assert low not in ids_in(state.observation(seat)) | ids_in(state.events(seat))
        assert state.observation(seat)["hand_sizes"][0] == 3
    assert low in ids_in(state.observation(0)["hand"])


# ---------------------------------------------------------------- what may be played


def test_multiples_list_one_action_per_value_count_and_colour_combination():
    c = Cards()
    r1, r2, b1, g1 = c("7r", "7r", "7b", "7g")
    state = position(hands=[[r1, r2, b1, g1], c("5")], up=[[], []], down=[c("2"), c("2")])
    plays = [a["cards"] for a in state.legal_actions()]
    # counts per colour (r 0-2, b 0-1, g 0-1) minus the empty play = 11; lowest ids of a colour first
    assert len(plays) == 11
    assert plays[:3] == [[r1], [b1], [g1]]
    assert sorted([r1, r2]) in plays and [r2] not in plays and [r2, b1] not in plays
    assert plays[-1] == sorted([r1, r2, b1, g1])


def test_number_cards_must_be_equal_or_higher_than_the_top_card():
    c = Cards()
    four, six, seven = c("4", "6", "7")
    state = position(hands=[[four, six, seven], c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("6"))
    assert state.legal_actions() == [play(six), play(seven)]


def test_anything_may_be_played_on_an_empty_pile():
    c = Cards()
    one, ten = c("1", "10")
    state = position(hands=[[one, ten], c("5")], up=[[], []], down=[c("2"), c("2")])
    assert state.legal_actions() == [play(one), play(ten)]


def test_clear_cards_play_on_anything_one_at_a_time():
    c = Cards()
    clear_a, clear_b, clear1, clear2 = c("C", "C", "C+1", "C+2")
    state = position(hands=[[clear_a, clear_b, clear1, clear2, c("2")[0]], c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("10"))
    # clear_a is red and clear_b blue (coloured in turn): one action per kind and colour.
    assert state.legal_actions() == [play(clear_a), play(clear_b), play(clear1), play(clear2)]


def _clears_hand():
    c = Cards()
    red_a, red_b, blue = c("Cr", "Cr", "Cb")
    plus_r, plus_b = c("C+1r", "C+1b")
    return c, (red_a, red_b, blue, plus_r, plus_b)


def test_clears_together_off_lists_clear_cards_one_at_a_time_only():
    c, (red_a, red_b, blue, plus_r, plus_b) = _clears_hand()
    hand = [red_a, red_b, blue, plus_r, plus_b]
    state = position(options={"clears_together": False}, hands=[hand, c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("10"))
    assert state.legal_actions() == [play(red_a), play(blue), play(plus_r), play(plus_b)]
    with pytest.raises(IllegalAction):
        state.apply(play(red_a, blue))


def test_clears_together_lists_each_kind_like_a_number_multiple():
    c, (red_a, red_b, blue, plus_r, plus_b) = _clears_hand()
    hand = [red_a, red_b, blue, plus_r, plus_b]
    state = position(options={"clears_together": True}, hands=[hand, c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("10"))
    assert state.legal_actions() == [
        play(red_a), play(blue), play(red_a, blue), play(red_a, red_b), play(red_a, red_b, blue),
        play(plus_r), play(plus_b), play(plus_r, plus_b),
    ]


def test_clears_together_plain_clears_remove_the_pile_once_and_end_the_turn():
    c = Cards()
    clears = c("Cr", "Cb")
    pile = c("4", "9")
    state = position(options={"clears_together": True}, hands=[clears + c("3"), c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=pile)
    state.apply(play(*clears))
    assert state.discard_pile == [] and state.removed[-4:] == pile + clears
    assert [e["reason"] for e in state.events() if e["type"] == "clear"] == ["clear"]
    assert state.current_player == 1 and state.turn == 1


def test_clears_together_each_clear_plus_one_adds_one_extra_action():
    c = Cards()
    plus = c("C+1r", "C+1b")
    rest = c("3", "6", "8")
    state = position(options={"clears_together": True, "refill": "off"}, hands=[plus + rest, c("5")], up=[[], []], down=[c("2"), c("2")])
    state.apply(play(*plus))
    assert state.actions_left == 2 and state.current_player == 0 and state.discard_pile == []
    state.apply(play(rest[0]))
    assert state.actions_left == 1 and state.current_player == 0
    state.apply(play(rest[1]))
    assert state.current_player == 1 and state.discard_pile == rest[:2] and state.hands[0] == rest[2:]


def test_clears_together_each_clear_plus_two_adds_two_extra_actions():
    c = Cards("classic")
    plus2 = c("C+2", "C+2")  # the classic deck's two green Clear +2
    rest = c("2", "3", "4", "5", "9")
    state = position(options={"deck": "classic", "clears_together": True, "refill": "off"}, hands=[plus2 + rest, c("7")], up=[[], []], down=[c("2"), c("2")])
    assert play(*plus2) in state.legal_actions()
    state.apply(play(*plus2))
    assert state.actions_left == 4
    for step, card in enumerate(rest[:4]):
        assert state.current_player == 0 and state.actions_left == 4 - step
        state.apply(play(card))
    assert state.current_player == 1 and state.discard_pile == rest[:4] and state.hands[0] == rest[4:]


def test_must_play_pickup_is_not_allowed_when_a_play_exists():
    c = Cards()
    state = position(hands=[c("2", "9"), c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("8"))
    assert PICKUP not in state.legal_actions()
    with pytest.raises(IllegalAction, match="not legal"):
        state.apply(PICKUP)


def test_cannot_play_picks_up_the_pile_and_ends_the_turn_with_no_draw():
    c = Cards()
    hand = c("2")
    pile = c("8", "9")
    draw = c("4", "4", "4")
    state = position(hands=[hand, c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=pile, draw_pile=draw)
    assert state.legal_actions() == [PICKUP]
    state.apply(PICKUP)
    assert sorted(state.hands[0]) == sorted(hand + pile) and state.discard_pile == []
    assert state.draw_pile == draw  # no draw after taking the pile
    assert state.current_player == 1 and state.turn == 1


def test_after_picking_up_the_player_plays_from_the_hand_again():
    c = Cards()
    nine, ten = c("9", "10")
    five = c("5")
    state = position(hands=[[], five], up=[[nine], c("6")], down=[c("2"), c("2")], discard_pile=[ten])
    assert state.legal_actions() == [PICKUP]  # the 3UP nine does not go on the ten
    state.apply(PICKUP)
    assert state.hands[0] == [ten]
    state.apply(play(five[0]))  # seat 1 empties its hand onto the empty pile
    # Back to seat 0: the nine would fit on the five, but the hand is the source again.
    assert state.current_player == 0 and state.legal_actions() == [play(ten)]


# ---------------------------------------------------------------- clearing the pile


def test_three_of_a_kind_from_one_player_clears_the_pile_and_ends_the_turn():
    c = Cards()
    fives = c("5r", "5b", "5g")
    pile = c("3")
    draw = c("8", "8", "8", "8")
    state = position(hands=[fives + c("9"), c("6")], up=[[], []], down=[c("2"), c("2")], discard_pile=pile, draw_pile=draw)
    state.apply(play(*fives))
    assert state.discard_pile == [] and set(pile + fives) <= set(state.removed)
    assert state.events()[-2] == {"type": "clear", "seat": 0, "reason": "three_of_a_kind", "cards": state.deck.cards(pile + sorted(fives))}
    assert len(state.hands[0]) == 3 and state.current_player == 1  # drew two, turn over


def test_a_triple_completed_by_a_different_player_clears_the_pile():
    c = Cards()
    five_a, five_b, five_c = c("5", "5", "5")
    draw = c("9", "9", "9")
    state = position(hands=[[five_a, five_b] + c("7"), [five_c] + c("8", "8")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    state.apply(play(five_a, five_b))
    assert state.discard_pile == sorted([five_a, five_b]) and state.current_player == 1
    state.apply(play(five_c))
    assert state.discard_pile == [] and {five_a, five_b, five_c} <= set(state.removed)
    clear = [e for e in state.events() if e["type"] == "clear"]
    assert clear == [{"type": "clear", "seat": 1, "reason": "three_of_a_kind", "cards": state.deck.cards(sorted([five_a, five_b]) + [five_c])}]
    assert state.current_player == 0 and state.turn == 2


def test_a_plain_clear_removes_the_pile_and_ends_the_turn():
    c = Cards()
    clear = c("C")
    pile = c("4", "9")
    draw = c("6", "6", "6")
    state = position(hands=[clear + c("2", "3"), c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=pile, draw_pile=draw)
    state.apply(play(*clear))
    assert state.discard_pile == [] and set(pile + clear) <= set(state.removed)
    assert state.current_player == 1 and state.turn == 1
    assert len(state.hands[0]) == 3 and state.draw_pile == draw[:2]  # drew one to get back to three


def test_clear_plus_one_gives_one_extra_action_and_may_refill_first():
    c = Cards()
    clear1 = c("C+1")
    low = c("2")
    draw = c("7", "8", "9")
    state = position(hands=[clear1 + low, c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("10"), draw_pile=draw)
    state.apply(play(*clear1))
    assert state.phase == "refill" and state.current_player == 0
    assert state.legal_actions() == [{"type": "refill"}, {"type": "no_refill"}]
    assert state.observation(0)["actions_left"] == 1 and state.observation(0)["may_refill"] is True
    state.apply({"type": "refill"})
    assert sorted(state.hands[0]) == sorted(low + [draw[2], draw[1]]) and state.draw_pile == draw[:1]
    assert state.events(1)[-1] == {"type": "refill", "seat": 0, "count": 2}
    assert state.events(0)[-1]["cards"] == state.deck.cards([draw[2], draw[1]])
    assert state.phase == "play" and state.current_player == 0
    state.apply(play(draw[2]))  # the 9 on the cleared pile
    assert state.current_player == 1 and state.discard_pile == [draw[2]]


def test_clear_plus_one_without_the_refill():
    c = Cards()
    clear1 = c("C+1")
    low = c("2")
    draw = c("7", "8", "9")
    state = position(hands=[clear1 + low, c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    state.apply(play(*clear1))
    state.apply({"type": "no_refill"})
    assert state.hands[0] == low and state.draw_pile == draw
    assert state.legal_actions() == [play(*low)]
    state.apply(play(*low))
    # The turn's draw comes after the extra action: back to three.
    assert sorted(state.hands[0]) == sorted(draw) and state.current_player == 1


def test_refill_option_one_card_and_off():
    c = Cards()
    clear1 = c("C+1")
    hand = c("2", "3", "4")
    draw = c("7", "8")
    state = position(options={"refill": "one_card"}, hands=[clear1 + hand, c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    state.apply(play(*clear1))
    assert state.phase == "refill"  # one card may be drawn even with three in hand
    state.apply({"type": "refill"})
    assert sorted(state.hands[0]) == sorted(hand + [draw[1]])
    off = position(options={"refill": "off"}, hands=[clear1 + c("6"), c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    off.apply(play(*clear1))
    assert off.phase == "play" and off.draw_pile == draw


def test_no_refill_decision_when_the_hand_already_has_three():
    c = Cards()
    clear1 = c("C+1")
    hand = c("2", "3", "4")
    state = position(hands=[clear1 + hand, c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=c("7", "8"))
    state.apply(play(*clear1))
    assert state.phase == "play" and state.legal_actions() == [play(card) for card in hand]


def test_a_clear_plus_one_played_as_an_extra_action_allows_another_refill():
    c = Cards()
    clear2, clear1 = c("C+2", "C+1")
    three = c("3")
    draw = c("7", "8", "9", "10")
    state = position(hands=[[clear2, clear1] + three, c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    state.apply(play(clear2))
    state.apply({"type": "no_refill"})
    state.apply(play(clear1))  # 2 pending - 1 used + 1 added
    assert state.phase == "refill" and state.actions_left == 2
    state.apply({"type": "refill"})
    assert sorted(state.hands[0]) == sorted(three + draw[2:]) and state.draw_pile == draw[:2]


def test_an_empty_hand_is_refilled_before_an_extra_action():
    c = Cards()
    clear1 = c("C+1")
    up = c("9")
    draw = c("4", "5")
    state = position(options={"refill": "off"}, hands=[clear1, c("5")], up=[up, []], down=[c("2"), c("2")], draw_pile=draw)
    state.apply(play(*clear1))
    # No source without a refill (3UP wait for the draw pile to run out): the refill happens.
    assert sorted(state.hands[0]) == sorted(draw) and state.draw_pile == []
    assert state.legal_actions() == [play(draw[0]), play(draw[1])]


def test_clear_plus_two_gives_two_extra_actions_refill_only_before_the_first():
    c = Cards()
    clear2 = c("C+2")
    hand = c("3", "6")
    draw = c("8", "9", "10")
    state = position(hands=[clear2 + hand, c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    state.apply(play(*clear2))
    assert state.phase == "refill" and state.actions_left == 2
    state.apply({"type": "refill"})
    assert sorted(state.hands[0]) == sorted(hand + [draw[2]])
    state.apply(play(hand[0]))
    assert state.phase == "play" and state.actions_left == 1 and state.current_player == 0
    state.apply(play(hand[1]))
    assert state.discard_pile == hand and state.current_player == 1
    assert sorted(state.hands[0]) == sorted([draw[2], draw[1], draw[0]])


def test_clear_plus_two_second_extra_lower_blind_down_card_picks_up_the_pile():
    c = Cards()
    clear2 = c("C+2")
    seven = c("7")
    low, other = c("4", "9")
    state = position(hands=[[], c("5")], up=[clear2 + seven, []], down=[[low, other], c("2")])
    state.apply(play(*clear2))
    assert state.actions_left == 2
    state.apply(play(*seven))
    assert state.legal_actions() == [{"type": "play_down", "position": 0}, {"type": "play_down", "position": 1}]
    state.apply({"type": "play_down", "position": 0})
    assert sorted(state.hands[0]) == sorted(seven + [low]) and state.discard_pile == []
    assert state.current_player == 1 and state.down[0] == [None, other, None]


def test_pending_extras_clear_plus_one_adds_plain_clear_drops():
    c = Cards()
    clear2, clear1, clear = c("C+2", "C+1", "C")
    rest = c("3", "4")
    state = position(options={"refill": "off"}, hands=[[clear2, clear1, clear] + rest, c("5")], up=[[], []], down=[c("2"), c("2")])
    state.apply(play(clear2))
    assert state.actions_left == 2
    state.apply(play(clear1))  # one used up, one added
    assert state.actions_left == 2 and state.current_player == 0
    state.apply(play(clear))  # a plain Clear ends the turn and drops what was pending
    assert state.current_player == 1 and state.turn == 1 and sorted(state.hands[0]) == sorted(rest)


def test_three_of_a_kind_during_extra_actions_drops_what_was_pending():
    c = Cards()
    clear2 = c("C+2")
    sixes = c("6", "6", "6")
    state = position(hands=[clear2 + sixes + c("8"), c("5")], up=[[], []], down=[c("2"), c("2")])
    state.apply(play(*clear2))
    state.apply(play(*sixes))
    assert state.current_player == 1 and state.discard_pile == []


def _extras_then(options, *specs):
    """Seat 0 has played a Clear +2 (two extra actions owed); its hand holds `specs` and a 9."""
    c = Cards()
    clear2 = c("C+2")
    rest = c(*specs)
    nine = c("9")
    draw = c("8", "8", "8")
    state = position(options={"refill": "off", **options}, hands=[clear2 + rest + nine, c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    state.apply(play(*clear2))
    assert state.actions_left == 2
    return state, rest, nine, draw


def test_clear_drops_pending_on_a_plain_clear_in_an_extra_action_ends_the_turn():
    state, (clear,), nine, draw = _extras_then({"clear_drops_pending": True}, "C")
    state.apply(play(clear))
    assert state.current_player == 1 and state.turn == 1 and state.discard_pile == []
    assert sorted(state.hands[0]) == sorted(nine + [draw[2], draw[1]])  # the turn's draw to three


def test_clear_drops_pending_off_a_plain_clear_keeps_the_pending_extra_action():
    state, (clear,), nine, draw = _extras_then({"clear_drops_pending": False}, "C")
    state.apply(play(clear))
    # One of the two owed actions is used up by the Clear; the other survives. No refill offer.
    assert state.current_player == 0 and state.actions_left == 1 and state.phase == "play"
    assert state.discard_pile == [] and clear in state.removed
    assert state.legal_actions() == [play(*nine)]
    state.apply(play(*nine))
    assert state.current_player == 1 and state.turn == 1 and state.discard_pile == nine
    assert sorted(state.hands[0]) == sorted(draw)


def test_clear_drops_pending_on_three_of_a_kind_in_an_extra_action_ends_the_turn():
    state, sixes, nine, draw = _extras_then({"clear_drops_pending": True}, "6", "6", "6")
    state.apply(play(*sixes))
    assert state.current_player == 1 and state.discard_pile == [] and set(sixes) <= set(state.removed)


def test_clear_drops_pending_off_three_of_a_kind_keeps_the_pending_extra_action():
    state, sixes, nine, draw = _extras_then({"clear_drops_pending": False}, "6", "6", "6")
    state.apply(play(*sixes))
    assert state.current_player == 0 and state.actions_left == 1 and state.discard_pile == []
    state.apply(play(*nine))
    assert state.current_player == 1 and state.discard_pile == nine


def test_clear_drops_pending_off_a_plain_clear_as_the_normal_action_still_ends_the_turn():
    c = Cards()
    clear = c("C")
    state = position(options={"clear_drops_pending": False}, hands=[clear + c("3"), c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("7"))
    state.apply(play(*clear))
    assert state.current_player == 1 and state.discard_pile == []


def test_a_player_who_runs_out_finishes_and_the_turn_stops():
    c = Cards()
    clear1 = c("C+1")
    state = position(3, hands=[[], c("5"), c("6")], up=[clear1, [], []], down=[[], c("2"), c("2")])
    state.apply(play(*clear1))
    assert state.finished == [0] and state.current_player == 1 and state.turn == 1
    assert state.events()[-1] == {"type": "finish", "seat": 0, "place": 1}


# ---------------------------------------------------------------- draw


def test_draw_to_three_after_the_turn_until_the_pile_is_empty():
    c = Cards()
    four = c("4")
    draw = c("8")
    state = position(hands=[four + c("2"), c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    state.apply(play(*four))
    assert len(state.hands[0]) == 2 and state.draw_pile == []
    assert state.events(1)[-1] == {"type": "draw", "seat": 0, "count": 1}
    assert state.events(0)[-1] == {"type": "draw", "seat": 0, "count": 1, "cards": state.deck.cards(draw)}


def test_no_draw_with_three_or_more_cards_in_hand():
    c = Cards()
    four = c("4")
    draw = c("8")
    state = position(hands=[four + c("2", "3", "9"), c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    state.apply(play(*four))
    assert len(state.hands[0]) == 3 and state.draw_pile == draw


# ---------------------------------------------------------------- winning and places


def test_play_for_places_the_others_play_on_and_the_last_is_last():
    c = Cards()
    state = position(3, hands=[c("9"), c("4"), c("2")], up=[[], [], []], down=[[], [], []])
    state.apply(state.legal_actions()[0])  # seat 0 out: 1st
    assert not state.is_over and state.current_player == 1
    state.apply(PICKUP)  # 4 on 9: pick up
    state.apply(play(*state.hands[2]))  # seat 2 out: 2nd, seat 1 is left: last
    assert state.is_over and state.places() == [1, 3, 2] and state.end_reason == "finished"
    assert state.scores() == [0.0, 2.0, 0.0]


def test_without_play_for_places_the_game_ends_at_the_first_finisher():
    c = Cards()
    state = position(4, {"play_for_places": False}, hands=[c("9"), c("4", "4"), c("2"), c("3", "3", "3", "3")], up=[[], [], [], []], down=[[], [], [], []])
    state.apply(state.legal_actions()[0])
    assert state.is_over and state.end_reason == "first_finisher"
    # Others placed by cards held, fewer is better.
    assert state.places() == [1, 3, 2, 4]


def test_turn_cap_places_players_still_in_by_cards_held_equal_counts_share():
    c = Cards()
    state = position(3, {"max_turns": 3}, hands=[c("9", "9"), c("4", "5"), c("2", "3", "C")], up=[[], [], []], down=[[], [], []], turn=1)
    state.apply(play(state.hands[0][0]))  # seat 0: one 9 left -> 1 card
    state.apply(PICKUP)  # seat 1 takes the nine -> 3 cards
    assert state.is_over and state.end_reason == "max_turns" and state.turn == 3
    # Held: seat 0 one card, seats 1 and 2 three each: they share second place.
    assert state.places() == [1, 2, 2] and state.scores() == [1.0, 3.0, 3.0]


# ---------------------------------------------------------------- optional rules


def test_may_draw_instead_draws_one_card_and_ends_the_turn():
    c = Cards()
    nine = c("9")
    draw = c("7", "8", "6")
    state = position(options={"may_draw_instead": True}, hands=[nine, c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("4"), draw_pile=draw)
    assert state.legal_actions() == [play(*nine), {"type": "draw"}]
    state.apply({"type": "draw"})
    assert sorted(state.hands[0]) == sorted(nine + [draw[2]]) and state.draw_pile == draw[:2]
    assert state.discard_pile != [] and state.current_player == 1  # no play, no draw to three
    assert state.events(1)[-1] == {"type": "draw_instead", "seat": 0, "count": 1}


def test_may_draw_instead_is_not_offered_without_a_legal_play_or_in_an_extra_action():
    c = Cards()
    draw = c("7", "8")
    stuck = position(options={"may_draw_instead": True}, hands=[c("2"), c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("9"), draw_pile=draw)
    assert stuck.legal_actions() == [PICKUP]
    clear1 = c("C+1")
    extra = position(options={"may_draw_instead": True, "refill": "off"}, hands=[clear1 + c("3"), c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=draw)
    assert {"type": "draw"} in extra.legal_actions()
    extra.apply(play(*clear1))
    assert {"type": "draw"} not in extra.legal_actions()


def test_must_play_without_may_draw_instead_offers_no_draw():
    c = Cards()
    state = position(hands=[c("9"), c("5")], up=[[], []], down=[c("2"), c("2")], draw_pile=c("7"))
    assert {"type": "draw"} not in state.legal_actions()


def test_ones_reverse_a_played_one_reverses_the_direction():
    c = Cards()
    one = c("1")
    state = position(3, {"ones_reverse": True}, hands=[one + c("4"), c("5"), c("6")], up=[[], [], []], down=[c("2"), c("2"), c("2")])
    state.apply(play(*one))
    assert state.direction == -1 and state.current_player == 2
    assert {"type": "reverse", "seat": 0, "direction": -1} in state.events()
    plain = position(3, hands=[c("1", "4"), c("5"), c("6")], up=[[], [], []], down=[c("2"), c("2"), c("2")])
    plain.apply(plain.legal_actions()[0])
    assert plain.direction == 1 and plain.current_player == 1


def test_points_scores_every_card_still_held_hand_up_and_down():
    c = Cards()
    state = position(
        3,
        {"points": True, "play_for_places": False},
        hands=[c("9"), c("C", "7"), c("3")],
        up=[[], c("C+1"), []],
        down=[[], c("4"), []],
    )
    state.apply(state.legal_actions()[0])
    assert state.is_over
    assert state.scores() == [0.0, 15 + 7 + 20 + 4, 3.0]
    assert state.places() == [1, 3, 2]  # places still go by cards held


def _points_position(points_count):
    c = Cards()
    return position(
        3,
        {"points": True, "play_for_places": False, "points_count": points_count},
        hands=[c("9"), c("C", "7"), c("3")],
        up=[[], c("C+1"), c("5")],
        down=[[], c("4"), c("C+2", "6")],
    )


def test_points_count_all_scores_hand_up_and_down():
    state = _points_position("all")
    state.apply(state.legal_actions()[0])
    assert state.scores() == [0.0, 15 + 7 + 20 + 4, 3 + 5 + 25 + 6]
    assert state.places() == [1, 2, 2]  # places still go by cards held (4 each)


def test_points_count_hand_scores_only_the_hand():
    state = _points_position("hand")
    state.apply(state.legal_actions()[0])
    assert state.scores() == [0.0, 15 + 7, 3.0]
    assert state.places() == [1, 2, 2]


def test_points_count_does_nothing_without_points():
    for points_count in ("all", "hand"):
        c = Cards()
        state = position(2, {"play_for_places": False, "points_count": points_count}, hands=[c("9"), c("C", "7")], up=[[], c("C+1")], down=[[], c("4")])
        state.apply(state.legal_actions()[0])
        assert state.scores() == [0.0, 4.0]


def _setup(state):
    while state.phase == "setup":
        state.apply(state.legal_actions()[0])


def test_swap_stacks_exchanges_the_stacks_by_the_seed():
    for seed in range(20):
        plain = GAME.new_game(4, seed=seed)
        swapped = GAME.new_game(4, {"swap_stacks": True}, seed=seed)
        _setup(plain)
        _setup(swapped)
        order = next(e for e in swapped.events() if e["type"] == "swap_stacks")["from_seat"]
        assert sorted(order) == [0, 1, 2, 3]
        for seat in range(4):
            assert swapped.up[seat] == plain.up[order[seat]]
            assert swapped.down[seat] == plain.down[order[seat]]
            assert swapped.hands[seat] == plain.hands[seat]
        if order != [0, 1, 2, 3]:
            return
    raise AssertionError("no seed in 0..19 moved a stack")


def test_choose_for_others_each_seat_chooses_the_up_of_its_left_neighbour():
    state = GAME.new_game(3, {"choose_for_others": True}, seed=2)
    choices = {}
    for seat in range(3):
        offer = list(state.offer[seat])
        action = state.legal_actions()[3]
        state.apply(action)
        choices[seat] = action["cards"]
        assert sorted(state.hands[seat]) == sorted(set(offer) - set(action["cards"]))
        if seat < 2:
            # Not even the neighbour it was chosen for sees it before setup is complete.
            assert state.observation(seat + 1)["up"] is None
    for seat in range(3):
        assert state.up[(seat + 1) % 3] == sorted(choices[seat])


def _run_position(c, seat1_last):
    return position(
        options={"colour_run_swap": True},
        hands=[c("3r", "5r", "9b"), [c.one("4r"), seat1_last, c.one("8b")]],
        up=[c("2g"), c("2g", "10b")],
        down=[c("2"), c("2")],
    )


def test_colour_run_swap_four_of_one_colour_in_a_row_allows_a_swap():
    c = Cards()
    state = _run_position(c, c.one("6r"))
    for _ in range(3):
        state.apply(state.legal_actions()[0])
    assert state.observation(0)["colour_run"] == {"colour": "red", "length": 3}
    state.apply(state.legal_actions()[0])  # seat 1: the fourth red card in a row
    assert state.phase == "swap" and state.current_player == 1
    up2, up10 = sorted(state.up[1])
    eight = state.hands[1][0]
    assert state.legal_actions() == [
        {"type": "keep"},
        {"type": "swap", "up": up2, "hand": eight},
        {"type": "swap", "up": up10, "hand": eight},
    ]
    state.apply({"type": "swap", "up": up10, "hand": eight})
    assert state.up[1] == sorted([up2, eight]) and state.hands[1] == [up10]
    assert state.current_player == 0 and state.events()[-1]["type"] == "colour_run_swap"


def test_colour_run_swap_not_when_the_fourth_card_clears_the_pile():
    c = Cards()
    # Reds 3, 5, then 5, 5: the fourth red makes three fives, which clears the pile.
    state = position(
        options={"colour_run_swap": True},
        hands=[c("4r", "5r", "9b"), c("5r", "5r", "8b")],
        up=[c("2g"), c("2g", "10b")],
        down=[c("2"), c("2")],
    )
    state.apply(play(state.hands[0][0]))
    state.apply(play(state.hands[1][0]))
    state.apply(play(state.hands[0][0]))
    state.apply(play(state.hands[1][0]))
    assert state.discard_pile == [] and state.phase == "play" and state.current_player == 0


def test_colour_run_swap_a_mixed_colour_multiple_breaks_the_run():
    c = Cards()
    state = position(
        options={"colour_run_swap": True},
        hands=[c("3r", "5r", "9b"), c("4r", "6r", "6b")],
        up=[c("2g"), c("2g", "10b")],
        down=[c("2"), c("2")],
    )
    state.apply(play(state.hands[0][0]))
    state.apply(play(state.hands[1][0]))
    state.apply(play(state.hands[0][0]))
    six_r, six_b = sorted(state.hands[1])
    state.apply(play(six_r, six_b))
    assert state.phase == "play" and state.current_player == 0
    assert state.observation(0)["colour_run"] == {"colour": None, "length": 0}


def test_optional_rules_are_off_by_default():
    defaults = GAME.resolve_options({})
    for name in ("may_draw_instead", "ones_reverse", "points", "swap_stacks", "choose_for_others", "colour_run_swap"):
        assert defaults[name] is False
    assert defaults["deck"] == "box" and defaults["colours"] == 3
    assert defaults["play_for_places"] is True and defaults["max_turns"] == 1000
    assert defaults["refill"] == "up_to_three"
    assert defaults["first_player"] == "seat0" and defaults["clears_together"] is False
    assert defaults["clear_drops_pending"] is True and defaults["points_count"] == "all"
    assert defaults["secret_setup"] is True


# ---------------------------------------------------------------- what each player may know


def test_others_hands_are_counts_only_and_hidden_cards_are_never_named():
    state = GAME.new_game(4, seed=21)
    _setup(state)
    for _ in range(30):
        state.apply(state.legal_actions()[0])
    for seat in range(4):
        view = state.observation(seat)
        hidden = set(state.draw_pile)
        for other in range(4):
            hidden |= {card for card in state.down[other] if card is not None}
            if other != seat:
                hidden |= set(state.hands[other])
        assert not ids_in(view) & hidden
        assert view["hand_sizes"] == [len(h) for h in state.hands]
        assert view["hand"] == state.deck.cards(sorted(state.hands[seat]))
        assert "hands" not in view and "draw_pile" not in view and "down_cards" not in view


def test_a_drawn_card_is_shown_only_to_the_player_who_drew_it():
    c = Cards()
    four = c("4")
    draw = c("8", "7")
    state = position(3, hands=[four + c("2"), c("5"), c("6")], up=[[], [], []], down=[c("2"), c("2"), c("2")], draw_pile=draw)
    state.apply(play(*four))
    drawn = draw[1]
    assert drawn in state.hands[0]
    assert drawn in ids_in(state.events(0)) and drawn in ids_in(state.observation(0))
    for seat in (1, 2):
        assert drawn not in ids_in(state.events(seat)) | ids_in(state.observation(seat))
    assert drawn not in ids_in(state.events(None))


def test_the_setup_six_are_private():
    state = GAME.new_game(3, seed=8)
    offer = set(state.offer[2])
    assert offer == ids_in(state.observation(2)["setup_cards"])
    for seat in (0, 1):
        assert not offer & (ids_in(state.observation(seat)) | ids_in(state.events(seat)))


def test_spectator_view_shows_everything():
    state = GAME.new_game(2, seed=3)
    view = state.spectator_view()
    assert ids_in(view) == set(range(84))


# ---------------------------------------------------------------- bad input


def test_unknown_game_name_says_which_exist():
    with pytest.raises(GameError, match=r"unknown game '3up'; known games: .*3up3down"):
        get_game("3up")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"deck": "poker"}, r"'deck' got 'poker'; allowed: one of \"box\", \"classic\""),
        ({"colours": "2"}, r"'colours' got '2'; allowed: an integer >= 1 and <= 3"),
        ({"colours": 4}, r"allowed: an integer >= 1 and <= 3"),
        ({"points": 1}, r"'points' got 1; allowed: true or false"),
        ({"refill": "twice"}, r"allowed: one of \"up_to_three\", \"one_card\", \"off\""),
        ({"max_turns": 0}, r"'max_turns' got 0; allowed: an integer >= 1"),
        ({"first_player": "seat1"}, r"'first_player' got 'seat1'; allowed: one of \"seat0\", \"random\""),
        ({"jokers": True}, r"no rule option 'jokers'; known options: deck, colours, play_for_places"),
    ],
)
def test_bad_options_are_refused_saying_what_is_allowed(options, message):
    with pytest.raises(BadOption, match=message):
        GAME.new_game(2, options)


def test_players_outside_two_to_six_are_refused():
    for players in (1, 7, "4"):
        with pytest.raises(BadPlayerCount, match="seats 2 to 6 players"):
            GAME.new_game(players)


def test_an_illegal_action_is_refused_listing_the_legal_ones_and_changes_nothing():
    c = Cards()
    nine = c("9")
    state = position(hands=[nine + c("2"), c("5")], up=[[], []], down=[c("2"), c("2")], discard_pile=c("8"))
    before = (state.spectator_view(), state.events(), list(state.history))
    for action in (PICKUP, {"type": "play"}, "play", play(nine[0], 1), {"type": "play_down", "position": 0}):
        with pytest.raises(IllegalAction, match=r"not legal for seat 0 now; legal: \{\"cards\": \[" + str(nine[0])):
            state.apply(action)
    assert (state.spectator_view(), state.events(), list(state.history)) == before


def test_from_position_refuses_a_card_placed_twice():
    c = Cards()
    five = c("5")
    with pytest.raises(GameError, match="at most once"):
        position(hands=[five, five], up=[[], []], down=[[], []])


def test_from_position_refuses_a_seat_with_no_cards_that_has_not_finished():
    c = Cards()
    with pytest.raises(GameError, match="seat 1 holds no cards but has not finished"):
        position(hands=[c("5"), []], up=[[], []], down=[[], []])
