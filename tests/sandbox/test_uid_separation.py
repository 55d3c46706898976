"""No process on the host shares a uid with a container's bot (issue 33, item 2).

On main every container's bot was the host's uid 65534 (no user namespace), as were the
local bots and the local build: a build's `setsid` child read a Docker bot's setup cards
from /proc/PID/mem during a later match. Now each container (cold, and warm: its bots
through the launcher) and each local bot process takes a uid of its own from arena's
range (arena.sandbox.uids, leased, no account, no file), and a host process of nobody or
of a running local bot cannot read a Docker bot's memory; a process of the bot's own uid
could (the control: the check can fail). As root with an engine; the Docker cases skip
without one unless ARENA_REQUIRE_DOCKER=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.sandbox import BotSpec, Limits
from arena.sandbox.common import children_of
from arena.sandbox.docker import DockerSandbox
from arena.sandbox.local import LocalSandbox
from arena.sandbox.uids import DEFAULT

LIMITS = Limits(startup_s=20, memory_mb=96, pids=32, file_size_mb=4, open_files=48)
# Holds a secret in its memory, says where it is, then waits.
HOLDER = """
import ctypes, json, os, sys
secret = ctypes.create_string_buffer(b"SETUP-CARDS-7H-QS-2D" * 4)
print(json.dumps({"uid": os.getuid(), "address": ctypes.addressof(secret)}), flush=True)
sys.stdin.readline()
"""
# Run on the host as uid UID: read 20 bytes at ADDRESS of process PID's memory.
READER = """
import errno, os, sys
pid, address, uid = (int(word) for word in sys.argv[1:4])
os.setgroups([]); os.setgid(uid); os.setuid(uid)
try:
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:
        memory.seek(address)
        print(memory.read(20).decode(errors="replace"))
except OSError as error:
    print(errno.errorcode[error.errno])
"""

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="bots get uids of their own only as root")


@pytest.fixture
def place():
    folder = Path(tempfile.mkdtemp(prefix="arena-test-"))
    folder.chmod(0o755)
    (folder / "holder").mkdir(mode=0o755)
    (folder / "holder" / "bot.py").write_text(HOLDER)
    (folder / "holder" / "bot.py").chmod(0o644)
    try:
        yield folder / "holder"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def docker_box(docker_engine):
    box = DockerSandbox()
    yield box
    box.close()


def read_as(uid: int, pid: int, address: int) -> str:
    return subprocess.run(
        [sys.executable, "-c", READER, str(pid), str(address), str(uid)],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout.strip()


def host_uid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split()[0])


def processes_of(uid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if host_uid(int(entry)) == uid:
                    found.add(int(entry))
            except (OSError, IndexError):
                pass
    return found


def docker_bot_pid(process) -> int:
    """The host pid of a Docker bot's own process (cold: the child of its container's init)."""
    if hasattr(process, "home"):
        return process.pid
    process.container.reload()
    init = process.container.attrs["State"]["Pid"]
    (pid,) = children_of(init)
    return pid


@pytest.mark.parametrize("slot", [None, "s"], ids=["cold", "warm"])
def test_a_host_process_cannot_read_a_docker_bots_memory(docker_box, place, slot):
    holder = BotSpec(name="holder", folder=place, command=("python3", "bot.py"))
    local = LocalSandbox(warn=False)
    docker_bot = docker_box.start(holder, LIMITS, slot=slot)
    local_bot = local.start(holder, LIMITS)
    try:
        inside = json.loads(docker_bot.receive_line(20))
        local_uid = json.loads(local_bot.receive_line(20))["uid"]
        pid = docker_bot_pid(docker_bot)
        uid = host_uid(pid)
        assert uid == inside["uid"] and uid in DEFAULT  # not nobody: a uid of its own
        assert uid not in (65534, local_uid) and local_uid in DEFAULT
        # No process of the host but the container's own is of its uid.
        cgroup = Path(f"/proc/{pid}/cgroup").read_text()
        assert {p for p in processes_of(uid) if Path(f"/proc/{p}/cgroup").read_text() != cgroup} == set()
        assert read_as(65534, pid, inside["address"]) == "EACCES"  # nobody: a daemon, an old build
        assert read_as(local_uid, pid, inside["address"]) == "EACCES"  # a local bot's uid
        assert read_as(uid, pid, inside["address"]) == "SETUP-CARDS-7H-QS-2D"  # the control
    finally:
        docker_bot.close()
        local_bot.close()
