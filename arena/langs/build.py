"""The `build` step of bot.toml: run in the sandbox the bot will run in, before it plays.

    build = ["cc", "-O2", "-o", "build/bot", "bot.c", "-lcjson"]

Where: `arena submit` runs it on the registry's copy (the author's build/ is never
copied, so what runs is what the sandbox made, and the registry keeps it); `arena match`,
`arena run`, the league and a cluster worker run it when build/ holds no build of the
sources as they are, made in the same place (arena.langs.built: the mark names the
content hash and the sandbox and image): once per content hash. Only `build/`
(BUILD_DIR) of the bot's folder is writable; the content hash
(arena.store.db.content_hash) leaves build/ out and covers the sources, bot.toml and so
the command. What the build made is settled (arena.langs.built.settle) before it is
marked: arena's own build output never trips arena's own vetting.

build/ counts against the bot folder limits (arena.botcopy.FolderLimits, the organiser's
$ARENA_BOT_MAX_MB and $ARENA_BOT_MAX_FILES, or `submit_bot`'s), its sources included,
while the build runs: a build that writes more is refused in one line (`_OutputRoom`).

Docker: a container of the bot's image (its language's, or the base image) with the
folder read-only at /bot, no network, a uid of its own as root (arena.sandbox.uids; else
nobody, or arena's user when not root), BUILD_MEMORY_MB of memory, a pids limit, a tmpfs
/tmp (HOME), BUILD_TIMEOUT_S at most; its main process only sleeps, and the build runs
beside it (`docker exec`), its output read as it comes (the last 64 KB kept). build/ is a
tmpfs at /bot/build that holds no more than the limits leave (its size and inode count),
so a write past them fails as it is written; each file is capped at the per-file limit
(fsize). When the build has ended, its build/ is read out through the container's `tar`
(as the build's user), counted again exactly and unpacked into the folder's build/ with
tarfile's data filter (nothing outside build/, no device, no link leading out); the
container is removed. Local: confined as a local bot process is
(`arena.sandbox.local_build.run_confined`, the local sandbox's shim, cgroup and view): as
root with namespaces, no network, its own PID, mount and IPC namespaces, the folder
read-only but build/, the registry and the other bots hidden (the sandbox's hidden
paths), a private /tmp (HOME, BUILD_SCRATCH_MB) and /dev/shm, BUILD_MEMORY_MB of memory,
BUILD_PIDS processes, BUILD_TIMEOUT_S, a uid of its own when a range is leased (else
nobody; build/ is lent to it and given back to the folder's owner), and everything it
started killed with it; arena counts its build/ every 0.25 s while it runs and stops it
past the limits. Its output (stdout and stderr) is drained into a temporary file
of which BUILD_LOG_MB are kept, and its last 64 KB for the message: no amount of it
grows arena's memory. As a normal user: a child process with the user's rights, under
rlimits and the time limit.
A failed build is a `BuildFailed` whose message is one line plus the output's last lines.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from arena.botcopy import MAX_FILE_MB_ENV, MAX_FILES_ENV, MAX_MB_ENV, FolderLimits
from arena.langs.built import (  # noqa: F401 - BUILD_DIR, is_stale: read from here too
    BUILD_DIR,
    BUILT_MARK,
    BuildOutputRefused,
    held,
    is_stale,
    place_of,
    settle,
    write_mark,
)
from arena.limits import Limits

BUILD_TIMEOUT_S = 300
BUILD_MEMORY_MB = 2048
BUILD_PIDS = 256
BUILD_FILE_MB = 256
SHOWN_LINES = 15
TAIL_BYTES = 64 << 10  # of a Docker build's output, the end kept for its message
NOBODY = 65534


class BuildFailed(Exception):
    """The bot's build step failed (its fault); str() is one line, `output` its last lines."""

    def __init__(self, line: str, output: str = ""):
        self.line = line
        self.output = output
        tail = [text[:200] for text in output.splitlines() if text.strip()][-SHOWN_LINES:]
        super().__init__(line + "".join(f"\n    | {text}" for text in tail))


def run_build(spec: Any, box: Any, *, fresh: bool = False, timeout_s: float = BUILD_TIMEOUT_S,
              folder_limits: FolderLimits | None = None) -> float | None:
    """Run `spec.build` for the bot in `box` (a Sandbox) when needed (always when `fresh`,
    after clearing build/); the seconds it took, or None when nothing was to be done.
    `folder_limits`: what the folder may hold, build/ included (default
    `FolderLimits.from_env()`). BuildFailed when the build fails (the bot's fault);
    SandboxError when arena's does."""
    if not spec.build:
        return None
    folder = Path(spec.folder).resolve()
    where = place_of(box, _image_of(spec, box))
    with held(folder):  # one build of a folder at a time; the next one finds it built
        return _build_held(spec, box, folder, where, fresh, timeout_s, folder_limits or FolderLimits.from_env())


