"""The `arena` command as a user meets it: listings, the demo, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import all_games
from tests.command import arena

BOTS = Path(__file__).resolve().parents[2] / "bots"
PAIR = (str(BOTS / "random"), str(BOTS / "random"))


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
def test_demo_runs_a_tournament_of_the_example_bots_into_a_folder(tmp_path, game):
    out = tmp_path / "demo"
    run = arena("demo", "--game", game, "--cycles", "1", "--quiet", "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert (out / "arena.sqlite").is_file()
    assert (out / "site" / "index.html").is_file()
    standings = json.loads(arena("standings", str(out), "--json").stdout)
    names = {line["bot"] for line in standings}
    assert {"random", "node-simple"} <= names
    assert len(names) == 3  # random, node-simple and the game's heuristic bot
    # three bots, every pair once in both seat orders (duplicate deals): 6 games, 4 each
    assert all(line["games"] == 4 for line in standings)
    assert all(line["forfeits"] == 0 for line in standings)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("demo", "--game", "chess"), "unknown game 'chess'; known games: 3up3down, three-thirteen"),
        (("match", "3up3down", str(BOTS / "random")), "3up3down seats 2 to 6 players, not 1"),
        (("match", "3up3down", *PAIR, "--rule", "nonsense=1"), "3up3down has no rule option 'nonsense'; known options:"),
        (("match", "3up3down", *PAIR, "--rule", "max_turns=lots"), "rule option 'max_turns' got 'lots'; allowed: an integer"),
        (("match", "3up3down", *PAIR, "--rule", "deck"), "rule 'deck' is not of the form key=value"),
    ],
)
def test_a_user_mistake_is_one_line_and_exit_code_2(tmp_path, args, message):
    run = arena(*args, cwd=tmp_path)
    assert run.returncode == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().count("\n") == 0


def test_an_unknown_flag_exits_2_and_names_the_flag():
    run = arena("games", "--colour")
    assert run.returncode == 2
    assert "--colour" in run.stderr


def test_help_lists_each_command_by_one_sentence_and_reflows_each_docstring():
    # The docstrings' own line breaks came out as ragged lines ("a legal random move,"
    # alone on a line); `arena --help` listed whole paragraphs.
    listed = arena("--help", columns=200).stdout
    rows = [line for line in listed.split("Commands")[1].splitlines() if line.startswith("│ ")]
    commands = [row.split()[1] for row in rows if len(row) > 2 and row[2] != " "]
    assert {"new", "run", "league", "submit", "serve"} <= set(commands)
    assert all(row[2] != " " for row in rows[:len(commands)]), listed  # no row continued
    new = arena("new", "--help", columns=200).stdout
    assert "a legal random move, Three Thirteen's deadwood), one function for your strategy" in new
