"""The Three Thirteen meld solver: hand-made cases for each situation the rules allow,
and hypothesis comparisons against the brute-force oracle in three_thirteen_brute.py."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from three_thirteen_brute import brute_is_combination, brute_min_penalty

from engine.three_thirteen.melds import (
    best_arrangement,
    can_meld_all,
    card_id,
    card_penalty,
    going_out_discards,
    min_penalty,
    parse_cards,
)

# Wild rank 13 (Kings) unless a test says otherwise: most hands below hold no King.
NO_WILDS_HERE = 13


def ranks_fit(meld, wild_rank, ace_high):
    """The ranks a meld says its cards stand for are consistent with the cards."""
    naturals = [(c, r) for c, r in zip(meld.cards, meld.ranks) if c % 13 + 1 != wild_rank]
    for card, rank in naturals:
        if rank != card % 13 + 1 and not (ace_high and card % 13 == 0 and rank == 14):
            return False
    if meld.kind == "run":
        return list(meld.ranks) == list(range(meld.ranks[0], meld.ranks[0] + len(meld.ranks))) and (
            1 <= meld.ranks[0] and meld.ranks[-1] <= (14 if ace_high else 13)
        )
    return len(set(meld.ranks)) == 1


def arranged(text, wild_rank=NO_WILDS_HERE, ace_high=False):
    hand = parse_cards(text)
    result = best_arrangement(hand, wild_rank, ace_high)
    # Whatever the case, the arrangement must be a true partition into valid combinations.
    laid = sorted(c for meld in result.melds for c in meld.cards) + sorted(result.deadwood)
    assert sorted(laid) == sorted(hand)
    for meld in result.melds:
        assert brute_is_combination(meld.cards, wild_rank, ace_high), meld
        assert ranks_fit(meld, wild_rank, ace_high), meld
    assert result.penalty == sum(card_penalty(c, ace_high) for c in result.deadwood)
    assert result.penalty == min_penalty(hand, wild_rank, ace_high)
    return result


def kinds_and_ranks(result):
    return sorted((m.kind, m.ranks) for m in result.melds)


# -- card values --------------------------------------------------------------------------
def test_card_penalties_follow_the_table():
    values = [card_penalty(card_id(rank, "S")) for rank in range(1, 14)]
    assert values == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]
    assert card_penalty(card_id(1, "H"), ace_high=True) == 15


def test_identical_cards_of_two_decks_are_distinct_ids():
    assert parse_cards("7H 7H") == (card_id(7, "H"), card_id(7, "H", deck=1))


# -- plain combinations -------------------------------------------------------------------
def test_a_set_of_three_melds():
    result = arranged("7C 7D 7S")
    assert result.penalty == 0 and kinds_and_ranks(result) == [("set", (7, 7, 7))]


def test_a_run_of_three_in_one_suit_melds():
    result = arranged("AH 2H 3H", wild_rank=12)
    assert result.penalty == 0 and kinds_and_ranks(result) == [("run", (1, 2, 3))]


def test_a_run_must_be_one_suit():
    assert arranged("4H 5S 6H", wild_rank=12).penalty == 15


def test_two_cards_are_not_a_combination():
    assert arranged("9C 9D 2S").penalty == 20


def test_the_arrangement_leaving_least_penalty_wins():
    # run 5-6-7H leaves 7S 7D (14); the set of sevens leaves 5H 6H (11).
    result = arranged("5H 6H 7H 7S 7D")
    assert result.penalty == 11
    assert kinds_and_ranks(result) == [("set", (7, 7, 7))]
    assert sorted(result.deadwood) == sorted(parse_cards("5H 6H"))


def test_a_long_run_and_a_set_share_nothing():
    result = arranged("3D 4D 5D 6D 7D 6C 6S 6H")
    # 3-4-5D run + 6D 6C 6S 6H set, or 3-7D run + 6C 6S 6H deadwood: 0 beats 18.
    assert result.penalty == 0


# -- wilds ----------------------------------------------------------------------------------
def test_a_wild_fills_a_gap_in_a_run():
    result = arranged("5H 9S 7H", wild_rank=9)
    assert result.penalty == 0 and kinds_and_ranks(result) == [("run", (5, 6, 7))]


def test_wilds_fill_several_gaps():
    result = arranged("2C 9S 9D 5C", wild_rank=9)
    assert result.penalty == 0 and kinds_and_ranks(result) == [("run", (2, 3, 4, 5))]


def test_a_wild_extends_a_run_but_never_past_the_king():
    result = arranged("QH KH 5S", wild_rank=5)
    assert result.penalty == 0 and kinds_and_ranks(result) == [("run", (11, 12, 13))]


def test_a_wild_can_stand_above_a_king_only_as_a_high_ace():
    result = arranged("QH KH 5S", wild_rank=5, ace_high=True)
    assert result.penalty == 0
    (meld,) = result.melds
    assert meld.ranks in ((11, 12, 13), (12, 13, 14))


def test_a_wild_completes_a_set():
    result = arranged("8C 8D JS", wild_rank=11)
    assert result.penalty == 0 and kinds_and_ranks(result) == [("set", (8, 8, 8))]


def test_one_natural_and_two_wilds_meld():
    assert arranged("4C 10H 10S", wild_rank=10).penalty == 0


def test_three_wilds_alone_meld():
    result = arranged("6C 6D 6H", wild_rank=6)
    assert result.penalty == 0 and len(result.melds) == 1


def test_a_combination_of_only_wilds_beside_other_cards():
    result = arranged("6C 6D 6H 6S 2H KC", wild_rank=6)
    assert result.penalty == 0  # four wilds: 2H with two, KC with two, or similar


def test_an_unmatched_wild_scores_its_face_value():
    # One wild cannot join 2S and 9D (different rank and suit), so it stays unmatched.
    assert arranged("QH 2S 9D", wild_rank=12).penalty == 10 + 2 + 9
    assert arranged("5H 2S 9D", wild_rank=5).penalty == 5 + 2 + 9


def test_two_wilds_alone_do_not_meld():
    assert arranged("7C 7D", wild_rank=7).penalty == 14


def test_spare_wilds_join_an_existing_combination():
    result = arranged("7H 8H 9H 4S 4D", wild_rank=4)
    assert result.penalty == 0 and kinds_and_ranks(result) == [("run", (7, 8, 9, 10, 11))]


def test_a_wild_may_stand_for_a_card_held_elsewhere():
    # Thirteen hearts A..K and a wild: the wild stands for a second 9H in a run 9-K.
    hand = " ".join(f"{r}H" for r in "A 2 3 4 5 6 7 8 9 10 J Q K".split()) + " 5S"
    assert arranged(hand, wild_rank=5).penalty == 0


def test_many_wilds_cover_scattered_cards():
    hand = "8C 8D 8H 8S 8C 8D 8H 8S AS 4D 10C KH"  # eight wilds (two decks), four loners
    assert arranged(hand, wild_rank=8).penalty == 0


def test_wilds_are_spent_where_they_save_most():
    # One wild: completing 10S-JS-? saves 20, completing 2C-3C-? saves 5.
    result = arranged("10S JS 2C 3C 6D", wild_rank=6)
    assert result.penalty == 5


# -- several decks --------------------------------------------------------------------------
def test_a_set_may_repeat_a_suit_with_several_decks():
    result = arranged("7H 7H 7S")
    assert result.penalty == 0 and kinds_and_ranks(result) == [("set", (7, 7, 7))]


def test_a_run_cannot_use_the_same_rank_twice():
    result = arranged("5H 5H 6H 7H")
    assert result.penalty == 5 and len(result.deadwood) == 1


def test_two_identical_runs_from_two_decks():
    assert arranged("5H 6H 7H 5H 6H 7H").penalty == 0


# -- aces -------------------------------------------------------------------------------------
def test_ace_is_low_only_by_default():
    assert arranged("QH KH AH", wild_rank=5).penalty == 21


def test_ace_high_allows_queen_king_ace():
    result = arranged("QH KH AH", wild_rank=5, ace_high=True)
    assert result.penalty == 0 and kinds_and_ranks(result) == [("run", (12, 13, 14))]


def test_ace_high_still_allows_ace_two_three():
    assert arranged("AH 2H 3H", wild_rank=5, ace_high=True).penalty == 0


def test_runs_never_wrap_around_the_ace():
    assert arranged("KH AH 2H", wild_rank=5, ace_high=True).penalty == 10 + 15 + 2
    assert arranged("KH AH 2H", wild_rank=5).penalty == 10 + 1 + 2


def test_an_unmatched_ace_scores_15_with_ace_high():
    assert arranged("AS 9D 9C 9H", wild_rank=5, ace_high=True).penalty == 15


# -- going out ----------------------------------------------------------------------------------
def test_going_out_discards_name_every_card_whose_discard_melds_the_rest():
    hand = parse_cards("5H 6H 7H KS")
    assert going_out_discards(hand, wild_rank=3) == (card_id(13, "S"),)
    # 4-5-6-7H: dropping either end leaves a run.
    hand = parse_cards("4H 5H 6H 7H")
    assert going_out_discards(hand, wild_rank=3) == tuple(sorted(parse_cards("4H 7H")))


def test_going_out_by_discarding_a_wild():
    hand = parse_cards("5H 6H 7H 3S")
    assert going_out_discards(hand, wild_rank=3) == tuple(sorted(parse_cards("5H 6H 7H 3S")))


def test_no_discard_goes_out_with_two_loose_cards():
    assert going_out_discards(parse_cards("5H 6H 7H KS 2D"), wild_rank=3) == ()


def test_going_out_with_fourteen_cards():
    # Wild 5s: A-4C, three 7s, 9-QS, KD KH + the wild 5C. Trimming an end of either run
    # keeps everything melded; dropping anything else breaks a combination.
    hand = parse_cards("AC 2C 3C 4C 7D 7S 7H 9S 10S JS QS KD KH 5C")
    assert going_out_discards(hand, wild_rank=5) == tuple(sorted(parse_cards("AC 4C 9S QS")))
    assert can_meld_all([c for c in hand if c != parse_cards("AC")[0]], wild_rank=5)
    assert not can_meld_all([c for c in hand if c != parse_cards("KD")[0]], wild_rank=5)


# -- against the brute-force oracle -------------------------------------------------------------
@st.composite
def hands(draw, max_size=10):
    """Hands with structure: random cards plus neighbours, same-rank cards and wilds."""
    decks = draw(st.integers(1, 3))
    wild_rank = draw(st.integers(3, 13))
    steps = draw(
        st.lists(
            st.tuples(st.integers(0, 5), st.integers(0, 155), st.integers(0, 3), st.integers(0, 2)),
            min_size=3,
            max_size=max_size,
        )
    )
    hand: list[int] = []
    for how, number, suit, deck in steps:
        deck %= decks
        if how <= 1 or not hand:
            card = number % (52 * decks)
        elif how == 2:  # a same-suit neighbour of a card already drawn
            base = hand[number % len(hand)]
            rank = min(13, max(1, base % 13 + 1 + (-2, -1, 1, 2)[suit]))
            card = card_id(rank, base % 52 // 13, deck)
        elif how == 3:  # a card of the same rank
            base = hand[number % len(hand)]
            card = card_id(base % 13 + 1, suit, deck)
        else:  # a wild
            card = card_id(wild_rank, suit, deck)
        if card not in hand:
            hand.append(card)
    spare = iter(c for c in range(52 * decks) if c not in hand)
    while len(hand) < 3:
        hand.append(next(spare))
    return hand, wild_rank, draw(st.booleans())


@st.composite
def hands_and_wild_rules(draw, max_size=10):
    """A hand plus the two wild-card rule options (penalty of an unmatched wild, all-wild)."""
    hand, wild_rank, ace_high = draw(hands(max_size=max_size))
    wild_penalty = draw(st.sampled_from([None, 0, 20, 25]))
    return hand, wild_rank, ace_high, wild_penalty, draw(st.booleans())


SLOW_OK = [HealthCheck.too_slow, HealthCheck.large_base_example]


@settings(max_examples=2000, deadline=None, suppress_health_check=SLOW_OK)
@given(hands())
def test_solver_matches_brute_force(case):
    hand, wild_rank, ace_high = case
    expected = brute_min_penalty(hand, wild_rank, ace_high)
    result = best_arrangement(hand, wild_rank, ace_high)
    assert result.penalty == expected == min_penalty(hand, wild_rank, ace_high)
    assert sorted([c for m in result.melds for c in m.cards] + list(result.deadwood)) == sorted(hand)
    assert all(brute_is_combination(m.cards, wild_rank, ace_high) for m in result.melds)
    assert all(ranks_fit(m, wild_rank, ace_high) for m in result.melds)
    assert can_meld_all(hand, wild_rank, ace_high) == (expected == 0)


@settings(max_examples=150, deadline=None, suppress_health_check=SLOW_OK)
@given(hands(max_size=14))
def test_solver_matches_brute_force_on_big_hands(case):
    hand, wild_rank, ace_high = case
    expected = brute_min_penalty(hand, wild_rank, ace_high)
    assert min_penalty(hand, wild_rank, ace_high) == expected
    assert can_meld_all(hand, wild_rank, ace_high) == (expected == 0)


@settings(max_examples=600, deadline=None, suppress_health_check=SLOW_OK)
@given(hands(max_size=8))
def test_going_out_discards_match_brute_force(case):
    hand, wild_rank, ace_high = case
    expected = tuple(
        sorted(c for c in hand if brute_min_penalty([d for d in hand if d != c], wild_rank, ace_high) == 0)
    )
    assert going_out_discards(hand, wild_rank, ace_high) == expected


def test_every_wild_rank_is_exercised_by_a_fixed_sample():
    """A seeded sweep (not hypothesis) so each of the eleven wild ranks gets 150 hands."""
    import random

    rng = random.Random(13)
    for wild_rank in range(3, 14):
        for _ in range(150):
            decks = rng.randint(1, 2)
            hand = rng.sample(range(52 * decks), rng.randint(3, 9))
            extra = card_id(wild_rank, rng.randrange(4), rng.randrange(decks))
            if extra not in hand and rng.random() < 0.5:
                hand.append(extra)
            ace_high = rng.random() < 0.5
            assert min_penalty(hand, wild_rank, ace_high) == brute_min_penalty(hand, wild_rank, ace_high)


@settings(max_examples=400, deadline=None, suppress_health_check=SLOW_OK)
@given(hands(max_size=14))
def test_going_out_fast_filters_never_drop_a_real_discard(case):
    # The per-turn check rejects most hands with cheap bounds before searching; compare it
    # with the plain search (can_meld_all, itself checked against the oracle above).
    hand, wild_rank, ace_high = case
    expected = tuple(sorted(c for c in hand if can_meld_all([d for d in hand if d != c], wild_rank, ace_high)))
    assert going_out_discards(hand, wild_rank, ace_high) == expected


def test_going_out_near_misses_with_fourteen_cards():
    """Seeded near-complete 14-card hands: four combinations plus one or two loose cards."""
    import random

    rng = random.Random(7)
    found = 0
    for _ in range(300):
        wild_rank = rng.randint(3, 13)
        hand: list[int] = []
        while len(hand) < 12:
            suit, deck = rng.randrange(4), rng.randrange(2)
            if rng.random() < 0.5:
                start = rng.randint(1, 11)
                meld = [card_id(start + k, suit, deck) for k in range(3)]
            else:
                rank = rng.randint(1, 13)
                meld = [card_id(rank, (suit + k) % 4, deck) for k in range(3)]
            if not set(meld) & set(hand):
                hand += meld
        while len(hand) < 14:
            card = rng.randrange(104)
            if card not in hand:
                hand.append(card)
        expected = tuple(sorted(c for c in hand if can_meld_all([d for d in hand if d != c], wild_rank)))
        assert going_out_discards(hand, wild_rank) == expected
        found += bool(expected)
    assert found > 20  # the sample really contains hands that go out


# -- the wild-card rule options --------------------------------------------------------------
def test_a_fixed_penalty_for_unmatched_wilds():
    hand = parse_cards("QH 2S 9D")
    assert min_penalty(hand, 12, wild_penalty=25) == 25 + 2 + 9
    result = best_arrangement(hand, 12, wild_penalty=25)
    assert result.penalty == 36 and sorted(result.deadwood) == sorted(hand)


def test_without_all_wild_combinations_three_wilds_alone_stay_unmatched():
    hand = parse_cards("6C 6D 6H")
    assert min_penalty(hand, 6, all_wild=False) == 18
    assert best_arrangement(hand, 6, all_wild=False).melds == ()
    assert not can_meld_all(hand, 6, all_wild=False) and can_meld_all(hand, 6)


def test_without_all_wild_combinations_spare_wilds_join_a_set():
    hand = parse_cards("6C 6D 6H 6S 2H 2D")
    result = best_arrangement(hand, 6, all_wild=False)
    assert result.penalty == 0 and len(result.melds) in (1, 2)
    assert all(brute_is_combination(m.cards, 6, all_wild=False) for m in result.melds)
    assert all(any(c % 13 + 1 == 2 for c in m.cards) for m in result.melds)


def wilds_of(rank, count):
    return [card_id(rank, suit, deck) for deck in range(3) for suit in range(4)][:count]


def test_without_all_wild_combinations_a_full_run_and_one_wild_are_cut_in_two():
    # 5-6-7H and eleven wild Kings (three decks): one run of 13 holds ten of them; the
    # last is placed by cutting the run in two.
    hand = list(parse_cards("5H 6H 7H")) + wilds_of(13, 11)
    for all_wild in (True, False):
        result = best_arrangement(hand, 13, all_wild=all_wild)
        assert result.penalty == 0 and sorted(c for m in result.melds for c in m.cards) == sorted(hand)
        for meld in result.melds:
            assert brute_is_combination(meld.cards, 13, all_wild=all_wild) and ranks_fit(meld, 13, False)


def test_without_all_wild_combinations_two_naturals_at_the_end_become_two_sets():
    for naturals in ("AH 2H", "QH JH"):
        hand = list(parse_cards(naturals)) + wilds_of(13 if naturals == "AH 2H" else 3, 12)
        wild_rank = 13 if naturals == "AH 2H" else 3
        result = best_arrangement(hand, wild_rank, all_wild=False)
        assert result.penalty == 0 and len(result.melds) >= 2
        assert sorted(c for m in result.melds for c in m.cards) == sorted(hand)
        for meld in result.melds:
            assert brute_is_combination(meld.cards, wild_rank, all_wild=False)
            assert ranks_fit(meld, wild_rank, False)


@settings(max_examples=800, deadline=None, suppress_health_check=SLOW_OK)
@given(hands_and_wild_rules())
def test_wild_rule_options_match_brute_force(case):
    hand, wild_rank, ace_high, wild_penalty, all_wild = case
    expected = brute_min_penalty(hand, wild_rank, ace_high, wild_penalty, all_wild)
    result = best_arrangement(hand, wild_rank, ace_high, wild_penalty=wild_penalty, all_wild=all_wild)
    assert result.penalty == expected
    assert min_penalty(hand, wild_rank, ace_high, wild_penalty=wild_penalty, all_wild=all_wild) == expected
    assert sorted([c for m in result.melds for c in m.cards] + list(result.deadwood)) == sorted(hand)
    assert all(brute_is_combination(m.cards, wild_rank, ace_high, all_wild) for m in result.melds)
    assert all(ranks_fit(m, wild_rank, ace_high) for m in result.melds)
    zero = brute_min_penalty(hand, wild_rank, ace_high, None, all_wild) == 0
    assert can_meld_all(hand, wild_rank, ace_high, all_wild=all_wild) == zero
    going = tuple(sorted(
        c for c in hand
        if can_meld_all([d for d in hand if d != c], wild_rank, ace_high, all_wild=all_wild)
    ))
    assert going_out_discards(hand, wild_rank, ace_high, all_wild=all_wild) == going
