"""Each game owns its replay viewer: its table builders and its drawing script live in its
engine folder, the site serves a copy of that script as `replay-<game>.js`, and the generic
parts (arena/site/replay.py, templates/assets/replay.js) name no game."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from report_helpers import build_tournament

from arena.game.referee import verify_replay
from arena.resources import templates_dir
from arena.play.match import run_match
from arena.sandbox import get_sandbox
from arena.sandbox.base import Limits
from arena.site.writer import render_site
from engine import all_games
from engine.registry import get_game

ROOT = Path(__file__).resolve().parents[2]
ASSETS = templates_dir() / "assets"


def test_every_game_has_replay_tables_and_a_script_in_its_own_folder():
    for game in all_games():
        tables = game.replay_tables()
        assert tables is not None, game.name
        folder = Path(tables.full.__code__.co_filename).parent
        assert tables.script == folder / "replay.js" and tables.script.is_file(), game.name
        assert folder.parent == ROOT / "engine", game.name


def test_the_site_serves_each_games_own_script_and_no_other(tmp_path):
    # The script has one home (the game's folder); the site gets a copy of it at render time.
    assert not any(path.name.startswith("replay-") for path in ASSETS.iterdir())
    site = render_site(build_tournament(tmp_path / "cup")) / "assets"
    served = sorted(path.name for path in site.iterdir() if path.name.startswith("replay-"))
    assert served == sorted(f"replay-{game.name}.js" for game in all_games())
    for game in all_games():
        assert (site / f"replay-{game.name}.js").read_bytes() == game.replay_tables().script.read_bytes(), game.name


def test_the_generic_replay_code_names_no_game():
    for path in (ROOT / "arena" / "site" / "replay.py", ASSETS / "replay.js"):
        text = path.read_text().lower()
        for game in all_games():
            for word in (game.name, game.title.lower()):
                assert word not in text, f"{path.name} names {word!r}"


# --- what the game record keeps of each decision, for the replay ---------------------------

LOGGER = '''"""Logs two numbered lines to stderr each decision (and one after answering), then
takes the first legal action; says how many legal actions it saw."""
import sys

import arena_bot

seen = {"n": 0}


def decide(observation, legal_actions, ctx):
    seen["n"] += 1
    print(f"decision {seen['n']}: {len(legal_actions)} legal", file=sys.stderr, flush=True)
    print(f"choosing 0 <b>", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    arena_bot.run(decide, name="logger", version="1.0")
'''


def logger_bot(base: Path) -> Path:
    folder = base / "logger"
    shutil.copytree(ROOT / "bots" / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "bot.py").write_text(LOGGER)
    (folder / "bot.toml").write_text('name = "logger"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\ngames = ["3up3down", "three-thirteen"]\n')
    return folder


@pytest.mark.parametrize("game", ["3up3down", "three-thirteen"])
def test_each_bot_decision_records_its_think_time_legal_count_and_stderr_lines(game, tmp_path):
    rules = {"3up3down": {"max_turns": 40}, "three-thirteen": {"max_turns_per_round": 3}}[game]
    match = run_match(game, [logger_bot(tmp_path), ROOT / "bots" / "random"], games=1, seed=5, rules=rules,
                      sandbox=get_sandbox("local", warn=False), limits=Limits(decision_s=5.0))
    (result,) = match.games
    verify_replay(result)
    state = get_game(game).new_game(2, result.rules, result.seed)
    decisions = 0
    for step in result.replay.actions:
        assert step.by == "bot"
        assert step.legal == len(state.legal_actions())
        assert step.think_s is not None and 0 < step.think_s < 5
        if step.seat == 0:
            decisions += 1
            # Exactly this decision's lines: none late, none early, none lost.
            assert step.stderr == [f"decision {decisions}: {step.legal} legal", "choosing 0 <b>"]
        else:
            assert step.stderr is None  # the random bot writes nothing
        state.apply(step.action)
    assert decisions > 5


def test_a_decisions_stderr_is_capped_per_decision_and_per_game():
    from arena.game.seats import (
        DECISION_LOG_LINE_CHARS,
        DECISION_LOG_LINES,
        GAME_LOG_CHARS,
        RemoteBot,
    )

    seat = RemoteBot.__new__(RemoteBot)
    seat._log_chars_left = GAME_LOG_CHARS
    text = "".join(f"{n} " + "x" * 400 + "\n" for n in range(30))
    lines = seat._decision_lines(text)
    assert len(lines) == DECISION_LOG_LINES + 1 and lines[-1] == "[... 10 more lines in the bot's log]"
    assert all(len(line) == DECISION_LOG_LINE_CHARS for line in lines[:-1])
    per_decision = DECISION_LOG_LINES * DECISION_LOG_LINE_CHARS
    while seat._log_chars_left >= per_decision:  # each call keeps a whole decision's worth
        assert len(seat._decision_lines(text)) == DECISION_LOG_LINES + 1
    assert 0 < seat._log_chars_left < per_decision
    last = seat._decision_lines(text)  # what still fits, then the budget is spent
    assert last[-1].startswith("[... ") and seat._log_chars_left == 0
    assert seat._decision_lines("late\n") is None
    assert seat._decision_lines("") is None


def test_old_records_without_decision_fields_still_load_and_replay(tmp_path):
    from arena.game.record import Replay

    old = Replay.model_validate_json('{"actions": [{"seat": 0, "action": {"type": "pickup"}, "by": "bot"}], "events": []}')
    assert (old.actions[0].think_s, old.actions[0].legal, old.actions[0].stderr) == (None, None, None)


def test_the_stderr_log_says_what_came_after_a_mark_even_once_capped():
    from arena.sandbox.common import StderrLog

    log = StderrLog(20)  # keeps the first 10 and the last 10 bytes
    log.append(b"0123456789")
    mark = log.received
    assert (mark, log.since(mark)) == (10, "")
    log.append(b"abcdefghijklmno")
    assert log.since(mark) == "\n[... 5 bytes of log dropped ...]\nfghijklmno"
    assert log.since(0) == log.text() == "0123456789\n[... 5 bytes of log dropped ...]\nfghijklmno"
    assert log.since(22) == "mno"
