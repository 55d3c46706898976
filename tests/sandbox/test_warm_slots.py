"""Warm slots and bot sessions: the slot pool (arena.play.executor), the local sandbox's processes
started ahead of need, and `bot_process = "per-slot"`, seen from the bots' side.

The test bots say on stderr what their process saw (tests/bots/counter: a token per
process, its games, its secret, which tells the deal; tests/bots/early: what came before
its `hello`); the stored per-game logs carry it back.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import defaultdict
from pathlib import Path

import pytest
from nimtest_game import NIM, nim_registered

from arena.config.field import BotRef
from arena.config.fingerprint import fingerprint_of
from arena.game.protocol import Hello, LimitsInfo, MatchOver
from arena.game.seats import RemoteBot
from arena.play.executor import (
    SLOTS,
    GameSpec,
    SlotPool,
    play_scheduled_game,
    rotation_of,
    slot_name,
)
from arena.faults import BotFault, Reason
from arena.play.tournament import SettingsChanged, run_tournament, validate_config
from arena.sandbox import BotSpec, Limits
from arena.sandbox.local import LocalSandbox
from arena.store.db import Store
from tests.counter_sightings import results_of, sightings, sightings_by_bot

ROOT = Path(__file__).resolve().parents[2]
TEST_BOTS = Path(__file__).parents[1] / "bots"
# Generous: a loaded machine must not turn a slow start into a fault in one run only.
LIMITS = Limits(startup_s=30, decision_s=10, time_bank_s=10, memory_mb=128, cpu_s=30)


@pytest.fixture(scope="module", autouse=True)
def nim():
    with nim_registered() as game:
        yield game


def copies(base: Path, source: str, names: list[str], command: list[str] | None = None) -> list[Path]:
    """Copies of a test bot under other names (and another command line)."""
    folders = []
    for name in names:
        folder = base / name
        shutil.copytree(TEST_BOTS / source, folder, ignore=shutil.ignore_patterns("__pycache__"))
        toml = (folder / "bot.toml").read_text().replace(f'name = "{source}"', f'name = "{name}"')
        if command is not None:
            toml = toml.replace('command = ["python3", "bot.py"]', f"command = {json.dumps(command)}")
        (folder / "bot.toml").write_text(toml)
        folders.append(folder)
    return folders


def tournament(out: Path, bots: list[Path], **settings):
    data = {"game": "nim-test", "seats": 2, "bots": [str(b) for b in bots], "seed": 5, "output": str(out),
            "limits": {"startup_s": 30, "decision_s": 10, "time_bank_s": 10, "memory_mb": 128}}
    data.update(settings)
    return validate_config(data)


# -- the slot pool ------------------------------------------------------------------------


def _ref(name: str) -> BotRef:
    return BotRef(id=name, name=name, version="1", folder="/nowhere", command=["true"], content_hash="ab" * 32)


def test_a_slot_is_the_first_free_one_of_its_bot_rotation_and_table_size():
    pool = SlotPool()
    ann = _ref("ann")
    first = pool.acquire("run1", ann, "0", 4)
    second = pool.acquire("run1", ann, "0", 4)  # the same bot in two games at once: two slots
    other_rotation = pool.acquire("run1", ann, "1", 4)
    assert first.name != second.name != other_rotation.name and first.name.endswith("-r0-p4-0")
    assert second.name.endswith("-r0-p4-1") and other_rotation.name.endswith("-r1-p4-0")
    pool.release(first)
    assert pool.acquire("run1", ann, "0", 4) is first  # k = the first free one
    assert pool.acquire("run2", ann, "0", 4).name.startswith("run2-")  # another run, other slots
    assert slot_name(("r", "bob#2", "cd" * 32, "3", 2), 0).startswith("r-bob_2-")


def test_the_rotation_of_a_game_comes_from_its_key():
    spec = dict(seed=1, game="nim-test", rules={}, bots=[], bot_seeds=[], limits={})
    assert rotation_of(GameSpec(key="00001-00002-3", deal="00001-00002", **spec)) == "3"
    assert rotation_of(GameSpec(key="any", deal="other", **spec)) == "0"


# -- the local sandbox's warm slots -------------------------------------------------------


def _hello(limits: Limits) -> Hello:
    info = LimitsInfo(startup_s=limits.startup_s, decision_s=limits.decision_s, time_bank_s=limits.time_bank_s,
                      max_line_bytes=limits.max_line_bytes, memory_mb=limits.memory_mb)
    return Hello(game="nim-test", players=2, rules={"stones": 10}, games=1, seed=1, limits=info)


def _early(tmp_path: Path, *args: str) -> BotSpec:
    [folder] = copies(tmp_path, "early", ["early"])
    return BotSpec(name="early", folder=folder, command=("python3", "bot.py", *args))


def _wait_for_spare(box: LocalSandbox, slot: str, quiet_s: float):
    """The slot's spare, once it has run for `quiet_s` seconds."""
    [spare] = box.spares().values()
    time.sleep(quiet_s)
    assert box.spares()[slot] is spare
    return spare


