"""The door's pieces without a server: the unpacker's rules one by one, the [server] table
of a league file, the book's tokens."""

from __future__ import annotations

import io
import os
import tarfile

import pytest

from arena.web.authors import Book
from arena.web.errors import WebError
from arena.web.settings import server_config, server_table
from arena.web.unpack import UploadLimits, UploadRefused, unpack
from tests.web_helpers import tar_file, tar_of


def archive(tmp_path, body: bytes):
    path = tmp_path / "upload"
    path.write_bytes(body)
    return path


def test_a_name_twice_is_refused_and_nothing_stays(tmp_path):
    body = tar_of([tar_file("bot.py", b"one"), tar_file("./bot.py", b"two")])
    with pytest.raises(UploadRefused, match=r"^bot.py: appears twice in the archive; not accepted$") as refused:
        unpack(archive(tmp_path, body), tmp_path / "out", UploadLimits())
    assert refused.value.status == 400 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("name, words", [("a\\b.py", "a NUL or a backslash"), ("/etc/x", "an absolute name")])
def test_names_that_could_mean_another_place(tmp_path, name, words):
    with pytest.raises(UploadRefused, match=words):
        unpack(archive(tmp_path, tar_of([tar_file(name, b"x")])), tmp_path / "out", UploadLimits())


