"""Hostile bots (tests/bots/*) against both sandboxes: the game finishes, the incident
names the right reason, nothing the bot started outlives the match, and the well-behaved
bot beside it ("steady") is unaffected.

The docker half skips when no engine (or base image) is reachable, unless
ARENA_REQUIRE_DOCKER=1, in which case it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import uuid
from pathlib import Path

import pytest
from nimtest_game import nim_registered

from arena.faults import Reason
from arena.game.referee import verify_replay
from arena.play.match import MatchResult, run_match
from arena.sandbox import Limits
from tests.needs import need_runsc, sandbox_named

BOTS = Path(__file__).parents[1] / "bots"
# In every hostile bot's command line and its background child's: the copies say
# "arena-hostile-<this session>", so that other test runs on this host are not leftovers.
MARKER = f"arena-hostile-{uuid.uuid4().hex[:12]}".encode()
LIMITS = Limits(
    startup_s=5.0,
    decision_s=0.5,
    time_bank_s=0.5,
    memory_mb=64,
    pids=32,
    cpu_s=60,
    max_line_bytes=1 << 20,
    max_decision_bytes=4 << 20,
    stderr_keep_bytes=16 << 10,
)


@pytest.fixture(scope="module", autouse=True)
def nim():
    with nim_registered() as game:
        yield game


DOCKER_CASES = ("docker", "docker-warm", "docker-runsc")  # marked `docker`: not in the fast tier


class _WarmSlotPerBot:
    """The docker sandbox with a warm slot per bot, as a run asks for one (a fresh process
    per game in the bot's long-lived container); everything else is the sandbox's own."""

    def __init__(self, sandbox):
        self._sandbox = sandbox

    def __getattr__(self, name):
        return getattr(self._sandbox, name)

    def start(self, bot, limits, *, slot=None):
        return self._sandbox.start(bot, limits, slot=slot or bot.name)


@pytest.fixture(params=["local", *(pytest.param(name, marks=pytest.mark.docker) for name in DOCKER_CASES)])
def sandbox(request):
    """Each sandbox by name; docker skips without an engine unless ARENA_REQUIRE_DOCKER=1.
    "docker-runsc": the docker sandbox under gVisor's kernel (its slots start cold, so
    one case covers both designs there); skips without runsc, as docker does."""
    if request.param == "local":
        return sandbox_named("local")
    if request.param == "docker-runsc":
        need_runsc()
        return _WarmSlotPerBot(sandbox_named("docker", runtime="runsc"))
    box = sandbox_named("docker", runtime="runc")
    return _WarmSlotPerBot(box) if request.param == "docker-warm" else box


# Bots that only break the protocol: the referee judges them the same whatever kernel
# runs them, so they are not played again under runsc.
PROTOCOL_ONLY = pytest.mark.parametrize(
    "sandbox", ["local", *(pytest.param(name, marks=pytest.mark.docker) for name in DOCKER_CASES[:2])], indirect=True
)


def _copy(name: str, into: Path) -> Path:
    """A copy of a test bot that the container's user (nobody) can read."""
    target = into / name
    shutil.copytree(BOTS / name, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [into, target, *target.rglob("*")]:
        if path.is_file():
            path.write_bytes(path.read_bytes().replace(b"arena-hostile", MARKER))
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def _leftovers(sandbox) -> list[str]:
    """Processes whose command line carries the hostile marker; containers of our test bots."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if MARKER in cmdline and int(entry.name) != os.getpid():
                found.append(f"pid {entry.name}: {cmdline[:120]!r}")
    if sandbox.name == "docker":
        from arena.sandbox.docker import BOT_LABEL, OWNER_LABEL, owner_of_this_process

        # The engine's own listing: containers.list() would inspect each one, and fail when
        # another run's container goes meanwhile. Only this run's containers count.
        for container in sandbox.client.api.containers(all=True, filters={"label": BOT_LABEL}):
            labels = container.get("Labels") or {}
            if labels.get(BOT_LABEL) in HOSTILE_NAMES and labels.get(OWNER_LABEL) == owner_of_this_process():
                found.append(f"container {container['Id'][:12]} of {labels.get(BOT_LABEL)}")
    return found


HOSTILE_NAMES = {path.name for path in BOTS.iterdir() if path.is_dir()}


def play(tmp_path: Path, sandbox, hostile: str, games: int = 1, stones: int = 10, limits: Limits = LIMITS,
         prepare=None) -> MatchResult:
    """A match hostile vs steady (hostile in seat 0 of game 1), checked for leftovers."""
    folders = tmp_path / "bots"
    folders.mkdir()
    bad, good = _copy(hostile, folders), _copy("steady", folders)
    if prepare is not None:
        prepare(bad, good)
        for path in bad.rglob("*"):
            path.chmod(0o644)
    try:
        result = run_match(
            "nim-test", [bad, good], games=games, seed=11, sandbox=sandbox, rules={"stones": stones}, limits=limits
        )
    finally:
        sandbox.close()  # the end of a run: warm slots' containers go
    assert _leftovers(sandbox) == []
    assert len(result.games) == games
    for game in result.games:
        verify_replay(game)
        steady_seat = game.seats.index("steady")
        assert [i for i in game.incidents if i.bot == "steady"] == []
        assert all(step.by == "bot" for step in game.replay.actions if step.seat == steady_seat)
    return result


def _only_incident(result: MatchResult, reason: Reason):
    """The one incident of a one-game match, which must be the hostile bot's, with `reason`."""
    (game,) = result.games
    assert len(game.incidents) == 1, game.incidents
    (incident,) = game.incidents
    assert incident.bot != "steady" and incident.reason is reason, incident
    assert incident.forfeit and game.forfeits == [incident.seat]
    assert game.places[incident.seat] == 2 and game.places[1 - incident.seat] == 1
    return incident


def test_hang_before_handshake_is_a_startup_timeout(tmp_path, sandbox):
    limits = Limits(**{**LIMITS.__dict__, "startup_s": 1.5})
    incident = _only_incident(play(tmp_path, sandbox, "hang-before-handshake", limits=limits), Reason.TIMEOUT)
    assert "start-up limit of 1.5 s" in incident.detail and incident.decision == 0


def test_sleeping_past_the_limit_mid_game_is_a_timeout(tmp_path, sandbox):
    incident = _only_incident(play(tmp_path, sandbox, "slow-midgame"), Reason.TIMEOUT)
    assert incident.decision >= 2 and "gave no answer within" in incident.detail


@PROTOCOL_ONLY
def test_garbage_instead_of_json_is_invalid_json(tmp_path, sandbox):
    incident = _only_incident(play(tmp_path, sandbox, "garbage"), Reason.INVALID_JSON)
    assert "this is not json" in incident.detail


def test_a_100_mb_line_without_newline_is_an_output_limit(tmp_path, sandbox):
    incident = _only_incident(play(tmp_path, sandbox, "huge-line"), Reason.OUTPUT_LIMIT)
    assert "longer than 1048576 bytes" in incident.detail


def test_a_stderr_flood_is_drained_and_capped_without_a_fault(tmp_path, sandbox):
    result = play(tmp_path, sandbox, "stderr-flood", stones=24)
    assert result.games[0].incidents == []
    log = next(bot.log for bot in result.bots if bot.name == "stderr-flood")
    assert "bytes of log dropped" in log
    assert len(log.encode()) <= LIMITS.stderr_keep_bytes + 100


def test_exiting_mid_game_is_a_crash_with_the_exit_code_and_the_bot_restarts(tmp_path, sandbox):
    result = play(tmp_path, sandbox, "exit-midgame", games=2)
    for game in result.games:
        (incident,) = game.incidents
        assert incident.reason is Reason.CRASH and incident.detail == "exited with code 3"
        assert game.places[incident.seat] == 2
    assert next(bot.starts for bot in result.bots if bot.name == "exit-midgame") == 2


def test_a_fork_bomb_is_held_by_the_pids_limit_and_times_out(tmp_path, sandbox):
    if sandbox.name == "local":
        from arena.sandbox.cgroups import BotCgroup

        probe, notes = BotCgroup.create(LIMITS)
        if probe is None or any("pids" in note for note in notes):
            pytest.skip(f"no pids cgroup here, a fork bomb would hurt the machine: {notes}")
        probe.remove()
    if getattr(sandbox, "runtime", "runc") == "runsc":
        # gVisor copies more of a forked Python (~3 MB each, ~0.2 MB under runc): its 32
        # processes may reach the 64 MB first (an OOM kill, which the engine under runsc
        # does not always flag: a SIGKILL then). Either way it forfeits, and the host holds.
        result = play(tmp_path, sandbox, "fork-bomb")
        (incident,) = result.games[0].incidents
        assert incident.bot == "fork-bomb" and incident.forfeit
        assert incident.reason in (Reason.TIMEOUT, Reason.OUT_OF_MEMORY) or (
            incident.reason is Reason.CRASH and incident.detail == "was killed by signal SIGKILL"
        ), incident
        return
    _only_incident(play(tmp_path, sandbox, "fork-bomb"), Reason.TIMEOUT)


def test_unbounded_memory_is_out_of_memory(tmp_path, sandbox):
    if getattr(sandbox, "runtime", "runc") == "runsc":
        # The engine leaves some out-of-memory kills under runsc unflagged: a SIGKILL then.
        (incident,) = play(tmp_path, sandbox, "memory-hog").games[0].incidents
        assert incident.bot == "memory-hog" and incident.forfeit
        assert (incident.reason, incident.detail) in (
            (Reason.OUT_OF_MEMORY, "was killed for using more than 64 MB"),
            (Reason.CRASH, "was killed by signal SIGKILL"),
        ), incident
        return
    incident = _only_incident(play(tmp_path, sandbox, "memory-hog"), Reason.OUT_OF_MEMORY)
    assert "64 MB" in incident.detail


def _outward_address() -> str:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent; picks the outward interface
        return probe.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        probe.close()


def test_a_network_socket_reaches_nothing(tmp_path, sandbox):
    if sandbox.name == "local" and not sandbox.isolate:
        pytest.skip("no `unshare -n` here: the local sandbox cannot take the network away")
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 0))
    listener.listen()
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(listener.accept())
            except OSError:
                pass

    watcher = threading.Thread(target=accept, daemon=True)
    watcher.start()
    targets = [["127.0.0.1", port], [_outward_address(), port], ["172.17.0.1", port]]
    try:
        result = play(
            tmp_path, sandbox, "network",
            prepare=lambda bad, good: (bad / "targets.json").write_text(json.dumps(targets)),
        )
    finally:
        stop.set()
        watcher.join()
        listener.close()
    assert accepted == []
    assert result.games[0].incidents == []
    log = next(bot.log for bot in result.bots if bot.name == "network")
    assert "REACHED" not in log and log.count("no network to") == len(targets)


