"""Unpacking an uploaded bot (.tar.gz, .tar or .zip) into a quarantine folder, refusing
anything hostile with one line, and leaving nothing behind when it refuses.

Checked entry by entry, first from the headers alone (nothing written: an archive
refused for what its headers say leaves nothing to remove), then again while writing:
- names: relative, UTF-8, no '..' part, no NUL, no backslash, no name seen twice;
- kinds: regular files and folders only (a symbolic or hard link, a device, a fifo is
  refused, naming the entry);
- sizes: every file and folder counted, the folders an entry's name makes on its way
  (`a/b/c/bot.py` makes a, a/b and a/b/c: four entries) as much as those the archive
  lists, so a few KB of long names cannot make thousands of folders; names at most
  MAX_DEPTH folders deep (what `arena.botcopy` takes, and the archive's top folder);
  the bytes actually unpacked counted as they come out of the decompressor (so a bomb
  stops at the limit, whatever its headers say), a tar's headers too (an extended
  header, which tarfile reads whole, at most HEADER_BYTES); a corrupt archive is a
  refusal too.
The folder is then checked again by `arena.botcopy` when `arena.registry.submit` takes it in.
An archive whose entries all sit in one top folder (as `tar czf bot.tar.gz my-bot/` makes)
has that folder as the bot. Standard library only (and `ArenaError`, arena/errors.py).
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from arena.botcopy import MAX_DEPTH as BOT_DEPTH
from arena.diskfull import FULL_UPLOAD, is_full
from arena.errors import ArenaError

CHUNK = 1 << 16
MB = 1 << 20
MAX_DEPTH = BOT_DEPTH  # folders in a name: botcopy's 31 below the bot folder, and a top folder


@dataclass(frozen=True)
class UploadLimits:
    """What an upload may be (the defaults are the issue's; `arena serve` flags set them)."""

    packed_mb: int = 50
    unpacked_mb: int = 200
    files: int = 10_000
    file_mb: int = 50
    per_hour: int = 10  # uploads per author per hour
    upload_s: float = 120.0  # the whole upload must arrive within this many seconds
    per_address: int = 600  # requests per address per minute (a flood is refused)


class UploadRefused(ArenaError):
    """An upload refused: the HTTP status and one line saying why and what is allowed
    (always one line: a character that is not printable, such as a newline in an entry's
    name, is written as its escape)."""

    def __init__(self, status: int, line: str):
        self.status = status
        self.line = "".join(char if char.isprintable() else repr(char)[1:-1] for char in line)
        super().__init__(self.line)


NAME_SHOWN = 120  # characters of an entry's name in a refusal (a name may be thousands)


def shown(name: str) -> str:
    """An entry's name as a refusal shows it: its unprintable characters escaped (in
    quotes then, so an empty or odd name can be seen), long ones cut in the middle."""
    text = name if name and name.isprintable() else repr(name)
    return text if len(text) <= NAME_SHOWN else text[: NAME_SHOWN // 2 - 2] + "..." + text[-(NAME_SHOWN // 2 - 1):]


def unpack(archive: Path, dest: Path, limits: UploadLimits) -> Path:
    """Unpack `archive` into `dest` (made here; removed again on refusal) and return the
    bot's folder (`dest`, or its one top folder). UploadRefused says why not.

    Two passes: the first reads every entry's header (name, kind, size) and checks them
    all, writing nothing, so an archive refused for what its headers say leaves nothing
    to remove (removing 10,000 folders takes seconds on a busy disk); the second writes,
    checking again and counting the bytes as they come out."""
    try:
        with open(archive, "rb") as stream:
            head = stream.read(512)
        if head[:2] == b"\x1f\x8b" or head[257:262] == b"ustar":
            walk = _untar
        elif head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
            walk = _unzip
        else:
            raise UploadRefused(415, "the upload is not a .tar.gz, .tar or .zip archive of a bot folder")
        walk(archive, None, limits)
    except _UNREADABLE as error:
        raise _corrupt(error) from None
    dest.mkdir(parents=True, mode=0o755)
    try:
        walk(archive, dest, limits)
        entries = [entry for entry in dest.iterdir()]
        if len(entries) == 1 and entries[0].is_dir() and not (dest / "bot.toml").exists():
            return entries[0]
        return dest
    except UploadRefused:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except _UNREADABLE as error:
        shutil.rmtree(dest, ignore_errors=True)
        raise _corrupt(error) from None


# RecursionError: tarfile reads a chain of extended headers by recursion, one call each.
_UNREADABLE = (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError,
               RecursionError)


def _corrupt(error: BaseException) -> UploadRefused:
    if is_full(error):  # the server's disk, not the archive
        return UploadRefused(507, FULL_UPLOAD)
    return UploadRefused(400, f"the archive is corrupt or unreadable ({error}); pack the bot folder again")


class _Counter:
    """The running totals an archive may not exceed."""

    def __init__(self, limits: UploadLimits):
        self.limits = limits
        self.entries = 0
        self.bytes = 0
        self.seen: set[str] = set()  # the names the archive lists
        self.folders: set[str] = set()  # the folders made so far, listed or not

    def entry(self, name: str, folder: bool) -> PurePosixPath:
        """A checked relative path for an entry's name (a folder's when `folder`), counted
        with every folder its name makes on the way."""
        if "\x00" in name or "\\" in name:
            raise UploadRefused(400, f"{shown(name)}: a name with a NUL or a backslash is not accepted")
        path = PurePosixPath(name)
        if path.is_absolute() or name.startswith("/"):
            raise UploadRefused(400, f"{shown(name)}: an absolute name is not accepted; pack the folder with relative names")
        if ".." in path.parts:
            raise UploadRefused(400, f"{shown(name)}: a name with '..' would reach outside the bot folder; not accepted")
        parts = [part for part in path.parts if part not in ("", ".")]
        if not parts:
            if not folder:  # '' or '.' as a file: it would be written over the bot folder itself
                raise UploadRefused(400, f"{shown(name)}: an entry with no name is not accepted; pack the bot folder again")
            self._count()  # the archive's own top ('./'): the folder unpacked into
            return PurePosixPath(".")
        clean = PurePosixPath(*parts)
        if len(parts) - (0 if folder else 1) > MAX_DEPTH:
            raise UploadRefused(400, f"{shown(name)}: is more than {MAX_DEPTH} folders deep; flatten the folder")
        if str(clean) in self.seen:
            raise UploadRefused(400, f"{shown(str(clean))}: appears twice in the archive; not accepted")
        self.seen.add(str(clean))
        for end in range(1, len(parts)):  # the folders the name makes on its way, each counted once
            parent = "/".join(parts[:end])
            if parent not in self.folders:
                self.folders.add(parent)
                self._count()
        if folder:
            if str(clean) in self.folders:
                return clean  # made (and counted) already on the way to an earlier entry
            self.folders.add(str(clean))
        self._count()
        return clean

    def _count(self) -> None:
        self.entries += 1
        if self.entries > self.limits.files:
            raise UploadRefused(413, f"the archive holds more than {self.limits.files} files and folders (the limit)")

    def declared(self, name: str, size: int) -> None:
        """A file's size as its header says, counted (the first pass)."""
        self.bytes += size
        if size > self.limits.file_mb * MB:
            raise UploadRefused(413, f"{shown(name)}: unpacks to more than {self.limits.file_mb} MB (the limit a file)")
        if self.bytes > self.limits.unpacked_mb * MB:
            raise UploadRefused(413, f"the archive unpacks to more than {self.limits.unpacked_mb} MB (the limit)")

    def copy(self, name: str, source, target: Path, executable: bool) -> None:  # noqa: ANN001
        """Stream one file's bytes into `target`, counting them."""
        per_file = self.limits.file_mb * MB
        total = self.limits.unpacked_mb * MB
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if executable else 0o644)
        written = 0
        with os.fdopen(fd, "wb") as sink:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                self.bytes += len(chunk)
                if written > per_file:
                    raise UploadRefused(413, f"{shown(name)}: unpacks to more than {self.limits.file_mb} MB (the limit a file)")
                if self.bytes > total:
                    raise UploadRefused(413, f"the archive unpacks to more than {self.limits.unpacked_mb} MB (the limit)")
                sink.write(chunk)


HEADER_BYTES = 64 * 1024  # an entry's extended header (a long name, pax records) at most
ENTRY_BYTES = 8 * 1024  # what each entry's headers may add to the stream, on average


class _Header(tarfile.TarInfo):
    """tarfile reads an extended header (a GNU long name, pax records) whole into memory:
    one is refused over HEADER_BYTES before it is read (a 300 KB upload held a 300 MB
    name)."""

    def _proc_member(self, tar):  # noqa: ANN001, ANN202
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
                         tarfile.SOLARIS_XHDTYPE) and self.size > HEADER_BYTES:
            raise UploadRefused(400, f"an entry's extended header holds {self.size} bytes (at most {HEADER_BYTES}); "
                                "pack the bot folder with plain tar")
        return super()._proc_member(tar)


