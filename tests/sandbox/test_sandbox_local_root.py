"""The local sandbox when arena runs as root: what a bot cannot reach from inside.

Each test starts the probe (tests/bots/probe) and has it try one thing: run as root,
reach a daemon's socket (Docker's), write a host file, read another bot's folder (beside
it, in a registry, through /proc/<pid>/cwd or /proc/self/root), read the run's output,
or share /tmp with another bot. The bots' folders sit outside /tmp (every bot has a
/tmp of its own, which would hide them anyway). Skipped without root or namespaces.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.sandbox import BotSpec, Limits
from arena.sandbox.local import LocalBotProcess, LocalSandbox, unshare_works
from arena.sandbox.uids import DEFAULT, VARIABLE

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not unshare_works(),
    reason="needs root and namespaces: only then does the local sandbox run bots as nobody in their own view",
)

PROBE = Path(__file__).parents[1] / "bots" / "probe"
PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")  # one that nobody can run
LIMITS = Limits(startup_s=5, decision_s=2, time_bank_s=2, memory_mb=128, pids=16, cpu_s=30)


def install(folder: Path) -> BotSpec:
    """The probe copied into `folder` (made with its parents, open to others)."""
    folder.mkdir(parents=True, mode=0o755)
    shutil.copy(PROBE / "bot.py", folder / "bot.py")
    (folder / "bot.py").chmod(0o644)
    return BotSpec(name=folder.name, folder=folder, command=(PYTHON, "bot.py"))


class Probe:
    """A running probe: `ask` sends one request and returns its answer."""

    def __init__(self, process: LocalBotProcess):
        self.process = process

    def ask(self, *request):
        self.process.send_line(json.dumps(request).encode())
        return json.loads(self.process.receive_line(5))


@contextmanager
def running(sandbox: LocalSandbox, spec: BotSpec) -> Iterator[Probe]:
    process = sandbox.start(spec, LIMITS)
    try:
        yield Probe(process)
    finally:
        process.close()


def test_the_bot_runs_as_a_uid_of_its_own_without_groups(place, monkeypatch):
    # By default a uid leased from arena's range (arena.sandbox.uids): no host process's.
    with running(LocalSandbox(warn=False), install(place / "bots" / "mine")) as probe:
        uid = probe.ask("id")[0]
        assert probe.ask("id") == [uid, uid, []] and uid in DEFAULT
    monkeypatch.setenv(VARIABLE, "nobody")  # the organiser's choice: every bot nobody
    with running(LocalSandbox(warn=False), install(place / "bots" / "other")) as probe:
        assert probe.ask("id") == [65534, 65534, []]


def test_no_daemon_socket_can_be_reached(place):
    # A socket anyone could use (mode 666) where the Docker and containerd sockets live.
    path = Path(f"/run/arena-test-{os.getpid()}.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    path.chmod(0o666)
    listener.listen()
    try:
        with running(LocalSandbox(warn=False), install(place / "bots" / "mine")) as probe:
            assert probe.ask("connect", str(path)) == "ENOENT"
            for docker in ("/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock"):
                assert probe.ask("connect", docker) == "ENOENT"
    finally:
        listener.close()
        path.unlink()


def test_no_file_outside_its_own_tmp_can_be_written(place):
    victim = place / "victim.txt"
    victim.write_text("root's")
    victim.chmod(0o666)  # even a file anyone may write
    shared = place / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # even a folder anyone may write in
    spec = install(place / "bots" / "mine")
    with running(LocalSandbox(warn=False), spec) as probe:
        assert probe.ask("write", str(victim), "mine now") == "EROFS"
        assert probe.ask("write", str(shared / "new.txt"), "hello") == "EROFS"
        assert probe.ask("write", "/etc/arena-test-probe", "hello") == "EROFS"
        assert probe.ask("write", str(spec.folder / "bot.py"), "") == "EROFS"
        assert probe.ask("write", "/tmp/mine.txt", "hello") == "ok"
        assert probe.ask("write", "/dev/shm/mine", "hello") == "ok"
    assert victim.read_text() == "root's" and list(shared.iterdir()) == []
    assert not Path("/etc/arena-test-probe").exists()


def test_tmp_and_dev_shm_are_private_to_each_bot(place):
    sandbox = LocalSandbox(warn=False)
    mark = f"arena-test-mark-{os.getpid()}"
    with running(sandbox, install(place / "bots" / "writer")) as writer:
        assert writer.ask("write", f"/tmp/{mark}", "seen?") == "ok"
        assert writer.ask("write", f"/dev/shm/{mark}", "seen?") == "ok"
        assert writer.ask("list", "/tmp") == [mark]
        with running(sandbox, install(place / "bots" / "beside")) as beside:  # at the same time
            assert beside.ask("list", "/tmp") == [] and beside.ask("list", "/dev/shm") == []
    with running(sandbox, install(place / "bots" / "later")) as later:
        assert later.ask("list", "/tmp") == [] and later.ask("list", "/dev/shm") == []
    assert not Path(f"/tmp/{mark}").exists() and not Path(f"/dev/shm/{mark}").exists()


def test_other_bots_and_the_output_cannot_be_reached_in_a_registry(place):
    registry, output = place / "registry", place / "out"
    mine = install(registry / "mine" / "1.0")
    install(registry / "other" / "1.0")
    output.mkdir()
    (output / "secret.txt").write_text("the run's secret")
    sandbox = LocalSandbox(warn=False, hide=[registry])
    sandbox.hide_paths([output])
    with running(sandbox, mine) as probe:
        assert probe.ask("getcwd") == str(mine.folder)
        assert probe.ask("read", "bot.py") == (PROBE / "bot.py").read_text()
        assert probe.ask("list", "..") == ["1.0"]
        assert probe.ask("list", "../..") == ["mine"]
        assert probe.ask("read", "../../other/1.0/bot.py") == "ENOENT"
        assert probe.ask("read", f"/proc/self/root{registry}/other/1.0/bot.py") == "ENOENT"
        assert probe.ask("list", str(output)) == []
        assert probe.ask("read", str(output / "secret.txt")) == "ENOENT"


def test_the_folders_beside_the_bots_own_cannot_be_reached(place):
    mine = install(place / "bots" / "mine")
    install(place / "bots" / "other")
    with running(LocalSandbox(warn=False), mine) as probe:
        assert probe.ask("list", "..") == ["mine"]
        assert probe.ask("read", "../other/bot.py") == "ENOENT"
        assert probe.ask("read", f"/proc/self/root{place}/bots/other/bot.py") == "ENOENT"


def test_another_running_bot_cannot_be_seen_through_proc(place):
    sandbox = LocalSandbox(warn=False)
    with running(sandbox, install(place / "a" / "other")) as other:
        assert other.ask("pids") == [1, 2]  # its init and itself
        host_pid = other.process._bot_pid()
        assert host_pid is not None and Path(f"/proc/{host_pid}/cwd").resolve() == place / "a" / "other"
        with running(sandbox, install(place / "b" / "mine")) as probe:
            assert probe.ask("pids") == [1, 2]
            assert probe.ask("readlink", f"/proc/{host_pid}/cwd") == "ENOENT"
            assert probe.ask("list", f"/proc/{host_pid}/cwd") == "ENOENT"
            assert probe.ask("readlink", "/proc/1/cwd") == "EACCES"  # its init is root's


def test_a_bot_folder_under_a_folder_closed_to_others_is_still_reached(place):
    closed = place / "closed"
    closed.mkdir(mode=0o700)  # like /root, where a pip-installed arena keeps its example bots
    (closed / "private.txt").write_text("root's")
    spec = install(closed / "deep" / "mine")
    with running(LocalSandbox(warn=False), spec) as probe:
        assert probe.ask("id")[0] in DEFAULT
        assert probe.ask("getcwd") == str(spec.folder)
        assert probe.ask("list", str(closed)) == ["deep"]
        assert probe.ask("read", str(closed / "private.txt")) == "ENOENT"


def test_a_submitted_bot_cannot_read_the_registry_in_its_smoke_match(place):
    from nimtest_game import nim_registered

    from arena.registry.submit import submit_bot

    registry = place / "registry"
    accepted = install(registry / "accepted" / "1.0")
    candidate, opponent = place / "incoming" / "read-other", place / "incoming" / "steady"
    for source, target in ((PROBE.parent / "read-other", candidate), (PROBE.parent / "steady", opponent)):
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    (candidate / "victims.json").write_text(json.dumps([str(accepted.folder / "bot.py")]))
    for path in [place / "incoming", *(place / "incoming").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    with nim_registered():
        done = submit_bot(candidate, registry, opponent=opponent, limits=LIMITS)  # refused if it read it
    assert done.folder == registry / "read-other" / "1" and done.smoke_games == {"nim-test": 2}
