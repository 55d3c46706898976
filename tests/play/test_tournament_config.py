"""The tournament file: validated with pydantic, every mistake one line with key, value and what is allowed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.play.tournament import (
    TournamentError,
    load_tournament,
    resolve_bots,
    validate_config,
)
from tests.bot_folders import BOTS, ROOT


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tournament.toml"
    path.write_text(text)
    return path


def test_the_shipped_example_file_validates_and_its_bots_resolve():
    config = load_tournament(ROOT / "docs" / "examples" / "tournament.toml")
    assert (config.game, config.seats, config.format, config.duplicate, config.cycles) == ("3up3down", 3, "round-robin", True, 2)
    assert config.rules["max_turns"] == 400 and config.rules["deck"] == "box"  # defaults filled in
    field, challengers = resolve_bots(config)
    assert [bot.id for bot in field] == ["random", "threeup-heuristic", "node-simple"]
    assert challengers == [] and all(len(bot.content_hash) == 64 for bot in field)
    assert config.output_dir().resolve() == (ROOT / "arena-results" / "example").resolve()


def test_several_mistakes_are_reported_at_once_with_key_value_and_what_is_allowed(tmp_path):
    path = write(
        tmp_path,
        'game = "3up3down"\nseats = 9\nformat = "league"\njobs = 0\ncolour = "red"\n'
        "[limits]\ndecision_s = -1\nmemory = 5\n",
    )
    with pytest.raises(TournamentError) as raised:
        load_tournament(path)
    # The keys a tournament shares with a league (`RunConfig`) come first, then its own.
    assert raised.value.mistakes == [
        "seats = 9: Input should be less than or equal to 6",
        "limits.decision_s = -1: Input should be greater than 0",
        "unknown key 'limits.memory'; allowed keys: startup_s, decision_s, time_bank_s, memory_mb, cpu_s, cpus",
        "jobs = 0: Input should be greater than or equal to 1",
        "format = \"league\": Input should be 'round-robin', 'swiss' or 'gauntlet'",
        ("unknown key 'colour'; allowed keys: name, game, seats, duplicate, seed, rules, limits, rating, sandbox, "
        "runtime, bot_process, warm_start, jobs, cluster, output, format, rounds, cycles, challengers, bots"),
    ]
    assert str(path) in str(raised.value) or raised.value.source == str(path)


def test_an_unknown_game_and_a_bad_rule_are_named():
    with pytest.raises(TournamentError) as raised:
        validate_config({"game": "chess", "seats": 2})
    assert raised.value.mistakes == ['game = "chess": unknown game \'chess\'; known games: 3up3down, three-thirteen']
    with pytest.raises(TournamentError) as raised:
        validate_config({"game": "3up3down", "seats": 2, "rules": {"deck": "tarot"}})
    assert len(raised.value.mistakes) == 1 and "deck" in raised.value.mistakes[0] and '"box"' in raised.value.mistakes[0]


def test_keys_that_must_go_together_are_checked_together():
    with pytest.raises(TournamentError) as raised:
        validate_config({"game": "3up3down", "seats": 3, "format": "swiss", "challengers": ["x"], "cycles": 2})
    assert raised.value.mistakes == [
        "rounds is missing: a Swiss tournament needs a number of rounds (e.g. rounds = 5)",
        'challengers is only for format = "gauntlet", not \'swiss\'',
        'cycles is only for format = "round-robin", not \'swiss\'',
    ]
    with pytest.raises(TournamentError, match="a gauntlet needs challenger"):
        validate_config({"game": "3up3down", "seats": 3, "format": "gauntlet"})


def test_flags_override_the_file_and_limits_merge_key_by_key(tmp_path):
    path = write(tmp_path, 'game = "3up3down"\nseats = 3\nseed = 5\n[limits]\ndecision_s = 2.0\nmemory_mb = 256\n[rules]\nmax_turns = 50\n')
    config = load_tournament(path, {"seats": 4, "limits": {"decision_s": 0.5}}, ["deck=classic"])
    assert (config.seats, config.seed) == (4, 5)
    assert (config.limits.decision_s, config.limits.memory_mb) == (0.5, 256)
    assert (config.rules["max_turns"], config.rules["deck"]) == (50, "classic")
    assert config.base_dir == str(tmp_path)


def test_a_quick_tournament_needs_no_file():
    config = load_tournament(None, {"game": "3up3down", "seats": 2, "bots": [str(BOTS / "random")]})
    assert (config.format, config.output) == ("round-robin", "arena-results")


def test_bot_mistakes_are_one_line_each(tmp_path):
    config = validate_config(
        {
            "game": "3up3down",
            "seats": 2,
            "base_dir": str(ROOT),
            "bots": ["bots/random", "bots/nothing-here", "tests/bots/zz*", "bots/three-thirteen-heuristic", "docs"],
        }
    )
    with pytest.raises(TournamentError) as raised:
        resolve_bots(config)
    assert raised.value.mistakes == [
        f"bots: bot folder 'bots/nothing-here' does not exist ({ROOT / 'bots/nothing-here'})",
        "bots: 'tests/bots/zz*' matches no bot folder (a folder with a bot.toml)",
        (f"bots: bot 'three-thirteen-heuristic' ({BOTS / 'three-thirteen-heuristic'}) does not play '3up3down'; "
        "its bot.toml lists: three-thirteen"),
        f"bots: {ROOT / 'docs'}: has no bot.toml (needs: name, version, command, games)",
    ]


def test_a_glob_takes_the_bots_that_play_the_game_and_names_stay_unique(tmp_path):
    config = validate_config(
        {"game": "3up3down", "seats": 2, "base_dir": str(ROOT), "bots": ["bots/*", "bots/random/../random"]}
    )
    with pytest.raises(TournamentError, match="listed more than once"):
        resolve_bots(config)
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "bot.toml").write_text((BOTS / "random" / "bot.toml").read_text())
    config = validate_config({"game": "3up3down", "seats": 2, "base_dir": str(ROOT), "bots": ["bots/*", str(twin)]})
    field, _ = resolve_bots(config)
    assert [bot.id for bot in field] == ["node-simple", "random", "threeup-heuristic", "random#2"]


def test_the_command_prints_every_mistake_without_a_traceback_and_exits_2(tmp_path):
    path = write(tmp_path, 'game = "3up3down"\nseats = 1\nbots = ["nowhere"]\n')
    run = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--jobs", "0"], check=False, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "seats = 1: Input should be greater than or equal to 2" in run.stderr
    assert "jobs = 0: Input should be greater than or equal to 1" in run.stderr


def test_the_duplicate_rating_update_is_a_rating_setting_of_the_file(tmp_path):
    base = 'game = "3up3down"\nseats = 2\nbots = ["%s", "%s"]\nduplicate = true\n' % (BOTS / "random", BOTS / "threeup-heuristic")
    config = load_tournament(write(tmp_path, base + '[rating]\nduplicate_update = "deal"\n'))
    assert config.rating.settings().duplicate_update == "deal"
    assert load_tournament(write(tmp_path, base)).rating.settings().duplicate_update == "hand"
    with pytest.raises(TournamentError) as caught:
        load_tournament(write(tmp_path, base + '[rating]\nduplicate_update = "table"\n'))
    assert "rating.duplicate_update" in str(caught.value) and "'hand', 'deal' or 'rotation'" in str(caught.value)


def test_dask_is_an_extra_and_a_cluster_without_it_says_how_to_install_it(monkeypatch):
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(need.startswith(("distributed", "dask")) for need in project["dependencies"])
    assert [need.split(">")[0] for need in project["optional-dependencies"]["cluster"]] == ["distributed"]
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    with pytest.raises(TournamentError) as raised:
        load_tournament(None, {"game": "3up3down", "seats": 2, "cluster": "tcp://10.0.0.5:8786"})
    assert raised.value.mistakes == [
        'cluster = "tcp://10.0.0.5:8786": playing on a Dask cluster needs Dask\'s distributed package, an extra of '
        "arena: pip install 'arena[cluster]' (on this machine and on every worker; see docs/cluster.md)"
    ]
    assert load_tournament(None, {"game": "3up3down", "seats": 2}).cluster is None  # no cluster, no need


def test_the_command_line_tool_starts_without_dask():
    run = subprocess.run(
        [sys.executable, "-c", "import sys, arena.cli.app, arena.play.tournament; print('distributed' in sys.modules)"],
        capture_output=True, text=True, timeout=60,
    )
    assert run.stdout.strip() == "False", run.stderr


def test_every_mistake_of_a_file_is_reported_in_one_go(tmp_path):
    path = write(
        tmp_path,
        'game = "3up3down"\nseats = 3\nformat = "swiss"\nduplicate = "yes"\njobs = "four"\nbots = ["nowhere", "%s"]\n'
        "[rules]\ndeck = \"tarot\"\n" % (BOTS / "three-thirteen-heuristic"),
    )
    with pytest.raises(TournamentError) as raised:
        load_tournament(path)
    assert raised.value.mistakes == [
        'duplicate = "yes": Input should be a valid boolean',
        'jobs = "four": Input should be a valid integer, unable to parse string as an integer',
        # Between keys: checked although other keys are wrong.
        raised.value.mistakes[2],
        "rounds is missing: a Swiss tournament needs a number of rounds (e.g. rounds = 5)",
        # The bot folders: checked although the settings are wrong.
        f"bots: bot folder 'nowhere' does not exist ({tmp_path / 'nowhere'})",
        (f"bots: bot 'three-thirteen-heuristic' ({BOTS / 'three-thirteen-heuristic'}) does not play '3up3down'; "
         "its bot.toml lists: three-thirteen"),
    ]
    assert raised.value.mistakes[2].startswith('rules = {"deck": "tarot"}: ')
    assert str(raised.value).startswith(f"6 mistakes in the tournament file {path}:\n  - duplicate")


@pytest.mark.parametrize("given", ['"yes"', '"true"', "1", '"on"'])
def test_a_boolean_is_true_or_false_and_nothing_else(tmp_path, given):
    path = write(tmp_path, f'game = "3up3down"\nseats = 2\nduplicate = {given}\n')
    with pytest.raises(TournamentError, match=r"duplicate = .*: Input should be a valid boolean"):
        load_tournament(path)
    assert load_tournament(write(tmp_path, 'game = "3up3down"\nseats = 2\nduplicate = true\n')).duplicate is True


def test_a_league_and_a_tournament_share_one_base_of_settings_and_checks():
    """The keys both have are declared once (`RunConfig`): the same checks, a league's
    `duplicate` as strict as a tournament's, and the runner reads only these."""
    from arena.config.league_file import LeagueConfig
    from arena.config.tournament_file import RunConfig, TournamentConfig

    shared = set(RunConfig.model_fields)
    assert shared <= set(TournamentConfig.model_fields) and shared <= set(LeagueConfig.model_fields)
    for kind in (TournamentConfig, LeagueConfig):
        for wrong in ({"duplicate": "yes"}, {"seats": 7}, {"cluster": "http://x"}, {"jobs": 0}, {"runtime": "runsc"}):
            with pytest.raises(ValueError):
                kind.model_validate({"game": "3up3down", "seats": 3, **wrong})
    runner = (ROOT / "arena" / "play" / "runner.py").read_text()
    read = set(re.findall(r"\b(?:self\.config|c)\.(\w+)", runner))
    assert read and read <= shared
