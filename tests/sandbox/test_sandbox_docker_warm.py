"""Warm slots of the docker sandbox: one container per slot, a fresh process per start,
confined as a cold container's bot (read from inside), nothing of one process reaching
the next (the residue probe), faults charged to the bot only when it caused them, and
the containers removed at close, at interpreter exit and after a kill -9.

Tests that need an engine skip when none is reachable (or arena is not root), unless
ARENA_REQUIRE_DOCKER=1: tests/sandbox/conftest.py.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arena.faults import BotFault, Reason, SandboxError
from arena.sandbox import BotSpec, Limits
from arena.sandbox.copies import COPIES
from arena.sandbox.uids import DEFAULT
from arena.sandbox.docker import (
    LABEL,
    LAUNCHER_CAPS,
    LAUNCHER_USER,
    OWNER_LABEL,
    SLOT_LABEL,
    DockerBotProcess,
    DockerSandbox,
    WarmBotProcess,
)
from arena.sandbox.docker import warm as warm_module
from tests.bot_folders import code_bot
from tests.sandbox_helpers import exists
from tests.needs import need_runsc

BOTS = Path(__file__).parents[1] / "bots"
LIMITS = Limits(startup_s=20, memory_mb=96, cpus=0.5, pids=32, file_size_mb=4, open_files=48)
ECHO = """
import os, sys
for line in sys.stdin:
    sys.stdout.write(line.strip() + " " + str(os.getpid()) + "\\n")
    sys.stdout.flush()
