"""The SPRT of `arena match --sprt` (arena/ratings/sprt.py): the LLR, bounds, Elo interval and LOS
against arithmetic written out here and against fastchess's published figures; the edge
cases; and the command with two real bots."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from arena.game.record import GameResult
from arena.ratings.sprt import (
    SprtError,
    SprtSettings,
    SprtTally,
    elo_estimate,
    game_points,
    llr,
    llr_bounds,
    pair_bucket,
    pentanomial,
    sprt_status,
)
from arena.store.seeds import RunKey
from tests.command import arena

ROOT = Path(__file__).resolve().parents[2]
RANDOM = str(ROOT / "bots" / "random")
HEURISTIC = str(ROOT / "bots" / "threeup-heuristic")

# A fixed list of pair outcomes: the first bot's points summed over each deal's two games.
PAIRS = [2, 1, 1.5, 1, 0, 2, 1, 0.5, 1, 2, 1.5, 1, 0, 1, 2, 1, 1.5, 1, 0.5, 2]


def hand_llr(counts: list[float], elo0: float, elo1: float) -> float:
    """The GSPRT LLR the long way: bucket frequencies, the maximum-likelihood theta of each
    hypothesis by plain bisection, and N * sum q log(p1 / p0)."""
    scores = [0.0, 0.25, 0.5, 0.75, 1.0]
    total = sum(counts)
    q = [count / total for count in counts]

    def theta_for(s: float) -> float:
        # sum q (a - s) / (1 + theta (a - s)) falls from +inf to -inf on (-1 / (1 - s), 1 / s).
        low, high = -1 / (1 - s) + 1e-12, 1 / s - 1e-12
        for _ in range(200):
            middle = (low + high) / 2
            value = sum(qi * (a - s) / (1 + middle * (a - s)) for qi, a in zip(q, scores))
            low, high = (middle, high) if value > 0 else (low, middle)
        return (low + high) / 2

    s0 = 1 / (1 + 10 ** (-elo0 / 400))
    s1 = 1 / (1 + 10 ** (-elo1 / 400))
    theta0, theta1 = theta_for(s0), theta_for(s1)
    p0 = [qi / (1 + theta0 * (a - s0)) for qi, a in zip(q, scores)]
    p1 = [qi / (1 + theta1 * (a - s1)) for qi, a in zip(q, scores)]
    assert sum(p0) == pytest.approx(1, abs=1e-12) and sum(p1) == pytest.approx(1, abs=1e-12)
    assert sum(p * a for p, a in zip(p0, scores)) == pytest.approx(s0, abs=1e-12)
    assert sum(p * a for p, a in zip(p1, scores)) == pytest.approx(s1, abs=1e-12)
    return total * sum(qi * math.log(b / a) for qi, a, b in zip(q, p0, p1))


# ------------------------------------------------------------------ pairs and buckets


def test_a_two_seat_game_scores_a_win_one_a_shared_place_half_a_loss_nothing():
    assert game_points([1, 2], 0) == 1.0
    assert game_points([1, 2], 1) == 0.0
    assert game_points([2, 1], 0) == 0.0
    assert game_points([1, 1], 0) == 0.5  # a shared place at the turn cap
    assert game_points([2, 2], 1) == 0.5  # both forfeited: both share last place


def test_a_game_of_more_than_two_seats_has_no_win_or_loss():
    with pytest.raises(SprtError, match="a game with 3 seats has no win, draw or loss"):
        game_points([1, 2, 3], 0)


def test_a_pairs_score_is_its_bucket_from_ll_to_ww():
    assert [pair_bucket(score) for score in (0, 0.5, 1, 1.5, 2)] == [0, 1, 2, 3, 4]
    assert pair_bucket(1.0 + 0.5) == 3
    for impossible in (2.5, -0.5, 0.3):
        with pytest.raises(SprtError, match="a pair scores 0, 0.5, 1, 1.5 or 2 points"):
            pair_bucket(impossible)


def test_the_pentanomial_counts_the_pairs_in_each_bucket():
    assert pentanomial(PAIRS) == (2, 2, 8, 3, 5)
    assert pentanomial([]) == (0, 0, 0, 0, 0)


# ------------------------------------------------------------------ the LLR and its bounds


def test_the_bounds_for_alpha_and_beta_of_five_percent():
    lower, upper = llr_bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95), abs=1e-12)
    assert upper == pytest.approx(math.log(0.95 / 0.05), abs=1e-12)
    assert (round(lower, 6), round(upper, 6)) == (-2.944439, 2.944439)
    assert SprtSettings(0, 10).bounds == (lower, upper)
    assert llr_bounds(0.01, 0.1) == pytest.approx((math.log(0.1 / 0.99), math.log(0.9 / 0.01)), abs=1e-12)


def test_the_llr_of_the_fixed_pairs_matches_the_hand_computation():
    counts = pentanomial(PAIRS)
    expected = hand_llr(list(counts), -5, 25)
    assert llr(counts, -5, 25) == pytest.approx(expected, abs=1e-6)
    assert llr(counts, -5, 25) == pytest.approx(0.619710, abs=1e-6)
    # The other way round the evidence is the same, negated.
    assert llr(counts, 25, -5) == pytest.approx(-expected, abs=1e-6)


def test_the_llr_is_close_to_its_normal_approximation_for_a_small_difference():
    counts = (300, 5, 600, 4, 320)
    pairs = sum(counts)
    mean = sum(c * a for c, a in zip(counts, (0, 0.25, 0.5, 0.75, 1))) / pairs
    variance = sum(c * (a - mean) ** 2 for c, a in zip(counts, (0, 0.25, 0.5, 0.75, 1))) / pairs
    s0, s1 = 0.5, 1 / (1 + 10 ** (-10 / 400))
    approximation = pairs * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    assert approximation == pytest.approx(0.103381, abs=1e-6)
    assert llr(counts, 0, 10) == pytest.approx(hand_llr(list(counts), 0, 10), abs=1e-6)
    assert llr(counts, 0, 10) == pytest.approx(approximation, rel=0.005)


@pytest.mark.parametrize(
    "fastchess, elo0, elo1, published",
    [
        # fastchess app/tests/sprt_test.cpp, "logistic pentanomial 1" and "2": Stats(LL, LD, WL, DD, WD, WW).
        ((223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, -3.07),
        ((871, 26175, 55003, 980, 26678, 821), 0, 2, -4.98),
    ],
)
def test_the_llr_matches_fastchess_published_figures(fastchess, elo0, elo1, published):
    ll, ld, wl, dd, wd, ww = fastchess
    assert round(llr((ll, ld, wl + dd, wd, ww), elo0, elo1), 2) == published


def test_an_empty_bucket_counts_as_a_thousandth_of_a_pair_in_the_llr():
    assert llr((0, 3, 5, 0, 4), 0, 50) == pytest.approx(hand_llr([0.001, 3, 5, 0.001, 4], 0, 50), abs=1e-6)
    assert llr((0, 3, 5, 0, 4), 0, 50) == pytest.approx(0.754733, abs=1e-6)


def test_no_pairs_is_no_evidence():
    assert llr((0, 0, 0, 0, 0), 0, 10) == 0.0
    status = sprt_status((0, 0, 0, 0, 0), SprtSettings(0, 10))
    assert (status.pairs, status.llr, status.decision, status.fraction) == (0, 0.0, None, 0.0)


def test_all_pairs_equal_give_a_finite_llr():
    # Every deal split 1-1: the evidence leans to H0 (elo0 = 0) without a crash or a NaN.
    assert llr((0, 0, 7, 0, 0), 0, 10) == pytest.approx(hand_llr([0.001, 0.001, 7, 0.001, 0.001], 0, 10), abs=1e-6)
    assert llr((0, 0, 7, 0, 0), 0, 10) == pytest.approx(-0.198563, abs=1e-6)
    # Every pair won twice: towards H1.
    assert llr((0, 0, 0, 0, 6), 0, 10) == pytest.approx(0.170265, abs=1e-6)


def test_the_status_accepts_h1_at_the_upper_bound_and_h0_at_the_lower():
    settings = SprtSettings(0, 50)
    expected = [
        ((2, 2, 20, 4, 6), 1.365445, None),
        ((1, 2, 20, 6, 12), 4.283157, "H1"),
        ((8, 2, 30, 2, 5), -2.889388, None),  # just inside the lower bound, -2.944439
        ((10, 2, 50, 2, 8), -3.633171, "H0"),
    ]
    for counts, value, decision in expected:
        status = sprt_status(counts, settings)
        assert status.llr == pytest.approx(hand_llr(list(counts), 0, 50), abs=1e-6)
        assert (round(status.llr, 6), status.decision, status.pairs) == (value, decision, sum(counts))
    assert sprt_status((10, 2, 50, 2, 8), settings).fraction == pytest.approx(3.633171 / 2.944439, abs=1e-6)
    assert sprt_status((1, 2, 20, 6, 12), settings).fraction == pytest.approx(4.283157 / 2.944439, abs=1e-6)


def test_a_tally_scores_each_game_from_the_first_bots_seat_and_each_pair_once_complete():
    settings = SprtSettings(0, 50)
    tally = SprtTally(settings)
    games = [
        (("new", "old"), (1, 2)),  # new ahead: 1 point
        (("old", "new"), (1, 1)),  # shared first: 1/2; the pair scored 1.5
        (("new", "old"), (2, 2)),  # shared last: 1/2
        (("old", "new"), (1, 2)),  # new behind: 0; the pair scored 0.5
        (("new", "old"), (1, 2)),  # half a pair: not counted yet
    ]
    assert [tally.add(seats, places) for seats, places in games] == [False, True, False, True, False]
    assert tally.first == "new" and tally.pending == 1.0 and tally.counts == [0, 1, 0, 1, 0]
    assert tally.outcomes == {"ahead": 2, "shared first": 1, "shared last": 1, "behind": 1}
    assert (tally.wins, tally.points) == (3, 3.0)
    assert tally.status == sprt_status((0, 1, 0, 1, 0), settings) and not tally.decided


def test_a_tally_is_decided_only_at_the_end_of_the_pair_that_reached_a_bound():
    tally = SprtTally(SprtSettings(0, 50))
    while tally.status.decision is None:
        assert tally.add(("new", "old"), (1, 2)) is False and not tally.decided
        assert tally.add(("old", "new"), (2, 1)) is True
    assert tally.status.decision == "H1" and tally.decided
    assert tally.counts == [0, 0, 0, 0, tally.status.pairs] and tally.status.pairs == 23
    tally.add(("new", "old"), (1, 2))
    assert not tally.decided  # a pair begun after the decision is played out


def test_counts_must_be_five_counts_of_at_least_zero():
    for counts in ((1, 2, 3), (1, -1, 0, 0, 0)):
        with pytest.raises(SprtError, match="pentanomial counts are five counts of at least 0"):
            llr(counts, 0, 10)
        with pytest.raises(SprtError, match="pentanomial counts are five counts of at least 0"):
            elo_estimate(counts)


# ------------------------------------------------------------------ the Elo interval and the LOS


def test_the_elo_interval_and_los_of_the_fixed_pairs_match_the_hand_computation():
    counts = pentanomial(PAIRS)  # 2, 2, 8, 3, 5
    pairs = 20
    mean = (0 * 2 + 0.25 * 2 + 0.5 * 8 + 0.75 * 3 + 1 * 5) / pairs  # 11.75 / 20
    variance = (
        2 * (0 - mean) ** 2 + 2 * (0.25 - mean) ** 2 + 8 * (0.5 - mean) ** 2 + 3 * (0.75 - mean) ** 2
        + 5 * (1 - mean) ** 2
    ) / pairs
    spread = math.sqrt(variance / pairs)

    def elo(score: float) -> float:
        return -400 * math.log10(1 / score - 1)

    lower, upper = elo(mean - 1.959963984540054 * spread), elo(mean + 1.959963984540054 * spread)
    los = (1 - math.erf(-(mean - 0.5) / math.sqrt(2 * variance / pairs))) / 2

    estimate = elo_estimate(counts)
    assert (mean, round(variance, 9)) == (0.5875, 0.09546875)
    assert estimate.pairs == 20 and estimate.score == mean
    assert estimate.variance == pytest.approx(variance, abs=1e-12)
    assert estimate.elo == pytest.approx(elo(mean), abs=1e-6)
    assert estimate.lower == pytest.approx(lower, abs=1e-6)
    assert estimate.upper == pytest.approx(upper, abs=1e-6)
    assert estimate.error == pytest.approx((upper - lower) / 2, abs=1e-6)
    assert estimate.los == pytest.approx(los, abs=1e-6)
    assert (round(estimate.elo, 6), round(estimate.lower, 6), round(estimate.upper, 6), round(estimate.los, 6)) == (
        61.433567, -33.396567, 166.588860, 0.897326
    )
    assert estimate.note is None


@pytest.mark.parametrize(
    "fastchess, diff, error, los, score",
    [
        # fastchess app/tests/elo_test.cpp, "EloPentanomial 1" to "3".
        ((34, 54, 31, 32, 64, 75), 55.58, 27.65, "100.00", 0.579),
        ((332, 433, 457, 41, 333, 334), -8.64, 10.33, "5.05", 0.488),
        ((7895, 8757, 5485, 200, 568, 9999), -21.04, 2.95, "0.00", 0.470),
    ],
)
def test_the_elo_interval_matches_fastchess_published_figures(fastchess, diff, error, los, score):
    ll, ld, wl, dd, wd, ww = fastchess
    estimate = elo_estimate((ll, ld, wl + dd, wd, ww))
    assert (round(estimate.elo, 2), round(estimate.error, 2)) == (diff, error)
    assert f"{estimate.los * 100:.2f}" == los
    assert round(estimate.score, 3) == score


def test_too_few_pairs_give_a_not_enough_pairs_estimate():
    for counts, played in (((0, 0, 0, 0, 0), 0), ((0, 0, 1, 0, 0), 1)):
        estimate = elo_estimate(counts)
        assert (estimate.pairs, estimate.score, estimate.elo, estimate.lower, estimate.upper, estimate.los) == (
            played, None, None, None, None, None
        )
        assert estimate.error is None
        assert estimate.note == f"not enough pairs: {played} played, an interval needs at least 2"


def test_all_pairs_equal_give_an_elo_without_an_interval():
    estimate = elo_estimate((0, 0, 7, 0, 0))
    assert (estimate.score, estimate.variance, estimate.elo) == (0.5, 0.0, 0.0)
    assert (estimate.lower, estimate.upper, estimate.los, estimate.error) == (None, None, None, None)
    assert estimate.note == "every pair scored 1 of 2: no spread to build an interval from"


def test_a_bot_that_won_every_game_has_an_unbounded_elo():
    assert elo_estimate((0, 0, 0, 0, 6)).note == "the first bot won every game: the Elo difference is unbounded"
    lost = elo_estimate((6, 0, 0, 0, 0))
    assert (lost.score, lost.elo, lost.los) == (0.0, None, None)
    assert lost.note == "the second bot won every game: the Elo difference is unbounded"


def test_an_interval_beyond_a_full_score_is_unbounded_at_that_end():
    estimate = elo_estimate((0, 0, 1, 0, 2))  # mean 5/6, the interval's top above 1
    assert estimate.elo == pytest.approx(400 * math.log10(5), abs=1e-9)
    assert estimate.lower == pytest.approx(46.566397, abs=1e-6)
    assert (estimate.upper, estimate.error) == (None, None)
    assert estimate.los == pytest.approx(0.992847, abs=1e-6)
    assert estimate.note == "the interval reaches a 100% score: that end is unbounded"


# ------------------------------------------------------------------ the settings


@pytest.mark.parametrize(
    "args, message",
    [
        ((10, 0), "--sprt 10 0: ELO0 must be less than ELO1"),
        ((5, 5), "--sprt 5 5: ELO0 must be less than ELO1"),
        ((0, 2000), "--sprt 0 2000: both Elo bounds must be between -1000 and 1000"),
        ((0, 10, 0.0, 0.05), "--alpha 0: must be between 0 and 0.5 (exclusive)"),
        ((0, 10, 0.5, 0.05), "--alpha 0.5: must be between 0 and 0.5 (exclusive)"),
        ((0, 10, 0.05, -0.1), "--beta -0.1: must be between 0 and 0.5 (exclusive)"),
        ((0, 10, 0.05, 0.7), "--beta 0.7: must be between 0 and 0.5 (exclusive)"),
    ],
)
def test_settings_that_cannot_work_are_refused(args, message):
    with pytest.raises(SprtError) as refused:
        SprtSettings(*args)
    assert str(refused.value).startswith(message)


# ------------------------------------------------------------------ the command


def unwrapped(text: str) -> list[str]:
    """The lines of a command's output with each wrapped line joined again (at 80 columns a
    long line goes on in lines indented by two spaces)."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("  ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def test_sprt_match_of_two_real_bots_stops_once_h1_is_accepted(tmp_path):
    replays = tmp_path / "sprt.jsonl"
    run = arena("match", "3up3down", HEURISTIC, RANDOM, "--sprt", "0", "100", "--games", "40", "--seed", "3",
                "--rule", "max_turns=60", "--replay", str(replays))
    assert run.returncode == 0, run.stderr
    lines = unwrapped(run.stdout)
    assert lines[:2] == [
        "SPRT [0.00, 100.00], alpha 0.05, beta 0.05: H0 accepted at LLR -2.94, H1 at 2.94",
        "pair 1: LLR -0.32 (11.0%), Ptnml(0-2): [0, 0, 1, 0, 0]",
    ]
    assert "pair 10: LLR 1.21 (41.0%), Ptnml(0-2): [1, 1, 2, 1, 5]" in lines
    assert "pair 11:" not in run.stdout  # past 10 pairs, every 10th (and the deciding one)
    assert lines[-5:] == [
        (
            "SPRT [0.00, 100.00]: H1 accepted after 34 games (17 pairs): threeup-heuristic is more than 0 Elo "
            "stronger than random (alpha 0.05)"
        ),
        (
            "Results of threeup-heuristic vs random: Elo: 219.27 +/- 162.48 (95% interval 99.12 to 424.09), "
            "LOS: 100.00%"
        ),
        "LLR 3.16 (107.2%) (-2.94, 2.94) [0.00, 100.00], Ptnml(0-2): [1, 1, 2, 4, 9]",
        # 24 games ahead and 5 first together: the standings above count 29 wins too.
        "Games: 34, Wins: 29 (5 shared), Losses: 5, Points: 26.5 (77.94%)",
        "Wins: games placed first, shared firsts counted. Points: 1 a game placed ahead, 1/2 a shared place.",
    ]
    assert re.search(r"^threeup-heuristic +34 +29 ", run.stdout, re.M)  # the match's standings: wins alike
    assert "pair 17: LLR 3.16 (107.2%)" in run.stdout
    # Within 80 columns, but for a path longer than a line (a word is never cut): the
    # temporary folder's path is as long as the machine makes it.
    assert [line for line in run.stdout.splitlines() if len(line) > 80 and str(tmp_path) not in line] == []
    # Paired games: games 2k-1 and 2k are deal k, seats swapped; the match stopped after the deciding pair.
    records = [GameResult.model_validate_json(line) for line in replays.read_text().splitlines()]
    key = RunKey.from_seed(3)
    assert len(records) == 34
    for record in records:
        deal = (record.game_number + 1) // 2
        assert record.seed == key.deal_seed(f"match-{deal:05d}")
        first_seat = ["threeup-heuristic", "random"] if record.game_number % 2 else ["random", "threeup-heuristic"]
        assert record.seats == first_seat


