"""Readers come first (issue 24, part 8): the site's files are answered in the event loop,
never from the worker threads uploads and the API use; uploads are opened in worker
processes; a token is hashed once for a burst of requests; a request's headers stay
bounded whatever HTTP parser is installed."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import anyio.to_thread
import httpx
import pytest
from fastapi import APIRouter

import arena.web.authors as authors
from arena.web.app import AppServer, _SiteFiles, create_app
from arena.web.authors import Book
from arena.web.intake import Intake
from arena.web.unpack import UploadLimits, UploadRefused
from tests.web_helpers import (
    bot_folder,
    door_server,
    files_at,
    leftovers,
    tar_file,
    tar_of,
    token_for,
)

TOML = b'name = "formbot"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\ngames = ["3up3down"]\n'


@pytest.fixture()
def site(tmp_path):
    return files_at(tmp_path / "out" / "site", {
        "index.html": "<h1>Standings</h1>", "bots/index.html": "<h1>Bots</h1>", "big.js": b"x" * 5000,
    })


def test_site_files_are_answered_while_every_worker_thread_is_taken(site):
    """Forty requests hold all of anyio's default worker threads (as uploads and API calls
    did); a page of the site is answered at once all the same."""
    release = threading.Event()
    router = APIRouter()

    @router.get("/api/hold")
    def hold() -> dict:  # a sync route: it takes a worker thread until released
        release.wait(60)
        return {"held": True}

    server = AppServer(create_app(site, routers=[router]), "127.0.0.1", 0).start()
    holders = []
    client = httpx.Client(base_url=server.url, timeout=30)
    try:
        for _ in range(45):  # plain sockets: 45 httpx clients would cost the test seconds of CPU
            holder = socket.create_connection(("127.0.0.1", server.port), timeout=90)
            holder.sendall(b"GET /api/hold HTTP/1.1\r\nHost: x\r\n\r\n")
            holders.append(holder)
        time.sleep(2.0)  # every worker thread is taken by now
        assert anyio_threads_taken(server) >= 40
        started = time.monotonic()
        with client:
            assert client.get("/").text == "<h1>Standings</h1>"
            assert client.get("/bots/").text == "<h1>Bots</h1>"
            assert client.get("/big.js").content == b"x" * 5000
        assert time.monotonic() - started < 10  # the threads stay taken for 60 s
        assert not release.is_set()
        release.set()
        for holder in holders:
            assert holder.recv(4096).startswith(b"HTTP/1.1 200 ")
    finally:
        release.set()
        for holder in holders:
            holder.close()
        server.shutdown()


def anyio_threads_taken(server: AppServer) -> int:
    """How many of anyio's default worker threads the server's loop has lent out."""
    import threading as threads

    return sum(thread.name == "AnyIO worker thread" for thread in threads.enumerate())


def test_site_files_keep_their_headers_and_are_read_again_when_rewritten(site, monkeypatch):
    monkeypatch.setattr(_SiteFiles, "FAST_BYTES", 4096)  # big.js (5000 bytes) takes StaticFiles' own path
    server = AppServer(create_app(site), "127.0.0.1", 0).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            first = client.get("/index.html")
            assert first.text == "<h1>Standings</h1>"
            assert first.headers["content-type"] == "text/html; charset=utf-8"
            assert first.headers["content-length"] == "18" and first.headers["etag"] and first.headers["last-modified"]
            assert first.headers["x-content-type-options"] == "nosniff"
            again = client.get("/index.html", headers={"If-None-Match": first.headers["etag"]})
            assert again.status_code == 304 and again.content == b""
            head = client.head("/index.html")
            assert head.status_code == 200 and head.headers["content-length"] == "18" and head.content == b""
            (site / "index.html").write_text("<h1>Standings, batch 2</h1>")  # a league re-renders it
            fresh = client.get("/index.html")
            assert fresh.text == "<h1>Standings, batch 2</h1>" and fresh.headers["etag"] != first.headers["etag"]
            big = client.get("/big.js")
            assert big.content == b"x" * 5000 and big.headers["content-type"].startswith("text/javascript")
            ranged = client.get("/index.html", headers={"Range": "bytes=4-9"})
            assert ranged.status_code == 206 and ranged.text == "Standi"
            moved = client.get("/bots", follow_redirects=False)
            assert moved.status_code in (307, 308) and moved.headers["location"].endswith("/bots/")
            assert client.get("/nothing.html").status_code == 404
    finally:
        server.shutdown()


def test_requests_headers_are_bounded_whatever_parser_is_installed(site):
    server = AppServer(create_app(site), "127.0.0.1", 0).start()
    try:
        assert server._server.config.http == "h11"
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
            answer = b""
            try:
                raw.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
                for number in range(200):  # 200 KB of headers, never ended
                    raw.sendall(b"X-Pad-%d: " % number + b"a" * 1000 + b"\r\n")
                answer = raw.recv(4096)
            except ConnectionResetError:
                answer = b"reset"
        assert answer.startswith(b"HTTP/1.1 400 ") or answer == b"reset", answer
    finally:
        server.shutdown()


def test_a_burst_of_requests_with_one_token_hashes_it_once(tmp_path, monkeypatch):
    book = Book(tmp_path / "registry")
    token = book.add("ann")
    hashed = []
    plain = authors._hash

    def counted(secret: str, salt: bytes) -> bytes:
        hashed.append(1)
        return plain(secret, salt)

    monkeypatch.setattr(authors, "_hash", counted)
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(book.authenticate(token))) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [("ann", False)] * 12 and len(hashed) == 1
    assert book.authenticate(token[:-1] + ("A" if token[-1] != "A" else "B")) is None  # a wrong one is still hashed
    assert len(hashed) == 2


def test_an_upload_is_opened_in_a_worker_process_and_a_dead_worker_is_replaced(tmp_path):
    intake = Intake(workers=1)
    limits = UploadLimits()

    async def open_one(number: int):  # noqa: ANN202
        work = tmp_path / f"work{number}"
        work.mkdir()
        (work / "body").write_bytes(tar_of([tar_file("bot.toml", TOML), tar_file("bot.py", b"print(1)\n")]))
        return await intake.open(work / "body", work, limits, "application/gzip", anyio.to_thread.run_sync)

    try:
        opened = asyncio.run(open_one(1))
        assert (opened.name, opened.version) == ("formbot", "1.0")
        assert (tmp_path / "work1" / "unpacked" / "bot.py").read_text() == "print(1)\n"
        (worker,) = intake._all
        assert worker.process.pid != 0 and worker.process.poll() is None
        worker.process.kill()
        worker.process.wait()
        assert asyncio.run(open_one(2)).name == "formbot"  # a new worker took it
        assert worker not in intake._all and len(intake._all) == 1
        (work := tmp_path / "work3").mkdir()
        (work / "body").write_bytes(b"#!/bin/sh\n")
        with pytest.raises(UploadRefused, match="not a .tar.gz, .tar or .zip archive"):
            asyncio.run(intake.open(work / "body", work, limits, "application/gzip", anyio.to_thread.run_sync))
    finally:
        intake.close()
    assert not intake._all


def test_forms_are_read_by_the_worker_with_their_limits(tmp_path):
    packed = tar_of([tar_file("bot.toml", TOML), tar_file("bot.py", b"")])
    with door_server(tmp_path) as (server, door, registry):
        token = token_for(registry, "ann")
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            no_bot = client.post("/api/submissions", files={"other": ("x.tar.gz", packed)})
            assert no_bot.status_code == 400 and no_bot.json() == {
                "error": "the form has no file field 'bot'; attach the packed bot folder as 'bot'"}
            two = client.post("/api/submissions", files=[("bot", ("a.tar.gz", packed)), ("bot", ("b.tar.gz", packed))])
            assert two.status_code == 400 and two.json()["error"].startswith("the form cannot be read: Too many files")
            assert leftovers(registry) == []
            good = client.post("/api/submissions", files={"bot": ("formbot.tar.gz", packed)})
            assert good.status_code == 202 and good.json()["name"] == "formbot"


def test_the_door_answers_pages_while_uploads_are_opened(tmp_path):
    """Ten uploads at once: every page read meanwhile is answered, and the uploads all queue."""
    bodies = []
    for number in range(10):
        folder = bot_folder(tmp_path, f"many{number}")
        bodies.append(tar_of([tar_file("bot.toml", (folder / "bot.toml").read_bytes()),
                              tar_file("bot.py", (folder / "bot.py").read_bytes()),
                              tar_file("weights.bin", bytes(range(256)) * 2000)]))
    site = tmp_path / "league" / "site"
    site.mkdir(parents=True)
    (site / "index.html").write_text("<h1>Standings</h1>")
    with door_server(tmp_path) as (server, door, registry):
        token = token_for(registry, "ann")
        codes: list[int] = []
        uploading = httpx.Client(base_url=server.url, timeout=120, headers={"Authorization": f"Bearer {token}"})

        def upload(body: bytes) -> None:
            answer = uploading.post("/api/submissions", content=body, headers={"Content-Type": "application/gzip"})
            codes.append(answer.status_code)

        uploaders = [threading.Thread(target=upload, args=(body,)) for body in bodies]
        for thread in uploaders:
            thread.start()
        with httpx.Client(base_url=server.url, timeout=30) as client:
            pages = [client.get("/").text for _ in range(20)]
        for thread in uploaders:
            thread.join(120)
        uploading.close()
        assert pages == ["<h1>Standings</h1>"] * 20
        assert codes == [202] * 10
        assert sorted(row.name for row in door.book.submissions_of("ann", 50)) == sorted(
            f"many{n}" for n in range(10))
