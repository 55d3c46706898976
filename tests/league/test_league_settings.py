"""Every setting of how games are played works in a league as in a tournament: both play
with the one runner (arena.play.runner). `bot_process = "per-slot"` keeps one process per
bot slot, `warm_start` starts processes ahead of need, `jobs` > 1 plays games side by side
(in worker processes when every bot is a program), a cluster plays them on Dask workers,
and the league's sandbox and limits are the ones its bots meet.

The test bots say on stderr what their process saw (tests/bots/counter: a token per
process, its games, the `games` of its hello); the stored per-game logs carry it back.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest
from nimtest_game import nim_registered

import arena.league.ladder
import arena.play.workers
from arena.config.league_file import LeagueConfig
from arena.config.tournament_file import TournamentError
from arena.game.seats import InProcessBot
from arena.league.ladder import LeagueInterrupted, run_league
from arena.play.executor import SLOTS
from arena.sandbox.local import LocalSandbox
from arena.store.db import Store
from tests.counter_sightings import results_of, sightings, sightings_by_bot

ROOT = Path(__file__).resolve().parents[2]
TEST_BOTS = Path(__file__).parents[1] / "bots"
# Generous: a loaded machine must not turn a slow start into a fault in one league only.
LIMITS = {"startup_s": 30, "decision_s": 10, "time_bank_s": 10, "memory_mb": 128}


@pytest.fixture(scope="module", autouse=True)
def nim():
    with nim_registered() as game:
        yield game


def registry_of(where: Path, source: str, names: list[str]) -> Path:
    """A registry of copies of a test bot under other names (plain REGISTRY/NAME folders)."""
    registry = where / "registry"
    for name in names:
        folder = registry / name
        shutil.copytree(TEST_BOTS / source, folder, ignore=shutil.ignore_patterns("__pycache__"))
        toml = (folder / "bot.toml").read_text().replace(f'name = "{source}"', f'name = "{name}"')
        (folder / "bot.toml").write_text(toml)
    return registry


def league(out: Path, registry: Path, **settings) -> LeagueConfig:
    data = {"game": "nim-test", "seats": 2, "seed": 5, "output": str(out), "registry": str(registry),
            "jobs": 1, "limits": LIMITS}
    data.update(settings)
    return LeagueConfig(**data)


def stored_settings(out: Path) -> dict:
    with Store.open(out) as store:
        return store.settings()


def test_a_per_slot_league_keeps_a_process_per_bot_slot_and_plays_what_a_per_game_one_plays(tmp_path):
    registry = registry_of(tmp_path, "counter", ["ann", "bob", "cat"])
    run_league(league(tmp_path / "slot", registry, games=9, bot_process="per-slot"), report=False)
    by_bot = sightings_by_bot(tmp_path / "slot")
    assert sorted(by_bot) == ["ann@1", "bob@1", "cat@1"]
    for bot, seen in by_bot.items():
        # One game at a time, one rotation, one table size: one slot, one process for the
        # run, which counted its games; hello said the league's games (its upper bound).
        assert len({record["token"] for record in seen}) == 1, bot
        assert [record["games"] for record in seen] == list(range(1, len(seen) + 1))
        assert {record["hello_games"] for record in seen} == {9}
    assert sum(len(seen) for seen in by_bot.values()) == 18  # 9 games of 2 seats
    run_league(league(tmp_path / "game", registry, games=9), report=False)
    seen = sightings(tmp_path / "game")
    assert len(seen) == 18 and len({record["token"] for record in seen}) == 18
    assert {(record["games"], record["hello_games"]) for record in seen} == {(1, 1)}
    assert results_of(tmp_path / "slot") == results_of(tmp_path / "game")
    # Stored, and compared on resume, as in a tournament; a league stores the default as
    # every league did before it had the setting.
    assert stored_settings(tmp_path / "slot")["bot_process"] == "per-slot"
    assert "bot_process" not in stored_settings(tmp_path / "game")
    with pytest.raises(TournamentError, match=r"other settings \(bot_process\)"):
        run_league(league(tmp_path / "slot", registry, games=12), report=False)
    assert not any(slot.session or slot.busy for slot in SLOTS.slots())  # ended with their run


def test_a_league_without_games_replaces_a_session_after_as_many_games_as_its_hello_said(tmp_path, monkeypatch):
    monkeypatch.setattr(arena.league.ladder, "SESSION_GAMES", 2)
    registry = registry_of(tmp_path, "counter", ["ann", "bob", "cat"])
    stop = threading.Event()

    def watch(update) -> None:
        if update.done >= 8:
            stop.set()

    with pytest.raises(LeagueInterrupted):
        run_league(league(tmp_path / "out", registry, bot_process="per-slot"), report=False, progress=watch, stop=stop)
    seen = sightings(tmp_path / "out")
    assert len(seen) >= 16
    assert {record["hello_games"] for record in seen} == {2}
    for bot in ("ann@1", "bob@1", "cat@1"):
        games = [record["games"] for record in seen if record["bot"] == bot]
        # Games 1 and 2 of a process, then a fresh process: 1, 2, 1, 2, ...
        assert games == [1 + at % 2 for at in range(len(games))], bot
        tokens = [record["token"] for record in seen if record["bot"] == bot]
        assert len(set(tokens)) == (len(tokens) + 1) // 2


def test_a_warm_league_starts_processes_ahead_of_need_and_a_cold_one_does_not(tmp_path):
    registry = registry_of(tmp_path, "counter", ["ann", "bob", "cat"])
    results = {}
    for warm in (True, False):
        box = LocalSandbox(warn=False)
        spares_seen = []
        out = tmp_path / ("warm" if warm else "cold")
        run_league(
            league(out, registry, games=6, warm_start=warm), sandbox=box, report=False,
            progress=lambda update, box=box, seen=spares_seen: seen.append(len(box.spares())),
        )
        if warm:
            assert max(spares_seen) >= 1  # the next process of a bot slot, waiting for its game
            assert stored_settings(out)["warm_start"] is True
        else:
            assert spares_seen and max(spares_seen) == 0
            assert "warm_start" not in stored_settings(out)
        assert box.spares() == {}  # the end of the league ends them
        results[warm] = results_of(out)
    assert results[True] == results[False]
    # warm_start changes only how fast: a league resumes with the other one.
    run_league(league(tmp_path / "warm", registry, games=8, warm_start=False), report=False)
    assert len(results_of(tmp_path / "warm")) == 8


def test_a_league_with_two_jobs_plays_two_games_at_once_and_with_one_never(tmp_path):
    decisions: list[tuple[int, float]] = []  # (thread, when) of every decision
    lock = threading.Lock()

    def player():
        def choose(observation, legal):
            with lock:
                decisions.append((threading.get_ident(), time.monotonic()))
            time.sleep(0.05)  # long enough for the other game's thread to decide meanwhile
            return 0

        return InProcessBot(choose)

    def interleaved() -> bool:
        """True when some thread decided both before and after another thread's decision."""
        threads = [thread for thread, _ in sorted(decisions, key=lambda item: item[1])]
        runs = [thread for at, thread in enumerate(threads) if at == 0 or threads[at - 1] != thread]
        return len(runs) > len(set(runs))

    bots = {name: player for name in ("ann", "bob", "cat", "dan")}
    empty = tmp_path / "registry"
    empty.mkdir()
    run_league(league(tmp_path / "two", empty, games=8, jobs=2), in_process=bots, report=False)
    assert interleaved()
    decisions.clear()
    run_league(league(tmp_path / "one", empty, games=8, jobs=1), in_process=bots, report=False)
    assert not interleaved()
    assert len(results_of(tmp_path / "two")) == len(results_of(tmp_path / "one")) == 8


