"""A warm container as this host sees it (warm_container.py's helpers): its cgroup and its
processes (a pidfd checked to be the container's), emptying
one of its writable places, and renewing what its namespaces hold between two games
(SysV IPC objects, the pid counter, fresh /tmp and /dev/shm, /proc with hidepid=2). Each
works from the container's init pid through /proc, and no program of the container's
image runs with arena's rights.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import threading
from pathlib import Path
from typing import Any

from arena.sandbox.cgroups import CGROUP_ROOT, BotCgroup

_CLONE_NEWIPC = 0x08000000
_IPC_RMID = 0
_libc = ctypes.CDLL(None, use_errno=True)


def _container_cgroup(pid: int, container_id: str) -> tuple[BotCgroup, Path | None] | None:
    """The container's cgroup directories (v1: pids and memory; else v2), from its init's
    pid, and the v1 cpuacct directory (whose CPU count a reset zeroes) if there is one."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    v1: dict[str, Path] = {}
    unified: Path | None = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if container_id not in path:
            continue
        if not controllers:
            unified = CGROUP_ROOT / path.lstrip("/")
        for controller in controllers.split(","):
            if controller in ("pids", "memory", "cpuacct"):
                v1[controller] = CGROUP_ROOT / controller / path.lstrip("/")
    v1 = {name: folder for name, folder in v1.items() if (folder / "cgroup.procs").exists()}
    cpuacct = v1.pop("cpuacct", None)
    if v1:
        return BotCgroup(list(v1.values()), v1.get("memory"), v2=False), cpuacct
    if unified is not None and (unified / "memory.events").exists():
        return BotCgroup([unified], unified, v2=True), None
    return None


def _pidfd(pid: int, container_id: str) -> int | None:
    """A pidfd of `pid` if it is (still) a process of the container, else None.

    Opened first and checked after: a pid the container let go of and the host reused is
    then never signalled or taken for the bot.
    """
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    try:
        if container_id in Path(f"/proc/{pid}/cgroup").read_text():
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _empty_folder(path: str) -> None:
    """Remove everything inside the folder `path` (not the folder), never following a link."""
    try:
        folder = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return  # the image has no such place
    try:
        for name in os.listdir(folder):
            try:
                os.unlink(name, dir_fd=folder)
            except IsADirectoryError:
                shutil.rmtree(name, dir_fd=folder)  # descriptor-based: links are removed, not followed
        left = os.listdir(folder)
        if left:
            raise OSError(errno.ENOTEMPTY, f"{len(left)} entries left in {path}")
    finally:
        os.close(folder)


_MOUNT_FLAGS = {"ro": 1, "nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1 << 10,
                "nodiratime": 1 << 11, "relatime": 1 << 21, "strictatime": 1 << 24}
_MNT_DETACH = 2
_MS_REMOUNT = 32
_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
_CLONE_FS = 0x00000200
LAST_PID = 100  # after a reset the container's next process gets pid 101 (or the next free)


def _tmpfs_mounts(init_pid: int) -> list[tuple[bytes, int, bytes]]:
    """(mount point, flags, options) of the container's /tmp and /dev/shm, from mountinfo,
    and of its /proc, with `hidepid=2` (see _renew)."""
    found = []
    for line in Path(f"/proc/{init_pid}/mountinfo").read_text().splitlines():
        mount, _, source = line.partition(" - ")
        fields, (fstype, _, options) = mount.split(), source.split()[:3]
        if fields[4] == "/proc" and fstype == "proc":
            flags = sum(_MOUNT_FLAGS.get(option, 0) for option in fields[5].split(","))
            found.append((b"/proc", flags | _MS_REMOUNT, b"hidepid=2"))
        elif fields[4] in ("/tmp", "/dev/shm") and fstype == "tmpfs":
            flags = sum(_MOUNT_FLAGS.get(option, 0) for option in fields[5].split(","))
            data = ",".join(o for o in options.split(",") if o not in ("rw", "ro"))
            found.append((fields[4].encode(), flags, data.encode()))
    return found