def test_sprt_json_prints_the_final_figures_of_an_h0_decision():
    run = arena("match", "3up3down", RANDOM, HEURISTIC, "--sprt", "0", "100", "--games", "40", "--seed", "3",
                "--rule", "max_turns=60", "--json")
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    assert {key: figures[key] for key in (
        "game", "first", "second", "seed", "elo0", "elo1", "alpha", "beta", "decision", "games", "pairs",
        "pentanomial", "wins", "shared_wins", "losses", "shared_last", "points", "points_share", "note", "incidents",
    )} == {
        "game": "3up3down", "first": "random", "second": "threeup-heuristic", "seed": 3, "elo0": 0.0, "elo1": 100.0,
        "alpha": 0.05, "beta": 0.05, "decision": "H0", "games": 18, "pairs": 9, "pentanomial": [3, 2, 2, 2, 0],
        "wins": 9, "shared_wins": 6, "losses": 9, "shared_last": 0, "points": 6.0, "points_share": 0.3333333333333333,
        "note": None,
        "incidents": {"random": {}, "threeup-heuristic": {}},
    }
    assert figures["llr"] == pytest.approx(llr((3, 2, 2, 2, 0), 0, 100), abs=1e-9)
    assert round(figures["llr"], 6) == -2.955447
    assert (figures["lower_bound"], figures["upper_bound"]) == pytest.approx(llr_bounds(0.05, 0.05), abs=1e-12)
    estimate = elo_estimate((3, 2, 2, 2, 0))
    assert (figures["elo"], figures["elo_lower"], figures["elo_upper"], figures["elo_error"], figures["los"]) == (
        estimate.elo, estimate.lower, estimate.upper, estimate.error, estimate.los
    )
    assert round(figures["elo"], 2) == -120.41 and round(figures["los"], 4) == 0.0416


