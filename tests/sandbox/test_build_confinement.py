"""A local build is confined as a local bot process is (issue 33, item 2).

Hostile builds, each of which worked on main, where `arena submit` and `arena match` ran
a bot's `build` on the host as nobody in the host's network, with rlimits only, its
output held in memory and nothing of it killed but its process group:
- it connects to a server on the loopback and to an outside address;
- it reads another bot in the registry;
- it writes the host's /tmp, /dev/shm and /var/tmp;
- it forks 300 processes;
- it writes 300 MB of output;
- it leaves a `setsid` child behind, which outlived the build;
- it uses more memory than a build may.
Now: no network (a down loopback), the registry covered, a private /tmp and /dev/shm, the
pids limit, the output drained into a capped file, and everything the build started
killed with its namespace. As root with namespaces (the hostile cases skip otherwise).
"""

from __future__ import annotations

import fcntl
import os
import resource
import shutil
import socket
import uuid
from pathlib import Path

import pytest

from arena.config.botfolder import load_bot
from arena.langs import build as build_module
from arena.langs.build import BuildFailed, run_build
from arena.registry.submit import submit_bot
from arena.sandbox import Limits
from arena.sandbox.local import LocalSandbox

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random"
QUICK = Limits(startup_s=10.0, decision_s=1.0, time_bank_s=2.0)

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not LocalSandbox(warn=False).isolate,
    reason="a build is confined as root with namespaces (as a normal user it has your rights)",
)


@pytest.fixture
def tmp_path(open_tmp):
    """A scratch folder user nobody can reach (tests/sandbox/conftest.py), so that a build
    runs on main as it does here."""
    return open_tmp


