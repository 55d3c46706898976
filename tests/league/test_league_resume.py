"""A league resumes from the state it saves in its store after each batch (issue 27, part
4): a resume with it, without it (a store from before it existed) or with a bad one (torn,
another league's, other settings, other code) holds the very ledgers, counts and queue of
a resume that rates the whole history, and plays what an uninterrupted league plays; the
resume streams the store (no list of every game or seat); a ledger's snapshot goes on bit
for bit."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sqlite3
import threading
import zlib
from collections import Counter
from pathlib import Path

import pytest

from arena.ratings.ledger import RatedGame, RatingLedger, RatingSettings
from arena.league import saved_state
from arena.league.ladder import LeagueInterrupted, _League, run_league
from arena.store.db import Store
from arena.store.keys import game_key
from arena.store.seeds import RunKey
from tests.league.test_league import NAMES, config, in_process, ratings_of, schedule_of


def _games(count: int, seed: int, seats: int = 4) -> list[RatedGame]:
    rng = random.Random(seed)
    bots = [f"b{i}" for i in range(12)]
    games = []
    for number in range(count):
        batch, table = divmod(number, 3)
        places = list(range(1, seats + 1))
        rng.shuffle(places)
        if number % 7 == 0:
            places[1] = places[0]  # a tie
        games.append(RatedGame(game_key(batch + 1, table + 1, 0), tuple(rng.sample(bots, seats)), tuple(places)))
    return games


def _duplicate_games(deals: int, seed: int) -> list[RatedGame]:
    rng = random.Random(seed)
    bots = [f"b{i}" for i in range(9)]
    games = []
    for deal in range(deals):
        table = rng.sample(bots, 3)
        for rotation in range(3):
            places = [1, 2, 3]
            rng.shuffle(places)
            key = game_key(deal + 1, 1, rotation)
            games.append(RatedGame(key, tuple(table[(s - rotation) % 3] for s in range(3)), tuple(places),
                                   deal=key.rsplit("-", 1)[0]))
    return games


@pytest.mark.parametrize("duplicate", [False, True])
def test_a_ledger_snapshot_goes_on_bit_for_bit(duplicate):
    games = _duplicate_games(40, 3) if duplicate else _games(120, 3)
    cut = 61 if duplicate else 60  # a duplicate deal left open: rotation 1 of deal 21
    settings = RatingSettings(mu=30.0, draw_probability=0.01)
    straight = RatingLedger(settings, duplicate=duplicate, record=True, bots=["b0", "zed"])
    halted = RatingLedger(settings, duplicate=duplicate, record=True, bots=["b0", "zed"])
    for game in games[:cut]:
        straight.add(game)
        halted.add(game)
    resumed = RatingLedger.restore(json.loads(json.dumps(halted.snapshot())))
    assert resumed.snapshot() == halted.snapshot()
    for game in games[cut:]:
        straight.add(game)
        resumed.add(game)
    assert resumed.snapshot() == straight.snapshot()
    assert resumed.table() == straight.table()
    assert resumed.confidence() == straight.confidence()
    # Every rating exactly: the natural parameters, not mu and sigma rounded through them.
    assert {bot: (r.pi, r.tau) for bot, r in resumed.ratings._ratings.items()} == {
        bot: (r.pi, r.tau) for bot, r in straight.ratings._ratings.items()
    }


def test_a_ledger_with_a_history_goes_on_with_it():
    """A history is in the snapshot (the site's cache keeps one): every point, then the same
    points as the ledger that never stopped."""
    games = _games(60, 4)
    straight = RatingLedger(history=True, bots=["b0"])
    halted = RatingLedger(history=True, bots=["b0"])
    for game in games[:30]:
        straight.add(game)
        halted.add(game)
    resumed = RatingLedger.restore(json.loads(json.dumps(halted.snapshot())))
    assert resumed.points() == halted.points()
    assert resumed.snapshot(history=False)["history"] is None
    for game in games[30:]:
        straight.add(game)
        resumed.add(game)
    assert resumed.points() == straight.points()
    assert resumed.snapshot() == straight.snapshot()


def test_a_duplicate_ledger_resumed_refuses_a_late_rotation_of_a_deal_it_rated():
    """The deals a duplicate ledger rated are in its snapshot: a rotation of one that comes
    late (a later key, the deal's label) is refused after a resume as without one."""
    games = _duplicate_games(10, 5)
    settings = RatingSettings()
    straight = RatingLedger(settings, duplicate=True, record=True)
    for game in games[:13]:  # deals 1-4 rated, deal 5 open (rotation 0)
        straight.add(game)
    saved = json.loads(json.dumps(straight.snapshot()))
    assert saved["rated_deals"] == ["00001-00001", "00002-00001", "00003-00001", "00004-00001"]
    resumed = RatingLedger.restore(saved)
    late = RatedGame(game_key(9, 1, 5), games[3].bots, games[3].places, deal="00002-00001")
    for ledger in (straight, resumed):
        with pytest.raises(ValueError, match="rotations of deal '00002-00001' must come one after another"):
            ledger.add(late)
    assert resumed.snapshot() == straight.snapshot()  # and both alike after it
    # A snapshot without them (an older arena's) or with something else is not one.
    for bad in ({k: v for k, v in saved.items() if k != "rated_deals"}, {**saved, "rated_deals": [1]},
                {**saved, "rated_deals": "00001-00001"}):
        with pytest.raises((KeyError, ValueError)):
            RatingLedger.restore(bad)


def _open(out: Path, **settings) -> _League:
    cfg = config(out, out.parent / "empty", **settings)
    store = Store.open(out)
    key = RunKey.of_store(cfg.seed, store)
    return _League(cfg, store, key, None, None, threading.Event(), None, None, False, 1.0)


def _state_of(league: _League) -> dict:
    """Everything a resume restores, as the league goes on with it."""
    return {
        "lag": league.lag.snapshot(), "full": league.full.snapshot(),
        "through": (league.lag_through, league.full_through, league.next_batch, league.seq, league.counted),
        "streak": +league.streak, "last_forfeit": league.last_forfeit,
        "counts": (+league.scheduled_games, +league.seat_use),
        "results": {batch: list(results) for batch, results in league.results.items() if results},
        "full_results": {batch: list(results) for batch, results in league.full_results.items() if results},
        "open": +league.open, "queue": [game.key for game in league.queue],
        "settled": league.standings().settled_bots(league.active()),
    }


def _interrupted(out: Path, after: int, **settings) -> None:
    """A league stopped once `after` games are stored (a batch may be left open)."""
    stop = threading.Event()

    def stop_after(update):
        if update.done >= after:
            stop.set()

    with pytest.raises(LeagueInterrupted):
        run_league(config(out, out.parent / "empty", games=60, **settings), in_process=in_process(NAMES),
                   report=False, progress=stop_after, stop=stop)


@pytest.fixture
def stopped(tmp_path):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "league"
    _interrupted(out, 14)
    return out


def _cold_state(out: Path, **settings) -> dict:
    """The state of a resume that rates the whole history (the saved state set aside)."""
    with Store.open(out) as store:
        saved = store.saved_state(saved_state.NAME)
        store.forget_state(saved_state.NAME)
    league = _open(out, **settings)
    try:
        assert league.resumed_from is None
        return _state_of(league)
    finally:
        league.store.close()
        with Store.open(out) as store:
            store.save_state(saved_state.NAME, saved)


@pytest.mark.parametrize("duplicate", [False, True])
def test_a_resume_from_the_saved_state_holds_what_one_from_the_start_holds(tmp_path, duplicate):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "league"
    _interrupted(out, 6, duplicate=duplicate)
    older = _blob(out)
    _interrupted(out, 15, duplicate=duplicate)
    cold = _cold_state(out, duplicate=duplicate)
    assert cold["full"]["fed"] >= 12 and cold["lag"]["fed"] >= 6
    league = _open(out, duplicate=duplicate)
    assert league.resumed_from == cold["through"][1]  # saved when the run stopped
    assert _state_of(league) == cold
    league.store.close()
    with Store.open(out) as store:  # a state older than the store's last games
        store.save_state(saved_state.NAME, older)
    league = _open(out, duplicate=duplicate)
    assert 1 <= league.resumed_from < cold["through"][1]
    assert _state_of(league) == cold
    # Going on from either, the next batches are matched alike.
    league.store.close()
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    with Store.open(twin) as store:
        store.forget_state(saved_state.NAME)
    one, other = _open(out, duplicate=duplicate), _open(twin, duplicate=duplicate)
    try:
        assert one.resumed_from is not None and other.resumed_from is None
        for _ in range(2):
            assert [(g.key, g.table, g.seed) for g in one.schedule_batch()] == [
                (g.key, g.table, g.seed) for g in other.schedule_batch()]
    finally:
        one.store.close()
        other.store.close()


def test_a_league_resumed_without_its_state_plays_what_an_uninterrupted_one_plays(tmp_path):
    registry = tmp_path / "empty"
    registry.mkdir()
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    run_league(config(whole, registry, games=40), in_process=in_process(NAMES), report=False)
    _interrupted(halves, 9)
    with Store.open(halves) as store:  # as a store from before the state was saved
        assert store.saved_state(saved_state.NAME) is not None
        store.forget_state(saved_state.NAME)
    run_league(config(halves, registry, games=40, jobs=1), in_process=in_process(NAMES), report=False)
    assert schedule_of(halves) == schedule_of(whole)
    assert ratings_of(halves) == ratings_of(whole)
    league = _open(halves)  # and the finished league's state is the one a resume rates
    assert league.resumed_from is not None
    assert _state_of(league) == _cold_state(halves)
    league.store.close()


def _blob(out: Path) -> bytes:
    with Store.open(out) as store:
        return store.saved_state(saved_state.NAME)


def _resumes_from_the_start_with(out: Path, blob: bytes) -> None:
    cold = _cold_state(out)
    with Store.open(out) as store:
        store.save_state(saved_state.NAME, blob)
    league = _open(out)
    try:
        assert league.resumed_from is None  # ignored: rated from the start
        assert _state_of(league) == cold
    finally:
        league.store.close()


def test_a_torn_or_edited_state_is_never_trusted(stopped):
    blob = _blob(stopped)
    _resumes_from_the_start_with(stopped, blob[:-9])  # torn
    flipped = bytearray(blob)
    flipped[40] ^= 0x01
    _resumes_from_the_start_with(stopped, bytes(flipped))  # a bit changed
    _resumes_from_the_start_with(stopped, b"\0" * 32 + b"not zlib")
    _resumes_from_the_start_with(stopped, b"")


def _edited(blob: bytes, change) -> bytes:
    state = saved_state.decode(blob, *_label_of(blob))
    change(state)
    body = json.dumps(state).encode()
    return hashlib.sha256(body).digest() + zlib.compress(body)


def _label_of(blob: bytes):
    state = json.loads(zlib.decompress(blob[32:]))
    return state["fingerprint"], RatingSettings(**state["rating"]), state["duplicate"]


def test_a_state_of_other_settings_other_code_or_other_games_is_ignored(stopped):
    blob = _blob(stopped)
    assert saved_state.decode(blob, *_label_of(blob)) is not None
    _resumes_from_the_start_with(stopped, _edited(blob, lambda s: s.update(fingerprint="0" * 64)))
    _resumes_from_the_start_with(stopped, _edited(blob, lambda s: s.update(code="another arena")))
    _resumes_from_the_start_with(stopped, _edited(blob, lambda s: s.update(window=5)))
    _resumes_from_the_start_with(stopped, _edited(blob, lambda s: s.update(format=0)))
    # Sound JSON, but not this store's games: one game more or less, another last key.
    _resumes_from_the_start_with(stopped, _edited(blob, lambda s: s["full"].update(fed=s["full"]["fed"] - 1)))
    _resumes_from_the_start_with(stopped, _edited(blob, lambda s: s["lag"].update(last="00001-00001-0")))
    _resumes_from_the_start_with(stopped, _edited(blob, lambda s: s.update(full_through=s["full_through"] + 5)))
    # Not a state at all.
    _resumes_from_the_start_with(stopped, _edited(blob, lambda s: s.update(full=[1, 2])))
    _resumes_from_the_start_with(stopped, _edited(blob, lambda s: s["full"]["ratings"].update(ann=["x", 1.0])))


def test_counts_whose_batches_lost_a_game_since_the_state_was_saved_are_counted_again(stopped):
    league = _open(stopped)
    scheduled = league.schedule_batch()  # a batch scheduled, its state saved
    league._save()
    league.store.close()
    assert len(scheduled) == 2
    with sqlite3.connect(stopped / "arena.sqlite") as db:  # dropped after the state was saved
        db.execute("DELETE FROM games WHERE key = ?", (scheduled[-1].key,))
    cold = _cold_state(stopped)
    league = _open(stopped)
    try:
        assert league.resumed_from is not None  # the ledgers still stand
        assert _state_of(league) == cold
        assert cold["counts"][0] == _cold_counts(stopped)
    finally:
        league.store.close()


def _cold_counts(out: Path) -> Counter:
    with Store.open(out) as store:
        return Counter(bot for _, table in store.tables_after(0) for bot in table)


def test_a_resume_reads_no_list_of_every_game_or_seat(stopped, monkeypatch):
    expected = _cold_state(stopped)

    def refused(*args, **kwargs):
        raise AssertionError("a resume read every game or seat into a list")

    real_games = Store.games
    monkeypatch.setattr(Store, "games", lambda self, status=None: refused() if status != "scheduled"
                        else real_games(self, status))
    monkeypatch.setattr(Store, "seats", lambda self, key=None: refused() if key is None else [])
    monkeypatch.setattr(Store, "done_keys", refused)
    for saved in (True, False):
        if not saved:
            with Store.open(stopped) as store:
                store.forget_state(saved_state.NAME)
        league = _open(stopped)
        try:
            assert (league.resumed_from is not None) == saved
            assert _state_of(league) == expected
            assert league.done() == expected["full"]["fed"] + sum(len(r) for r in expected["full_results"].values())
        finally:
            league.store.close()


def test_a_store_from_before_the_saved_state_gets_its_table_and_index(tmp_path):
    out = tmp_path / "old"
    Store.open(out, create=True).close()
    with sqlite3.connect(out / "arena.sqlite") as db:
        db.execute("DROP TABLE saved_state")
        db.execute("DROP INDEX games_in_schedule")
    with Store.open(out) as store:  # a reader migrates it once
        assert store.saved_state(saved_state.NAME) is None
        store.save_state("x", b"\1\2")
        assert store.saved_state("x") == b"\1\2"
        assert store.games_through(3) == (0, None) and store.last_round() == 0
    with sqlite3.connect(out / "arena.sqlite") as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert {"saved_state", "games_in_schedule"} <= names
