"""`arena match` and `arena schema` as a bot author meets them (the real command, in a
subprocess, with the example random bot)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.game.record import GameResult
from arena.game.referee import verify_replay
from arena.store.seeds import RunKey
from tests.bot_folders import written_bot
from tests.command import arena

ROOT = Path(__file__).resolve().parents[2]
RANDOM = str(ROOT / "bots" / "random")


def test_a_match_prints_places_standings_and_writes_replays(tmp_path):
    replays = tmp_path / "match.jsonl"
    run = arena("match", "3up3down", RANDOM, RANDOM, "--games", "2", "--seed", "4",
                "--rule", "max_turns=40", "--replay", str(replays))
    assert run.returncode == 0, run.stderr
    assert "3UP 3DOWN: 2 games, sandbox local" in run.stdout
    assert "standings" in run.stdout and "random#2" in run.stdout
    assert "does not isolate untrusted code" in run.stderr
    assert "seed 4 is public: any bot that guesses it can compute every deal" in run.stderr
    records = [GameResult.model_validate_json(line) for line in replays.read_text().splitlines()]
    key = RunKey.from_seed(4)
    assert [(r.game_number, r.seed, r.seats) for r in records] == [
        (1, key.deal_seed("match-00001"), ["random", "random#2"]),
        (2, key.deal_seed("match-00002"), ["random#2", "random"]),
    ]
    for record in records:
        assert record.rules["max_turns"] == 40 and record.incidents == []
        verify_replay(record)


def test_verbose_shows_every_action_and_the_end_of_each_game():
    run = arena("match", "3up3down", RANDOM, RANDOM, "--rule", "max_turns=10", "--verbose")
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("  seat 0: ") >= 3 and '"type": "choose_up"' in run.stdout
    # No --seed: the deals come from a secret drawn for the match, shown to the user only.
    [secret] = re.findall(r"deals' secret: ([0-9a-f]{64})", run.stdout)
    deal_seed = RunKey.from_secret(secret).deal_seed("match-00001")
    assert f"game 1 (seed {deal_seed}) over: places" in run.stdout
    assert "is public" not in run.stderr


def test_a_crashing_bot_is_shown_as_an_incident_and_the_match_completes(tmp_path):
    crasher = written_bot(
        tmp_path / "crasher", '["python3", "-c", "import sys; print(\'bye\', file=sys.stderr); sys.exit(5)"]', version="0.1"
    )
    run = arena("match", "3up3down", str(crasher), RANDOM, "--games", "2", "--rule", "max_turns=20")
    assert run.returncode == 0, run.stderr
    assert "game 1, seat 0, crasher: CRASH at the start of the game: exited with code 5" in run.stdout
    assert "game 2, seat 1, crasher: CRASH at the start of the game: exited with code 5" in run.stdout
    assert "its stderr ends with:\n  | bye\n" in run.stdout  # without --verbose too
    assert "CRASH x2" in run.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["match", "3up3down", RANDOM], "3up3down seats 2 to 6 players, not 1"),
        (["match", "3up3down", str(ROOT / "tests" / "bots" / "steady"), RANDOM],
         "bot 'steady' (" + str(ROOT / "tests" / "bots" / "steady") + ") does not play '3up3down'; its bot.toml lists: nim-test"),
        (["match", "chess", RANDOM, RANDOM], "unknown game 'chess'"),
        (["match", "3up3down", RANDOM, RANDOM, "--sandbox", "vm"], "unknown sandbox 'vm'; known sandboxes: local, docker"),
        (["match", "3up3down", RANDOM, RANDOM, "--rule", "max_turns=lots"], "'max_turns' got 'lots'"),
        (["match", "3up3down", RANDOM, str(ROOT / "docs")], "has no bot.toml"),
        (["match", "3up3down", RANDOM, RANDOM, "--decision-s", "0"], "--decision-s 0: must be greater than 0"),
    ],
)
def test_mistakes_are_one_message_and_exit_code_2(args, message):
    run = arena(*args)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stderr.startswith("arena: error: ") and message in run.stderr
    assert "Traceback" not in run.stderr


def test_schema_prints_both_directions_as_json():
    run = arena("schema")
    assert run.returncode == 0, run.stderr
    schema = json.loads(run.stdout)
    assert set(schema) >= {"referee_to_bot", "bot_to_referee"}
    assert "request" in json.dumps(schema["referee_to_bot"]) and "ready" in json.dumps(schema["bot_to_referee"])