def test_a_plain_tar_and_one_top_folder(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:  # not compressed
        for info, data in (tar_file("mybot/bot.toml", b"name = 'x'"), tar_file("mybot/bot.py", b"print(1)")):
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    bot = unpack(archive(tmp_path, buffer.getvalue()), tmp_path / "out", UploadLimits())
    assert bot == tmp_path / "out" / "mybot" and sorted(p.name for p in bot.iterdir()) == ["bot.py", "bot.toml"]
    assert oct((bot / "bot.py").stat().st_mode & 0o777) == "0o644"


def folder_bomb(entries: int, depth: int) -> bytes:
    """`entries` empty files, each `depth` folders down a path of its own: the archive
    lists only the files; unpacking them makes entries * depth folders."""
    return tar_of([tar_file(f"t{n}/" + "d/" * (depth - 1) + "f", b"") for n in range(entries)])


def test_the_folders_a_name_makes_count_against_the_limit(tmp_path, monkeypatch):
    """Issue 33: 3 files 20 folders down each make 63 entries, not 3 (files: 50); refused
    from the headers, before any folder is made (nothing to remove)."""
    made = []
    monkeypatch.setattr(os, "mkdir", lambda *args, **options: made.append(args[0]))
    with pytest.raises(UploadRefused, match=r"^the archive holds more than 50 files and folders \(the limit\)$") as refused:
        unpack(archive(tmp_path, folder_bomb(3, 20)), tmp_path / "out", UploadLimits(files=50))
    assert refused.value.status == 413 and not (tmp_path / "out").exists()
    bomb = folder_bomb(1_200, 30)  # 36,000 folders from a few KB
    assert len(bomb) < 40_000
    with pytest.raises(UploadRefused, match="more than 10000 files and folders"):
        unpack(archive(tmp_path, bomb), tmp_path / "out", UploadLimits())
    assert not (tmp_path / "out").exists() and made == []


def long_name(size: int) -> tuple[tarfile.TarInfo, bytes]:
    """A GNU long-name header of `size` bytes (tarfile reads one whole into memory)."""
    return tar_file("././@LongLink", b"a" * size, type=tarfile.GNUTYPE_LONGNAME)


def test_an_extended_header_is_bounded_and_so_is_the_stream_of_headers(tmp_path):
    """A 1 MB long name was read whole into memory (a 300 KB upload held 300 MB); 2,000
    long names of 60 KB, 120 MB of headers and no entry, were read to the end; 3,000 long
    names in a row raised RecursionError, which no `except` of the unpacker caught."""
    one = tar_of([long_name(1 << 20), tar_file("bot.toml", b"")])
    with pytest.raises(UploadRefused, match=r"^an entry's extended header holds 1048576 bytes \(at most 65536\); "):
        unpack(archive(tmp_path, one), tmp_path / "out", UploadLimits())
    many = tar_of([long_name(60_000) for _ in range(2_000)])
    with pytest.raises(UploadRefused, match=r"^the archive unpacks to more than 2 MB \(the limit\)$") as refused:
        unpack(archive(tmp_path, many), tmp_path / "out", UploadLimits(unpacked_mb=2, files=50))
    assert refused.value.status == 413 and not (tmp_path / "out").exists()
    chain = tar_of([long_name(100) for _ in range(3_000)] + [tar_file("bot.toml", b"")])  # read by recursion
    with pytest.raises(UploadRefused, match=r"^the archive is corrupt or unreadable \(maximum recursion depth"):
        unpack(archive(tmp_path, chain), tmp_path / "out", UploadLimits())


def test_a_folder_is_counted_once_whether_listed_or_made_on_the_way(tmp_path):
    # mybot/ made by mybot/bot.py, listed after it, and mybot/sub/ listed before its file: 4 entries.
    entries = [tar_file("mybot/bot.py", b""), tar_file("mybot/", None, type=tarfile.DIRTYPE),
               tar_file("mybot/sub/", None, type=tarfile.DIRTYPE), tar_file("mybot/sub/x.py", b"")]
    bot = unpack(archive(tmp_path, tar_of(entries)), tmp_path / "out", UploadLimits(files=4))
    assert sorted(str(p.relative_to(bot)) for p in bot.rglob("*")) == ["bot.py", "sub", "sub/x.py"]
    with pytest.raises(UploadRefused, match="more than 3 files and folders"):
        unpack(archive(tmp_path, tar_of(entries)), tmp_path / "again", UploadLimits(files=3))
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as packed:
        for n in range(3):
            packed.writestr(f"t{n}/" + "d/" * 19 + "f", b"")
    with pytest.raises(UploadRefused, match="more than 50 files and folders"):
        unpack(archive(tmp_path, buffer.getvalue()), tmp_path / "zipped", UploadLimits(files=50))


def test_names_nested_deeper_than_a_bot_folder_may_be_are_refused(tmp_path):
    """A name 1,000 folders deep made 1,000 folders that shutil.rmtree could not remove
    (RecursionError): refused before any folder is made; 32 under a top folder is fine."""
    deep = tar_of([tar_file("bot.toml", b""), tar_file("a/" * 1_000 + "f", b"")])
    with pytest.raises(UploadRefused, match=r"^a/a/.*/f: is more than 32 folders deep; flatten the folder$"):
        unpack(archive(tmp_path, deep), tmp_path / "out", UploadLimits())
    assert not (tmp_path / "out").exists()
    folder = tar_of([tar_file("a/" * 33, None, type=tarfile.DIRTYPE)])
    with pytest.raises(UploadRefused, match="is more than 32 folders deep"):
        unpack(archive(tmp_path, folder), tmp_path / "out", UploadLimits())
    bot = unpack(archive(tmp_path, tar_of([tar_file("top/" + "a/" * 31 + "f", b"")])), tmp_path / "fine",
                 UploadLimits())
    assert (bot / ("a/" * 31 + "f")).is_file()


def test_the_server_table_of_a_league_file(tmp_path):
    league = tmp_path / "ladder.toml"
    league.write_text('[league]\ngame = "3up3down"\n\n[server]\nport = 8123\nvalidate_sandbox = "local"\n')
    settings = server_config(server_table(league), {"host": "127.0.0.2"})
    assert (settings.port, settings.host, settings.validate_sandbox, settings.submissions) == (8123, "127.0.0.2",
                                                                                              "local", True)
    assert settings.upload_limits()["packed_mb"] == 50
    with pytest.raises(WebError, match=r"^\[server\] settings: validate_sandbox: .*; portt: Extra inputs"):
        server_config({"validate_sandbox": "vm", "portt": 1}, {})
    assert server_table(tmp_path) is None


@pytest.mark.parametrize("where", ["top", "league"])
def test_a_server_key_that_is_not_a_table_is_said_to_be_one(tmp_path, where):
    """`server = 5` was called an unknown key of [league] (issue 35): it is a table of its own."""
    from arena.config.league_file import load_league
    from arena.config.tournament_file import TournamentError

    league = tmp_path / "ladder.toml"
    keys = 'game = "3up3down"\nseats = 2\n'
    league.write_text(f"server = 5\n[league]\n{keys}" if where == "top" else f"[league]\n{keys}server = 5\n")
    if where == "top":
        with pytest.raises(WebError, match=r"ladder\.toml: server = 5: \[server\] must be a table: a line \[server\]"):
            server_table(league)
        return
    with pytest.raises(TournamentError) as refused:
        load_league(league)
    assert refused.value.mistakes == [
        "server = 5 is inside [league]; [server] is a table of its own: a line [server] after the [league] keys, "
        "then its keys (port = 8000, ...: docs/server.md) below it"
    ]


def test_a_token_is_found_by_its_id_and_checked_whole(tmp_path):
    book = Book(tmp_path)
    token = book.add("ann")
    prefix, token_id, secret = token.split("_", 2)
    assert prefix == "arena" and len(token_id) == 10 and len(secret) == 43
    assert book.authenticate(token) == ("ann", False)
    changed = secret[:-1] + ("A" if secret[-1] != "A" else "B")  # one character off
    assert book.authenticate(f"arena_{token_id}_{changed}") is None
    assert book.authenticate(token + " ") is None and book.authenticate(token + "\n") is None
    assert book.authenticate("") is None
    other = book.add("bob")
    assert book.authenticate(f"arena_{token_id}_{other.split('_', 2)[2]}") is None  # bob's secret under ann's id


def test_a_restarted_queue_removes_only_the_staging_no_submit_holds(tmp_path):
    # A server killed mid-validation leaves its child's REGISTRY/.incoming-*: removed at the
    # next start (the child's lock died with it, zombie or not). A shell `arena submit`
    # running at that moment keeps its copy: it holds the lock.
    import fcntl
    import os
    import subprocess
    import sys

    from arena.registry.submit import abandoned_staging
    from arena.web.queue import QueueSettings, ValidationQueue

    registry = tmp_path / "reg"
    dead, alive = registry / ".incoming-1-abc", registry / ".incoming-2-xyz"
    for folder in (dead, alive):
        (folder / "bot").mkdir(parents=True)
    # A process that took the lock and was killed: its lock is gone with it.
    killed = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); "
        "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)"), str(dead)],
        stdout=subprocess.PIPE, text=True)
    assert killed.stdout.readline() == "held\n"
    assert abandoned_staging(registry) == [alive]  # not held yet: nobody's
    held = os.open(alive, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)  # a submit running now
    try:
        assert abandoned_staging(registry) == []
        killed.kill()
        killed.wait()
        assert abandoned_staging(registry) == [dead]
        queue = ValidationQueue(Book(registry), QueueSettings(jobs=1, sandbox="local")).start()
        try:
            assert [p.name for p in registry.glob(".incoming-*")] == [alive.name]
        finally:
            queue.stop()
    finally:
        os.close(held)


