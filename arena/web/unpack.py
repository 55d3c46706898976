"""Unpacking an uploaded bot (.tar.gz, .tar or .zip) into a quarantine folder, refusing
anything hostile with one line, and leaving nothing behind when it refuses.

Checked while unpacking, entry by entry, before a byte is written where it should not be:
- names: relative, UTF-8, no '..' part, no NUL, no backslash, no name seen twice;
- kinds: regular files and folders only (a symbolic or hard link, a device, a fifo is
  refused, naming the entry);
- sizes: the files and folders counted, and the bytes actually unpacked counted as they
  come out of the decompressor (so a bomb stops at the limit, whatever its headers say);
  a corrupt archive is a refusal too.
The folder is then checked again by `arena.botcopy` when `arena.registry.submit` takes it in.
An archive whose entries all sit in one top folder (as `tar czf bot.tar.gz my-bot/` makes)
has that folder as the bot. Standard library only.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

CHUNK = 1 << 16
MB = 1 << 20


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


class UploadRefused(Exception):
    """An upload refused: the HTTP status and one line saying why and what is allowed."""

    def __init__(self, status: int, line: str):
        self.status = status
        self.line = line
        super().__init__(line)


def unpack(archive: Path, dest: Path, limits: UploadLimits) -> Path:
    """Unpack `archive` into `dest` (made here; removed again on refusal) and return the
    bot's folder (`dest`, or its one top folder). UploadRefused says why not."""
    dest.mkdir(parents=True, mode=0o755)
    try:
        with open(archive, "rb") as stream:
            head = stream.read(512)
        if head[:2] == b"\x1f\x8b" or head[257:262] == b"ustar":
            _untar(archive, dest, limits)
        elif head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
            _unzip(archive, dest, limits)
        else:
            raise UploadRefused(415, "the upload is not a .tar.gz, .tar or .zip archive of a bot folder")
        entries = [entry for entry in dest.iterdir()]
        if len(entries) == 1 and entries[0].is_dir() and not (dest / "bot.toml").exists():
            return entries[0]
        return dest
    except UploadRefused:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError) as error:
        shutil.rmtree(dest, ignore_errors=True)
        raise UploadRefused(400, f"the archive is corrupt or unreadable ({error}); pack the bot folder again") from None


class _Counter:
    """The running totals an archive may not exceed."""

    def __init__(self, limits: UploadLimits):
        self.limits = limits
        self.entries = 0
        self.bytes = 0
        self.seen: set[str] = set()

    def entry(self, name: str) -> PurePosixPath:
        """A checked relative path for an entry's name."""
        self.entries += 1
        if self.entries > self.limits.files:
            raise UploadRefused(413, f"the archive holds more than {self.limits.files} files and folders (the limit)")
        if "\x00" in name or "\\" in name:
            raise UploadRefused(400, f"{name!r}: a name with a NUL or a backslash is not accepted")
        path = PurePosixPath(name)
        if path.is_absolute() or name.startswith("/"):
            raise UploadRefused(400, f"{name}: an absolute name is not accepted; pack the folder with relative names")
        if ".." in path.parts:
            raise UploadRefused(400, f"{name}: a name with '..' would reach outside the bot folder; not accepted")
        parts = [part for part in path.parts if part not in ("", ".")]
        if not parts:
            return PurePosixPath(".")
        clean = PurePosixPath(*parts)
        if str(clean) in self.seen:
            raise UploadRefused(400, f"{clean}: appears twice in the archive; not accepted")
        self.seen.add(str(clean))
        return clean

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
                    raise UploadRefused(413, f"{name}: unpacks to more than {self.limits.file_mb} MB (the limit a file)")
                if self.bytes > total:
                    raise UploadRefused(413, f"the archive unpacks to more than {self.limits.unpacked_mb} MB (the limit)")
                sink.write(chunk)


def _untar(archive: Path, dest: Path, limits: UploadLimits) -> None:
    counter = _Counter(limits)
    # Stream mode ("r|*"): members are read in order, once; nothing seeks back.
    with tarfile.open(archive, mode="r|*") as tar:
        for member in tar:
            name = member.name
            if member.issym() or member.islnk():
                kind = "symbolic link" if member.issym() else "hard link"
                raise UploadRefused(
                    400, f"{name}: is a {kind} (to {member.linkname!r}); links are not accepted: put the file itself in"
                )
            if not (member.isreg() or member.isdir()):
                raise UploadRefused(400, f"{name}: is a device, fifo or other special file; only files and folders")
            path = counter.entry(name)
            target = dest / path
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True, mode=0o755)
                continue
            source = tar.extractfile(member)
            counter.copy(name, source, target, bool(member.mode & 0o100))


def _unzip(archive: Path, dest: Path, limits: UploadLimits) -> None:
    counter = _Counter(limits)
    with zipfile.ZipFile(archive) as packed:
        infos = packed.infolist()
        if len(infos) > limits.files:
            raise UploadRefused(413, f"the archive holds more than {limits.files} files and folders (the limit)")
        for info in infos:
            name = info.filename
            mode = info.external_attr >> 16
            if info.flag_bits & 0x1:
                raise UploadRefused(400, f"{name}: is encrypted; pack the bot without a password")
            if stat.S_ISLNK(mode):
                raise UploadRefused(400, f"{name}: is a symbolic link; links are not accepted: put the file itself in")
            if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # no type bits: a plain file
                raise UploadRefused(400, f"{name}: is a device, fifo or other special file; only files and folders")
            path = counter.entry(name)
            target = dest / path
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True, mode=0o755)
                continue
            with packed.open(info) as source:
                counter.copy(name, source, target, bool(mode & 0o100))