def _renew(init_pid: int, mounts: list[tuple[bytes, int, bytes]]) -> int:
    """Renew what the container's namespaces hold; how many SysV IPC objects were removed.

    - IPC: every SysV shared memory segment, semaphore set and message queue is removed
      (/proc/sysvipc lists those of the IPC namespace of whoever opens it);
    - pid: the counter is set back to LAST_PID, so that the next process gets the same pid
      as the first did (the kernel applies ns_last_pid to the writer's own namespace: the
      writer is a host shell spawned into the container's pid namespace);
    - mount: `mounts` (/tmp, /dev/shm) are replaced by fresh tmpfs mounts with the same
      options: empty, and their inode numbers start again; /proc is remounted with
      hidepid=2, so that a bot sees no process of another uid (the launcher's counts of
      page faults, context switches and CPU grow with every game it starts).
    What a process could count up (files made, processes started) tells its successor
    nothing. Everything runs in a thread of its own that ends after: setns moves only the
    calling thread, which for a mount namespace must first stop sharing its file-system
    context with the other threads (unshare CLONE_FS). No program of the container's
    image ever runs with arena's rights.
    """
    outcome: list[Any] = []

    def enter(kind: str, flag: int) -> None:
        fd = os.open(f"/proc/{init_pid}/ns/{kind}", os.O_RDONLY)
        try:
            if _libc.setns(fd, flag) != 0:
                raise OSError(ctypes.get_errno(), f"entering the container's {kind} namespace")
        finally:
            os.close(fd)

    def work() -> None:
        try:
            if _libc.unshare(_CLONE_FS) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_FS)")
            enter("ipc", _CLONE_NEWIPC)
            removed = 0
            for kind in ("shm", "sem", "msg"):
                for row in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]:
                    ident = int(row.split()[1])
                    if kind == "shm":
                        result = _libc.shmctl(ident, _IPC_RMID, None)
                    elif kind == "sem":
                        result = _libc.semctl(ident, 0, _IPC_RMID)
                    else:
                        result = _libc.msgctl(ident, _IPC_RMID, None)
                    if result != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.EIDRM):
                        raise OSError(ctypes.get_errno(), f"removing SysV {kind} {ident}")
                    removed += 1
            if os.path.exists("/proc/sys/kernel/ns_last_pid"):  # a kernel with checkpoint/restore
                set_pid_counter()
            enter("mnt", _CLONE_NEWNS)
            for point, flags, options in mounts:
                if flags & _MS_REMOUNT:  # /proc, in place
                    if _libc.mount(b"proc", point, b"proc", flags, options) != 0:
                        raise OSError(ctypes.get_errno(), f"remounting {point.decode()}")
                    continue
                if _libc.umount2(point, _MNT_DETACH) != 0:
                    raise OSError(ctypes.get_errno(), f"unmounting {point.decode()}")
                if _libc.mount(b"tmpfs", point, b"tmpfs", flags, options) != 0:
                    raise OSError(ctypes.get_errno(), f"mounting a fresh {point.decode()}")
            outcome.append(removed)
        except Exception as error:  # noqa: BLE001 - handed to the caller
            outcome.append(error)

    def set_pid_counter() -> None:
        enter("pid", _CLONE_NEWPID)  # for the children of this thread only
        writer = os.posix_spawn(
            "/bin/sh",
            ["/bin/sh", "-c", f"echo {LAST_PID} > /proc/sys/kernel/ns_last_pid"],
            {},
        )
        if os.waitstatus_to_exitcode(os.waitpid(writer, 0)[1]) != 0:
            raise OSError(errno.EIO, "setting the container's pid counter")

    thread = threading.Thread(target=work, name="arena-warm-renew", daemon=True)
    thread.start()
    thread.join()
    if isinstance(outcome[0], Exception):
        raise outcome[0]
    return outcome[0]