def test_a_process_started_ahead_of_need_has_seen_nothing_before_its_hello(tmp_path):
    box = LocalSandbox(warn=False)
    bot = _early(tmp_path, "wait=1")
    try:
        first = RemoteBot(bot, box, LIMITS, _hello(LIMITS), slot="s")
        first.ensure_started()
        spare = _wait_for_spare(box, "s", 2.0)  # it waited its one second for input, and more
        first.finish(MatchOver(games=0))
        second = RemoteBot(bot, box, LIMITS, _hello(LIMITS), slot="s")
        assert second.ensure_started() is spare  # running for 2 s: no interpreter to wait for
        assert "before hello: quiet" in spare.stderr_text()
        assert "before hello: quiet" not in first.logs()[0]  # the cold one got its hello at once
        second.finish(MatchOver(games=0))
    finally:
        box.close()


def test_the_start_up_limit_counts_from_when_the_game_asks(tmp_path):
    # A bot that takes 3 s before it reads anything: cold, it misses a 2 s start-up limit;
    # started ahead of need, the time it took before the game asked is not counted.
    limits = Limits(startup_s=2.0, decision_s=1, time_bank_s=1, memory_mb=128, cpu_s=30)
    box = LocalSandbox(warn=False)
    bot = _early(tmp_path, "sleep=3", "wait=0")
    try:
        cold = RemoteBot(bot, box, limits, _hello(limits), slot="s")
        with pytest.raises(BotFault) as late:
            cold.ensure_started()
        assert late.value.reason is Reason.TIMEOUT and "start-up limit of 2 s" in late.value.detail
        cold.finish(MatchOver(games=0))
        _wait_for_spare(box, "s", 4.0)
        warm = RemoteBot(bot, box, limits, _hello(limits), slot="s")
        warm.ensure_started()
        warm.finish(MatchOver(games=0))
    finally:
        box.close()


def test_a_spare_that_ended_while_it_waited_is_replaced_and_never_charged(tmp_path):
    box = LocalSandbox(warn=False)
    bot = _early(tmp_path, "wait=1", "exit-if-quiet")  # gone one second after it starts, unless spoken to
    try:
        first = RemoteBot(bot, box, LIMITS, _hello(LIMITS), slot="s")
        first.ensure_started()
        first.finish(MatchOver(games=0))
        spare = _wait_for_spare(box, "s", 2.5)
        assert spare.process.poll() is not None  # it ended while it waited
        second = RemoteBot(bot, box, LIMITS, _hello(LIMITS), slot="s")
        process = second.ensure_started()  # a fresh start, which answers its hello
        assert process is not spare and second.said_name == "early"
        second.finish(MatchOver(games=0))
    finally:
        box.close()


def test_close_kills_the_spares_and_removes_their_cgroups(tmp_path):
    box = LocalSandbox(warn=False)
    bot = _early(tmp_path, "wait=30")
    first = box.start(bot, LIMITS, slot="s")
    first.close()
    [spare] = box.spares().values()
    dirs = list(spare.cgroup.dirs) if spare.cgroup else []
    box.close()
    assert spare.process.poll() is not None and box.spares() == {}
    assert not any(path.exists() for path in dirs)