def _image_of(spec: Any, box: Any) -> str | None:
    """The image a Docker build runs in (None locally); BuildFailed when it cannot be made."""
    if getattr(box, "name", "local") != "docker":
        return None
    from arena.faults import BotFault

    try:
        return box.image_for(spec)
    except BotFault as fault:
        raise BuildFailed(f"its image cannot be made: {fault.detail}") from None


def _build_held(
    spec: Any, box: Any, folder: Path, where: str, fresh: bool, timeout_s: float, folder_limits: FolderLimits,
) -> float | None:
    out = folder / BUILD_DIR
    if fresh and (out.exists() or out.is_symlink()):
        if out.is_symlink() or not out.is_dir():
            out.unlink()
        else:
            shutil.rmtree(out)
    if not fresh and not is_stale(folder, where):
        return None
    if out.is_symlink():
        raise BuildFailed(f"{BUILD_DIR} in the bot folder is a link; remove it (arena makes {BUILD_DIR}/)")
    out.mkdir(exist_ok=True)
    mark = out / BUILT_MARK
    if mark.exists() or mark.is_symlink():
        mark.unlink()  # a build that fails leaves none: the next run builds again
    started = time.monotonic()
    if getattr(box, "name", "local") == "docker":
        _build_in_docker(spec, box, folder, timeout_s, folder_limits)
    else:
        _build_locally(spec, box, folder, timeout_s, folder_limits)
    took = time.monotonic() - started
    if mark.exists() or mark.is_symlink():
        mark.unlink()  # the build's own: only arena says a build succeeded
    try:
        settle(out)
    except BuildOutputRefused as refused:
        raise BuildFailed(str(refused)) from None
    write_mark(folder, where, took)
    return took


def _give_back(out: Path, uid: int, gid: int) -> None:
    """build/ and all it holds to uid:gid (as root, after a build as nobody)."""
    for path in [out, *out.rglob("*")]:
        try:
            os.lchown(path, uid, gid)
        except OSError:
            pass


BUILD_OPEN_FILES = 4096  # compilers and linkers open many files at once
BUILD_SCRATCH_MB = 512  # its private /tmp (HOME, the Go and Cargo caches), as in Docker
BUILD_LOG_MB = 4  # of its output, the part kept in its log file (the rest is counted)


def build_limits() -> Limits:
    """What a build may use (the local sandbox's; the Docker build's are the same numbers)."""
    return Limits(memory_mb=BUILD_MEMORY_MB, pids=BUILD_PIDS, file_size_mb=BUILD_FILE_MB,
                  open_files=BUILD_OPEN_FILES, cpu_s=BUILD_TIMEOUT_S, cpus=1.0)


def _build_locally(spec: Any, box: Any, folder: Path, timeout_s: float, folder_limits: FolderLimits) -> None:
    """The build confined as a local bot process (arena.sandbox.local_build)."""
    from arena.sandbox.local import LocalSandbox
    from arena.sandbox.local_build import run_confined

    local = box if getattr(box, "name", None) == "local" else LocalSandbox(warn=False)
    out = folder / BUILD_DIR
    path = os.environ.get("PATH", "/usr/bin:/bin")
    if local.isolate:  # a private /tmp: its caches go there, as in Docker
        env = {"PATH": path, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
               "GOCACHE": "/tmp/go-cache", "GOPROXY": "off", "CARGO_HOME": "/tmp/cargo"}
    else:
        env = {"PATH": path, "HOME": str(out), "LANG": "C.UTF-8"}
    program = spec.build[0]
    found = shutil.which(program, path=path) if "/" not in program else str(folder / program)
    if found is None or not Path(found).is_file():
        raise BuildFailed(_failed(spec, 127, local=True).split("; its output")[0])
    room = _OutputRoom(folder, folder_limits)
    if room.entries < 1 or room.bytes < 0:
        raise BuildFailed(room.passed(spec))
    with tempfile.TemporaryFile(prefix="arena-build-") as log:
        ended = run_confined(
            local, folder, list(spec.build), limits=build_limits(), env=env, timeout_s=timeout_s,
            output=log, keep_bytes=BUILD_LOG_MB << 20, writable=[out], scratch_mb=BUILD_SCRATCH_MB,
            watch=lambda: room.passed(spec) if room.over(out) else None,
        )
    if ended.stopped is not None or room.over(out):
        raise BuildFailed(room.passed(spec))
    if ended.timed_out:
        raise BuildFailed(_timed_out(spec, timeout_s), ended.tail)
    if ended.out_of_memory:
        raise BuildFailed(f"its build ({' '.join(spec.build)}) ran out of memory ({BUILD_MEMORY_MB} MB)",
                          ended.tail)
    if ended.returncode != 0:
        code = ended.returncode if ended.returncode is not None else -9
        raise BuildFailed(_failed(spec, code, local=True), ended.tail)