def test_another_bots_folder_cannot_be_read(tmp_path, sandbox):
    def victims(bad: Path, good: Path) -> None:
        (bad / "victims.json").write_text(json.dumps(["../steady/bot.toml", str(good / "bot.toml")]))

    result = play(tmp_path, sandbox, "read-other", prepare=victims)
    assert result.games[0].incidents == []
    log = next(bot.log for bot in result.bots if bot.name == "read-other")
    assert "READ" not in log and log.count("cannot read") == 2


def test_background_children_do_not_outlive_the_match(tmp_path, sandbox):
    result = play(tmp_path, sandbox, "background")  # play() asserts no marked process is left
    assert result.games[0].incidents == []


@PROTOCOL_ONLY
def test_an_illegal_action_is_illegal_action(tmp_path, sandbox):
    incident = _only_incident(play(tmp_path, sandbox, "illegal"), Reason.ILLEGAL_ACTION)
    assert incident.detail == 'chose {"take": 99}, which is not one of the 3 legal actions'


@PROTOCOL_ONLY
def test_answering_out_of_turn_is_a_bad_message(tmp_path, sandbox):
    incident = _only_incident(play(tmp_path, sandbox, "out-of-turn"), Reason.BAD_MESSAGE)
    assert "out of turn" in incident.detail and incident.decision >= 1
