"""Replays that stay small (issue 27 part 3): Three Thirteen's tables read from the state
equal the ones from the observations at every step (and each seat's own is exactly their
mask, so no seat is shown more than it saw); the fast way writes the same data as the slow
way, a game whose claim is false is caught and written the slow way; the bulk is packed
(zlib, base64) and read back exactly, and a packed part that is broken or too big is
refused. The viewer's side is tested in the browser (test_replay_browser.py and others)."""

from __future__ import annotations

import base64
import dataclasses
import json
import zlib

import pytest

import arena.site.replay as site_replay
from arena.game.record import GameResult, Replay, ReplayAction
from arena.site.replay import (
    PACKED,
    SPOT_CHECK,
    _replay_frames,
    _tables,
    mask,
    pack,
    read_script,
    replay_frames,
    script_text,
    unpack,
)
from arena.web.stderr import strip_replay
from engine.players import play_random_game
from engine.registry import get_game


def result_of(game: str, players: int, seed: int, rules: dict | None = None, stderr: bool = False) -> GameResult:
    """A random game as the referee records it, each decision with its facts."""
    state = play_random_game(game, players, rules or {}, seed)
    actions = [
        ReplayAction(seat=seat, action=action, by="bot", think_s=0.001 * (n % 7), legal=3,
                     stderr=[f"step {n} <b>"] if stderr and n % 5 == 0 else None)
        for n, (seat, action) in enumerate(state.history)
    ]
    return GameResult(
        game=game, seed=seed, rules=state.options, seats=[f"bot{seat}" for seat in range(players)],
        places=state.places(), scores=[float(s) for s in state.scores()], engine_places=state.places(),
        forfeits=[False] * players, incidents=[], replay=Replay(actions=actions, events=[]),
    )


@pytest.mark.parametrize("players, seed, rules", [
    (4, 3, {"max_turns_per_round": 40}),
    (5, 8, {"empty_stock": "end_round", "max_turns_per_round": 40}),
    (2, 4, {"ace_high": True, "max_turns_per_round": 60}),
])
def test_three_thirteens_state_table_is_its_full_table_and_each_seat_sees_its_mask(players, seed, rules):
    tables = get_game("three-thirteen").replay_tables()
    played = play_random_game("three-thirteen", players, rules, seed)
    state = get_game("three-thirteen").new_game(players, played.options, seed)
    reshuffled = went_out = False
    for step in range(len(played.history) + 1):
        if step:
            state.apply(played.history[step - 1][1])
        views = [state.observation(seat) for seat in range(players)]
        full = tables.state(state)
        assert full == tables.full(state, views), f"step {step}"
        for seat in range(players):
            assert mask(full, seat) == tables.seat(views[seat], seat), f"seat {seat} at step {step}"
        reshuffled = reshuffled or any(e["type"] == "reshuffle" for e in state.events(None)[-2:])
        went_out = went_out or full["went_out"] is not None
    assert len(played.history) > 2 * SPOT_CHECK  # long games: many steps between spot checks
    assert went_out and reshuffled == (players == 2)  # seen: a hand laid down; the 2-seat game reshuffles


@pytest.mark.parametrize("game, players, seed", [("three-thirteen", 4, 1), ("three-thirteen", 3, 6), ("3up3down", 4, 2)])
def test_the_fast_way_writes_what_the_slow_way_writes(game, players, seed):
    result = result_of(game, players, seed, {"max_turns_per_round": 30} if game == "three-thirteen" else {})
    fast = replay_frames(result)
    assert fast == _replay_frames(result, _tables(game), fast=False)
    assert all(frame[1:] == [{}] * players for frame in fast["frames"]) or game == "3up3down"


def test_a_state_table_that_shows_more_than_the_seats_saw_is_caught_and_the_slow_way_taken(monkeypatch):
    """A game that claims its seats see the mask of its full table, and puts the stock's
    order in that table (no seat sees it): the check at the first step catches it."""
    result = result_of("three-thirteen", 3, 2, {"max_turns_per_round": 8})
    honest = replay_frames(result)
    tables = _tables("three-thirteen")
    lying = dataclasses.replace(tables, state=lambda state: {**tables.state(state), "order": list(state.stock)})
    monkeypatch.setattr(site_replay, "_tables", lambda name: lying)
    assert replay_frames(result) == honest
    assert "order" not in json.dumps(honest["frames"])