def _timed_out(spec: Any, timeout_s: float) -> str:
    return f"its build ({' '.join(spec.build)}) did not end within {timeout_s:.0f} s: make it faster"


def _failed(spec: Any, code: int, local: bool = False) -> str:
    what = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
    hint = ""
    if code == 127 and local and getattr(spec, "language", None):
        # The toolchain is the language image's: here it is missing, or (cargo under
        # /root, say) not runnable by the build's user. Whichever program it was, the
        # cure is the image, not bot.toml ('sh' of `sh build.sh` is never the one missing).
        language = spec.language
        hint = (f"; a program it runs is missing on this machine or not runnable by the build's user: a bot "
                f"with language = \"{language}\" builds in arena's {language} image: run it with --sandbox docker "
                f"(once: arena images build {language})")
    elif code == 127:
        hint = f"; its program {spec.build[0]!r} was not found: set `language` in bot.toml to an image that has it"
    return f"its build ({' '.join(spec.build)}) {what}{hint}; its output ends with:"


class _OutputRoom:
    """What a build may write into build/: the bot folder limits (arena.botcopy) less what
    the folder's sources already hold."""

    def __init__(self, folder: Path, limits: FolderLimits):
        self.limits = limits
        entries, size = 1, 0  # build/ itself
        for path in _sources_and_folders(folder):
            entries += 1
            if path.is_file() and not path.is_symlink():
                size += path.stat().st_size
        self.entries = limits.files - entries
        self.bytes = (limits.total_mb << 20) - size

    def tmpfs(self, uid: int, gid: int) -> str:
        """The options of a tmpfs that holds no more: files and folders by its inodes, bytes
        by its size (with a page of slack for each of up to 4,096 files: a file takes whole
        pages there, while the limit counts its bytes; the exact count follows the build)."""
        slack = 4096 * min(max(self.entries, 0), 4096)
        return (f"size={max(self.bytes, 0) + slack},nr_inodes={max(self.entries, 0) + 1},"
                f"mode=0755,uid={uid},gid={gid},exec,nosuid,nodev")

    def over(self, out: Path) -> bool:
        """True when `out` (the build/ it writes) holds more than the room (or a file over
        the per-file limit); never follows a link."""
        entries, size, each = 0, 0, self.limits.file_mb << 20
        folders = [str(out)]
        while folders:
            try:
                listing = os.scandir(folders.pop())
            except OSError:
                continue
            with listing:
                for entry in listing:
                    entries += 1
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        try:
                            grown = entry.stat(follow_symlinks=False).st_size
                        except OSError:
                            continue
                        size += grown
                        if grown > each:
                            return True
                    if entries > self.entries or size > self.bytes:
                        return True
        return False

    def passed(self, spec: Any) -> str:
        return (
            f"its build ({' '.join(spec.build)}) wrote more into {BUILD_DIR}/ than the bot folder "
            f"limits leave it ({self.limits.total_mb} MB and {self.limits.files} files and folders "
            f"in all, {self.limits.file_mb} MB a file; {MAX_MB_ENV}, {MAX_FILES_ENV}, "
            f"{MAX_FILE_MB_ENV}): make its output smaller"
        )


def _sources_and_folders(folder: Path):
    """Every file and folder of the bot folder outside build/."""
    for path in folder.rglob("*"):
        if path.relative_to(folder).parts[0] != BUILD_DIR:
            yield path


