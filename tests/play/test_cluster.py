"""Games on a Dask cluster: a LocalCluster of two worker processes on loopback plays a
tournament, one worker is SIGKILLed mid-run, and the stored results equal a local run's;
bots travel by content hash; mistakes (address, unreachable scheduler) are one line."""

from __future__ import annotations

import functools
import io
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from distributed import Client, LocalCluster

import arena
from arena.ratings.results import stored_standings
from arena.play.cluster import (
    BotShipment,
    BotShipmentError,
    ClusterFailure,
    ClusterPool,
    pack_bot,
    task_key,
    unpack_bot,
)
from arena.play.tournament import (
    TournamentError,
    TournamentInterrupted,
    load_tournament,
    run_tournament,
)
from arena.store.db import Store, content_hash
from tests import polling
from tests.bot_folders import BOTS
from tests.tournaments import tournament_config

# Generous limits: a loaded machine must not turn a slow start into a forfeit in one run only.
LIMITS = {"startup_s": 60.0, "decision_s": 20.0, "time_bank_s": 60.0}
WAIT_S = 60.0
# Worker processes of one thread on loopback, dashboard off; the scheduler's plain HTTP
# server (health, metrics) takes a free loopback port rather than 8787, which may be in use.
LOOPBACK = {
    "threads_per_worker": 1, "processes": True, "host": "127.0.0.1", "dashboard_address": None,
    "scheduler_kwargs": {"dashboard_address": "127.0.0.1:0"},
}