def make_bot(folder: Path, script: str, name: str = "hostile") -> Path:
    """A bot that plays like the random bot, whose build runs the Python `script`."""
    folder.mkdir(parents=True)
    for part in ("bot.py", "arena_bot.py"):
        shutil.copy(RANDOM / part, folder / part)
    (folder / "build.py").write_text(script)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\n'
        'games = ["3up3down"]\nbuild = ["python3", "build.py"]\n'
    )
    for path in [folder.parent, folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def build(bot: Path, box: LocalSandbox | None = None, timeout_s: float = 60) -> None:
    run_build(load_bot(bot).spec(), box or LocalSandbox(warn=False), fresh=True, timeout_s=timeout_s)


def said(bot: Path, name: str) -> str:
    return (bot / "build" / name).read_text()


def test_a_build_has_no_network(tmp_path):
    # The kernel completes a connection to a listening socket on its own (the backlog), so
    # a non-blocking accept() after the build says whether anything ever connected.
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    bot = make_bot(tmp_path / "bot", f"""
import errno, socket
told = []
for address in (("127.0.0.1", {port}), ("192.0.2.1", 53), ("1.1.1.1", 443)):
    try:
        socket.create_connection(address, timeout=3).close()
        told.append("connected")
    except OSError as error:
        told.append(errno.errorcode.get(error.errno, str(error)))
open("build/network", "w").write(" ".join(told))
""")
    try:
        build(bot)
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()
    assert said(bot, "network") == "ENETUNREACH ENETUNREACH ENETUNREACH"


def test_a_build_reads_nothing_of_the_registry_but_its_own_copy(tmp_path):
    registry = tmp_path / "registry"
    other = registry / "other" / "1.0"
    other.mkdir(parents=True)
    (other / "secret.txt").write_text("the other author's code\n")
    for path in (registry, registry / "other", other):
        path.chmod(0o755)
    (other / "secret.txt").chmod(0o644)
    bot = make_bot(tmp_path / "mine" / "bot", f"""
told = []
for path in ({str(other / "secret.txt")!r}, {str(registry)!r}):
    try:
        told.append(open(path).read() if path.endswith(".txt") else "listed")
    except OSError as error:
        told.append(type(error).__name__)
import os
told.append(" ".join(sorted(os.listdir({str(registry)!r}))))
open("build/seen", "w").write(repr(told))
""")
    done = submit_bot(bot, registry, limits=QUICK)
    seen = eval(said(done.folder, "seen"))  # noqa: S307 - our own build wrote it
    assert seen[0] == "FileNotFoundError"
    assert "the other author's code" not in repr(seen)
    assert "other" not in seen[-1].split()


def test_a_build_writes_no_tmp_of_the_host(tmp_path):
    mark = f"arena-build-leak-{uuid.uuid4().hex}"
    bot = make_bot(tmp_path / "bot", f"""
told = []
for folder in ("/tmp", "/dev/shm", "/var/tmp"):
    try:
        open(folder + "/{mark}", "w").write("x")
        told.append("written")
    except OSError as error:
        told.append(type(error).__name__)
open("build/tmp", "w").write(" ".join(told))
""")
    try:
        build(bot)
        assert said(bot, "tmp") == "written written OSError"  # its own /tmp and /dev/shm; /var/tmp read-only
        for folder in ("/tmp", "/dev/shm", "/var/tmp"):
            assert not Path(folder, mark).exists()
    finally:
        for folder in ("/tmp", "/dev/shm", "/var/tmp"):
            Path(folder, mark).unlink(missing_ok=True)


def test_a_build_cannot_fork_300_processes_and_its_children_end_with_it(tmp_path):
    bot = make_bot(tmp_path / "bot", """
import os, time
started = 0
for _ in range(300):
    try:
        if os.fork() == 0:
            time.sleep(120)
            os._exit(0)
        started += 1
    except OSError:
        break
open("build/forks", "w").write(str(started))
""")
    build(bot)  # returns at once: the sleeping children end with the build's namespace
    assert int(said(bot, "forks")) < build_module.BUILD_PIDS < 300


def test_300_mb_of_build_output_is_drained_into_a_capped_file_not_arenas_memory(tmp_path):
    bot = make_bot(tmp_path / "bot", """
import sys
line = b"x" * 1023 + b"\\n"
for _ in range(300 * 1024):
    sys.stdout.buffer.write(line)
sys.stdout.flush()
print("the end", file=sys.stderr)
raise SystemExit(3)
""")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(BuildFailed) as caught:
        build(bot)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 50  # main held all 300 MB (and more)
    assert caught.value.output.endswith("the end\n") and len(caught.value.output) <= 64 << 10
    assert str(caught.value).splitlines()[-1] == "    | the end"


def test_the_output_file_keeps_its_cap_and_says_what_was_left_out(tmp_path):
    from arena.sandbox.local_build import run_confined

    bot = make_bot(tmp_path / "bot", "import sys\nsys.stdout.write('y' * 3_000_000)\n")
    with open(tmp_path / "log", "w+b") as log:
        ended = run_confined(
            LocalSandbox(warn=False), bot, ["python3", "build.py"], limits=build_module.build_limits(),
            env={"PATH": os.environ["PATH"]}, timeout_s=60, output=log, keep_bytes=1 << 20,
        )
    assert (ended.returncode, ended.output_bytes, ended.kept_bytes) == (0, 3_000_000, 1 << 20)
    assert (tmp_path / "log").read_bytes() == b"y" * (1 << 20) + f"\n[{3_000_000 - (1 << 20)} bytes of output left out]\n".encode()


def test_a_setsid_child_of_a_build_does_not_outlive_it(tmp_path):
    bot = make_bot(tmp_path / "bot", """
import os, subprocess, time
child = '''
import fcntl, time
held = open("build/alive", "w")
fcntl.flock(held, fcntl.LOCK_EX)
open("build/locked", "w").close()
time.sleep(120)
'''
subprocess.Popen(["python3", "-c", child], start_new_session=True)
while not os.path.exists("build/locked"):
    time.sleep(0.01)
""")
    build(bot)
    with open(bot / "build" / "alive") as alive:
        fcntl.flock(alive, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError while the child lives


def test_a_build_over_its_memory_limit_is_told_so(tmp_path, monkeypatch):
    monkeypatch.setattr(build_module, "BUILD_MEMORY_MB", 64)
    bot = make_bot(tmp_path / "bot", "hog = [b'x' * (1 << 20) for _ in range(120)]\n")  # 120 MB, 1 MB at a time
    with pytest.raises(BuildFailed) as caught:
        build(bot)
    assert caught.value.line == "its build (python3 build.py) ran out of memory (64 MB)"
