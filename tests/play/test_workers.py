"""Worker processes for `--jobs N` (arena/play/workers.py): a game played in a worker is the game
played here, a run with more than one job plays in workers and stores what a one-job run
stores, bots given as Python objects stay in this process, and workers end with the run,
even when it is killed."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import arena.play.workers
from arena.game.seats import InProcessBot
from arena.play.executor import GameSpec, play_scheduled_game
from arena.schedule.formats import round_robin
from arena.play.tournament import resolve_bots, run_tournament, validate_config
from arena.play.workers import WorkerPool
from arena.store.db import Store
from tests.tournaments import SHORT, tournament_config

ROOT = Path(__file__).resolve().parents[2]
# How long a bot took and what it wrote while deciding differ from run to run.
TIMING = {"replay": {"actions": {"__all__": {"think_s", "stderr"}}}}
# bot_dirs (tests/play/conftest.py): four copies of the random bot under different names.
BOT_DIRS = tuple((name, "random") for name in ("ann", "bob", "cat", "dan"))
config = functools.partial(tournament_config, seed=5)


def a_spec(tmp_path: Path, bot_dirs) -> GameSpec:
    settings = config(tmp_path / "out", bot_dirs[:3])
    field, _ = resolve_bots(settings)
    [game] = round_robin([bot.id for bot in field], 3, seed=settings.seed)
    by_id = {bot.id: bot for bot in field}
    return GameSpec(
        key=game.key, deal=game.deal, seed=game.seed, game=settings.game, rules=settings.rules,
        bots=[by_id[bot_id] for bot_id in game.table], bot_seeds=[7, 8, 9], limits=settings.limits,
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (ended, not yet reaped by its parent) is gone for every purpose here.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def cgroups_of(pids: list[int]) -> list[str]:
    """The bot cgroups (local sandbox) made by these processes and still there."""
    return [path.name for path in Path("/sys/fs/cgroup/pids").glob("arena-*") if int(path.name.split("-")[1]) in pids]


@pytest.mark.parametrize("processes", [{"warm_start": True}, {"bot_process": "per-slot", "bot_games": [2, 2, 2]}])
def test_a_game_played_in_a_worker_is_the_game_played_here(tmp_path, bot_dirs, processes):
    spec = a_spec(tmp_path, bot_dirs).model_copy(update={"run": "test", **processes})
    here = play_scheduled_game(spec.model_copy(update={"warm_start": False, "bot_process": "per-game"}))
    pool = WorkerPool(2, "local", [tmp_path / "out"])
    try:
        there = pool.submit(play_scheduled_game, spec).result(timeout=60)
        workers = pool.pids()
        # The worker keeps the slots' next processes (started ahead, or the sessions).
        if Path("/sys/fs/cgroup/pids").is_dir():
            assert len(cgroups_of(workers)) == 3
    finally:
        pool.close()
    assert there.result.model_dump(exclude=TIMING) == here.result.model_dump(exclude=TIMING)
    assert there.key == spec.key
    assert workers and os.getpid() not in workers
    assert not any(alive(pid) for pid in workers)  # close() ended them
    # ... and closed its sandbox as it ended: nothing of its bots is left.
    assert cgroups_of(workers) == []


def test_a_worker_pool_refuses_what_only_this_process_has(tmp_path, bot_dirs):
    pool = WorkerPool(2, "local")
    try:
        with pytest.raises(TypeError, match="their own sandbox only"):
            pool.submit(play_scheduled_game, a_spec(tmp_path, bot_dirs), {"x": lambda: None})
    finally:
        pool.close()


def test_a_run_with_two_jobs_plays_in_workers_and_stores_what_one_job_stores(tmp_path, bot_dirs, monkeypatch):
    submitted = []
    submit = WorkerPool.submit

    def counted(self, fn, spec, *args):
        submitted.append(spec.key)
        return submit(self, fn, spec, *args)

    monkeypatch.setattr(arena.play.workers.WorkerPool, "submit", counted)
    two = run_tournament(config(tmp_path / "two", bot_dirs, jobs=2, duplicate=True), report=False)
    two_submitted, submitted[:] = list(submitted), []
    one = run_tournament(config(tmp_path / "one", bot_dirs, jobs=1, duplicate=True), report=False)
    assert submitted == []  # one job: threads of this process
    assert (one.total, one.done, two.done) == (12, 12, 12)  # C(4,3) tables, 3 rotations each
    assert one.standings == two.standings
    with Store.open(tmp_path / "one") as first, Store.open(tmp_path / "two") as second:
        assert sorted(two_submitted) == sorted(game.key for game in second.games())
        assert [first.game_result(game.key).model_dump(exclude=TIMING) for game in first.games()] == [
            second.game_result(game.key).model_dump(exclude=TIMING) for game in second.games()
        ]


def test_in_process_bots_with_two_jobs_play_in_threads_of_this_process(tmp_path, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("in-process bots cannot play in a worker process")

    monkeypatch.setattr(arena.play.workers.WorkerPool, "__init__", never)
    bots = {f"first{n}": (lambda: InProcessBot(lambda observation, legal: 0)) for n in range(4)}
    outcome = run_tournament(
        validate_config({"game": "3up3down", "seats": 4, "jobs": 2, "output": str(tmp_path / "out"), "rules": SHORT}),
        in_process=bots, report=False,
    )
    assert outcome.done == outcome.total == 1


def table_games(tmp_path, bot_dirs, table: str, bots: list[int]) -> list[GameSpec]:
    """The 4 rotations of one deal (keys DEAL-ROTATION), `bots` by index in seat order."""
    field, _ = resolve_bots(config(tmp_path / "out", bot_dirs))
    return [
        GameSpec(
            key=f"{table}-{rotation}", deal=table, seed=1, game="3up3down", rules={},
            bots=[field[index] for index in bots[rotation:] + bots[:rotation]], bot_seeds=[1, 2, 3],
            limits=config(tmp_path / "out", bot_dirs).limits,
        )
        for rotation in range(3)
    ]


def test_the_free_worker_takes_the_next_game_whose_bot_slots_it_holds(tmp_path, bot_dirs):
    first = table_games(tmp_path, bot_dirs, "1-1", [0, 1, 2])
    second = table_games(tmp_path, bot_dirs, "1-2", [0, 1, 3])  # ann and bob again, with dan
    pool = WorkerPool(2, "local")  # nothing is played: no worker process starts
    queue = first + second
    played = {0: [], 1: []}

    def next_for_the_free_worker() -> int:
        chosen = queue.pop(pool.choose(queue))
        lane = pool._claim(chosen)
        played[lane].append(chosen.key)
        return lane

    assert next_for_the_free_worker() == 0  # nothing held anywhere: the first game
    assert next_for_the_free_worker() == 1  # worker 0 holds ann and bob in rotation 0
    pool._release(0)
    # Worker 0 holds ann, bob, cat in rotation 0: the second deal's rotation 0 shares two
    # slots with it; the first deal's rotation 2 would start three bots cold.
    assert next_for_the_free_worker() == 0
    pool._release(1)
    assert next_for_the_free_worker() == 1  # rotation 1 of the second deal: ann and bob there
    assert played == {0: ["1-1-0", "1-2-0"], 1: ["1-1-1", "1-2-1"]}


def test_a_game_passed_over_as_often_as_there_are_choices_is_taken_next(tmp_path, bot_dirs):
    pool = WorkerPool(2, "local")
    games = table_games(tmp_path, bot_dirs, "1-1", [0, 1, 2]) + table_games(tmp_path, bot_dirs, "1-2", [0, 1, 3])
    pool._claim(games[0])  # worker 0 holds rotation 0 of ann, bob, cat
    pool._release(0)
    waiting = [games[2], games[3]]  # rotation 2 of the first deal; rotation 0 of the second
    assert pool.choose(waiting) == 1  # worker 0 prefers its own slots ...
    assert pool.choose(waiting) == 1
    assert pool.choose(waiting) == 0  # ... until the first game has waited its turn twice


def test_a_warm_docker_game_tells_its_worker_which_coming_slots_to_make_ready(tmp_path, bot_dirs):
    docker = {"sandbox": "docker", "warm_start": True, "run": "r"}
    first = [spec.model_copy(update=docker) for spec in table_games(tmp_path, bot_dirs, "1-1", [0, 1, 2])]
    second = [spec.model_copy(update=docker) for spec in table_games(tmp_path, bot_dirs, "1-2", [0, 1, 3])]
    pool = WorkerPool(2, "docker")  # nothing is played: no worker process starts
    window = first + second
    assert pool.choose(window) == 0
    lane = pool._claim(window[0])
    told = pool._with_ahead(lane, window[0])
    # Lane 0 takes rotations 0 and 2 (rotation r goes to lane r mod 2): of the coming games'
    # slots those not in this game, each once.
    assert lane == 0
    assert [(slot.bot.id, slot.rotation, slot.players) for slot in told.ahead] == [
        ("cat", "2", 3), ("ann", "2", 3), ("bob", "2", 3), ("dan", "0", 3), ("dan", "2", 3),
    ]
    assert pool._with_ahead(lane, window[3]).ahead == []  # told once
    other = pool._with_ahead(1, window[1])  # ann, bob and cat in rotation 1: its own game's
    assert [(slot.bot.id, slot.rotation) for slot in other.ahead] == [("dan", "1")]
    cold = window[1].model_copy(update={"warm_start": False})
    assert pool._with_ahead(1, cold) is cold  # only warm Docker slots are made ahead


def test_a_worker_prepares_the_slots_it_is_told_under_the_names_their_first_game_uses(tmp_path, bot_dirs, monkeypatch):
    from arena.play import executor as play
    games = table_games(tmp_path, bot_dirs, "1-1", [0, 1, 2])
    spec = games[0].model_copy(update={"warm_start": True, "run": "ahead-test", "rules": SHORT})
    coming = games[1].model_copy(update={"warm_start": True, "run": "ahead-test", "rules": SHORT})
    spec = spec.model_copy(
        update={"ahead": [play.AheadSlot(bot=bot, rotation="1", players=3) for bot in coming.bots]}
    )
    prepared, started = [], []
    sandbox = play.sandbox_named("local")
    monkeypatch.setattr(type(sandbox), "prepare", lambda self, bot, limits, *, slot: prepared.append(slot), raising=False)
    real_start = type(sandbox).start
    monkeypatch.setattr(
        type(sandbox), "start", lambda self, bot, limits, *, slot=None: started.append(slot) or real_start(self, bot, limits, slot=slot)
    )
    try:
        play_scheduled_game(spec, sandbox=sandbox)
        assert len(prepared) == 3 and not set(prepared) & set(started)
        play_scheduled_game(coming, sandbox=sandbox)
        assert sorted(started[3:]) == sorted(prepared)  # the coming game starts in the slots made ready
    finally:
        play.SLOTS.close("ahead-test")


KILLED_RUNNER = """
import sys, time
from arena.play.workers import WorkerPool
from arena.play.executor import play_scheduled_game
import pickle
spec = pickle.loads(bytes.fromhex(sys.argv[1]))
pool = WorkerPool(2, "local")
futures = [pool.submit(play_scheduled_game, spec) for _ in range(2)]
futures[0].result(timeout=60)
print(*pool.pids(), flush=True)
time.sleep(60)
"""


def test_workers_end_when_their_runner_is_killed(tmp_path, bot_dirs):
    import pickle

    spec = a_spec(tmp_path, bot_dirs)
    runner = subprocess.Popen(
        [sys.executable, "-c", KILLED_RUNNER, pickle.dumps(spec).hex()],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        workers = [int(pid) for pid in runner.stdout.readline().split()]
        assert len(workers) == 2 and all(alive(pid) for pid in workers)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait()
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in workers)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