def test_a_changed_view_throws_the_spares_away(tmp_path):
    box = LocalSandbox(warn=False)
    bot = _early(tmp_path, "wait=30")
    try:
        box.start(bot, LIMITS, slot="s").close()
        [spare] = box.spares().values()
        box.hide_paths([tmp_path / "elsewhere"])  # the spare was started with the old view
        assert spare.process.poll() is not None and box.spares() == {}
        fresh = box.start(bot, LIMITS, slot="s")
        assert fresh is not spare
        fresh.close()
    finally:
        box.close()


# -- bot sessions: bot_process = "per-slot" ------------------------------------------------


def test_a_per_slot_bot_carries_memory_between_games_and_a_per_game_bot_cannot(tmp_path):
    bots = copies(tmp_path / "bots", "counter", ["ann", "bob", "cat"])
    run_tournament(tournament(tmp_path / "slot", bots, cycles=3, bot_process="per-slot"), report=False)
    by_bot = sightings_by_bot(tmp_path / "slot")
    assert sorted(by_bot) == ["ann", "bob", "cat"]
    for bot, seen in by_bot.items():
        # One game at a time, one rotation: one slot, one process for the whole run, which
        # counted its games; hello said how many games the bot has in the run.
        assert len({record["token"] for record in seen}) == 1, bot
        assert [record["games"] for record in seen] == [1, 2, 3, 4, 5, 6]
        assert [record["game_number"] for record in seen] == [1, 2, 3, 4, 5, 6]
        assert {record["hello_games"] for record in seen} == {6}
    run_tournament(tournament(tmp_path / "game", bots, cycles=3, bot_process="per-game"), report=False)
    seen = sightings(tmp_path / "game")
    assert len(seen) == 18 and len({record["token"] for record in seen}) == 18
    assert {(record["games"], record["game_number"], record["hello_games"]) for record in seen} == {(1, 1, 1)}
    assert results_of(tmp_path / "slot") == results_of(tmp_path / "game")
    assert all(not slot.busy for slot in SLOTS.slots()) and not any(slot.session for slot in SLOTS.slots())


def test_in_duplicate_play_no_process_sees_one_deal_twice(tmp_path):
    bots = copies(tmp_path / "bots", "counter", ["ann", "bob", "cat", "dan"])
    out = tmp_path / "out"
    # Two games at once in threads of this process (nim-test is registered only here): a
    # bot may hold two slots of one rotation.
    box = LocalSandbox(warn=False)
    config = tournament(out, bots, seats=3, duplicate=True, jobs=2, bot_process="per-slot", warm_start=True)
    run_tournament(config, report=False, sandbox=box)
    seen = sightings(out)
    assert len(seen) == 4 * 3 * 3  # C(4,3) tables, 3 rotations each, 3 seats
    # The deal of each secret, from the engine (every secret of the run is a different number).
    deal_of = {}
    for record in seen:
        state = NIM.new_game(3, {"stones": 10}, record["deal_seed"])
        for secret in state.secrets:
            assert deal_of.setdefault(secret, record["deal"]) == record["deal"]
    processes = defaultdict(list)
    for record in seen:
        assert deal_of[record["secret"]] == record["deal"]
        processes[record["token"]].append(deal_of[record["secret"]])
    assert max(len(deals) for deals in processes.values()) >= 3  # sessions did play many games
    for token, deals in processes.items():
        assert len(deals) == len(set(deals)), f"process {token} saw a deal twice: {deals}"


def test_a_crashed_session_process_is_replaced_for_the_next_game(tmp_path):
    [crashy] = copies(tmp_path / "bots", "counter", ["crashy"], ["python3", "bot.py", "crash=2"])
    steady = copies(tmp_path / "bots", "counter", ["ann"])
    out = tmp_path / "out"
    run_tournament(tournament(out, [crashy, *steady], cycles=5, bot_process="per-slot"), report=False)
    seen = [record for record in sightings(out) if record["bot"] == "crashy"]
    # Each process crashes in its second game; the next game starts a new one.
    assert [record["games"] for record in seen] == [1, 2, 1, 2, 1]
    tokens = [record["token"] for record in seen]
    assert tokens[0] == tokens[1] != tokens[2] == tokens[3] != tokens[4]
    incidents = [incidents for _, _, _, incidents in results_of(out).values()]
    assert incidents == [[], [("crashy", "CRASH")], [], [("crashy", "CRASH")], []]


