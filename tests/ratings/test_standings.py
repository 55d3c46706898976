"""The one standings type (`arena.ratings.standings`): each bot's band, group, settled and, in
a league, status, computed once from a ledger and read by the terminal, `--json`, the site
and the web door. A hand-made league of five bots with exact outcomes; the readers' own
tests (test_report_confidence.py, test_league.py, tests/site/test_unchanged.py) check that what
they print and write is what it was."""

from __future__ import annotations

import json

from arena.ratings.confidence import RankInterval
from arena.ratings.ledger import RatedGame, RatingLedger
from arena.ratings.standings import of_ledger, of_store, ranked
from arena.store.db import MemberRow, Store


def key(round_no: int) -> str:
    return f"{round_no:05d}-00001-0"


def five_seat_ledger() -> RatingLedger:
    """Twelve five-seat games: a always first, e always last, b, c and d taking turns between."""
    ledger = RatingLedger(record=True)
    for round_no in range(1, 13):
        middle = [("b", "c", "d"), ("c", "d", "b"), ("d", "b", "c")][round_no % 3]
        ledger.add(RatedGame(key(round_no), ("a", *middle, "e"), (1, 2, 3, 4, 5)))
    return ledger


MEMBERS = {
    "a": MemberRow("a", "a", 1, None, "active", ""),
    "b": MemberRow("b", "b", 1, None, "active", ""),
    "c": MemberRow("c", "c", 1, 9, "retired", "replaced by c@2"),
    "d": MemberRow("d", "d", 2, None, "active", ""),
    "e": MemberRow("e", "e", 2, 7, "suspended", "5 forfeits in a row"),
}


def test_each_line_carries_its_band_group_and_settled_as_the_confidence_says():
    ledger = five_seat_ledger()
    standings = of_ledger(ledger)
    confidence = ledger.confidence()
    assert [line.bot for line in standings.lines] == [line.bot for line in ledger.table().standings] == list("abcde")
    assert [line.band for line in standings.lines] == [
        RankInterval(1, 1), RankInterval(2, 4), RankInterval(2, 4), RankInterval(2, 4), RankInterval(5, 5)
    ]
    assert [line.band for line in standings.lines] == [confidence.intervals[bot] for bot in "abcde"]
    assert [line.group for line in standings.lines] == [0, 1, 1, 1, 2] == confidence.groups(list("abcde"))
    # Five bots: settled is a 95% interval of at most 2 places; a and e hold one place each.
    assert standings.settled_span == 2
    assert [line.settled for line in standings.lines] == [True, False, False, False, True]
    # A tournament: no status, no mark, and the figures are the ledger's own.
    assert {line.status for line in standings.lines} == {None} and {line.mark for line in standings.lines} == {None}
    bare = ledger.table().standings[0]
    assert (bare.band, bare.group, bare.settled, bare.status) == (None, None, None, None)
    assert standings.lines[0].mu == bare.mu and standings.lines[0].games == 12 and standings.lines[0].wins == 12


def test_json_lists_the_ledgers_figures_then_band_and_group_then_a_leagues_state():
    tournament = of_ledger(five_seat_ledger()).to_json()
    assert list(tournament[0]) == [
        "bot", "mu", "sigma", "conservative", "games", "wins", "average_place", "forfeits", "score", "buchholz",
        "rank_interval", "group",
    ]
    assert [(line["bot"], line["rank_interval"], line["group"]) for line in tournament] == [
        ("a", [1, 1], 1), ("b", [2, 4], 2), ("c", [2, 4], 2), ("d", [2, 4], 2), ("e", [5, 5], 3)
    ]
    league = of_ledger(five_seat_ledger(), MEMBERS, league=True).to_json()
    assert list(league[0])[-3:] == ["status", "reason", "settled"]
    # e forfeits nothing here but is suspended: last for sure, settled whatever its status.
    assert [(line["bot"], line["status"], line["reason"], line["settled"]) for line in league] == [
        ("a", "active", "", True), ("b", "active", "", False), ("c", "retired", "replaced by c@2", False),
        ("d", "active", "", False), ("e", "suspended", "5 forfeits in a row", True),
    ]
    json.dumps(league)  # plain JSON


