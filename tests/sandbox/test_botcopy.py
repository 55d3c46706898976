"""Taking in a bot folder (`arena.botcopy`): a hostile submitter's folder brings nothing
from outside it into a registry, whatever it holds and however it changes while read."""

from __future__ import annotations

import os
import resource
import socket
import tracemalloc
from pathlib import Path

import pytest

from arena import botcopy
from arena.botcopy import (
    FolderLimits,
    FolderLimitsError,
    copy_bot_folder,
    vet_bot_folder,
)
from arena.store.db import content_hash

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root reads a folder as its owner")


def bot(where: Path) -> Path:
    """A small bot folder: bot.toml, bot.py (executable), lib/util.py."""
    folder = where / "src"
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.toml").write_text('name = "b"\nversion = "1"\ncommand = ["python3", "bot.py"]\ngames = ["3up3down"]\n')
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "bot.py").chmod(0o700)
    (folder / "lib" / "util.py").write_text("X = 1\n")
    (folder / "lib" / "__pycache__").mkdir()
    (folder / "lib" / "__pycache__" / "util.cpython-311.pyc").write_bytes(b"cache")
    return folder


def listing(folder: Path) -> dict[str, str]:
    """Every entry under `folder`: its mode and, for a file, its bytes."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        rel = str(path.relative_to(folder))
        seen[rel] = f"{oct(info.st_mode)} " + (path.read_text() if path.is_file() else "")
    return seen


def test_a_plain_folder_is_copied_with_modes_made_plain_and_caches_left_out(tmp_path):
    src = bot(tmp_path)
    (src / "submission.json").write_text("{}")  # the registry's own record: never taken from a submitter
    assert vet_bot_folder(src) == []
    assert copy_bot_folder(src, tmp_path / "copy") == []
    assert listing(tmp_path / "copy") == {
        "bot.py": "0o100755 print('hi')\n",
        "bot.toml": "0o100644 " + (src / "bot.toml").read_text(),
        "lib": "0o40755 ",
        "lib/util.py": "0o100644 X = 1\n",
    }
    (src / "submission.json").unlink()
    assert content_hash(tmp_path / "copy") == content_hash(src)


def test_the_build_output_of_a_bot_with_a_build_step_is_left_out_when_asked_and_only_then(tmp_path):
    """`arena submit` copies an author's folder without its build/ (arena builds it again):
    cargo's hard links and a link of the author's there are not the submission's; a bot
    without a build step keeps its build/, vetted as everything else."""
    src = bot(tmp_path)
    (src / "build").mkdir()
    (src / "build" / "bot").write_text("built elsewhere\n")
    os.link(src / "build" / "bot", src / "build" / "bot-1a2b")
    os.symlink("/etc/passwd", src / "build" / "pw")
    linked = {"build/bot: is a hard link", "build/bot-1a2b: is a hard link", "build/pw: is a symbolic link"}
    assert {line.split(" (")[0] for line in vet_bot_folder(src, leave_out_build=True)} == linked  # no build step
    toml = (src / "bot.toml").read_text()
    (src / "bot.toml").write_text(toml + 'build = ["make"]\n')
    assert {line.split(" (")[0] for line in vet_bot_folder(src)} == linked
    assert vet_bot_folder(src, leave_out_build=True) == []
    assert copy_bot_folder(src, tmp_path / "copy", leave_out_build=True) == []
    assert sorted(listing(tmp_path / "copy")) == ["bot.py", "bot.toml", "lib", "lib/util.py"]
    # bot.toml is read without following a link: a linked one says nothing of a build step.
    (src / "bot.toml").rename(tmp_path / "elsewhere.toml")
    os.symlink(tmp_path / "elsewhere.toml", src / "bot.toml")
    assert any(line.startswith("build/pw: is a symbolic link") for line in vet_bot_folder(src, leave_out_build=True))


def test_every_link_and_special_file_is_refused_with_one_line_naming_its_path(tmp_path):
    league = tmp_path / "league"
    league.mkdir()
    (league / "arena.sqlite").write_text("the deal secret")
    private = tmp_path / "private"
    private.mkdir()
    (private / "key").write_text("another bot's file")
    src = bot(tmp_path)
    (src / "store.db").symlink_to(league / "arena.sqlite")
    (src / "lib" / "theirs").symlink_to(private)
    (src / "again.py").symlink_to("bot.py")  # inside the folder, to a file inside it: refused too
    os.link(league / "arena.sqlite", src / "hard.db")
    os.mkfifo(src / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(src / "lib" / "sock"))
    try:
        problems = copy_bot_folder(src, tmp_path / "copy")
    finally:
        server.close()
    link = "links are not accepted: put the file itself in the folder"
    assert problems == [
        f"again.py: is a symbolic link (to 'bot.py'); {link}",
        "hard.db: is a hard link (one file with 2 names); links are not accepted: put a copy of the file in the folder",
        "lib/sock: is a socket; only files and folders are accepted",
        f"lib/theirs: is a symbolic link (to '{private}'); {link}",
        "pipe: is a fifo (named pipe); only files and folders are accepted",
        f"store.db: is a symbolic link (to '{league / 'arena.sqlite'}'); {link}",
    ]
    assert not (tmp_path / "copy").exists()
    assert vet_bot_folder(src) == problems


@as_root
def test_a_device_is_refused(tmp_path):
    src = bot(tmp_path)
    os.mknod(src / "null", 0o666 | 0o020000, os.makedev(1, 3))
    assert vet_bot_folder(src) == ["null: is a character device; only files and folders are accepted"]


def test_a_file_swapped_for_a_link_or_another_file_while_read_is_refused_not_followed(tmp_path, monkeypatch):
    """Between the look (lstat) and the open, a file becomes a link, or another file."""
    outside = tmp_path / "outside"
    outside.write_text("not the bot's")
    src = bot(tmp_path)
    real_open = os.open
    swaps = {
        "bot.py": lambda: (os.unlink(src / "bot.py"), os.symlink(outside, src / "bot.py")),
        "util.py": lambda: (
            (src / "other").write_text("X = 2\n"), os.rename(src / "other", src / "lib" / "util.py")
        ),
    }

    def racing_open(path, flags, mode=0o777, *, dir_fd=None):
        swap = swaps.pop(os.fspath(path), None) if dir_fd is not None else None
        if swap is not None:
            swap()
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(botcopy.os, "open", racing_open)
    problems = copy_bot_folder(src, tmp_path / "copy", keep_refused=True)
    monkeypatch.undo()
    assert problems == [
        "bot.py: changed while it was being read (it became a link); submit again",
        "lib/util.py: changed while it was being read; submit again",
    ]
    assert sorted(p.name for p in (tmp_path / "copy").rglob("*")) == ["bot.toml", "lib"]
    assert "not the bot's" not in "".join(listing(tmp_path / "copy").values())


def test_a_folder_swapped_for_a_link_while_walked_is_not_followed(tmp_path, monkeypatch):
    src = bot(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "stolen").write_text("secret")
    real_open = os.open

    def racing_open(path, flags, mode=0o777, *, dir_fd=None):
        if os.fspath(path) == "lib" and dir_fd is not None:
            os.rename(src / "lib", tmp_path / "lib-moved")
            os.symlink(elsewhere, src / "lib")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(botcopy.os, "open", racing_open)
    problems = vet_bot_folder(src)
    monkeypatch.undo()
    assert problems == ["lib/: changed while it was being read (it became a link); submit again"]


def test_the_limits_refuse_a_big_file_a_big_folder_and_too_many_files(tmp_path, monkeypatch):
    src = bot(tmp_path)
    with (src / "big.bin").open("wb") as big:  # sparse: 300 MB that take no room
        big.truncate(300 * (1 << 20))
    assert vet_bot_folder(src) == ["big.bin: is 300.0 MB; a file may hold at most 50 MB (the limit)"]
    (src / "big.bin").unlink()
    for n in range(3):
        (src / f"part{n}.bin").write_bytes(b"x" * 600_000)
    assert copy_bot_folder(src, tmp_path / "copy", FolderLimits(total_mb=1)) == [
        "part1.bin: brings the folder over 1 MB in all (the limit); leave out what the bot does not need",
        "part2.bin: brings the folder over 1 MB in all (the limit); leave out what the bot does not need",
    ]
    assert vet_bot_folder(src, FolderLimits(files=4)) == [
        "part0.bin: more than 4 files and folders in the bot folder (the limit); leave out what the bot does not need"
    ]
    monkeypatch.setenv("ARENA_BOT_MAX_FILES", "4")
    monkeypatch.setenv("ARENA_BOT_MAX_MB", "7")
    assert FolderLimits.from_env(file_mb=2) == FolderLimits(total_mb=7, files=4, file_mb=2)
    assert FolderLimits.from_env(files=9) == FolderLimits(total_mb=7, files=9, file_mb=50)
    monkeypatch.setenv("ARENA_BOT_MAX_MB", "lots")
    with pytest.raises(FolderLimitsError, match="ARENA_BOT_MAX_MB='lots' is not a whole number"):
        FolderLimits.from_env()
    with pytest.raises(FolderLimitsError, match="file_mb is 0"):
        FolderLimits(file_mb=0)


def test_a_wide_folder_keeps_few_descriptors_open_and_a_deep_one_is_refused(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for n in range(1500):  # more than the open files allowed below, were every folder kept open
        (src / f"d{n:04d}").mkdir()
        (src / f"d{n:04d}" / "f").write_text(str(n))
    # The limit is set above what this worker already holds open (earlier test files in the
    # same worker may hold a hundred or more), so the copy alone has 64 descriptors to spare:
    # it needs one a level, not one a folder.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    held = max(int(fd) for fd in os.listdir("/proc/self/fd")) + 1
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(held + 64, hard), hard))
    try:
        assert copy_bot_folder(src, tmp_path / "copy") == []
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert (tmp_path / "copy" / "d1499" / "f").read_text() == "1499"
    deep = tmp_path / "deep"
    (deep / "/".join(["d"] * 40)).mkdir(parents=True)
    assert vet_bot_folder(deep) == [f"{'/'.join(['d'] * 32)}/: is more than 32 folders deep; flatten the folder"]


def test_copying_and_hashing_stream_a_big_file_in_chunks(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "data.bin").write_bytes(os.urandom(1 << 20) * 30)
    tracemalloc.start()
    try:
        assert copy_bot_folder(src, tmp_path / "copy") == []
        digest = content_hash(tmp_path / "copy")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert digest == content_hash(src)
    assert peak < 8 * (1 << 20), f"{peak} bytes held at once for a 30 MB file"


def test_what_a_tampered_reader_sends_is_checked_again():
    receiver = botcopy._Receiver(None, FolderLimits(files=2, file_mb=1))
    for kind, payload in [
        (b"D", b"../up"), (b"D", b"/abs"), (b"D", b"a/./b"), (b"F", b'{"path": "no/parent", "x": false, "size": 1}'),
        (b"F", b'{"path": "huge", "x": false, "size": 2000000}'), (b"Q", b""),
    ]:
        with pytest.raises(botcopy._Hostile):
            botcopy._deliver(receiver, kind, payload)
    botcopy._deliver(receiver, b"F", b'{"path": "f", "x": false, "size": 2}')
    with pytest.raises(botcopy._Hostile, match="more bytes"):
        botcopy._deliver(receiver, b"C", b"abc")


# ----------------------------------------------------------- read with the owner's rights


@as_root
def test_as_root_a_users_folder_is_read_with_that_users_rights(tmp_path):
    """A folder of nobody's holding a root-only file (0600) and a 0700 root folder: the
    reader is nobody, so neither is taken; nobody's own 0600 file is."""
    src = bot(tmp_path)
    (src / "mine").write_text("nobody's own")
    (src / "mine").chmod(0o600)
    for path in [src, *src.rglob("*")]:
        os.lchown(path, NOBODY, NOBODY)
    (src / "shadow").write_text("root only")
    (src / "shadow").chmod(0o600)
    (src / "closed").mkdir(mode=0o700)
    (src / "closed" / "inside").write_text("root only too")
    problems = copy_bot_folder(src, tmp_path / "copy", keep_refused=True)
    assert problems == [
        "closed/: cannot be opened by the folder's owner (Permission denied)",
        "shadow: cannot be read by the folder's owner (Permission denied)",
    ]
    copied = listing(tmp_path / "copy")
    assert copied["mine"] == "0o100644 nobody's own"
    assert "shadow" not in copied and "closed/inside" not in copied
    assert "root only" not in "".join(copied.values())
    assert vet_bot_folder(src) == problems


