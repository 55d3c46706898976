"""The `arena` command as a user meets it: listings, the demo, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine import all_games


def arena(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_games_json_lists_every_game_with_seat_range_and_options():
    run = arena("games", "--json")
    assert run.returncode == 0, run.stderr
    listed = {game["name"]: game for game in json.loads(run.stdout)}
    assert set(listed) == {"3up3down", "three-thirteen"}
    for game in all_games():
        entry = listed[game.name]
        assert (entry["min_players"], entry["max_players"]) == (2, 6)
        assert [o["name"] for o in entry["options"]] == [s.name for s in game.options]
        for option, spec in zip(entry["options"], game.options):
            assert option["type"] == spec.type.__name__
            assert option["default"] == spec.default
            assert option["help"] == spec.help


def test_games_table_names_each_option():
    run = arena("games")
    assert run.returncode == 0, run.stderr
    for game in all_games():
        assert game.name in run.stdout
        for spec in game.options:
            assert spec.name in run.stdout


@pytest.mark.parametrize("game", ["3up3down", "three-thirteen"])
def test_demo_plays_games_and_writes_one_result_line_each(tmp_path, game):
    out = tmp_path / "demo"
    run = arena("demo", "--game", game, "--players", "3", "--games", "2", "--out", str(out))
    assert run.returncode == 0, run.stderr
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2
    for line in lines:
        record = json.loads(line)
        assert record["game"] == game and record["players"] == 3
        assert sorted(record["places"])[0] == 1 and len(record["places"]) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("demo", "--game", "chess"), "unknown game 'chess'; known games: 3up3down, three-thirteen"),
        (("demo", "--players", "9"), "3up3down seats 2 to 6 players, not 9"),
        (("demo", "--rule", "nonsense=1"), "3up3down has no rule option 'nonsense'; known options:"),
        (("demo", "--rule", "max_turns=lots"), "rule option 'max_turns' got 'lots'; allowed: an integer"),
        (("demo", "--rule", "deck"), "rule 'deck' is not of the form key=value"),
    ],
)
def test_a_user_mistake_is_one_line_and_exit_code_2(tmp_path, args, message):
    run = arena(*args, "--out", str(tmp_path / "out"))
    assert run.returncode == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().count("\n") == 0


def test_an_unknown_flag_exits_2_and_names_the_flag():
    run = arena("games", "--colour")
    assert run.returncode == 2
    assert "--colour" in run.stderr