class _Bounded:
    """The archive's bytes as they come out of the decompressor, counted: the whole
    stream (headers and padding too) may not pass `most` bytes."""

    def __init__(self, source, most: int, limits: UploadLimits):  # noqa: ANN001
        self.source = source
        self.most = most
        self.limits = limits
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(size if size >= 0 else CHUNK)
        self.read_bytes += len(data)
        if self.read_bytes > self.most:
            raise UploadRefused(413, f"the archive unpacks to more than {self.limits.unpacked_mb} MB (the limit)")
        return data


def _untar(archive: Path, dest: Path | None, limits: UploadLimits) -> None:
    """Each member checked and counted; written under `dest` (None: only checked)."""
    counter = _Counter(limits)
    most = limits.unpacked_mb * MB + (limits.files + 1) * ENTRY_BYTES
    with open(archive, "rb") as raw:
        compressed = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        source = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
        # Stream mode ("r|"): members are read in order, once; nothing seeks back.
        with tarfile.open(fileobj=_Bounded(source, most, limits), mode="r|", tarinfo=_Header) as tar:
            for member in tar:
                name = member.name
                if member.issym() or member.islnk():
                    kind = "symbolic link" if member.issym() else "hard link"
                    said = f"{shown(name)}: is a {kind} (to {member.linkname[:NAME_SHOWN]!r}); links are not accepted: put the file itself in"
                    if "build" in PurePosixPath(name).parts[:2]:  # a build's output, e.g. cargo's links
                        said += "; or leave build/ out: arena builds it (arena submit --to does)"
                    raise UploadRefused(400, said)
                if not (member.isreg() or member.isdir()):
                    raise UploadRefused(400, f"{shown(name)}: is a device, fifo or other special file; only files and folders")
                path = counter.entry(name, member.isdir())
                if member.isreg():
                    counter.declared(name, member.size)  # a tar member holds exactly its size
                if dest is None:
                    continue
                target = dest / path
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True, mode=0o755)
                    continue
                source_file = tar.extractfile(member)
                counter.copy(name, source_file, target, bool(member.mode & 0o100))