def _build_in_docker(spec: Any, box: Any, folder: Path, timeout_s: float, folder_limits: FolderLimits) -> None:
    """The build in a container of the bot's image: see the module docstring."""
    from arena.faults import BotFault, SandboxError
    from arena.sandbox.docker.engine import ENGINE_ERRORS, remove_quietly

    try:
        image = box.image_for(spec)
    except BotFault as fault:
        raise BuildFailed(f"its image cannot be made: {fault.detail}") from None
    out = folder / BUILD_DIR
    room = _OutputRoom(folder, folder_limits)
    if room.entries < 1 or room.bytes < 0:
        raise BuildFailed(room.passed(spec))
    owner = folder.stat()
    # As root the build runs as a uid of its own (or nobody); else as arena's own user.
    lease = box.lease_uid() if os.geteuid() == 0 and hasattr(box, "lease_uid") else None
    if os.geteuid() == 0:
        uid = gid = lease.uid if lease is not None else NOBODY
    else:
        uid, gid = os.getuid(), os.getgid()
    container = None
    try:
        container = box.client.containers.create(**_build_settings(spec, box, image, folder, timeout_s, room,
                                                                   uid, gid, folder_limits))
        container.start()
        code, output = _exec_build(spec, box, container, uid, gid, timeout_s)
        if code is None:
            raise BuildFailed(_timed_out(spec, timeout_s), output)
        if box.client.api.inspect_container(container.id)["State"].get("OOMKilled"):
            raise BuildFailed(f"its build ({' '.join(spec.build)}) ran out of memory ({BUILD_MEMORY_MB} MB)", output)
        if code in (126, 127) and "executable file not found" in output:
            raise BuildFailed(
                f"its build's program {spec.build[0]!r} is not in its image {image}: set `language` in bot.toml "
                f"to an image that has it (docs/protocol.md, Your language)"
            )
        if _is_full(box, container, uid, gid):
            raise BuildFailed(room.passed(spec))  # one line: its errors of a full disk say no more
        if code != 0:
            raise BuildFailed(_failed(spec, code), output)
        _take_output(box, container, out, room, spec, uid, gid)
    except ENGINE_ERRORS as error:
        raise SandboxError(f"the Docker engine failed while building {spec.name}: {error}") from None
    finally:
        if container is not None:
            remove_quietly(container)
        if lease is not None:
            lease.release()
        if os.geteuid() == 0:
            _give_back(out, owner.st_uid, owner.st_gid)


# The room left in build/: free blocks, block size, free inodes (statfs, in any image with a
# shell and stat: no Python needed in the build's image).
FULL_PROBE = "stat -f -c '%f %S %d' build"


def _build_settings(spec: Any, box: Any, image: str, folder: Path, timeout_s: float, room: _OutputRoom,
                    uid: int, gid: int, folder_limits: FolderLimits) -> dict[str, Any]:
    """The build container: it holds the build's time (its main process sleeps that long,
    and the build runs beside it, so that its build/ outlives the build for arena to take)."""
    from docker.types import Ulimit

    from arena.sandbox.docker.engine import BOT_LABEL, BOT_MOUNT, LABEL, OWNER_LABEL, owner_of_this_process

    file_bytes = min(BUILD_FILE_MB, folder_limits.file_mb) << 20
    return {
        "image": image, "command": ["sleep", str(int(timeout_s) + 60)], "network_mode": "none",
        "user": f"{uid}:{gid}", "working_dir": BOT_MOUNT,
        "mem_limit": f"{BUILD_MEMORY_MB}m", "memswap_limit": f"{BUILD_MEMORY_MB}m", "pids_limit": BUILD_PIDS,
        "nano_cpus": 10**9, "read_only": True, "cap_drop": ["ALL"], "security_opt": ["no-new-privileges"],
        "init": True,
        # build/ is a tmpfs that holds no more than the folder limits leave it: a build that
        # writes more fails as it writes (no space left), not after.
        "tmpfs": {"/tmp": f"size={BUILD_SCRATCH_MB}m,nosuid",
                  f"{BOT_MOUNT}/{BUILD_DIR}": room.tmpfs(uid, gid)},
        "ulimits": [Ulimit(name="core", soft=0, hard=0), Ulimit(name="fsize", soft=file_bytes, hard=file_bytes)],
        "log_config": {"type": "none"},
        "volumes": {str(folder): {"bind": BOT_MOUNT, "mode": "ro"}},
        "labels": {LABEL: "build", BOT_LABEL: spec.name, OWNER_LABEL: owner_of_this_process()},
    }