def test_sprt_without_a_decision_says_so_at_the_last_game():
    run = arena("match", "3up3down", HEURISTIC, RANDOM, "--sprt", "-50", "50", "--games", "6", "--seed", "5",
                "--rule", "max_turns=60", "--alpha", "0.1", "--beta", "0.2")
    assert run.returncode == 0, run.stderr
    assert unwrapped(run.stdout)[-5:] == [
        "SPRT [-50.00, 50.00]: no decision at 6 games (3 pairs)",
        (
            "Results of threeup-heuristic vs random: Elo: 416.56 (95% interval 223.24 to unbounded), LOS: 100.00% "
            "(the interval reaches a 100% score: that end is unbounded)"
        ),
        "LLR 0.86 (41.5%) (-1.50, 2.08) [-50.00, 50.00], Ptnml(0-2): [0, 0, 0, 1, 2]",
        "Games: 6, Wins: 6 (1 shared), Losses: 0, Points: 5.5 (91.67%)",
        "Wins: games placed first, shared firsts counted. Points: 1 a game placed ahead, 1/2 a shared place.",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sprt", "10", "0"], (
            "--sprt 10 0: ELO0 must be less than ELO1 (H0: the first bot is at most ELO0 Elo stronger than the "
            "second; H1: at least ELO1)"
        )),
        (["--sprt", "0", "10", "--alpha", "0.5"], "--alpha 0.5: must be between 0 and 0.5 (exclusive), e.g. 0.05"),
        (["--sprt", "0", "10", "--alpha", "0"], "--alpha 0: must be between 0 and 0.5 (exclusive), e.g. 0.05"),
        (["--sprt", "0", "10", "--beta", "0.9"], "--beta 0.9: must be between 0 and 0.5 (exclusive), e.g. 0.05"),
        (["--sprt", "0", "10", RANDOM],
         "--sprt compares exactly two bots (the first, e.g. your new version, against the second); got 3 bot folders"),
        (["--sprt", "0", "10", "--games", "7"], "--sprt plays each deal twice, seats swapped: --games must be even, not 7"),
        (["--json"], "--json is an SPRT setting: use it with --sprt ELO0 ELO1"),
        (["--alpha", "0.1", "--beta", "0.1"], "--alpha, --beta are SPRT settings: use them with --sprt ELO0 ELO1"),
    ],
)
def test_sprt_mistakes_are_one_line_and_exit_code_2(args, message):
    run = arena("match", "3up3down", RANDOM, HEURISTIC, *args)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stderr == f"arena: error: {message}\n"
    assert run.stdout == ""