def test_a_leagues_marks_and_notes_come_from_the_lines():
    standings = of_ledger(five_seat_ledger(), MEMBERS, league=True)
    assert [line.mark for line in standings.lines] == ["settled", "provisional", "retired", "provisional", "suspended"]
    assert standings.terminal_marks() == {"a": " (settled)", "c": " (retired)", "e": " (suspended)"}
    assert standings.league_notes() == [
        "(settled): its 95% rank interval spans at most 2 places (with 5 bots; the band shown is the 90% one); "
        "unmarked: provisional. (retired): replaced by a newer version (--hide-retired leaves them out).",
        "e is suspended: 5 forfeits in a row (a new version plays again)",
    ]
    assert standings.suspended() == [("e", "5 forfeits in a row")]
    assert standings.retired() == {"c"}
    # The runner counts the active bots that are settled.
    assert standings.settled_bots(["b", "a", "d"]) == ["a"]


def test_hiding_retired_versions_ranks_the_others_among_themselves_and_keeps_settled():
    standings = of_ledger(five_seat_ledger(), MEMBERS, league=True)
    shown = standings.without(standings.retired())
    assert [(line.bot, str(line.band), line.group, line.settled, line.status) for line in shown.lines] == [
        ("a", "1–1", 0, True, "active"), ("b", "2–3", 1, False, "active"), ("d", "2–3", 1, False, "active"),
        ("e", "4–4", 2, True, "suspended"),
    ]
    assert standings.without(set()) is standings


def test_where_a_bot_stands_in_words():
    standings = of_ledger(five_seat_ledger(), MEMBERS, league=True)
    assert standings.describe("a") == "a: 12 games so far, rank 1 of 5, 90% interval 1–1; settled (its 95% interval 1–1)"
    assert standings.describe("d") == (
        "d: 12 games so far, rank 4 of 5, 90% interval 2–4; provisional (settled when its 95% interval spans at most 2 places)"
    )
    assert standings.describe("e") == "e: 12 games so far, rank 5 of 5, 90% interval 5–5; suspended (5 forfeits in a row)"
    assert standings.describe("zed") == "zed has not joined the league yet (it joins within seconds of being in its registry)"


def test_a_newcomer_without_games_is_waiting_and_unmarked_and_a_name_finds_its_newest_version():
    ledger = RatingLedger(record=True, bots=["new@2"])
    ledger.add(RatedGame(key(1), ("old@1", "other@1"), (1, 2)))
    members = {
        "old@1": MemberRow("old@1", "old", 1, 2, "retired", "replaced by old@2"),
        "other@1": MemberRow("other@1", "other", 1, None, "active", ""),
        "new@2": MemberRow("new@2", "old", 2, None, "active", ""),
    }
    standings = ranked(ledger.table().standings, ledger.confidence(), members, league=True)
    newcomer = standings.find("new@2")[1]
    assert (newcomer.games, newcomer.settled, newcomer.mark, newcomer.status) == (0, False, None, "active")
    assert standings.describe("old") == "new@2: 0 games so far, rank 2 of 3, 90% interval 1–3; waiting for its first game"
    assert standings.find("nobody") is None


def test_a_stored_league_reads_the_same_standings_as_its_ledger(tmp_path):
    from arena.store.db import BotRecord

    with Store.open(tmp_path, create=True) as store:
        store.save_settings({"format": "league", "game": "3up3down", "seats": 5}, "f")
        for bot, member in MEMBERS.items():
            store.add_member(BotRecord(bot, bot, "1", "h", "", "folder"), member.lineage, member.joined)
        standings = of_store(store)
    assert [(line.bot, line.status) for line in standings.lines] == [(bot, "active") for bot in "abcde"]
    assert standings.league and all(line.games == 0 and line.mark is None for line in standings.lines)
    assert standings.terminal_marks() == {}
