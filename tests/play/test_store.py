"""The tournament store: exactly-once results, schedule order, full records back."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest

from arena.game.record import GameResult, Incident, Replay, ReplayAction
from arena.ratings.ledger import rate_results
from arena.ratings.results import rated_games, stored_history, stored_standings
from arena.schedule.formats import ScheduledGame
from arena.store.db import BotRecord, DuplicateResult, Store, StoreError, content_hash


def scheduled(round_no: int, table_no: int, bots: tuple[str, ...], rotation: int = 0) -> ScheduledGame:
    return ScheduledGame(round_no, table_no, rotation, bots, seed=7)  # every test deal has seed 7


def result(bots: tuple[str, ...], places: list[int], forfeits: list[int] = (), incidents=()) -> GameResult:
    return GameResult(
        game="3up3down",
        seed=7,
        rules={"x": 1},
        seats=list(bots),
        places=places,
        scores=[float(p) for p in places],
        engine_places=places,
        forfeits=list(forfeits),
        incidents=list(incidents),
        replay=Replay(actions=[ReplayAction(seat=0, action={"play": [1]}, by="bot")], events=[{"e": 1}]),
    )


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path, create=True) as opened:
        opened.save_settings({"duplicate": False, "rating": {"tau": 0.0}}, "abc")
        opened.add_bots(BotRecord(b, b, "1.0", "h" + b, "/bots/" + b) for b in "abcd")
        yield opened


def test_a_second_result_for_the_same_game_is_refused(store):
    store.schedule([scheduled(1, 1, ("a", "b"))])
    store.record("00001-00001-0", result(("a", "b"), [1, 2]))
    with pytest.raises(DuplicateResult):
        store.record("00001-00001-0", result(("a", "b"), [2, 1]))
    assert [(s.bot, s.place) for s in store.seats("00001-00001-0")] == [("a", 1), ("b", 2)]


def test_a_result_for_an_unscheduled_game_or_other_bots_is_refused(store):
    store.schedule([scheduled(1, 1, ("a", "b"))])
    with pytest.raises(StoreError, match="not in the schedule"):
        store.record("00001-00002-0", result(("a", "b"), [1, 2]))
    with pytest.raises(StoreError, match="scheduled for"):
        store.record("00001-00001-0", result(("b", "a"), [1, 2]))
    with pytest.raises(StoreError, match="seed"):
        store.record("00001-00001-0", result(("a", "b"), [1, 2]).model_copy(update={"seed": 8}))
    assert store.done_keys() == set()


def test_rescheduling_a_key_with_another_table_is_refused(store):
    store.schedule([scheduled(1, 1, ("a", "b"))])
    store.schedule([scheduled(1, 1, ("a", "b"))])  # the same again: fine (a resume)
    with pytest.raises(StoreError, match="already scheduled"):
        store.schedule([scheduled(1, 1, ("a", "c"))])


def test_a_stored_game_comes_back_whole(store):
    incident = Incident(game_number=1, seat=1, bot="b", reason="TIMEOUT", detail="slow", decision=3, log_tail="bye")
    original = result(("a", "b", "c"), [1, 2, 3], forfeits=[1], incidents=[incident])
    original = original.model_copy(update={"places": [1, 3, 2]})
    store.schedule([scheduled(1, 1, ("a", "b", "c"))])
    store.record("00001-00001-0", original, duration_s=0.5, logs=["", "log of b", "x" * 10_000])
    assert store.game_result("00001-00001-0") == original
    assert store.logs("00001-00001-0") == {1: "log of b", 2: "x" * 4000}
    [game] = store.games()
    assert (game.status, game.duration_s, game.bots) == ("done", 0.5, ("a", "b", "c"))


def test_standings_use_schedule_order_not_finishing_order(tmp_path, store):
    tables = [scheduled(1, 1, ("a", "b")), scheduled(1, 2, ("c", "d")), scheduled(2, 1, ("a", "c")), scheduled(2, 2, ("b", "d"))]
    places = {"00001-00001-0": [1, 2], "00001-00002-0": [2, 1], "00002-00001-0": [2, 1], "00002-00002-0": [1, 2]}
    store.schedule(tables)
    for key in sorted(places, reverse=True):  # finish in the opposite order
        game = next(t for t in tables if t.key == key)
        store.record(key, result(game.table, places[key]))
    with Store.open(tmp_path / "other", create=True) as forward:
        forward.save_settings({"duplicate": False, "rating": {"tau": 0.0}}, "abc")
        forward.add_bots(store.bots())
        forward.schedule(tables)
        for key in sorted(places):
            game = next(t for t in tables if t.key == key)
            forward.record(key, result(game.table, places[key]))
        assert stored_standings(forward) == stored_standings(store)
    assert stored_standings(store).standings == rate_results(rated_games(store)).standings
    history = stored_history(store)
    assert [point.key for point in history["a"]] == ["00001-00001-0", "00002-00001-0"]
    assert history["a"][-1].mu == next(s.mu for s in stored_standings(store).standings if s.bot == "a")


def test_the_store_is_in_wal_mode_and_survives_reopening(tmp_path, store):
    store.schedule([scheduled(1, 1, ("a", "b"))])
    store.record("00001-00001-0", result(("a", "b"), [1, 2]))
    with Store.open(tmp_path) as again:
        assert again.done_keys() == {"00001-00001-0"}
        assert again.settings() == {"duplicate": False, "rating": {"tau": 0.0}}
    mode = sqlite3.connect(tmp_path / "arena.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_opening_a_missing_store_says_where_it_looked(tmp_path):
    with pytest.raises(StoreError, match="no tournament store"):
        Store.open(tmp_path / "nowhere")


def test_content_hash_ignores_python_caches_but_not_content(tmp_path):
    (tmp_path / "bot.py").write_text("print(1)")
    before = content_hash(tmp_path)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0")
    assert content_hash(tmp_path) == before
    (tmp_path / "bot.py").write_text("print(2)")
    assert content_hash(tmp_path) != before


def test_content_hash_takes_any_file_name_a_file_system_holds(tmp_path):
    """A name that is not UTF-8 is hashed by its bytes (and a UTF-8 one as before)."""
    (tmp_path / "bot.py").write_text("print(1)\n")
    (tmp_path / "é.txt").write_text("x")
    utf8 = content_hash(tmp_path)
    (tmp_path / os.fsdecode(b"x\xff.py")).write_text("")
    odd = content_hash(tmp_path)
    os.remove(tmp_path / os.fsdecode(b"x\xff.py"))
    (tmp_path / os.fsdecode(b"x\xfe.py")).write_text("")
    assert len({utf8, odd, content_hash(tmp_path)}) == 3
    digest = hashlib.sha256()
    for name, data in ((b"bot.py", b"print(1)\n"), ("é.txt".encode(), b"x")):
        digest.update(name + b"\0" + b"-" + data + b"\0")
    assert utf8 == digest.hexdigest()
