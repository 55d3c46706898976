"""Taking in a submitted bot folder: nothing from outside it, nothing but files and folders.

Every path into a registry or a bot image goes through here (`arena submit`, the
submission server, and the league when it looks at a registry folder):

    problems = vet_bot_folder(src)                 # [] when the folder may be taken in
    problems = copy_bot_folder(src, dst)           # copies to dst (made here) when []
    limits = FolderLimits.from_env()               # the organiser's limits (below)

Both return one line per problem, each naming its path relative to the bot folder, e.g.
"secret.db: is a symbolic link (to '/srv/league/arena.sqlite'); links are not accepted:
put the file itself in the folder". `copy_bot_folder` leaves nothing at `dst` when it
refuses (unless `keep_refused`, which leaves the accepted part for a caller that still
wants to read its bot.toml and removes it itself).

What is refused:
- any symbolic link, wherever it points (inside the folder too: one rule that cannot be
  got wrong; a link kept in a registry would be followed by whatever reads it next), and
  a file with more than one name (a hard link: its other name may be a file the
  submitter could not read, e.g. a league's store);
- devices, fifos and sockets: only regular files and folders are taken;
- a file the folder's owner cannot read: when arena runs as root and the folder belongs
  to another user, the folder is read by a child process that has dropped to the
  owner's uid, gid and groups (`os.setgroups`, `os.setgid`, `os.setuid`), so a 0600
  file of someone else is refused, never copied; the parent (root) writes the copy and
  checks everything the child sends (paths, sizes, counts) again;
- more than the limits: `FolderLimits` (defaults 200 MB in all, 10,000 files and
  folders, 50 MB per file), set by the organiser with $ARENA_BOT_MAX_MB,
  $ARENA_BOT_MAX_FILES and $ARENA_BOT_MAX_FILE_MB, or `arena submit --max-bot-mb ...`;
  and folders nested more than 32 deep;
- names that are not UTF-8.

How: the tree is walked with `os.scandir` on folder descriptors, never following a
link; each file and folder is opened relative to its parent's descriptor with
O_NOFOLLOW (and O_NONBLOCK, so a fifo swapped in cannot hang it), and the opened
descriptor's fstat must be the entry that was vetted (same device and inode, a regular
file with one link): a path swapped for a link between the look and the open is
refused, not followed. File contents are streamed in chunks of 1 MB.
Ignored (neither vetted nor copied): `__pycache__` folders, `*.pyc` files, and the
registry's own `submission.json` at the top; and, when asked (`leave_out_build`: what
`arena submit` copies from an author's folder), build/ at the top of a bot whose bot.toml
has a `build` step: arena builds it again from scratch (arena.langs.build), so a build
made by `arena match` (cargo's hard links, a big target/) is never the author's problem.

The content hash of a bot folder (`content_hash`, `hashed_files`) lives here too, beside
what a bot folder may hold: the store, the registry, the cluster and a build's mark
(arena.langs.built) all ask it.

Standard library only.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import pwd
import shutil
import stat
import struct
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError

CHUNK = 1 << 20
MB = 1 << 20
MAX_PROBLEMS = 20  # lines told; the rest are counted
MAX_DEPTH = 32  # folders inside folders (one descriptor open per level while walking)
RECORD_FILE = "submission.json"  # a registry's record of a submitted bot, written by arena itself
IGNORED_TOP = (RECORD_FILE,)
MANIFEST = "bot.toml"
MANIFEST_MAX = 1 << 20  # a bot.toml read to see whether the bot has a build step
BUILD_DIR = "build"  # arena.langs.build's output folder

MAX_MB_ENV = "ARENA_BOT_MAX_MB"
MAX_FILES_ENV = "ARENA_BOT_MAX_FILES"
MAX_FILE_MB_ENV = "ARENA_BOT_MAX_FILE_MB"


class FolderLimitsError(ArenaError, ValueError):
    """A limit given by the organiser is not a whole number of at least 1."""


@dataclass(frozen=True)
class FolderLimits:
    """How much a bot folder may hold: in all, in files and folders, per file."""

    total_mb: int = 200
    files: int = 10_000
    file_mb: int = 50

    def __post_init__(self) -> None:
        for name in ("total_mb", "files", "file_mb"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise FolderLimitsError(f"the bot folder limit {name} is {value!r}; it is a whole number of at least 1")

    @classmethod
    def from_env(cls, **given: int | None) -> FolderLimits:
        """The defaults, then $ARENA_BOT_MAX_MB, $ARENA_BOT_MAX_FILES, $ARENA_BOT_MAX_FILE_MB,
        then the values in `given` that are not None (e.g. a command's flags)."""
        values: dict[str, int] = {}
        for name, env in (("total_mb", MAX_MB_ENV), ("files", MAX_FILES_ENV), ("file_mb", MAX_FILE_MB_ENV)):
            text = os.environ.get(env, "").strip()
            if text:
                try:
                    values[name] = int(text)
                except ValueError:
                    raise FolderLimitsError(f"{env}={text!r} is not a whole number") from None
            if given.get(name) is not None:
                values[name] = given[name]  # type: ignore[assignment]
        return cls(**values)


def vet_bot_folder(
    src: str | Path, limits: FolderLimits | None = None, *, leave_out_build: bool = False
) -> list[str]:
    """The problems that keep folder `src` out of a registry or an image ([] when none),
    one line each naming the path relative to `src`; read with its owner's rights (see the
    module docstring). Nothing is copied; file contents are not read (but bot.toml's, with
    `leave_out_build`)."""
    receiver = _Receiver(None, limits or FolderLimits(), leave_out_build)
    _transfer(Path(src), receiver, read=False)
    return receiver.told()


def copy_bot_folder(
    src: str | Path, dst: str | Path, limits: FolderLimits | None = None, *, keep_refused: bool = False,
    leave_out_build: bool = False,
) -> list[str]:
    """Copy folder `src` to `dst` (which must not exist; made here, mode 755, files 644 or
    755) when nothing in it is refused; returns the problems, one line each ([] when
    copied). On a problem `dst` is removed, unless `keep_refused`: then it holds what was
    accepted (never a refused entry) and the caller removes it."""
    dst = Path(dst)
    os.mkdir(dst, 0o755)
    os.chmod(dst, 0o755)
    receiver = _Receiver(dst, limits or FolderLimits(), leave_out_build)
    try:
        _transfer(Path(src), receiver, read=True)
    finally:
        receiver.close_file()
    problems = receiver.told()
    if problems and not keep_refused:
        shutil.rmtree(dst, ignore_errors=True)
    return problems


# ------------------------------------------------------------------- the content hash


def hashed_files(folder: str | Path) -> list[Path]:
    """The files of a bot folder that are its content, sorted: every file and link but
    Python's caches, the registry's record (`submission.json` at the top, written by arena
    after the hash), and build/ when bot.toml has a `build` step (what it makes is not the
    bot's source, while bot.toml, and so the build command, is hashed). No link is
    followed, into a folder or to a file (a link to a fifo would stall the hash)."""
    folder = Path(folder)
    skip_build = has_build_step(folder)
    found = []
    for path in folder.rglob("*"):  # rglob enters no linked folder
        relative = path.relative_to(folder)
        # Python writes __pycache__ into a bot's folder when it runs: not the bot's content.
        if "__pycache__" in relative.parts or path.suffix == ".pyc" or relative.parts == (RECORD_FILE,):
            continue
        if skip_build and relative.parts[0] == "build":
            continue
        if path.is_symlink() or path.is_file():
            found.append(path)
    return sorted(found)


def content_hash(folder: str | Path) -> str:
    """sha256 of every file's relative path, executable bit and bytes, and of each link's
    own text (`hashed_files`): the one identity of a bot folder's content, for the store,
    the registry, the build cache, the cluster and the Docker image's tag."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in hashed_files(folder):
        # The name's own bytes: any name a file system holds (one that is not UTF-8 too;
        # the same bytes as str.encode for every UTF-8 name, so no hash changes).
        name = os.fsencode(path.relative_to(folder))
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):  # a folder with a link is refused to play; hashed all the same
            digest.update(name + b"\0l" + os.fsencode(os.readlink(path)) + b"\0")
            continue
        digest.update(name + b"\0")
        digest.update(b"x" if info.st_mode & 0o111 else b"-")
        with path.open("rb") as content:  # in chunks: a big file is never held whole
            while chunk := content.read(1 << 20):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def has_build_step(folder: str | Path) -> bool:
    """True when folder/bot.toml is valid TOML with a `build` key (arena.langs.build); the content hash
    (`content_hash`) leaves build/ out of such a bot."""
    try:
        return "build" in tomllib.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


# ----------------------------------------------------------------------- the receiver


class _Hostile(Exception):
    """What the walker sent breaks the rules (a walker run as the submitter may be tampered with)."""


class _Receiver:
    """Takes what the walker sends, checks it again and writes the copy (when `dst`)."""

    def __init__(self, dst: Path | None, limits: FolderLimits, leave_out_build: bool = False):
        self.dst = dst
        self.limits = limits
        self.leave_out_build = leave_out_build
        self.problems: list[str] = []
        self.entries = 0
        self.total = 0
        self.folders: set[str] = {""}
        self.seen: set[str] = set()
        self.fd: int | None = None
        self.path = ""
        self.left = 0

    def told(self) -> list[str]:
        if len(self.problems) <= MAX_PROBLEMS:
            return list(self.problems)
        more = len(self.problems) - MAX_PROBLEMS
        return self.problems[:MAX_PROBLEMS] + [f"and {more} more problem(s) like these"]

    def problem(self, line: str) -> None:
        self.problems.append(line[:400])

    def _new(self, rel: str) -> None:
        parts = rel.split("/")
        if not rel or rel.startswith("/") or "\0" in rel or any(part in ("", ".", "..") for part in parts):
            raise _Hostile(f"a path {rel!r}")
        if "/".join(parts[:-1]) not in self.folders or rel in self.seen:
            raise _Hostile(f"a path {rel!r} out of order")
        self.seen.add(rel)
        self.entries += 1
        if self.entries > self.limits.files:
            raise _Hostile("more entries than the limit")

    def folder(self, rel: str) -> None:
        self._new(rel)
        self.folders.add(rel)
        if self.dst is not None:
            path = self.dst / rel
            os.mkdir(path, 0o755)
            os.chmod(path, 0o755)

    def file(self, rel: str, executable: bool, size: int) -> None:
        self._new(rel)
        if size < 0 or size > self.limits.file_mb * MB or self.total + size > self.limits.total_mb * MB:
            raise _Hostile(f"a file {rel!r} over the limits")
        self.total += size
        self.path, self.left = rel, size
        if self.dst is not None:
            mode = 0o755 if executable else 0o644
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            self.fd = os.open(self.dst / rel, flags, mode)
            os.fchmod(self.fd, mode)

    def chunk(self, data: bytes) -> None:
        if len(data) > self.left:
            raise _Hostile(f"more bytes of {self.path!r} than its size")
        self.left -= len(data)
        if self.fd is not None:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]

    def end(self) -> None:
        if self.left:
            raise _Hostile(f"fewer bytes of {self.path!r} than its size")
        self.close_file()

    def close_file(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def drop(self) -> None:
        """A file cut short (it changed while read): not kept in the copy."""
        self.close_file()
        if self.dst is not None and self.path:
            try:
                os.unlink(self.dst / self.path)
            except OSError:
                pass


# ------------------------------------------------------------------------- the walker

# Frames from the walker: one byte of kind, 4 bytes of length, the payload.
_FOLDER, _FILE, _CHUNK, _END, _DROP, _PROBLEM, _DONE = (bytes([kind]) for kind in b"DFCEXPZ")
_HEAD = struct.Struct(">cI")
_KINDS = {
    stat.S_IFCHR: "character device", stat.S_IFBLK: "block device", stat.S_IFIFO: "fifo (named pipe)",
    stat.S_IFSOCK: "socket",
}


def _listing(dirfd: int, rel: str, send: Callable[[bytes, bytes], None]) -> list[str]:
    """The names in the folder open at `dirfd`, sorted ([] and a problem when unlistable)."""
    try:
        with os.scandir(dirfd) as listing:
            return sorted(entry.name for entry in listing)
    except OSError as error:
        send(_PROBLEM, f"{rel or '.'}/: cannot be listed by the folder's owner ({error.strerror})".encode())
        return []


def _walk(
    topfd: int, limits: FolderLimits, read: bool, send: Callable[[bytes, bytes], None], leave_out_build: bool = False
) -> None:
    """Walk the folder open at `topfd` and send what it holds (see the module docstring),
    depth first in name order, with one descriptor open per level (at most MAX_DEPTH).
    Runs as the folder's owner (a child process) or as arena; closes `topfd`."""
    entries = 0
    total = 0
    top = _listing(topfd, "", send)
    if leave_out_build and BUILD_DIR in top and _has_build_step(topfd):
        top.remove(BUILD_DIR)
    stack = [(topfd, "", iter(top))]
    try:
        while stack:
            dirfd, rel, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(dirfd)
                stack.pop()
                continue
            path = f"{rel}/{name}" if rel else name
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                shown = os.fsencode(path).decode("utf-8", "backslashreplace")  # x\xff.py, as ls -b
                send(_PROBLEM, f"{shown}: its name is not UTF-8; rename it".encode())
                continue
            if name == "__pycache__" or name.endswith(".pyc") or (not rel and name in IGNORED_TOP):
                continue
            try:
                info = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except OSError as error:
                send(_PROBLEM, f"{path}: cannot be looked at ({error.strerror})".encode())
                continue
            entries += 1
            if entries > limits.files:
                send(_PROBLEM, (
                    f"{path}: more than {limits.files} files and folders in the bot folder (the limit); "
                    "leave out what the bot does not need"
                ).encode())
                return
            kind = stat.S_IFMT(info.st_mode)
            if kind == stat.S_IFLNK:
                try:
                    target = os.readlink(name, dir_fd=dirfd)
                except OSError:
                    target = "?"
                send(_PROBLEM, (
                    f"{path}: is a symbolic link (to {target[:120]!r}); links are not accepted: "
                    "put the file itself in the folder"
                ).encode())
            elif kind == stat.S_IFDIR:
                if len(stack) >= MAX_DEPTH:
                    send(_PROBLEM, f"{path}/: is more than {MAX_DEPTH} folders deep; flatten the folder".encode())
                    continue
                flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
                try:
                    fd = os.open(name, flags, dir_fd=dirfd)
                except OSError as error:
                    send(_PROBLEM, _open_failed(f"{path}/", error, "opened").encode())
                    continue
                opened = os.fstat(fd)
                if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                    os.close(fd)
                    send(_PROBLEM, f"{path}/: changed while it was being read; submit again".encode())
                    continue
                send(_FOLDER, path.encode())
                stack.append((fd, path, iter(_listing(fd, path, send))))
            elif kind == stat.S_IFREG:
                total = _send_file(dirfd, name, path, info, limits, read, total, send)
            else:
                what = _KINDS.get(kind, "special file")
                send(_PROBLEM, f"{path}: is a {what}; only files and folders are accepted".encode())
    finally:
        for dirfd, _, _ in stack:  # folders still open when the walk stopped early
            os.close(dirfd)


def _has_build_step(topfd: int) -> bool:
    """True when the folder's bot.toml (a plain file, read without following a link) is
    TOML with a `build` key, as arena.store.db.has_build_step says."""
    try:
        fd = os.open(MANIFEST, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=topfd)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        text = os.read(fd, MANIFEST_MAX + 1)
    finally:
        os.close(fd)
    try:
        return len(text) <= MANIFEST_MAX and "build" in tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


def _open_failed(path: str, error: OSError, verb: str) -> str:
    """The line for an entry that could not be opened: a link swapped in since it was
    looked at (O_NOFOLLOW refused it), or the owner's rights."""
    if error.errno in (errno.ELOOP, errno.ENOTDIR):
        return f"{path}: changed while it was being read (it became a link); submit again"
    return f"{path}: cannot be {verb} by the folder's owner ({error.strerror})"


def _send_file(
    dirfd: int, name: str, path: str, info: os.stat_result, limits: FolderLimits, read: bool, total: int,
    send: Callable[[bytes, bytes], None],
) -> int:
    """Vet (and with `read`, send) one regular file; returns the bytes counted so far."""
    if info.st_nlink > 1:
        send(_PROBLEM, (
            f"{path}: is a hard link (one file with {info.st_nlink} names); links are not accepted: "
            "put a copy of the file in the folder"
        ).encode())
        return total
    size = info.st_size
    if size > limits.file_mb * MB:
        send(_PROBLEM, (
            f"{path}: is {size / MB:.1f} MB; a file may hold at most {limits.file_mb} MB (the limit)"
        ).encode())
        return total
    if total + size > limits.total_mb * MB:
        send(_PROBLEM, (
            f"{path}: brings the folder over {limits.total_mb} MB in all (the limit); "
            "leave out what the bot does not need"
        ).encode())
        return total
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dirfd)
    except OSError as error:
        send(_PROBLEM, _open_failed(path, error, "read").encode())
        return total
    try:
        opened = os.fstat(fd)
        if (
            (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino)
            or not stat.S_ISREG(opened.st_mode) or opened.st_nlink != 1 or opened.st_size != size
        ):
            send(_PROBLEM, f"{path}: changed while it was being read; submit again".encode())
            return total
        total += size
        if not read:
            return total
        executable = bool(opened.st_mode & 0o111)
        send(_FILE, json.dumps({"path": path, "x": executable, "size": size}).encode())
        left = size
        while left:
            data = os.read(fd, min(CHUNK, left))
            if not data:
                break
            left -= len(data)
            send(_CHUNK, data)
        if left or os.read(fd, 1):
            send(_DROP, b"")
            send(_PROBLEM, f"{path}: changed while it was being read; submit again".encode())
            return total
        send(_END, b"")
        return total
    finally:
        os.close(fd)


