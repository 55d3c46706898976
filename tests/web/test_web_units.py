"""The door's pieces without a server: the unpacker's rules one by one, the [server] table
of a league file, the book's tokens."""

from __future__ import annotations

import io
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