@as_root
def test_as_root_a_users_link_to_a_root_only_file_is_refused(tmp_path):
    secret = tmp_path / "secret.key"
    secret.write_text("root only")
    secret.chmod(0o600)
    src = bot(tmp_path)
    for path in [src, *src.rglob("*")]:
        os.lchown(path, NOBODY, NOBODY)
    (src / "key").symlink_to(secret)
    os.link(secret, src / "key2")
    assert copy_bot_folder(src, tmp_path / "copy") == [
        f"key: is a symbolic link (to '{secret}'); links are not accepted: put the file itself in the folder",
        "key2: is a hard link (one file with 2 names); links are not accepted: put a copy of the file in the folder",
    ]
    assert not (tmp_path / "copy").exists()


# ------------------------------------------------------------ a Docker image's context


def test_an_image_is_never_built_from_a_folder_with_a_link_and_hashing_one_follows_none(tmp_path):
    """The Docker sandbox builds a bot's image from its folder as it is: a folder that
    arena submit would refuse is never sent as a build context. Its hash reads no link's
    target (a link to a fifo would stall it)."""
    import docker.errors

    from arena.faults import BotFault
    from arena.sandbox import BotSpec
    from arena.botcopy import content_hash
    from arena.sandbox.docker.images import DockerImages

    built = []

    class Images:
        def get(self, tag):
            raise docker.errors.ImageNotFound(f"no {tag}")

        def build(self, **settings):
            built.append(settings["path"])

    class Box(DockerImages):
        def __init__(self):
            self.client = type("Client", (), {"images": Images()})()
            self.image = "base"
            self._init_images()

    src = bot(tmp_path)
    (src / "Dockerfile").write_text("FROM base\nCOPY . /bot\n")
    (tmp_path / "target").write_text("one")
    (src / "stall").symlink_to(tmp_path / "target")
    (src / "passwd").symlink_to("/etc/passwd")
    digest = content_hash(src)
    (tmp_path / "target").write_text("other")
    assert content_hash(src) == digest  # the links' texts count, never their targets
    spec = BotSpec(name="b", folder=src, command=("python3", "bot.py"), dockerfile="Dockerfile")
    with pytest.raises(BotFault) as fault:
        Box().image_for(spec)
    assert fault.value.detail == (
        "its folder cannot be built from: passwd: is a symbolic link (to '/etc/passwd'); links are not accepted: "
        "put the file itself in the folder (and 1 more)"
    )
    assert built == []
    for link in ("stall", "passwd"):
        (src / link).unlink()
    Box().image_for(spec)
    assert built == [str(src)]
