"""A throw-away cgroup per local bot: a pids limit (the fork-bomb guard that works for
root, unlike RLIMIT_NPROC), a memory limit whose kills are counted (so an out-of-memory
kill is reported as such), a CPU quota (`Limits.cpus`), the CPU time of all its processes
(`cpu_time_s`, what a long-lived bot process is charged per game), and "kill everything
inside" at the end.

Works with cgroup v1 (a `pids` and a `memory` hierarchy, as on our machines) and with a
pure cgroup v2 mount where the controllers can be enabled for children. When neither is
writable, `BotCgroup.create` returns None with notes saying what is missing, and the
local sandbox falls back to rlimits and the PID namespace alone.
"""

from __future__ import annotations

import os
import signal
import time
from itertools import count
from pathlib import Path

from arena.sandbox.base import Limits

CGROUP_ROOT = Path("/sys/fs/cgroup")
PREFIX = "arena-"
_serial = count(1)


def _own_cgroup_paths() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _parent_dirs() -> dict[str, Path]:
    """Where our bots' cgroups go: controller -> directory ("v2" -> the unified directory)."""
    own = _own_cgroup_paths()
    found: dict[str, Path] = {}
    for controller in ("pids", "memory", "cpu", "cpuacct"):
        if controller in own:
            candidate = CGROUP_ROOT / controller / own[controller].lstrip("/")
            if (candidate / "cgroup.procs").exists():
                found[controller] = candidate
    if not found and (CGROUP_ROOT / "cgroup.controllers").exists() and "" in own:
        found["v2"] = CGROUP_ROOT / own[""].lstrip("/")
    return found


def _write(path: Path, text: str) -> bool:
    try:
        path.write_text(text)
        return True
    except OSError:
        return False


def _made(path: Path, dirs: list[Path]) -> Path:
    """Make the cgroup directory path and keep it in dirs (removed together on failure)."""
    path.mkdir()
    dirs.append(path)
    return path


class BotCgroup:
    """The cgroup directories of one bot (one per v1 controller, or one v2 directory)."""

    def __init__(self, dirs: list[Path], memory_dir: Path | None, v2: bool, usage_file: Path | None = None):
        self.dirs = dirs
        self.memory_dir = memory_dir
        self.v2 = v2
        self.usage_file = usage_file  # cpuacct.usage (v1, ns) or cpu.stat (v2, usage_usec)

    @classmethod
    def create(cls, limits: Limits) -> tuple[BotCgroup | None, list[str]]:
        """Make a cgroup with the pids and memory limits; (None, notes) when that is impossible."""
        notes: list[str] = []
        parents = _parent_dirs()
        if not parents:
            return None, ["no writable cgroup hierarchy: no pids or memory limit by cgroup"]
        name = f"{PREFIX}{os.getpid()}-{next(_serial)}"
        dirs: list[Path] = []
        memory_dir: Path | None = None
        usage_file: Path | None = None
        v2 = "v2" in parents
        try:
            if v2:
                _write(parents["v2"] / "cgroup.subtree_control", "+pids +memory +cpu")
                path = _made(parents["v2"] / name, dirs)
                if not _write(path / "pids.max", str(limits.pids)):
                    notes.append("cgroup v2 without the pids controller: no pids limit")
                if _write(path / "memory.max", str(limits.memory_mb << 20)):
                    _write(path / "memory.swap.max", "0")
                    memory_dir = path
                else:
                    notes.append("cgroup v2 without the memory controller: memory by RLIMIT_DATA only")
                if not _write(path / "cpu.max", f"{int(limits.cpus * 100_000)} 100000"):
                    notes.append("cgroup v2 without the cpu controller: no CPU quota")
                if (path / "cpu.stat").exists():
                    usage_file = path / "cpu.stat"
            else:
                if "pids" in parents:
                    path = _made(parents["pids"] / name, dirs)
                    if not _write(path / "pids.max", str(limits.pids)):
                        notes.append("cannot set pids.max: no pids limit")
                else:
                    notes.append("no pids cgroup: no pids limit (fork bombs are bounded only by the PID namespace)")
                if "memory" in parents:
                    path = _made(parents["memory"] / name, dirs)
                    if _write(path / "memory.limit_in_bytes", str(limits.memory_mb << 20)):
                        _write(path / "memory.memsw.limit_in_bytes", str(limits.memory_mb << 20))
                        memory_dir = path
                    else:
                        notes.append("cannot set the memory cgroup limit: memory by RLIMIT_DATA only")
                else:
                    notes.append("no memory cgroup: memory by RLIMIT_DATA only")
                if "cpu" in parents:
                    path = _made(parents["cpu"] / name, dirs)
                    _write(path / "cpu.cfs_period_us", "100000")
                    if not _write(path / "cpu.cfs_quota_us", str(int(limits.cpus * 100_000))):
                        notes.append("cannot set the CPU quota")
                else:
                    notes.append("no cpu cgroup: no CPU quota (only the CPU-time budget)")
                if "cpu" in parents and (parents["cpu"] / name / "cpuacct.usage").exists():
                    usage_file = parents["cpu"] / name / "cpuacct.usage"  # cpu and cpuacct mounted together
                elif "cpuacct" in parents:
                    usage_file = _made(parents["cpuacct"] / name, dirs) / "cpuacct.usage"
        except OSError as error:
            for path in dirs:
                _remove_dir(path)
            return None, [f"cannot create a cgroup ({error.strerror}): no pids or memory limit by cgroup"]
        return cls(dirs, memory_dir, v2, usage_file), notes

    @property
    def procs_files(self) -> list[str]:
        """The cgroup.procs files a new process writes its pid to, to join."""
        return [str(path / "cgroup.procs") for path in self.dirs]

    def oom_kills(self) -> int:
        """How many processes the kernel killed in this cgroup for memory."""
        if self.memory_dir is None:
            return 0
        source = self.memory_dir / ("memory.events" if self.v2 else "memory.oom_control")
        try:
            for line in source.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def cpu_time_s(self) -> float | None:
        """CPU seconds used by every process that ever ran in this cgroup; None without accounting."""
        if self.usage_file is None:
            return None
        try:
            text = self.usage_file.read_text()
            if not self.v2:
                return int(text) / 1e9
            for line in text.splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
        except (OSError, ValueError):
            pass
        return None

    def pids(self) -> set[int]:
        """Every process now in the cgroup."""
        found: set[int] = set()
        for path in self.dirs:
            try:
                found.update(int(pid) for pid in (path / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return found

    def kill_all(self, within_s: float = 2.0) -> bool:
        """SIGKILL every process inside until none is left; True when it is empty."""
        deadline = time.monotonic() + within_s
        while True:
            alive = self.pids()
            if not alive:
                return True
            if time.monotonic() > deadline:
                return False
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)

    def remove(self) -> None:
        """Kill what is left and remove the directories (retrying while the kernel lets go)."""
        self.kill_all()
        for path in self.dirs:
            _remove_dir(path)


def _remove_dir(path: Path, within_s: float = 2.0) -> None:
    deadline = time.monotonic() + within_s
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)


def remove_leftovers() -> int:
    """Remove the cgroups (and kill their processes) of arena runs that are no longer alive."""
    removed = 0
    for parent in _parent_dirs().values():
        try:
            children = list(parent.iterdir())
        except OSError:
            continue
        for child in children:
            if not child.is_dir() or not child.name.startswith(PREFIX):
                continue
            owner = child.name[len(PREFIX):].split("-", 1)[0]
            if not owner.isdigit() or _alive(int(owner)):
                continue
            leftover = BotCgroup([child], None, False)
            leftover.remove()
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