def test_a_lie_between_the_spot_checks_is_caught_at_the_next_one(monkeypatch):
    result = result_of("three-thirteen", 4, 5, {"max_turns_per_round": 30})
    honest = replay_frames(result)
    tables = _tables("three-thirteen")
    calls = {"n": 0}

    def late_lie(state):  # honest at the first checks, then shows one more zone
        calls["n"] += 1
        table = tables.state(state)
        return {**table, "secret": 1} if calls["n"] > SPOT_CHECK + 5 else table

    lying = dataclasses.replace(tables, state=late_lie)
    monkeypatch.setattr(site_replay, "_tables", lambda name: lying)
    assert replay_frames(result) == honest


def test_the_bulk_is_packed_and_read_back_exactly():
    result = result_of("three-thirteen", 4, 7, stderr=True)
    data = replay_frames(result)
    text = script_text(data, "00001-00002-0")
    assert "<" not in text and ">" not in text  # nothing in it can close the script tag
    stored = json.loads(text.split("]=", 1)[1].rstrip(";\n"))
    assert set(stored) == set(data) - set(PACKED) | {"z"}
    assert stored["seats"] == data["seats"] and stored["faults"] == data["faults"]
    assert read_script(text) == data
    plain = len(json.dumps(data, separators=(",", ":")))
    assert len(text) < plain / 4, (len(text), plain)


def test_a_replay_without_its_bulk_is_written_as_it_is():
    error = {"format": site_replay.FORMAT, "error": "the stored actions end before the game is over"}
    assert pack(error) == error and read_script(script_text(error, "k")) == error


def test_a_packed_part_that_is_broken_or_too_big_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="does not read"):
        unpack({"z": "not base64!"})
    with pytest.raises(ValueError, match="does not read"):
        unpack({"z": base64.b64encode(b"not zlib").decode()})
    cut = base64.b64encode(zlib.compress(b'{"steps": [1, 2, 3]}')[:-6]).decode()
    with pytest.raises(ValueError, match="cut short"):
        unpack({"z": cut})
    monkeypatch.setattr(site_replay, "UNPACKED_LIMIT", 1000)
    bomb = base64.b64encode(zlib.compress(json.dumps({"steps": [0] * 10_000}).encode())).decode()
    with pytest.raises(ValueError, match="too large"):
        unpack({"z": bomb})
    with pytest.raises(ValueError, match="not an object"):
        unpack({"z": base64.b64encode(zlib.compress(b"[1]")).decode()})
    with pytest.raises(ValueError, match="not a replay script"):
        read_script("alert(1)")


def test_a_served_replay_keeps_its_packing_without_the_stderr_lines():
    result = result_of("three-thirteen", 3, 9, {"max_turns_per_round": 10}, stderr=True)
    data = replay_frames(result)
    text = script_text(data, "k")
    served = strip_replay(text)
    assert '"z":"' in served
    stripped = read_script(served)
    assert [d[:2] for d in stripped["decisions"]] == [d[:2] for d in data["decisions"]]
    assert any(d[2] for d in data["decisions"]) and not any(d[2] for d in stripped["decisions"])
    assert stripped["frames"] == data["frames"] and stripped["steps"] == data["steps"]
    assert strip_replay(text[:-40]) == "/* this replay is not shown while stderr is hidden */\n"


def test_a_site_rendered_again_replaces_each_older_replay_file_by_its_packed_one(tmp_path):
    from arena.site.state import STATE_FILE
    from arena.site.writer import render_site
    from tests.report_helpers import build_tournament

    cup = build_tournament(tmp_path / "cup")
    replays = cup / "site" / "replays"
    key = sorted(path.name for path in replays.iterdir())[0].split(".")[0]
    packed = replays / f"{key}.r{site_replay.FORMAT}.js"
    data = read_script(packed.read_text())
    packed.unlink()
    older = replays / f"{key}.r3.js"
    older.write_text("window.ARENA_REPLAYS=window.ARENA_REPLAYS||{};window.ARENA_REPLAYS[\"k\"]={};\n")
    # That site was rendered by an arena of the older format, which kept no site state
    # (DIR/.site-state.sqlite): this arena's first render of it looks at every game.
    (cup / STATE_FILE).unlink()
    render_site(cup)
    assert not older.exists() and read_script(packed.read_text()) == data
    assert sorted(path.name.split(".")[1] for path in replays.iterdir()) == [f"r{site_replay.FORMAT}"] * 4