"""


@pytest.fixture(scope="module")
def engine(warm_engine):  # every Docker test here has warm slots (tests/sandbox/conftest.py)
    return warm_engine


make_bot = functools.partial(code_bot, name="warm")  # a bot from bot.py's code (tests/bot_folders.py)


def residue_bot(tmp_path: Path) -> BotSpec:
    folder = tmp_path / "residue"
    shutil.copytree(BOTS / "residue", folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return BotSpec(name="residue", folder=folder, command=("python3", "bot.py"))


def ask(process, *request) -> object:
    process.send_line(json.dumps(request).encode())
    return json.loads(process.receive_line(LIMITS.startup_s))


def test_a_slot_keeps_one_container_and_starts_a_fresh_process_in_it_each_time(engine, sandbox, tmp_path):
    bot = make_bot(tmp_path / "echo", ECHO)
    seen = []
    for turn in range(3):
        process = sandbox.start(bot, LIMITS, slot="echo#0")
        assert isinstance(process, WarmBotProcess) and process.stdio == "fifo"
        process.send_line(f"turn {turn}".encode())
        text, pid = process.receive_line(LIMITS.startup_s).decode().rsplit(" ", 1)
        assert text == f"turn {turn}"
        seen.append((process.id, process.exec_id, process.pid))
        assert process.close() is None
    assert len({container for container, _, _ in seen}) == 1
    assert len({exec_id for _, exec_id, _ in seen}) == 3
    assert len({pid for _, _, pid in seen}) == 3
    other = sandbox.start(bot, LIMITS, slot="echo#1")  # another slot: another container
    assert other.id != seen[0][0]
    other.close()
    sandbox.close()
    assert not exists(engine, seen[0][0]) and not exists(engine, other.id)


def test_a_warm_container_has_the_cold_ones_limits_and_its_keepers_another_uid(engine, sandbox, tmp_path):
    bot = make_bot(tmp_path / "echo", ECHO, name="Echo Bot")
    warm = sandbox.start(bot, LIMITS, slot="s")
    cold = sandbox.start(bot, LIMITS)
    try:
        assert isinstance(cold, DockerBotProcess)
        warm.container.reload()
        cold.container.reload()
        warm_host, cold_host = dict(warm.container.attrs["HostConfig"]), dict(cold.container.attrs["HostConfig"])
        # Each container reads a private copy of the bot's folder (arena.sandbox.copies).
        copy = sandbox._slots._slots["s"].home.copy.path
        assert warm_host.pop("Binds") == [f"{copy}:/bot:ro", f"{warm.io_dir}:/arena-io:ro"]
        cold_copy = cold.held[0].path
        assert cold_host.pop("Binds") == [f"{cold_copy}:/bot:ro", f"{cold.io_dir}:/arena-io:ro"]
        assert copy.parent == cold_copy.parent == COPIES and copy != cold_copy
        # The launcher may become nobody, empty its capability sets and make a game's
        # network and IPC namespaces, nothing more; the bot's process has none of them,
        # nor the system calls CAP_SYS_ADMIN adds to the engine's filter (read from inside
        # in the next test).
        assert warm_host.pop("CapAdd") == LAUNCHER_CAPS == [
            "SETUID", "SETGID", "SETPCAP", "SYS_ADMIN", "NET_ADMIN"]
        assert cold_host.pop("CapAdd") is None
        assert warm_host == cold_host  # every limit, the same
        config = warm.container.attrs["Config"]
        assert config["User"] == LAUNCHER_USER != cold.container.attrs["Config"]["User"]
        # arena's own static binary, from the slot's read-only folder: nothing of the image
        assert config["Entrypoint"] == ["/arena-io/arena-launcher"]
        assert config["Cmd"] == ["python3", "bot.py"]
        assert config["Labels"][SLOT_LABEL] == "s"
        assert config["Labels"][LABEL] == "docker"
        assert config["Labels"][OWNER_LABEL].split(":")[1] == str(os.getpid())
        assert warm.container.attrs["Name"].startswith("/arena-echo-bot-warm-")
        # The bot's process runs as the container's leased uid, its own two as root (and the bot's
        # monitor: the launcher's child, which waits for it).
        uids = {
            pid: int(Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split()[0])
            for pid in warm.home.cgroup.pids()
        }
        keeper = 0
        monitors = {pid: keeper for pid in uids if pid not in warm.home.keepers and pid != warm.pid}
        assert len(monitors) == 1
        assert uids == {**{pid: keeper for pid in warm.home.keepers}, **monitors, warm.pid: warm.home.lease.uid}
        assert warm.home.lease.uid in DEFAULT
    finally:
        warm.close()
        cold.close()


def test_a_warm_process_is_confined_as_a_cold_one_read_from_inside(sandbox, tmp_path):
    bot = residue_bot(tmp_path)
    warm = sandbox.start(bot, LIMITS, slot="residue")
    cold = sandbox.start(bot, LIMITS)
    try:
        inside_warm, inside_cold = ask(warm, "confinement"), ask(cold, "confinement")
    finally:
        warm.close()
        cold.close()
    status = inside_warm["status"]
    uid = status["Uid"][0]
    assert status["Uid"] == status["Gid"] == [uid] * 4 and int(uid) in DEFAULT
    assert status["Groups"] == [uid]
    assert inside_cold["status"]["Uid"][0] != uid  # each container a uid of its own
    for capabilities in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert status[capabilities] == ["0000000000000000"]
    assert status["NoNewPrivs"] == ["1"] and status["Seccomp"] == ["2"]
    assert inside_warm["limits"] == {
        "Max cpu time": ["600", "600"],  # per process: per game, when a process plays one game
        "Max file size": [str(4 << 20)] * 2,
        "Max open files": ["48", "48"],
        "Max core file size": ["0", "0"],
    }
    assert inside_warm["cgroup"] == {
        "memory": str(96 << 20),
        "memory+swap": str(96 << 20),
        "pids": "32",
        "cpu_quota": "50000",
    }
    assert inside_warm["tmp"].startswith("rw,nosuid,nodev,noexec") and "size=4096k" in inside_warm["tmp"]
    assert inside_warm["root"] == "ro"
    assert inside_warm["interfaces"] == ["lo"]
    assert inside_warm["write /"] == inside_warm["write /bot"] == inside_warm["write /arena-io"] == "EROFS"
    assert inside_warm["connect off the machine"] == "ENETUNREACH"
    assert inside_warm["kernel keyring"] == "EPERM"  # the engine's seccomp profile
    # What CAP_SYS_ADMIN in the container (the launcher's) adds to the engine's filter is
    # taken away again by the launcher's own filter: as in a cold container.
    for call in ("new user namespace", "mount", "clone a new user namespace", "setns", "bpf",
                 "perf_event_open"):
        assert (call, inside_warm[call]) == (call, "EPERM")
    assert inside_warm["clone3"] == "ENOSYS"
    # io_uring: denied by the launcher's filter, as Docker's default profile denies it
    # since Docker 25 (this host's engine may be older, and allow it in a cold container).
    for call in ("io_uring_setup", "io_uring_enter", "io_uring_register"):
        assert (call, inside_warm[call]) == (call, "EPERM")
        inside_cold.pop(call)
        inside_warm.pop(call)
    assert (inside_warm["HOME"], inside_warm["cwd"]) == ("/tmp", "/bot")
    # The container's init is another uid: the bot can neither signal nor trace it (in a
    # cold container it may: its init is of its own uid, and ends with it anyway).
    assert inside_warm["signal process 1"] == inside_warm["ptrace process 1"] == "EPERM"
    # Nothing of the launcher's is open in the bot, nor can it open its pipes, nor even see
    # it (or the monitor that waits for the bot) in /proc (hidepid=2): all are root's.
    assert inside_warm["open files"] == inside_cold["open files"] == [0, 1, 2, 3]  # 3: the listing
    assert inside_warm["open the launcher's pipes"] == {"launch": "EACCES", "status": "EACCES"}
    assert inside_warm["signal another uid's process"] == inside_cold["signal another uid's process"] == []
    for differs in ("signal process 1", "ptrace process 1", "open the launcher's pipes"):
        inside_warm.pop(differs)
        inside_cold.pop(differs)
    for ids in ("Uid", "Gid", "Groups"):  # each container's own uid: the same kind, not the same number
        inside_warm["status"].pop(ids)
        inside_cold["status"].pop(ids)
    assert inside_warm == inside_cold


EVERYTHING_PLANTED = {
    "files": {
        place: sorted(
            ["folder-t1", "link-t1", "pipe-t1", "residue-t1"]
            + (["sem.residue-t1"] if place == "/dev/shm" else [])
        )
        for place in ("/tmp", "/dev/shm")
    }
    # The queue is in the process's own IPC namespace, not the container's (/dev/mqueue).
    | {"/dev/mqueue": []},
    "mqueue": "ok",
    "environment": "t1",
    "sockets": {"abstract": "ok", "tcp": "ok"},
}
NOTHING = {
    "files": {"/tmp": [], "/dev/shm": [], "/dev/mqueue": []},
    "sysv": {"shm": [], "sem": [], "msg": []},
    "mqueue": "ENOENT",
    "processes": [],
    "environment": None,
    "sockets": {"abstract": "ECONNREFUSED", "tcp": "ECONNREFUSED"},
}


def plant_everything(sandbox, bot: BotSpec) -> tuple[str, dict, dict]:
    """The first process of a fresh container looks (and finds nothing), then plants."""
    process = sandbox.start(bot, LIMITS, slot="residue")
    container = process.id
    fresh = ask(process, "look", "t1")
    assert {key: fresh[key] for key in NOTHING} == NOTHING
    planted = ask(process, "plant", "t1")
    process.close()
    assert {key: planted[key] for key in EVERYTHING_PLANTED} == EVERYTHING_PLANTED
    assert [len(planted["sysv"][kind]) for kind in ("shm", "sem", "msg")] == [1, 1, 1]
    # the background child and the detached grandchild
    assert len(planted["processes"]) == 2
    # what it counted up: a successor would find other numbers than the first process did
    assert planted["pid"] == fresh["pid"]
    assert all(planted["inodes"][place] > fresh["inodes"][place] + 30 for place in fresh["inodes"])
    assert fresh["tcp"] == [] and any(row.split()[2] == "0A" for row in planted["tcp"])  # listening
    return container, fresh, planted


def test_nothing_a_process_leaves_behind_reaches_the_next_in_its_warm_container(sandbox, tmp_path):
    bot = residue_bot(tmp_path)
    container, fresh, _ = plant_everything(sandbox, bot)
    after = sandbox.start(bot, LIMITS, slot="residue")
    try:
        assert after.id == container  # the same warm container
        # Nothing, and not even a count: the same pid and inode numbers as the first process.
        assert ask(after, "look", "t1") == fresh
    finally:
        after.close()


def test_the_residue_probe_finds_what_a_skipped_reset_leaves(sandbox, tmp_path, monkeypatch):
    """The control of the test above: without the reset the next process finds it all."""
    monkeypatch.setattr(warm_module.WarmContainer, "reset", lambda self, names=None: None)
    bot = residue_bot(tmp_path)
    container, fresh, planted = plant_everything(sandbox, bot)
    after = sandbox.start(bot, LIMITS, slot="residue")
    try:
        assert after.id == container
        found = ask(after, "look", "t1")
    finally:
        after.close()
    assert found["pid"] > planted["pid"] + 30
    assert all(found["inodes"][place] > planted["inodes"][place] for place in fresh["inodes"])
    assert found["files"] == EVERYTHING_PLANTED["files"]
    assert sorted(pid for pid, _, _ in found["processes"]) == sorted(
        pid for pid, _, _ in planted["processes"]
    )
    assert found["environment"] is None  # every process starts from the container's environment
    # Even without the reset, what lives in a network or IPC namespace stays in the last
    # game's: each process gets fresh ones from the launcher.
    assert found["sysv"] == NOTHING["sysv"] and found["mqueue"] == "ENOENT"
    assert found["sockets"] == NOTHING["sockets"] and found["tcp"] == []


def test_the_reset_runs_after_close_and_start_waits_only_for_it(sandbox, tmp_path, monkeypatch):
    bot = make_bot(tmp_path / "echo", ECHO)
    release = threading.Event()
    resetting = threading.Event()
    real_reset = warm_module.WarmContainer.reset

    def slow_reset(self, names=None):
        resetting.set()
        release.wait(30)
        real_reset(self, names)

    monkeypatch.setattr(warm_module.WarmContainer, "reset", slow_reset)
    first = sandbox.start(bot, LIMITS, slot="s")
    first.send_line(b"one")
    first.receive_line(LIMITS.startup_s)
    first.close()  # returns with the reset still to do
    assert resetting.wait(10) and not release.is_set()
    started = []
    waiter = threading.Thread(target=lambda: started.append(sandbox.start(bot, LIMITS, slot="s")))
    waiter.start()
    waiter.join(0.5)
    assert waiter.is_alive() and started == []  # waits for the reset
    release.set()
    waiter.join(30)
    (second,) = started
    second.send_line(b"two")
    assert second.receive_line(LIMITS.startup_s).startswith(b"two ")
    second.close()


def test_out_of_memory_is_the_processes_own_and_the_slot_goes_on(sandbox, tmp_path):
    hog = make_bot(
        tmp_path / "hog",
        """
        import sys
        if input() == "eat":
            blocks = []
            while True:
                blocks.append(bytearray(8 << 20))
        print("fine", flush=True)
        input()
        """,
    )
    process = sandbox.start(hog, LIMITS, slot="hog")
    container = process.id
    process.send_line(b"eat")
    with pytest.raises(BotFault) as fault:
        process.receive_line(20)
    assert fault.value.reason is Reason.OUT_OF_MEMORY and "96 MB" in fault.value.detail
    assert process.close() is Reason.OUT_OF_MEMORY
    # The next process of the slot is counted from its own start: it did nothing wrong.
    process = sandbox.start(hog, LIMITS, slot="hog")
    assert process.id == container
    process.send_line(b"rest")
    assert process.receive_line(LIMITS.startup_s) == b"fine"
    assert process.close() is None


@pytest.mark.parametrize(
    ("ending", "detail"),
    [
        ("sys.exit(3)", "exited with code 3"),
        ("os.kill(os.getpid(), signal.SIGSEGV)", "was killed by signal SIGSEGV"),
    ],
)
def test_a_bot_ending_mid_game_is_a_crash_with_its_code_or_signal(sandbox, tmp_path, ending, detail):
    code = f"import os, signal, sys\nprint('ready', flush=True)\ninput()\nprint('last words', file=sys.stderr)\n{ending}\n"
    process = sandbox.start(make_bot(tmp_path / "quitter", code), LIMITS, slot="q")
    assert process.receive_line(LIMITS.startup_s) == b"ready"
    process.send_line(b"your turn")
    with pytest.raises(BotFault) as fault:
        process.receive_line(10)
    assert (fault.value.reason, fault.value.detail) == (Reason.CRASH, detail)
    assert "last words" in process.stderr_text()
    assert process.close() is None


def test_closing_stdout_while_running_is_a_crash_and_silence_a_timeout(sandbox, tmp_path):
    closer = make_bot(tmp_path / "closer", "import os, time\nos.close(1)\ntime.sleep(600)\n")
    process = sandbox.start(closer, LIMITS, slot="closer")
    with pytest.raises(BotFault) as fault:
        process.receive_line(10)
    assert (fault.value.reason, fault.value.detail) == (Reason.CRASH, "closed its stdout but kept running")
    process.close()
    sleeper = make_bot(tmp_path / "sleeper", "import time\ntime.sleep(600)\n")
    process = sandbox.start(sleeper, LIMITS, slot="sleeper")
    began = time.monotonic()
    with pytest.raises(BotFault) as fault:
        process.receive_line(0.5)
    assert fault.value.reason is Reason.TIMEOUT and 0.5 <= time.monotonic() - began < 2.0
    with pytest.raises(BotFault) as fault:
        process.receive_line(0.0)
    assert fault.value.reason is Reason.TIMEOUT
    assert process.close() is None and process.close() is None
    with pytest.raises(SandboxError, match="already closed"):
        process.receive_line(1)


def test_a_container_killed_from_outside_is_not_the_bots_fault_and_is_replaced(engine, sandbox, tmp_path):
    bot = make_bot(tmp_path / "echo", ECHO)
    process = sandbox.start(bot, LIMITS, slot="s")
    process.send_line(b"hello")
    process.receive_line(LIMITS.startup_s)
    engine.api.kill(process.id)
    with pytest.raises(SandboxError, match="killed from outside"):
        process.send_line(b"again")
        process.receive_line(10)
    process.close()
    replacement = sandbox.start(bot, LIMITS, slot="s")
    assert replacement.id != process.id
    replacement.send_line(b"fresh")
    assert replacement.receive_line(LIMITS.startup_s).startswith(b"fresh ")
    replacement.close()
    assert not exists(engine, process.id)
    assert sandbox._slots.replaced == 1


def test_slots_start_cold_when_asked_to_and_a_slot_keeps_its_bot(engine, tmp_path):
    bot = make_bot(tmp_path / "echo", ECHO)
    for sandbox in (DockerSandbox(warm=False), DockerSandbox(stdio="attach")):
        process = sandbox.start(bot, LIMITS, slot="s")
        assert isinstance(process, DockerBotProcess)
        process.close()
        assert sandbox.warm_reason(sandbox.image) is not None
        sandbox.close()
    sandbox = DockerSandbox()
    try:
        assert isinstance(sandbox.start(bot, LIMITS), DockerBotProcess)  # slot=None: cold
        process = sandbox.start(bot, LIMITS, slot="s")
        with pytest.raises(SandboxError, match="already runs a process"):
            sandbox.start(bot, LIMITS, slot="s")
        process.close()
        with pytest.raises(SandboxError, match="always runs one bot"):
            sandbox.start(make_bot(tmp_path / "other", ECHO, name="other"), LIMITS, slot="s")
    finally:
        sandbox.close()


def test_under_runsc_slots_start_cold_and_say_why_and_each_game_has_a_fresh_kernel(engine, tmp_path):
    need_runsc()
    bot = residue_bot(tmp_path)
    sandbox = DockerSandbox(runtime="runsc")
    try:
        assert "gVisor" in sandbox.warm_reason(sandbox.image)
        first = sandbox.start(bot, LIMITS, slot="s")
        assert isinstance(first, DockerBotProcess)
        fresh = ask(first, "look", "t1")
        ask(first, "plant", "t1")
        first.close()
        second = sandbox.start(bot, LIMITS, slot="s")
        assert isinstance(second, DockerBotProcess) and second.id != first.id
        found = ask(second, "look", "t1")
        second.close()
        # what a process left, and every count it pushed up, is gone with its container
        for key in ("files", "sysv", "mqueue", "processes", "environment", "sockets", "pid", "inodes"):
            assert (key, found[key]) == (key, fresh[key])
    finally:
        sandbox.close()


RUN_THEN = """
import os, signal, sys, time
from pathlib import Path
from arena.sandbox import BotSpec, Limits
from arena.sandbox.docker import DockerSandbox
process = DockerSandbox().start(BotSpec("orphan", Path(sys.argv[1]), ("python3", "bot.py")), Limits(), slot="s")
print(process.id, process.io_dir, flush=True)
if sys.argv[2] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)  # no close(), no atexit: a killed run
time.sleep(120)  # until Ctrl-C
"""


@pytest.mark.parametrize("ending", ["ctrl-c", "kill"])
def test_warm_containers_go_at_ctrl_c_and_after_a_kill(engine, sandbox, tmp_path, ending):
    folder = make_bot(tmp_path / "orphan", ECHO).folder
    run = subprocess.Popen(
        [sys.executable, "-c", RUN_THEN, str(folder), ending],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    container, io_dir = run.stdout.readline().split()
    if ending == "ctrl-c":
        assert exists(engine, container)
        run.send_signal(signal.SIGINT)
    _, errors = run.communicate(timeout=120)
    if ending == "kill":
        assert run.returncode == -signal.SIGKILL, errors
        # (Any other arena run on this engine may clean it up first: what counts is that it goes.)
        sandbox.cleanup_leftovers()  # what the next run does first
    else:
        assert "KeyboardInterrupt" in errors
    assert not exists(engine, container)
    assert not Path(io_dir).exists()


def test_prepare_makes_a_slots_container_ahead_and_its_first_start_uses_it(engine, sandbox, tmp_path):
    bot = make_bot(tmp_path / "echo", ECHO)
    sandbox.prepare(bot, LIMITS, slot="ahead")
    made = sandbox._slots._slots["ahead"]
    made.pending.result(timeout=60)  # made on the worker, while the caller goes on
    assert exists(engine, made.home.id)
    process = sandbox.start(bot, LIMITS, slot="ahead")
    assert process.id == made.home.id
    process.send_line(b"first")
    assert process.receive_line(LIMITS.startup_s).startswith(b"first ")
    process.close()
    sandbox.prepare(bot, LIMITS, slot="ahead")  # a slot with a container: nothing to do
    assert sandbox._slots._slots["ahead"] is made


def test_the_stderr_a_warm_bot_wrote_before_each_answer_belongs_to_that_decision(sandbox, tmp_path):
    code = """
    import sys
    for number, line in enumerate(sys.stdin):
        print(f"thinking about {number}", file=sys.stderr, flush=True)
        print(f"answer {number}", flush=True)
    """
    process = sandbox.start(make_bot(tmp_path / "talker", code), LIMITS, slot="talker")
    try:
        # Asked at once, before the bot's shell has opened its end of the stderr pipe: a read
        # then would see an end of file (and the bot would hang opening its stderr).
        assert [process.stderr_mark() for _ in range(100)] == [0] * 100
        for number in range(3):
            mark = process.stderr_mark()
            process.send_line(b"go")
            assert process.receive_line(LIMITS.startup_s) == f"answer {number}".encode()
            assert process.stderr_since(mark) == f"thinking about {number}\n"
    finally:
        process.close()
    assert process.stderr_text() == "".join(f"thinking about {n}\n" for n in range(3))


def test_reading_stderr_before_the_bot_has_opened_it_keeps_arenas_end(tmp_path):
    """A pipe's read before any writer came is an end of file: arena must not take it for
    one, or the bot's shell blocks forever opening its stderr (no reader left)."""
    import select

    from arena.sandbox.common import StderrLog

    os.mkfifo(tmp_path / "err")
    ours = os.open(tmp_path / "err", os.O_RDONLY | os.O_NONBLOCK)
    process = WarmBotProcess.__new__(WarmBotProcess)  # just its stderr side
    process._closed, process._err_fd, process._stderr = False, ours, StderrLog(1000)
    process._reading = select.poll()
    process._reading.register(ours, select.POLLIN)
    try:
        assert process.stderr_mark() == 0
        bots_end = os.open(tmp_path / "err", os.O_WRONLY | os.O_NONBLOCK)  # ENXIO without a reader
        os.write(bots_end, b"late words\n")
        os.close(bots_end)
        assert process.stderr_since(0) == "late words\n"
    finally:
        if process._err_fd is not None:
            os.close(process._err_fd)