def test_a_league_of_programs_with_two_jobs_plays_in_two_worker_processes(tmp_path, monkeypatch):
    from tests.league.test_league import LIMITS as LEAGUE_LIMITS
    from tests.league.test_league import SHORT
    from tests.league.test_league import registry_of as random_registry

    pools = []

    class Spy(arena.play.workers.WorkerPool):
        """The league's worker pool, which says what it was given and how many games."""

        def __init__(self, jobs, sandbox, hidden=()):
            super().__init__(jobs, sandbox, hidden)
            self.given = (jobs, sandbox, {Path(path) for path in hidden})
            self.submitted = 0
            pools.append(self)

        def submit(self, *args, **kwargs):
            self.submitted += 1
            return super().submit(*args, **kwargs)

    monkeypatch.setattr(arena.play.workers, "WorkerPool", Spy)
    registry = random_registry(tmp_path, ("ann", "bob", "cat"))
    settings = {"game": "3up3down", "seats": 2, "rules": SHORT, "limits": LEAGUE_LIMITS, "games": 6}
    run_league(league(tmp_path / "two", registry, jobs=2, **settings), report=False)
    [pool] = pools
    # Two workers of the league's sandbox, told what no bot may read: the league's folder
    # (its store, with the deal secret) and the registry (every other bot).
    assert pool.given == (2, "local", {(tmp_path / "two").resolve(), registry.resolve()})
    assert pool.submitted == 6  # every game went to the workers
    run_league(league(tmp_path / "one", registry, jobs=1, **settings), report=False)
    assert len(pools) == 1  # one job: threads of this process
    assert results_of(tmp_path / "two") == results_of(tmp_path / "one")