def test_the_client_packs_a_bot_with_a_build_step_without_its_build_output(tmp_path):
    """`arena submit --to` after a local `arena match`: cargo's hard links and a big
    target/ in build/ never travel (the server builds from the sources); a bot without a
    build step keeps its build/."""
    import os

    from arena.web.client import pack

    bot = tmp_path / "bot"
    (bot / "build" / "target").mkdir(parents=True)
    (bot / "bot.toml").write_text('name = "b"\nversion = "1"\ncommand = ["./build/bot"]\nbuild = ["make"]\n')
    (bot / "build" / "bot").write_bytes(b"\x7fELF")
    os.link(bot / "build" / "bot", bot / "build" / "target" / "bot")

    def names() -> list[str]:
        with tarfile.open(fileobj=io.BytesIO(pack(bot)), mode="r:gz") as tar:
            return sorted(tar.getnames())

    assert names() == ["bot.toml"]
    (bot / "bot.toml").write_text('name = "b"\nversion = "1"\ncommand = ["./build/bot"]\n')
    assert names() == ["bot.toml", "build/bot", "build/target/bot"]


def test_a_link_in_an_archive_s_build_folder_says_build_may_be_left_out(tmp_path):
    """A .tar.gz made by hand after `arena match` holds cargo's hard links in build/: the
    refusal says that arena builds build/ itself."""
    source = tar_file("mybot/build/target/release/bot", b"\x7fELF")
    link = tar_file("mybot/build/target/release/deps/bot-1a2b", None, type=tarfile.LNKTYPE,
                    linkname="mybot/build/target/release/bot")
    with pytest.raises(UploadRefused) as refused:
        unpack(archive(tmp_path, tar_of([tar_file("mybot/bot.toml", b"x"), source, link])), tmp_path / "out",
               UploadLimits())
    assert refused.value.line.endswith(
        "links are not accepted: put the file itself in; or leave build/ out: arena builds it (arena submit --to does)"
    )
    elsewhere = tar_file("store", None, type=tarfile.LNKTYPE, linkname="bot.toml")
    with pytest.raises(UploadRefused, match=r"put the file itself in$"):
        unpack(archive(tmp_path, tar_of([tar_file("bot.toml", b"x"), elsewhere])), tmp_path / "out2", UploadLimits())