def test_with_the_launcher_no_start_but_a_slot_s_first_asks_the_engine_anything(engine, sandbox, tmp_path):
    bot = make_bot(tmp_path / "echo", ECHO)
    first = sandbox.start(bot, LIMITS, slot="s")
    api = sandbox.client.api
    asked = []
    real = {name: getattr(api, name) for name in ("_get", "_post", "_delete")}

    def counting(name):
        def call(*args, **kwargs):
            asked.append((name, args[0] if args else None))
            return real[name](*args, **kwargs)
        return call

    for name in real:
        setattr(api, name, counting(name))
    seen = [(first.pid, first.exec_id)]
    try:
        first.close()
        for turn in range(3):
            process = sandbox.start(bot, LIMITS, slot="s")
            process.send_line(f"turn {turn}".encode())
            assert process.receive_line(LIMITS.startup_s).startswith(f"turn {turn} ".encode())
            seen.append((process.pid, process.exec_id))
            assert process.id == first.id
            process.close()
    finally:
        for name, method in real.items():
            setattr(api, name, method)
    assert asked == []
    assert [exec_id for _, exec_id in seen] == ["launch-1", "launch-2", "launch-3", "launch-4"]
    assert len({pid for pid, _ in seen}) == 4  # a fresh process each time


def test_a_bot_ending_on_its_own_under_the_launcher_has_its_own_exit_code(sandbox, tmp_path):
    bot = make_bot(tmp_path / "quits", "import sys\nsys.stdin.readline()\nsys.exit(7)\n")
    for _ in range(2):  # the second from the slot's launcher after a reset, as the first
        process = sandbox.start(bot, LIMITS, slot="quits")
        process.send_line(b"go")
        with pytest.raises(BotFault) as fault:
            process.receive_line(LIMITS.startup_s)
        assert fault.value.reason is Reason.CRASH and "7" in str(fault.value)
        process.close()


def test_a_launcher_killed_from_outside_is_not_the_bots_fault_and_is_replaced(engine, sandbox, tmp_path):
    bot = make_bot(tmp_path / "echo", ECHO)
    process = sandbox.start(bot, LIMITS, slot="s")
    process.send_line(b"hello")
    process.receive_line(LIMITS.startup_s)
    launcher = [pid for pid in process.home.keepers if pid != min(process.home.keepers)]
    assert len(launcher) == 1
    os.kill(launcher[0], signal.SIGKILL)
    process.close()
    replacement = sandbox.start(bot, LIMITS, slot="s")
    try:
        assert replacement.id != process.id
        replacement.send_line(b"fresh")
        assert replacement.receive_line(LIMITS.startup_s).startswith(b"fresh ")
    finally:
        replacement.close()
    # The init ends with its only child: the reset finds the keepers gone, or the container's
    # namespaces gone with them, whichever it meets first.
    assert sandbox._slots.replaced == 1
    assert any(why in sandbox._slots.last_replacement for why in ("gone", "could not reset it"))