def test_a_session_has_a_cpu_budget_per_game_not_per_run(tmp_path):
    # 0.5 s of CPU a game against a budget of 1 s a game: never over it, though the process
    # uses more than 1 s in all; 1.3 s in one game is over it (TIMEOUT), however fresh.
    thrifty = copies(tmp_path / "bots", "counter", ["thrifty"], ["python3", "bot.py", "burn=0.5"])
    greedy = copies(tmp_path / "bots", "counter", ["greedy"], ["python3", "bot.py", "burn=1.3"])
    out = tmp_path / "out"
    # Wall-clock limits far above the CPU: on a loaded machine a second of CPU takes many.
    limits = {"startup_s": 60, "decision_s": 60, "time_bank_s": 60, "memory_mb": 128, "cpu_s": 1}
    run_tournament(tournament(out, thrifty + greedy, cycles=2, bot_process="per-slot", limits=limits), report=False)
    incidents = [incidents for _, _, _, incidents in results_of(out).values()]
    assert incidents == [[("greedy", "TIMEOUT")], [("greedy", "TIMEOUT")]]
    with Store.open(out) as store:
        [(_, incident), _] = store.incidents()
        assert "of CPU in this game, over its budget of 1 s per game" in incident.detail
    thrifty_seen = [record for record in sightings(out) if record["bot"] == "thrifty"]
    assert len({record["token"] for record in thrifty_seen}) == 1 and len(thrifty_seen) == 2


def test_warm_and_cold_starts_and_sessions_give_the_same_results_for_one_run_key(tmp_path):
    bots = [ROOT / "bots" / "random", ROOT / "bots" / "threeup-heuristic", ROOT / "bots" / "node-simple"]
    if shutil.which("node") is None:
        bots = bots[:2] + [ROOT / "bots" / "random"]
    runs = {  # in worker processes (--jobs 2), and per-slot one game at a time: 2 games a session
        "cold": {"warm_start": False, "bot_process": "per-game", "jobs": 2},
        "warm": {"warm_start": True, "bot_process": "per-game", "jobs": 2},
        "slot": {"bot_process": "per-slot", "jobs": 1},
    }
    results = {}
    for name, settings in runs.items():
        config = tournament(tmp_path / name, bots, game="3up3down", seats=3, duplicate=True, cycles=2,
                            rules={"max_turns": 60}, **settings)
        run_tournament(config, report=False)
        results[name] = results_of(tmp_path / name)
    assert len(results["cold"]) == 6
    assert results["cold"] == results["warm"] == results["slot"]


# -- the settings ----------------------------------------------------------------------------


def test_bot_process_defaults_to_per_slot_locally_and_per_game_in_docker():
    base = {"game": "nim-test", "seats": 2}
    assert validate_config(base).bot_process == "per-slot"
    assert validate_config({**base, "sandbox": "docker"}).bot_process == "per-game"
    assert validate_config({**base, "sandbox": "docker", "bot_process": "per-slot"}).bot_process == "per-slot"
    assert validate_config(base).warm_start is True
    with pytest.raises(Exception, match="bot_process"):
        validate_config({**base, "bot_process": "per-match"})


def test_a_resume_with_another_bot_process_is_refused_but_not_with_another_warm_start(tmp_path):
    bots = copies(tmp_path / "bots", "counter", ["ann", "bob"])
    out = tmp_path / "out"
    run_tournament(tournament(out, bots, bot_process="per-slot"), report=False)
    with pytest.raises(SettingsChanged) as refused:
        run_tournament(tournament(out, bots, bot_process="per-game"), report=False)
    assert str(refused.value).endswith('Changed: bot_process: was "per-slot", now "per-game"')
    again = run_tournament(tournament(out, bots, bot_process="per-slot", warm_start=False), report=False)
    assert (again.played, again.resumed) == (0, 1)


def test_a_store_from_before_bot_process_resumes_as_per_game():
    old = {"game": "nim-test", "seats": 2, "sandbox": "local", "jobs": 1}
    assert fingerprint_of(old) == fingerprint_of({**old, "bot_process": "per-game", "warm_start": False})
    assert fingerprint_of(old) != fingerprint_of({**old, "bot_process": "per-slot"})


