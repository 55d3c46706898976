"""Running tournaments: every game stored once, --jobs and resume give the same standings,
kill -9 loses nothing finished, changed settings are refused."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arena.game.referee import verify_replay
from arena.game.seats import InProcessBot
from arena.ratings.results import stored_standings
from arena.play.tournament import (
    SettingsChanged,
    TournamentInterrupted,
    run_tournament,
    validate_config,
)
from arena.store.db import Store
from tests.tournaments import SHORT, tournament_config

# bot_dirs (tests/play/conftest.py): six copies of the random bot under different names
# (deterministic: seeded by the referee).
BOT_DIRS = tuple((name, "random") for name in ("ann", "bob", "cat", "dan", "eve", "fay"))
config = functools.partial(tournament_config, seed=11)


def results_of(out: Path) -> dict:
    """Every stored game: key -> (seats, places, scores, seed)."""
    with Store.open(out) as store:
        return {
            game.key: (
                tuple(s.bot for s in store.seats(game.key)),
                tuple(s.place for s in store.seats(game.key)),
                tuple(s.score for s in store.seats(game.key)),
                game.seed,
            )
            for game in store.games("done")
        }


def test_every_scheduled_game_is_stored_once_and_replays(tmp_path, bot_dirs):
    outcome = run_tournament(config(tmp_path / "out", bot_dirs[:4]))
    assert (outcome.total, outcome.done, outcome.played, outcome.resumed) == (4, 4, 4, 0)  # C(4,3) tables
    with Store.open(tmp_path / "out") as store:
        games = store.games()
        assert {game.status for game in games} == {"done"}
        assert sorted(game.bots for game in games) == sorted(
            tuple(sorted(t)) for t in [("ann", "bob", "cat"), ("ann", "bob", "dan"), ("ann", "cat", "dan"), ("bob", "cat", "dan")]
        ) or len({frozenset(game.bots) for game in games}) == 4
        for game in games:
            verify_replay(store.game_result(game.key))
        assert [line.games for line in stored_standings(store).standings] == [3, 3, 3, 3]
        assert {bot.bot: bot.version for bot in store.bots()} == {"ann": "1.0", "bob": "1.0", "cat": "1.0", "dan": "1.0"}
    assert outcome.standings == stored_standings(Store.open(tmp_path / "out"))


def test_jobs_1_and_jobs_3_give_the_same_results_and_standings(tmp_path, bot_dirs):
    one = run_tournament(config(tmp_path / "one", bot_dirs[:5], jobs=1))
    three = run_tournament(config(tmp_path / "three", bot_dirs[:5], jobs=3))
    assert one.total == three.total == 10
    assert results_of(tmp_path / "one") == results_of(tmp_path / "three")
    assert one.standings == three.standings


def test_a_stopped_run_resumes_without_playing_a_finished_game_again(tmp_path, bot_dirs):
    stop = threading.Event()
    seen = []

    def stop_after_three(update):
        seen.append(update.key)
        if update.played >= 3:
            stop.set()

    with pytest.raises(TournamentInterrupted) as stopped:
        run_tournament(config(tmp_path / "out", bot_dirs[:5], jobs=2), progress=stop_after_three, stop=stop)
    first = results_of(tmp_path / "out")
    assert stopped.value.total == 10 and stopped.value.done == len(first) and 3 <= len(first) < 10
    resumed = run_tournament(config(tmp_path / "out", bot_dirs[:5], jobs=2))
    assert (resumed.resumed, resumed.played, resumed.done) == (len(first), 10 - len(first), 10)
    after = results_of(tmp_path / "out")
    assert {key: after[key] for key in first} == first  # nothing finished was played again
    whole = run_tournament(config(tmp_path / "whole", bot_dirs[:5], jobs=1))
    assert results_of(tmp_path / "whole") == after
    assert whole.standings == resumed.standings


def test_a_changed_tournament_is_refused_naming_what_changed(tmp_path, bot_dirs):
    run_tournament(config(tmp_path / "out", bot_dirs[:4]))
    with pytest.raises(SettingsChanged) as refused:
        run_tournament(config(tmp_path / "out", bot_dirs[:3] + [bot_dirs[4]], seed=12, jobs=4, name="renamed"))
    changed = str(refused.value).split("Changed: ")[1]
    assert changed == "bots: dan was in the tournament and is not now; bots: eve is new; seed: was 11, now 12"
    # The same tournament with more jobs and another name is the same tournament.
    again = run_tournament(config(tmp_path / "out", bot_dirs[:4], jobs=2, name="renamed"))
    assert (again.played, again.resumed) == (0, 4)


def test_allow_changes_keeps_finished_games_and_plays_the_new_schedule(tmp_path, bot_dirs):
    run_tournament(config(tmp_path / "out", bot_dirs[:4]))
    before = results_of(tmp_path / "out")
    outcome = run_tournament(config(tmp_path / "out", bot_dirs[:4], cycles=2), allow_changes=True)
    assert outcome.done == 8 and outcome.played == 4
    after = results_of(tmp_path / "out")
    assert {key: after[key] for key in before} == before


def test_a_bot_edited_between_runs_is_a_changed_tournament(tmp_path, bot_dirs):
    folders = []
    for folder in bot_dirs[:3]:
        copy = tmp_path / "bots" / folder.name
        shutil.copytree(folder, copy)
        folders.append(copy)
    run_tournament(config(tmp_path / "out", folders))
    (folders[1] / "bot.py").write_text((folders[1] / "bot.py").read_text() + "\n# tuned\n")
    with pytest.raises(SettingsChanged, match="bots: bob changed its content_hash"):
        run_tournament(config(tmp_path / "out", folders))


def test_swiss_rounds_are_scheduled_one_after_another_with_a_bye(tmp_path, bot_dirs):
    outcome = run_tournament(config(tmp_path / "out", bot_dirs[:5], seats=2, format="swiss", rounds=3))
    assert outcome.total == outcome.done == 6  # 2 tables a round, one bot sits out
    with Store.open(tmp_path / "out") as store:
        games = store.games()
        assert [game.round for game in games] == [1, 1, 2, 2, 3, 3]
        last_of_round = {}
        for game in games:
            last_of_round[game.round] = max(last_of_round.get(game.round, ""), game.finished_at)
        first_of_round = {}
        for game in reversed(games):
            first_of_round[game.round] = game.finished_at
        assert last_of_round[1] <= first_of_round[2] and last_of_round[2] <= first_of_round[3]
        pairs = [frozenset(game.bots) for game in games]
        assert len(set(pairs)) == len(pairs)  # no pair met twice: avoidable with 5 bots in 3 rounds
        played = {bot: sum(bot in game.bots for game in games) for bot in ("ann", "bob", "cat", "dan", "eve")}
        assert sorted(played.values()) == [2, 2, 2, 3, 3]
    with Store.open(tmp_path / "out") as store:
        assert outcome.standings == stored_standings(store)  # rated as they came == rated from the store
    # A resume of a finished Swiss plays nothing and reschedules nothing.
    again = run_tournament(config(tmp_path / "out", bot_dirs[:5], seats=2, format="swiss", rounds=3))
    assert (again.played, again.done) == (0, 6)


def test_duplicate_deals_share_a_seed_over_every_rotation(tmp_path, bot_dirs):
    outcome = run_tournament(config(tmp_path / "out", bot_dirs[:3], duplicate=True, jobs=2))
    assert outcome.total == 3
    stored = results_of(tmp_path / "out")
    assert len({seed for _, _, _, seed in stored.values()}) == 1
    assert {seats for seats, _, _, _ in stored.values()} == {("ann", "bob", "cat"), ("cat", "ann", "bob"), ("bob", "cat", "ann")}
    assert [line.games for line in outcome.standings.standings] == [3, 3, 3]
    with Store.open(tmp_path / "out") as store:
        assert outcome.standings == stored_standings(store)


def test_a_gauntlet_seats_the_challenger_at_every_table(tmp_path, bot_dirs):
    outcome = run_tournament(
        config(tmp_path / "out", bot_dirs[:4], challengers=[str(bot_dirs[5])], format="gauntlet", rounds=1)
    )
    stored = results_of(tmp_path / "out")
    assert outcome.total == len(stored) == 2  # 4 field bots, 2 opponents a table
    assert all("fay" in seats for seats, _, _, _ in stored.values())


def test_a_crashing_bot_forfeits_and_its_incident_and_log_are_stored(tmp_path, bot_dirs):
    crasher = tmp_path / "crasher"
    crasher.mkdir()
    (crasher / "bot.toml").write_text(
        'name = "crasher"\nversion = "0.1"\ngames = ["3up3down"]\n'
        'command = ["python3", "-c", "import sys; print(\'bye\', file=sys.stderr); sys.exit(5)"]\n'
    )
    outcome = run_tournament(config(tmp_path / "out", [crasher, *bot_dirs[:2]]))
    [line] = [line for line in outcome.standings.standings if line.bot == "crasher"]
    assert (line.games, line.forfeits, line.average_place) == (1, 1, 3.0)
    with Store.open(tmp_path / "out") as store:
        [(key, incident)] = store.incidents()
        assert (incident.bot, incident.reason.value, incident.decision) == ("crasher", "CRASH", 0)
        assert "bye" in incident.log_tail
        seat = store.game_result(key).seats.index("crasher")
        assert "bye" in store.logs(key)[seat]


def test_in_process_bots_play_without_processes(tmp_path):
    def first_choice(observation, legal_actions):
        return 0

    def last_choice(observation, legal_actions):
        return len(legal_actions) - 1

    bots = {
        f"{kind}{n}": (lambda decide=decide: InProcessBot(decide))
        for n in range(3)
        for kind, decide in (("first", first_choice), ("last", last_choice))
    }
    outcome = run_tournament(
        validate_config({"game": "3up3down", "seats": 4, "rounds": 3, "output": str(tmp_path / "out"), "rules": SHORT}),
        in_process=bots,
    )
    assert outcome.done == outcome.total == 3  # 6 bots, one table of 4 a round, byes rotate
    assert [line.games for line in outcome.standings.standings] == [2] * 6
    assert outcome.startup_s == 0.0
    with Store.open(tmp_path / "out") as store:
        assert {bot.kind for bot in store.bots()} == {"in-process"}


def _done(out: Path) -> int:
    try:
        db = sqlite3.connect(out / "arena.sqlite", timeout=5)
        try:
            return db.execute("SELECT count(*) FROM games WHERE status = 'done'").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_kill_9_in_the_middle_then_resume_equals_an_uninterrupted_run(tmp_path, bot_dirs):
    file = tmp_path / "t.toml"
    bots = ", ".join(f'"{b}"' for b in bot_dirs)
    file.write_text(f'game = "3up3down"\nseats = 3\nseed = 3\njobs = 2\nbots = [{bots}]\n[rules]\nmax_turns = 60\n')
    command = [sys.executable, "-m", "arena", "run", str(file), "--quiet"]
    killed = subprocess.Popen(
        [*command, "--out", str(tmp_path / "killed")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while _done(tmp_path / "killed") < 6 and time.monotonic() < deadline and killed.poll() is None:
        time.sleep(0.05)
    assert killed.poll() is None, "the run ended before it could be killed"
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    at_kill = _done(tmp_path / "killed")
    assert 6 <= at_kill < 20  # C(6,3) = 20 games

    resume = subprocess.run([*command, "--out", str(tmp_path / "killed")], check=False, capture_output=True, text=True, timeout=120)
    assert resume.returncode == 0, resume.stderr
    assert f"{20 - at_kill} games played now, {at_kill} were stored before" in resume.stdout
    whole = subprocess.run([*command, "--out", str(tmp_path / "whole")], check=False, capture_output=True, text=True, timeout=120)
    assert whole.returncode == 0, whole.stderr
    assert results_of(tmp_path / "killed") == results_of(tmp_path / "whole")
    with Store.open(tmp_path / "killed") as killed_store, Store.open(tmp_path / "whole") as whole_store:
        assert stored_standings(killed_store) == stored_standings(whole_store)
    standings = subprocess.run(
        [sys.executable, "-m", "arena", "standings", str(tmp_path / "killed")], check=False, capture_output=True, text=True
    )
    assert standings.returncode == 0 and "20 of 20 scheduled games stored" in standings.stdout


def test_ctrl_c_stops_after_storing_what_finished_and_says_how_to_resume(tmp_path, bot_dirs):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "arena", "run", "--game", "3up3down", "--seats", "3", "--rule", "max_turns=60",
               "--bots", str(bot_dirs[0].parent / "*"), "--out", str(out), "--jobs", "2", "--quiet"]
    running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _done(out) < 3 and time.monotonic() < deadline and running.poll() is None:
        time.sleep(0.05)
    running.send_signal(signal.SIGINT)
    _, err = running.communicate(timeout=60)
    assert running.returncode == 130, err
    stored = _done(out)
    assert 3 <= stored < 20
    said = " ".join(err.split())  # the terminal's lines are wrapped at 80 columns
    assert f"arena: stopped: {stored} of 20 games are stored in {out}; run the same command to resume: arena run" in said
    assert "'" + str(bot_dirs[0].parent / "*") + "'" in said  # the glob is quoted, ready to paste


def test_bots_start_side_by_side_and_a_silent_one_times_out_at_the_start(tmp_path, bot_dirs):
    sleeper = tmp_path / "sleeper"
    sleeper.mkdir()
    (sleeper / "bot.toml").write_text(
        'name = "sleeper"\nversion = "1"\ngames = ["3up3down"]\ncommand = ["python3", "-c", "import time; time.sleep(30)"]\n'
    )
    outcome = run_tournament(config(tmp_path / "out", [sleeper, *bot_dirs[:2]], limits={"startup_s": 1.0}))
    with Store.open(tmp_path / "out") as store:
        [(_key, incident)] = store.incidents()
        assert (incident.bot, incident.reason.value, incident.decision) == ("sleeper", "TIMEOUT", 0)
        assert "start-up limit of 1 s" in incident.detail
        [game] = store.games()
        assert game.duration_s < 3.0  # the random bots started while the sleeper was waited for
    [line] = [line for line in outcome.standings.standings if line.bot == "sleeper"]
    assert (line.forfeits, line.average_place) == (1, 3.0)


def test_a_game_spec_is_small_and_picklable_for_a_cluster(tmp_path, bot_dirs):
    import pickle

    from arena.schedule.formats import round_robin
    from arena.play.tournament import GameSpec, play_scheduled_game, resolve_bots

    settings = config(tmp_path / "out", bot_dirs[:3])
    field, _ = resolve_bots(settings)
    [game] = round_robin([bot.id for bot in field], 3, seed=settings.seed)
    by_id = {bot.id: bot for bot in field}
    spec = GameSpec(
        key=game.key, deal=game.deal, seed=game.seed, game=settings.game, rules=settings.rules,
        bots=[by_id[bot_id] for bot_id in game.table], bot_seeds=[7, 8, 9], limits=settings.limits,
    )
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and len(pickle.dumps(spec)) < 4000
    first, second = play_scheduled_game(spec), play_scheduled_game(again)
    timing = {"replay": {"actions": {"__all__": {"think_s", "stderr"}}}}  # differ from run to run
    # A pure function of the spec (deterministic bots).
    assert first.result.model_dump(exclude=timing) == second.result.model_dump(exclude=timing)
    assert first.result.seats == list(game.table) and first.result.seed == game.seed


def test_several_bots_after_one_flag_and_a_swiss_says_its_tables_before_playing(tmp_path, bot_dirs):
    """Issue 34 part 6: `--bots a b c` takes the three (it failed: "unexpected extra
    argument"); a Swiss of 6 bots at `seats = 5` plays tables of 3 and says so before its
    first game and on the site (it said nothing; the site said 5 seats); a Swiss of 3
    bots at 4 seats is refused, as a round-robin is (it played tables of 3)."""
    from typer.testing import CliRunner

    from arena.cli.app import app

    run = CliRunner().invoke(app, [
        "run", "--game", "3up3down", "--format", "swiss", "--rounds", "1", "--seats", "5", "--bots",
        *map(str, bot_dirs), "--seed", "3", "--rule", "max_turns=40", "--out", str(tmp_path / "six"), "--quiet",
    ], env={"COLUMNS": "300"})
    assert run.exit_code == 0, (run.output, run.exception)
    note = ("arena: seats = 5, but a Swiss round of 6 bots seats tables of 3 and 3: the fewest tables that hold "
            "every bot, their sizes within one")
    assert note in run.stderr.splitlines()
    with Store.open(tmp_path / "six") as store:
        assert sorted(len(game.bots) for game in store.games()) == [3, 3]
        assert len(store.settings()["bots"]) == 6
    index = (tmp_path / "six" / "site" / "index.html").read_text()
    assert "3up3down · swiss · tables of 3 and 3 (5 seats asked)" in " ".join(index.split())
    assert ("<dt>tables</dt><dd>tables of 3 and 3 (5 seats asked): a Swiss round of 6 bots seats the fewest tables "
            "that hold every bot, their sizes within one</dd>") in index
    three = CliRunner().invoke(app, [
        "run", "--game", "3up3down", "--format", "swiss", "--rounds", "1", "--seats", "4", "--bots",
        *map(str, bot_dirs[:3]), "--seed", "3", "--out", str(tmp_path / "three"), "--quiet",
    ])
    assert "schedule: a Swiss at 4 seats needs at least 4 bots, got 3; lower seats or add bots" in str(three.exception)
    assert not (tmp_path / "three" / "arena.sqlite").exists()  # refused before anything is stored


def test_a_list_flag_takes_the_words_after_it_but_not_a_file_or_a_flag(tmp_path):
    from arena.cli.flags import several_after_one

    ladder = tmp_path / "ladder.toml"
    ladder.write_text("")
    flags = ("--bots", "--challenger")
    assert several_after_one(["--bots", "a", "b", "c", "--seats", "3"], flags) == [
        "--bots", "a", "--bots", "b", "--bots", "c", "--seats", "3"]
    assert several_after_one(["--bots=a", "b", "--challenger", "x", "y*"], flags) == [
        "--bots=a", "--bots", "b", "--challenger", "x", "--challenger", "y*"]
    assert several_after_one(["--bots", "a", "b", str(ladder), "--jobs", "2"], flags) == [
        "--bots", "a", "--bots", "b", str(ladder), "--jobs", "2"]
    assert several_after_one([str(ladder), "--seats", "3", "x"], flags) == [str(ladder), "--seats", "3", "x"]