# bot_dirs (tests/play/conftest.py): the example bots random and threeup-heuristic, plus two
# renamed copies of random.
BOT_DIRS = (("random", "random"), ("heuristic", "threeup-heuristic"), ("ann", "random"), ("bob", "random"))


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes (one thread each) on loopback, each behind a nanny that restarts it."""
    with LocalCluster(n_workers=2, **LOOPBACK) as local:
        yield local


# Per-decision think times and stderr lines vary with the machine's timing, not with the game.
TIMING = {"replay": {"actions": {"__all__": {"think_s", "stderr"}}}}


config = functools.partial(tournament_config, seed=7, limits=LIMITS)


def stored(out: Path) -> dict:
    """Every stored game: key -> its whole result record (seats, places, scores, incidents, replay),
    without what depends on timing (think times, stderr lines per decision)."""
    with Store.open(out) as store:
        return {game.key: store.game_result(game.key).model_dump(exclude=TIMING) for game in store.games("done")}


def rows_per_game(out: Path) -> dict[str, int]:
    """Seat rows per game key, straight from SQLite (a game stored twice would show 2 x seats)."""
    with sqlite3.connect(out / "arena.sqlite") as db:
        return dict(db.execute("SELECT game_key, COUNT(*) FROM seats GROUP BY game_key").fetchall())


wait_until = functools.partial(polling.wait_until, timeout_s=WAIT_S, every_s=0.05)


def test_a_killed_worker_loses_nothing_and_the_results_equal_a_local_run(tmp_path, bot_dirs, cluster):
    local = run_tournament(config(tmp_path / "local", bot_dirs, cycles=4, jobs=2), report=False)
    assert local.total == 16  # C(4,3) tables x 4 cycles

    client = Client(cluster, set_as_default=False)
    wait_until(lambda: len(client.nthreads()) == 2, "two workers")
    pids = client.run(os.getpid)
    killed: dict[str, object] = {}

    def kill_a_busy_worker(update) -> None:
        # After some results are stored, SIGKILL a worker while the scheduler has a game on it.
        if killed or update.done < 4:
            return
        for address, keys in client.processing().items():
            if keys and address in pids:
                killed.update(address=address, keys=list(keys), stored_before=update.done)
                os.kill(pids[address], signal.SIGKILL)
                return

    outcome = run_tournament(
        config(tmp_path / "cluster", bot_dirs, cycles=4, cluster=cluster.scheduler_address),
        progress=kill_a_busy_worker,
        report=False,
    )
    assert killed, "no worker was busy after four stored games: the kill never happened"
    assert 4 <= killed["stored_before"] < 16
    assert (outcome.total, outcome.done, outcome.played, outcome.resumed) == (16, 16, 16, 0)

    # Nothing lost, nothing stored twice, every record equal to the local run's.
    assert rows_per_game(tmp_path / "cluster") == {key: 3 for key in stored(tmp_path / "local")}
    assert stored(tmp_path / "cluster") == stored(tmp_path / "local")
    assert outcome.standings == local.standings
    with Store.open(tmp_path / "cluster") as store:
        assert outcome.standings == stored_standings(store)

    # The game the killed worker was playing ran again: the scheduler put it back to processing.
    reruns = [
        key for key in killed["keys"]
        if [t[2] for t in cluster.scheduler.story(key) if len(t) > 2].count("processing") >= 2
    ]
    assert reruns, f"none of {killed['keys']} was run again after its worker was killed"
    # The nanny restarts the worker, and the restarted worker gets the bots again.
    wait_until(lambda: len(client.nthreads()) == 2, "the killed worker to come back")
    assert set(client.run(os.getpid).values()) != set(pids.values())
    client.close()


def test_a_game_whose_worker_keeps_dying_stops_the_run_with_one_line_and_it_resumes(tmp_path, bot_dirs, cluster):
    import dask

    # Dask gives up on a game whose worker died more than allowed-failures times: 0 here.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), LocalCluster(n_workers=1, **LOOPBACK) as fragile:
        client = Client(fragile, set_as_default=False)
        pids = client.run(os.getpid)
        killed = []

        def kill_the_worker(update) -> None:
            if killed or update.done < 2:
                return
            for address, keys in client.processing().items():
                if keys:
                    killed.append(keys[0])
                    os.kill(pids[address], signal.SIGKILL)
                    return

        settings = config(tmp_path / "out", bot_dirs, cycles=2, cluster=fragile.scheduler_address)
        with pytest.raises(ClusterFailure) as failed:
            run_tournament(settings, progress=kill_the_worker, report=False)
        client.close()
    assert killed, "the worker was never busy after two stored games"
    assert "could not be played on the cluster (KilledWorker:" in str(failed.value)
    assert str(failed.value).endswith("every finished game is stored: run the same command to resume")
    assert 2 <= len(stored(tmp_path / "out")) < 8
    resumed = run_tournament(config(tmp_path / "out", bot_dirs, cycles=2, cluster=cluster.scheduler_address), report=False)
    assert resumed.done == 8 and resumed.played == 8 - resumed.resumed
    assert rows_per_game(tmp_path / "out") == {key: 3 for key in stored(tmp_path / "out")}


def test_a_swiss_tournament_on_the_cluster_plays_round_by_round_like_a_local_one(tmp_path, bot_dirs, cluster):
    swiss = {"format": "swiss", "rounds": 3, "seats": 2}
    local = run_tournament(config(tmp_path / "local", bot_dirs, **swiss), report=False)
    remote = run_tournament(config(tmp_path / "remote", bot_dirs, cluster=cluster.scheduler_address, **swiss), report=False)
    assert remote.total == local.total == 6  # 2 tables a round, 3 rounds
    assert stored(tmp_path / "remote") == stored(tmp_path / "local")
    with Store.open(tmp_path / "remote") as store:
        assert sorted({game.round for game in store.games()}) == [1, 2, 3]


def _worker_slots() -> list[tuple[str, int, bool]]:
    from arena.play.executor import SLOTS

    return [(slot.name, slot.games, slot.session is not None) for slot in SLOTS.slots()]


def test_per_slot_sessions_play_on_the_workers_like_fresh_processes_here_and_end_with_the_run(tmp_path, bot_dirs, cluster):
    here = run_tournament(config(tmp_path / "here", bot_dirs, cycles=2, bot_process="per-game", warm_start=False),
                          report=False)
    seen = []
    with Client(cluster.scheduler_address, set_as_default=False) as client:

        def look(update) -> None:
            if update.played == 6:  # one of the two workers has played 3 games: a bot twice in a slot
                seen.extend(slot for slots in client.run(_worker_slots).values() for slot in slots)

        there = run_tournament(
            config(tmp_path / "there", bot_dirs, cycles=2, bot_process="per-slot", cluster=cluster.scheduler_address),
            report=False, progress=look,
        )
        assert list(client.run(_worker_slots).values()) == [[], []]  # the run ended its sessions there
    assert there.total == here.total == 8
    assert any(games >= 2 and session for _, games, session in seen), seen
    # Bots that reseed from each start's seed play per-slot exactly the games fresh processes play.
    assert stored(tmp_path / "there") == stored(tmp_path / "here")


def test_a_stopped_cluster_run_stores_what_finished_and_resumes(tmp_path, bot_dirs, cluster):
    stop = threading.Event()

    def stop_after_three(update) -> None:
        if update.played >= 3:
            stop.set()  # what Ctrl-C does in `arena run`

    settings = config(tmp_path / "out", bot_dirs, cycles=3, cluster=cluster.scheduler_address)
    with pytest.raises(TournamentInterrupted) as stopped:
        run_tournament(settings, progress=stop_after_three, stop=stop, report=False)
    first = stored(tmp_path / "out")
    assert stopped.value.total == 12 and stopped.value.done == len(first) and 3 <= len(first) < 12
    resumed = run_tournament(settings, report=False)
    assert (resumed.resumed, resumed.played, resumed.done) == (len(first), 12 - len(first), 12)
    after = stored(tmp_path / "out")
    assert {key: after[key] for key in first} == first  # nothing finished was played again
    assert rows_per_game(tmp_path / "out") == {key: 3 for key in after}


def test_docker_games_on_the_cluster_equal_a_local_docker_run(docker_engine, tmp_path, bot_dirs, cluster):
    from arena.botcopy import content_hash
    from arena.sandbox.docker import default_image

    # A bot with its own Dockerfile: each worker builds its image on its own engine. Its
    # LABEL line makes the image (tag and layers) this test's own: another test run on the
    # engine neither removes it nor shares a layer that its own removal would take away.
    boxed = tmp_path / "boxed"
    shutil.copytree(bot_dirs[2], boxed)
    (boxed / "bot.toml").write_text((boxed / "bot.toml").read_text().replace('name = "ann"', 'name = "boxed"'))
    (boxed / "Dockerfile").write_text(
        f"FROM {default_image()}\nLABEL arena.test-run={os.getpid()}-{time.time_ns()}\n"
        "COPY bot.py arena_bot.py /app/\nWORKDIR /app\nUSER 65534\n"
    )
    tag = f"arena-bot-boxed:{content_hash(boxed)[:16]}"
    bots = [bot_dirs[0], bot_dirs[1], boxed]
    try:
        local = run_tournament(config(tmp_path / "local", bots, sandbox="docker", cycles=2), report=False)
        remote = run_tournament(
            config(tmp_path / "remote", bots, sandbox="docker", cycles=2, cluster=cluster.scheduler_address),
            report=False,
        )
    finally:
        import docker

        try:
            docker.from_env(timeout=30).images.remove(tag, force=True)
        except docker.errors.ImageNotFound:
            pass
    assert remote.done == local.done == 2
    results = stored(tmp_path / "remote")
    assert results == stored(tmp_path / "local")
    assert [record["incidents"] for record in results.values()] == [[], []]  # every bot really played



def test_arena_run_cluster_flag_plays_there_and_a_resume_without_it_finds_everything_stored(tmp_path, bot_dirs, cluster):
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "arena", "run", "--game", "3up3down", "--seats", "3", "--quiet",
        "--rule", "max_turns=60", "--startup-s", "60", "--decision-s", "20", "--out", str(out),
        *[arg for bot in bot_dirs[:3] for arg in ("--bots", str(bot))],
    ]
    ran = subprocess.run([*command, "--cluster", cluster.scheduler_address], check=False, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert "1 of 1 games" in ran.stdout
    # Where games ran is not part of the tournament: the same command without --cluster resumes it.
    again = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "0 games played now, 1 were stored before" in again.stdout


def test_two_runners_on_one_store_store_each_game_once(tmp_path, bot_dirs, monkeypatch):
    # The store refuses a second result; the runner takes the refusal as "already stored".
    # (A second runner on a folder is refused by its lock, tests/play/test_one_writer.py; here
    # the lock is left out, to show what the store does should two write all the same.)
    import contextlib

    import arena.play.tournament

    monkeypatch.setattr(arena.play.tournament, "one_writer", lambda *args: contextlib.nullcontext())
    settings = config(tmp_path / "out", bot_dirs, jobs=2, cycles=2)
    outcomes, failures = [], []

    def run() -> None:
        try:
            outcomes.append(run_tournament(settings, report=False))
        except Exception as error:  # noqa: BLE001 - reported below by the assertion
            failures.append(error)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures
    assert len(outcomes) == 2 and all(outcome.done == 8 for outcome in outcomes)
    assert sum(outcome.played for outcome in outcomes) == 8
    assert rows_per_game(tmp_path / "out") == {key: 3 for key in stored(tmp_path / "out")}
    assert len(stored(tmp_path / "out")) == 8


# ---------------------------------------------------------------- bots by content hash


def test_a_bot_unpacks_to_its_content_hash_and_the_tarball_depends_on_content_only(tmp_path, bot_dirs):
    bot = bot_dirs[1]
    copy = tmp_path / "copy"
    shutil.copytree(bot, copy)
    os.utime(copy / "bot.toml", (1, 1))  # another mtime: the same content
    assert pack_bot(bot) == pack_bot(copy)
    folder = unpack_bot(content_hash(bot), pack_bot(bot), tmp_path / "cache")
    assert folder == tmp_path / "cache" / content_hash(bot)
    assert content_hash(folder) == content_hash(bot)
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in bot.iterdir() if p.name != "__pycache__")
    assert (folder.stat().st_mode & 0o005) == 0o005  # readable by the docker sandbox's user
    # A second unpack (a worker restarted in the same folder) uses the folder that is there...
    assert unpack_bot(content_hash(bot), pack_bot(bot), tmp_path / "cache") == folder
    # ...unless it changed since: then it is unpacked again.
    (folder / "bot.py").write_text("changed by a bot that writes into its own folder\n")
    assert unpack_bot(content_hash(bot), pack_bot(bot), tmp_path / "cache") == folder
    assert (folder / "bot.py").read_bytes() == (bot / "bot.py").read_bytes()


def test_a_shipped_bot_that_does_not_hash_to_its_name_is_refused(tmp_path, bot_dirs):
    with pytest.raises(BotShipmentError, match="hashes to .*, not 000000000000: refused"):
        unpack_bot("0" * 64, pack_bot(bot_dirs[0]), tmp_path / "cache")
    assert [p for p in (tmp_path / "cache").iterdir()] == []  # nothing half-unpacked is left


def test_a_tarball_with_a_path_out_of_the_folder_is_refused(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        entry = tarfile.TarInfo("../escaped.txt")
        entry.size = 2
        tar.addfile(entry, io.BytesIO(b"hi"))
    with pytest.raises(tarfile.TarError):
        unpack_bot("0" * 64, buffer.getvalue(), tmp_path / "cache")
    assert not (tmp_path / "escaped.txt").exists()


def test_a_worker_with_another_arena_version_refuses_the_bots(tmp_path, bot_dirs):
    plugin = BotShipment({content_hash(bot_dirs[0]): pack_bot(bot_dirs[0])}, "local")
    plugin.arena_version = "0.0.1"  # what an organiser with another release would send
    worker = SimpleNamespace(address="tcp://10.0.0.9:4000", local_directory=str(tmp_path / "worker"))
    with pytest.raises(BotShipmentError) as refused:
        plugin.setup(worker)
    assert str(refused.value) == (
        f"worker tcp://10.0.0.9:4000 runs arena {arena.__version__}, the organiser arena 0.0.1: "
        "install the same arena version on every worker"
    )
    assert not (tmp_path / "worker").exists()  # nothing unpacked


def test_a_task_key_names_the_game_and_ignores_where_the_organiser_keeps_the_bots(tmp_path, bot_dirs):
    from arena.play.tournament import GameSpec, resolve_bots

    field, _ = resolve_bots(config(tmp_path, bot_dirs[:3]))
    spec = GameSpec(key="1-1-0", deal="1-1", seed=5, game="3up3down", rules={}, bots=field,
                    bot_seeds=[11, 12, 13], limits=config(tmp_path, bot_dirs[:3]).limits)
    moved = spec.model_copy(update={"bots": [b.model_copy(update={"folder": "/elsewhere"}) for b in field]})
    reseeded = spec.model_copy(update={"seed": 6})
    assert task_key(spec).startswith("arena-game-1-1-0-")
    assert task_key(moved) == task_key(spec)
    assert task_key(reseeded) != task_key(spec)


# ------------------------------------------------------------------------- mistakes


@pytest.mark.parametrize("address", ["localhost:8786", "http://host:8786", "tcp://host", "tcp://host:99999"])
def test_a_cluster_that_is_not_a_scheduler_address_is_one_line(address):
    with pytest.raises(TournamentError) as refused:
        load_tournament(None, {"game": "3up3down", "seats": 3, "cluster": address})
    assert refused.value.mistakes == [
        (
            f'cluster = "{address}": a cluster is the Dask scheduler\'s address, tcp://HOST:PORT '
            "(e.g. tcp://10.0.0.5:8786; tls:// when the cluster uses TLS)"
        )
    ]


def test_cluster_in_the_tournament_file_is_read_and_the_flag_overrides_it(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('game = "3up3down"\nseats = 3\ncluster = "tcp://10.0.0.5:8786"\n')
    assert load_tournament(path).cluster == "tcp://10.0.0.5:8786"
    assert load_tournament(path, {"cluster": "tcp://[fe80::1]:9000"}).cluster == "tcp://[fe80::1]:9000"
    assert load_tournament(path, {"cluster": ""}).cluster is None


def test_an_empty_cluster_means_the_local_pool(tmp_path):
    assert load_tournament(None, {"game": "3up3down", "seats": 3, "cluster": ""}).cluster is None


def test_a_scheduler_nobody_answers_is_a_readable_error(bot_dirs):
    import socket

    with socket.socket() as probe:  # a loopback port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    field, _ = resolve(bot_dirs)
    with pytest.raises(TournamentError, match=rf"cluster = 'tcp://127.0.0.1:{port}': no Dask scheduler answers there"):
        ClusterPool(f"tcp://127.0.0.1:{port}", field, "local", connect_timeout_s=1.0)


def test_in_process_bots_are_refused_on_a_cluster(bot_dirs):
    field, _ = resolve(bot_dirs, in_process=True)
    with pytest.raises(TournamentError, match=r"in-process bots \(inproc\) play only in the local pool"):
        ClusterPool("tcp://127.0.0.1:1", field, "local", connect_timeout_s=1.0)


def resolve(bot_dirs, in_process: bool = False):
    from arena.game.seats import InProcessBot
    from arena.play.tournament import resolve_bots

    extra = {"inproc": lambda: InProcessBot(lambda observation, legal: legal[0])} if in_process else None
    return resolve_bots(config(Path("unused"), bot_dirs[:3]), extra)


def built_bot(folder: Path, name: str, build: str) -> Path:
    """bots/random whose program is made by its `build` step (copied into build/, each run
    counted in build/runs)."""
    shutil.copytree(BOTS / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1.0"\ncommand = ["python3", "build/bot.py"]\n'
        f'games = ["3up3down", "three-thirteen"]\nbuild = {build}\n'
    )
    return folder


def test_a_bot_with_a_build_step_is_built_on_each_worker_before_its_games(tmp_path, bot_dirs, cluster):
    bot = built_bot(tmp_path / "built", "built", '["sh", "-c", "cp bot.py arena_bot.py build/ && echo run >> build/runs"]')
    # The organiser's own build/ (a crashing program marked as built) is not the bot's
    # content: it must not travel, and the workers build from the sources.
    (bot / "build").mkdir()
    (bot / "build" / "bot.py").write_text("import sys\nsys.exit(3)\n")
    (bot / "build" / ".arena-built").write_text("built\n")
    later = time.time() + 60
    os.utime(bot / "build" / ".arena-built", (later, later))
    assert "build/bot.py" not in tarfile.open(fileobj=io.BytesIO(pack_bot(bot)), mode="r:gz").getnames()
    outcome = run_tournament(config(tmp_path / "out", [bot, *bot_dirs[:2]], cycles=4, cluster=cluster.scheduler_address),
                             report=False)
    assert outcome.done == outcome.total == 4
    with Store.open(tmp_path / "out") as store:
        assert [store.game_result(game.key).incidents for game in store.games("done")] == [[]] * 4
    digest = content_hash(bot)

    def builds_here(dask_worker) -> int:
        runs = Path(dask_worker.local_directory) / "arena-bots" / digest / "build" / "runs"
        return len(runs.read_text().splitlines()) if runs.exists() else 0

    with Client(cluster.scheduler_address, set_as_default=False) as client:
        built = client.run(builds_here)
    assert set(built.values()) <= {0, 1} and sum(built.values()) >= 1  # once per worker that played it
    assert (bot / "build" / "bot.py").read_text() == "import sys\nsys.exit(3)\n"  # nothing built here


def test_a_bot_built_once_travels_built_and_no_worker_builds_it_again(tmp_path, bot_dirs, cluster):
    """Built once per content hash: build/ with a mark naming the sources (a registry's bot
    built at validation, here built on this machine) travels with the bot, and a worker
    that runs bots where it was built (here: this machine, locally) plays it as built."""
    from arena.config.botfolder import load_bot
    from arena.langs.build import run_build
    from arena.sandbox import get_sandbox

    bot = built_bot(tmp_path / "built", "built", '["sh", "-c", "cp bot.py arena_bot.py build/ && echo $$ >> build/runs"]')
    (bot / "submission.json").write_text('{"date": "2024-01-01"}\n')  # a registry's record: not its content
    assert run_build(load_bot(bot).spec(), get_sandbox("local")) is not None
    built_here = (bot / "build" / "runs").read_text()
    assert "build/bot.py" in tarfile.open(fileobj=io.BytesIO(pack_bot(bot)), mode="r:gz").getnames()
    outcome = run_tournament(config(tmp_path / "out", [bot, *bot_dirs[:2]], cycles=4, cluster=cluster.scheduler_address),
                             report=False)
    assert outcome.done == outcome.total == 4
    digest = content_hash(bot)

    def runs_there(dask_worker) -> str | None:
        runs = Path(dask_worker.local_directory) / "arena-bots" / digest / "build" / "runs"
        return runs.read_text() if runs.exists() else None

    with Client(cluster.scheduler_address, set_as_default=False) as client:
        there = client.run(runs_there)
    assert set(there.values()) == {built_here}  # shipped as built, built again nowhere
    # A build/ whose files are not what its mark says (changed after the build) stays home.
    (bot / "build" / "bot.py").write_text("import sys\nsys.exit(3)\n")
    folder = unpack_bot(digest, pack_bot(bot), tmp_path / "cache")
    assert not (folder / "build").exists()  # the worker builds such a bot itself (test above)


def test_a_build_that_fails_on_a_worker_stops_the_run_with_its_output(tmp_path, bot_dirs, cluster):
    bot = built_bot(tmp_path / "broken", "broken", '["sh", "-c", "echo bot.c:3: error: expected semicolon >&2; exit 3"]')
    settings = config(tmp_path / "out", [bot, *bot_dirs[:2]], cycles=1, cluster=cluster.scheduler_address)
    with pytest.raises(TournamentError) as caught:
        run_tournament(settings, report=False)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("bot broken, built on worker tcp://127.0.0.1:"), lines
    assert lines[0].endswith(
        ": its build (sh -c echo bot.c:3: error: expected semicolon >&2; exit 3) exited with code 3; "
        "its output ends with:"
    ), lines
    assert lines[1:] == ["    | bot.c:3: error: expected semicolon"]