# ------------------------------------------------------------------ as the owner, or not


def _owner_rights(info: os.stat_result) -> tuple[int, int, list[int]] | None:
    """(uid, gid, groups) to read a folder of `info` with, when arena runs as root and the
    folder is another user's; None when arena reads it with its own rights."""
    if os.geteuid() != 0 or info.st_uid == 0:
        return None
    try:
        entry = pwd.getpwuid(info.st_uid)
    except KeyError:
        return info.st_uid, info.st_gid, [info.st_gid]
    return info.st_uid, entry.pw_gid, os.getgrouplist(entry.pw_name, entry.pw_gid)


def _transfer(src: Path, receiver: _Receiver, read: bool) -> None:
    """Walk `src` (as its owner when that is not arena) into `receiver`."""
    src = Path(os.path.abspath(src))
    try:
        topfd = os.open(src, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        receiver.problem(f"{src} cannot be opened as a folder ({error.strerror})")
        return
    rights = _owner_rights(os.fstat(topfd))
    if rights is None:
        _receive_direct(topfd, receiver, read)
    else:
        _receive_from_child(topfd, rights, receiver, read)


def _deliver(receiver: _Receiver, kind: bytes, payload: bytes) -> None:
    if kind == _PROBLEM:
        receiver.problem(payload.decode("utf-8", "replace"))
    elif kind == _FOLDER:
        receiver.folder(payload.decode())
    elif kind == _FILE:
        head = json.loads(payload)
        receiver.file(str(head["path"]), bool(head["x"]), int(head["size"]))
    elif kind == _CHUNK:
        receiver.chunk(payload)
    elif kind == _END:
        receiver.end()
    elif kind == _DROP:
        receiver.drop()
    else:
        raise _Hostile(f"a frame of kind {kind!r}")


def _receive_direct(topfd: int, receiver: _Receiver, read: bool) -> None:
    try:
        _walk(topfd, receiver.limits, read, lambda kind, payload: _deliver(receiver, kind, payload),
              receiver.leave_out_build)
    except _Hostile as error:  # cannot happen in-process, but one path for both
        receiver.problem(f"the folder could not be read safely ({error}); nothing was taken")


def _receive_from_child(topfd: int, rights: tuple[int, int, list[int]], receiver: _Receiver, read: bool) -> None:
    """Fork a child that drops to the owner's rights and walks; read its frames here."""
    uid, gid, groups = rights
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no return from here
        code = 1
        try:
            os.close(readable)
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            if os.getuid() != uid or os.geteuid() != uid:
                os._exit(3)

            def send(kind: bytes, payload: bytes) -> None:
                frame = _HEAD.pack(kind, len(payload)) + payload
                view = memoryview(frame)
                while view:
                    view = view[os.write(writable, view):]

            _walk(topfd, receiver.limits, read, send, receiver.leave_out_build)
            send(_DONE, b"")
            code = 0
        except BaseException:  # noqa: BLE001 - the parent tells what is missing
            code = 2
        finally:
            os._exit(code)
    os.close(topfd)
    os.close(writable)
    finished = False
    try:
        with os.fdopen(readable, "rb", buffering=CHUNK) as stream:
            while True:
                head = stream.read(_HEAD.size)
                if len(head) < _HEAD.size:
                    break
                kind, length = _HEAD.unpack(head)
                if length > CHUNK + 4096:
                    raise _Hostile("a frame too long")
                payload = stream.read(length)
                if len(payload) < length:
                    break
                if kind == _DONE:
                    finished = True
                    break
                _deliver(receiver, kind, payload)
    except (_Hostile, ValueError, KeyError, UnicodeDecodeError) as error:
        receiver.problem(f"the folder could not be read safely ({error}); nothing was taken")
        os.kill(pid, 9)
        finished = True
    finally:
        _, status = os.waitpid(pid, 0)
    if not finished:
        receiver.problem(
            f"the folder could not be read as its owner (uid {uid}): the reader ended with status {status}; "
            "nothing was taken"
        )