def test_a_leagues_limits_and_sandbox_are_the_ones_its_bots_meet(tmp_path):
    registry = registry_of(tmp_path, "counter", ["ann", "bob"])
    slow = registry_of(tmp_path / "slow", "slow-midgame", ["sam"]) / "sam"
    shutil.move(slow, registry / "sam")
    thief = registry_of(tmp_path / "thief", "read-other", ["tom"]) / "tom"
    shutil.move(thief, registry / "tom")
    out = tmp_path / "out"
    # What tom tries to read: another bot's folder in the registry, and the league's store.
    (registry / "tom" / "victims.json").write_text(json.dumps([str(registry / "ann" / "bot.py"), str(out / "arena.sqlite")]))
    limits = {**LIMITS, "decision_s": 0.5, "time_bank_s": 0.5}
    run_league(league(out, registry, games=12, limits=limits, suspend_after=1000), report=False)
    with Store.open(out) as store:
        games = store.games("done")
        incidents = {game.key: [(i.bot, i.reason.value, i.detail) for _, i in store.incidents(game.key)] for game in games}
        logs = {game.key: store.logs(game.key) for game in games}
        seats = {game.key: game.bots for game in games}
    sam_games = [key for key, bots in seats.items() if "sam@1" in bots]
    tom_games = [key for key, bots in seats.items() if "tom@1" in bots]
    assert sam_games and tom_games
    for key in sam_games:
        # Over its decision limit and time bank at its second decision, unless the game
        # ended before it (the opponent took the last stone first).
        for bot, reason, detail in incidents[key]:
            assert (bot, reason) == ("sam@1", "TIMEOUT") and "decision limit 0.5 s" in detail
    assert any(incidents[key] for key in sam_games)
    for key in tom_games:
        seat = seats[key].index("tom@1")
        assert not any(bot == "tom@1" for bot, _, _ in incidents[key])  # it read nothing
        assert logs[key][seat].count("cannot read") == 2


def test_arena_league_takes_the_flags_arena_run_takes_for_how_bots_run(tmp_path):
    """`arena league --bot-process --warm-start --cpu-s` set what `arena run`'s same flags set
    (arena/cli/flags.py declares them once for both), and the league plays so."""
    from typer.testing import CliRunner

    from arena.cli.app import app

    registry = registry_of(tmp_path, "counter", ["ann", "bob"])
    out = tmp_path / "flags"
    result = CliRunner().invoke(app, [
        "league", str(out), "--game", "nim-test", "--seats", "2", "--seed", "5", "--games", "4", "--jobs", "1",
        "--registry", str(registry), "--sandbox", "local", "--startup-s", "30", "--decision-s", "10",
        "--bot-process", "per-slot", "--warm-start", "--cpu-s", "7", "--public-seed-ok",
    ])
    assert result.exit_code == 0, result.output
    settings = stored_settings(out)
    assert (settings["bot_process"], settings["warm_start"], settings["limits"]["cpu_s"]) == ("per-slot", True, 7)
    seen = sightings(out)
    assert len(seen) == 8  # 4 games of 2 seats, each bot's one process counting its games
    assert {record["bot"]: len({r["token"] for r in seen if r["bot"] == record["bot"]}) for record in seen} == {
        "ann@1": 1, "bob@1": 1}
    result = CliRunner().invoke(app, ["league", "--help"], env={"COLUMNS": "200"})
    assert all(flag in result.output for flag in ("--bot-process", "--warm-start", "--no-warm-start", "--cpu-s"))