def _unzip(archive: Path, dest: Path | None, limits: UploadLimits) -> None:
    """Each entry checked and counted; written under `dest` (None: only checked; the sizes
    a zip declares are checked then, and the bytes that come out counted when written)."""
    counter = _Counter(limits)
    with zipfile.ZipFile(archive) as packed:
        infos = packed.infolist()
        if len(infos) > limits.files:
            raise UploadRefused(413, f"the archive holds more than {limits.files} files and folders (the limit)")
        for info in infos:
            name = info.filename
            mode = info.external_attr >> 16
            if info.flag_bits & 0x1:
                raise UploadRefused(400, f"{shown(name)}: is encrypted; pack the bot without a password")
            if stat.S_ISLNK(mode):
                raise UploadRefused(400, f"{shown(name)}: is a symbolic link; links are not accepted: put the file itself in")
            if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # no type bits: a plain file
                raise UploadRefused(400, f"{shown(name)}: is a device, fifo or other special file; only files and folders")
            folder = name.endswith("/")  # zipfile's is_dir(), which fails on an empty name (IndexError)
            path = counter.entry(name, folder)
            if dest is None:
                if not folder:
                    counter.declared(name, info.file_size)
                continue
            target = dest / path
            if folder:
                target.mkdir(parents=True, exist_ok=True, mode=0o755)
                continue
            with packed.open(info) as source:
                counter.copy(name, source, target, bool(mode & 0o100))