def _exec_build(spec: Any, box: Any, container: Any, uid: int, gid: int, timeout_s: float) -> tuple[int | None, str]:
    """Run the build in the container; (its exit code or None at the time limit, the end of
    its output). Its output is read as it comes and only its last TAIL_BYTES are kept."""
    from arena.sandbox.docker.engine import BOT_MOUNT

    api = box.client.api
    environment = {"HOME": "/tmp", "LANG": "C.UTF-8", "GOCACHE": "/tmp/go-cache", "GOPROXY": "off",
                   "CARGO_HOME": "/tmp/cargo"}
    started = api.exec_create(container.id, list(spec.build), user=f"{uid}:{gid}", workdir=BOT_MOUNT,
                              environment=environment)
    tail = bytearray()

    def read() -> None:
        try:
            for chunk in api.exec_start(started["Id"], stream=True):
                tail.extend(chunk)
                del tail[:-TAIL_BYTES]
        except Exception:  # noqa: BLE001, S110 - the container was killed: its output ends
            pass

    reader = threading.Thread(target=read, name=f"build-{spec.name}", daemon=True)
    reader.start()
    reader.join(timeout_s)
    if reader.is_alive():
        try:
            container.kill()
        finally:
            reader.join(10)
        return None, tail.decode("utf-8", "replace")
    code = api.exec_inspect(started["Id"]).get("ExitCode")
    return (code if code is not None else 1), tail.decode("utf-8", "replace")


def _is_full(box: Any, container: Any, uid: int, gid: int) -> bool:
    """True when the build filled the room of its build/ (bytes or files and folders)."""
    probe = box.client.api.exec_create(container.id, ["/bin/sh", "-c", FULL_PROBE], user=f"{uid}:{gid}")
    said = box.client.api.exec_start(probe["Id"]).decode(errors="replace").split()
    try:
        free_bytes, free_inodes = int(said[0]) * int(said[1]), int(said[2])
    except (IndexError, ValueError):
        return False
    return free_inodes == 0 or free_bytes < 4096


def _take_output(box: Any, container: Any, out: Path, room: _OutputRoom, spec: Any, uid: int, gid: int) -> None:
    """Copy the container's build/ into the folder's: files, folders and links inside it only
    (tarfile's data filter), counted against the limits again, exactly."""
    import tarfile

    from arena.sandbox.docker.engine import BOT_MOUNT

    # Read through the container's own tar (the engine's archive does not see a tmpfs), as
    # the build's user; bounded as the tmpfs is (with tar's headers).
    api = box.client.api
    reading = api.exec_create(container.id, ["tar", "-C", f"{BOT_MOUNT}/{BUILD_DIR}", "-cf", "-", "."],
                              user=f"{uid}:{gid}")
    most = room.bytes + 4096 * max(room.entries, 0) * 2 + (1 << 20)
    said = bytearray()
    with tempfile.TemporaryFile(prefix="arena-build-") as archive:
        for stdout, stderr in api.exec_start(reading["Id"], stream=True, demux=True):
            if stdout:
                archive.write(stdout)
                if archive.tell() > most:
                    raise BuildFailed(room.passed(spec))
            if stderr:
                said.extend(stderr[: 4096 - len(said)])
        if api.exec_inspect(reading["Id"]).get("ExitCode") != 0:
            why = (said.decode("utf-8", "replace").strip().splitlines() or ["tar failed"])[-1]
            raise BuildFailed(f"its build ({' '.join(spec.build)}) left in {BUILD_DIR}/ what cannot be read: {why}")
        archive.seek(0)
        for path in list(out.iterdir()):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        entries = size = 0
        with tarfile.open(fileobj=archive, mode="r:") as tar:
            members = []
            for member in tar:
                name = member.name.removeprefix("./").rstrip("/")
                if name in ("", "."):
                    continue
                entries += 1
                size += member.size if member.isfile() else 0
                if entries > room.entries or size > room.bytes or member.size > room.limits.file_mb << 20:
                    raise BuildFailed(room.passed(spec))
                members.append(member)
            try:
                tar.extractall(out, members=members, filter="data")
            except tarfile.TarError as error:  # a link out of build/, a device: not taken
                raise BuildFailed(f"its build ({' '.join(spec.build)}) left in {BUILD_DIR}/ what arena "
                                  f"does not take: {error}") from None


def build_bots(box: Any, bots: list[tuple[str, Any]]) -> None:
    """Before `arena match`/`run`: build each (name, spec) whose build/ is missing or stale.
    BuildFailed naming the bot when one fails."""
    for name, spec in bots:
        try:
            run_build(spec, box)
        except BuildFailed as failed:
            raise BuildFailed(f"bot {name} ({spec.folder}): {failed.line}", failed.output) from None