def test_a_per_slot_game_needs_each_bots_number_of_games(tmp_path):
    spec = GameSpec(key="k", deal="d", seed=1, game="nim-test", rules={"stones": 10}, bots=[_ref("a"), _ref("b")],
                    bot_seeds=[1, 2], limits={}, bot_process="per-slot")
    with pytest.raises(Exception, match="bot_games"):
        play_scheduled_game(spec)


def test_the_python_helper_reseeds_from_each_start_so_a_session_plays_each_game_as_a_fresh_process():
    import io
    import random

    from tests.arena_bot_helper import arena_bot
    hello = {"type": "hello", "protocol": 1, "game": "nim-test", "players": 2, "rules": {"stones": 5}, "games": 2,
             "seed": 42, "limits": {"startup_s": 1, "decision_s": 1, "time_bank_s": 1, "max_line_bytes": 100,
                                    "memory_mb": 64}}
    legal = [{"take": 1}, {"take": 2}, {"take": 3}]

    def game(number: int, seed: int | None) -> list[dict]:
        start = {"type": "start", "game_number": number, "seat": 0, "players": 2, "rules": {"stones": 5}}
        if seed is not None:
            start["seed"] = seed
        requests = [{"type": "request", "id": number * 10 + i, "observation": {}, "legal_actions": legal,
                     "time_s": 1.0, "bank_s": 1.0} for i in range(4)]
        return [start, *requests]

    def choices(*messages) -> list[int]:
        stdin = io.BytesIO(b"".join(json.dumps(message).encode() + b"\n" for message in messages))
        stdout = io.StringIO()
        arena_bot.run(lambda observation, legal_actions, ctx: ctx.rng.randrange(3), name="t", stdin=stdin,
                      stdout=stdout)
        return [json.loads(line)["index"] for line in stdout.getvalue().splitlines()[1:]]

    fresh = random.Random(7)
    assert choices(hello, *game(1, 11), *game(2, 7))[4:] == [fresh.randrange(3) for _ in range(4)]
    # A match's start has no seed: the helper goes on with hello's.
    once = random.Random(42)
    assert choices(hello, *game(1, None), *game(2, None)) == [once.randrange(3) for _ in range(8)]


@pytest.mark.parametrize("stopped", [False, True], ids=["finished", "stopped"])
def test_the_end_of_a_run_kills_the_spares_and_ends_the_sessions(tmp_path, stopped):
    import threading

    from arena.play.tournament import TournamentInterrupted

    bots = copies(tmp_path / "bots", "counter", ["ann", "bob", "cat"])
    box = LocalSandbox(warn=False)
    stop = threading.Event()
    spares_seen = []

    def watch(update) -> None:
        spares_seen.append(len(box.spares()))
        if stopped:
            stop.set()  # what Ctrl-C does in `arena run`

    config = tournament(tmp_path / "out", bots, bot_process="per-game", warm_start=True)
    if stopped:
        with pytest.raises(TournamentInterrupted):
            run_tournament(config, report=False, sandbox=box, progress=watch, stop=stop)
    else:
        run_tournament(config, report=False, sandbox=box, progress=watch)
    assert spares_seen[0] == 2  # both bots of the first game have their next process waiting
    assert box.spares() == {} and not any(slot.session or slot.busy for slot in SLOTS.slots())


def test_arena_run_flags_set_how_processes_live_and_a_wrong_one_is_one_mistake(tmp_path):
    from typer.testing import CliRunner

    from arena.cli.app import app

    bots = copies(tmp_path / "bots", "counter", ["ann", "bob"])
    common = ["run", "--game", "nim-test", "--seats", "2", "--seed", "3", "--quiet", "--out", str(tmp_path / "out"),
              *[arg for bot in bots for arg in ("--bots", str(bot))]]
    done = CliRunner().invoke(app, [*common, "--bot-process", "per-game", "--no-warm-start"])
    assert done.exit_code == 0, done.output
    with Store.open(tmp_path / "out") as store:
        settings = store.settings()
    assert (settings["bot_process"], settings["warm_start"]) == ("per-game", False)
    wrong = CliRunner().invoke(app, [*common, "--bot-process", "per-match"])  # arena's main prints it, exit 2
    assert str(wrong.exception) == "bot_process = \"per-match\": Input should be 'per-game' or 'per-slot'"
