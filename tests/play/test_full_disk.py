"""A full disk stops nothing for good (a small tmpfs, filled and emptied while arena runs;
root only: skipped otherwise). `arena league` and `arena run` say one line, wait, and go
on when there is space, losing and doubling nothing; `arena report` stops with one line;
`arena serve --submissions` tells an upload the disk is full (507, not "the archive is
corrupt"), its validation queue waits out the full disk and checks what was queued once
there is space."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from arena.web.client import pack
from tests.league.test_league_stops import put
from tests.web.test_web_resume import SLOW_START
from tests.web_helpers import bot_folder, token_for

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "COLUMNS": "300"}
CHUNK = 1 << 16


@pytest.fixture
def disk(tmp_path):
    """A tmpfs of 6 MB at tmp_path/disk (unmounted after the test)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = tmp_path / "disk"
    where.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(where)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Fill the disk to its last byte; returns the filler file (delete it to give the space back)."""
    filler = disk / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (CHUNK, 4096, 512, 1):  # to the last byte of the last block
            try:
                while os.write(descriptor, b"\0" * size):
                    pass
            except OSError:
                pass
    finally:
        os.close(descriptor)
    assert os.statvfs(disk).f_bavail == 0
    return filler


class Lines:
    """The lines a process writes to a pipe, read in a thread."""

    def __init__(self, pipe):  # noqa: ANN001
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.thread.start()

    def _read(self, pipe) -> None:  # noqa: ANN001
        for line in pipe:
            self.lines.append(line.rstrip("\n"))

    def said(self, pattern: str) -> list[str]:
        return [line for line in self.lines if re.search(pattern, line)]


def stored(out: Path) -> int:
    try:
        with sqlite3.connect(f"file:{out / 'arena.sqlite'}?mode=ro", uri=True, timeout=30) as db:
            return db.execute("SELECT COUNT(*) FROM games WHERE status = 'done'").fetchone()[0]
    except sqlite3.Error:
        return -1


def wait_for(condition, what: str, process: subprocess.Popen | None = None, timeout: float = 90.0):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while not (got := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        if process is not None:
            assert process.poll() is None, f"it ended ({process.returncode}) while waiting for {what}"
        time.sleep(0.1)
    return got


def sound(out: Path) -> int:
    """The store passes SQLite's check, its games are numbered without a gap, each finished
    one stored with its seats once; returns the finished games."""
    with sqlite3.connect(out / "arena.sqlite") as db:
        assert db.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        done = db.execute("SELECT key FROM games WHERE status = 'done'").fetchall()
        seats = dict(db.execute("SELECT game_key, COUNT(*) FROM seats GROUP BY game_key").fetchall())
    assert len(seats) == len(done) and all(seats[key] == 2 for (key,) in done)
    return len(done)


@pytest.mark.parametrize("command", ["league", "run"])
def test_a_full_disk_is_waited_out_and_nothing_is_lost(disk, tmp_path, command):
    registry = tmp_path / "registry"
    for name in ("va", "vb", "vc"):
        put(registry, name)
    out = disk / "out"
    common = ["--game", "3up3down", "--seats", "2", "--seed", "5", "--rule", "max_turns=12", "--jobs", "2",
              "--public-seed-ok"]
    if command == "league":
        args = ["league", str(out), "--registry", str(registry), *common]
    else:
        bots = [arg for name in ("va", "vb", "vc") for arg in ("--bots", str(registry / name / "1.0"))]
        args = ["run", "--out", str(out), *bots, "--cycles", "500", "--quiet", *common]
    process = subprocess.Popen([sys.executable, "-m", "arena", *args], env=ENV, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    errors = Lines(process.stderr)
    try:
        wait_for(lambda: stored(out) >= 4, "the first games", process)
        filler = fill(disk)
        full = wait_for(lambda: errors.said(r"^arena: the disk of .* is full \(.*\); waiting for space"),
                        "the full disk's line", process)
        assert len(full) == 1 and process.poll() is None
        before = stored(out)
        time.sleep(3)  # it waits (and says nothing more)
        assert process.poll() is None and stored(out) == before and len(errors.said("is full")) == 1
        filler.unlink()
        wait_for(lambda: errors.said(r"has space again; going on"), "space again", process)
        wait_for(lambda: stored(out) >= before + 4, "more games", process)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=120)
        errors.thread.join(10)
    assert process.returncode == 130, errors.lines
    assert not errors.said("Traceback"), errors.lines
    said = re.search(r"stopped: (\d+) (of \d+ )?games are stored", " ".join(errors.lines))
    assert said and int(said.group(1)) == sound(out)


def test_arena_report_on_a_full_disk_says_one_line_and_renders_once_there_is_space(disk, tmp_path):
    registry = tmp_path / "registry"
    for name in ("va", "vb"):
        put(registry, name)
    out = disk / "out"
    played = subprocess.run(
        [sys.executable, "-m", "arena", "run", "--out", str(out), "--bots", str(registry / "va" / "1.0"), "--bots",
         str(registry / "vb" / "1.0"), "--game", "3up3down", "--seats", "2", "--seed", "5", "--cycles", "3",
         "--rule", "max_turns=12", "--public-seed-ok", "--quiet"], env=ENV, capture_output=True, text=True, timeout=300,
    )
    assert played.returncode == 0, played.stderr
    subprocess.run(["rm", "-rf", str(out / "site"), str(out / ".site-state.sqlite")], check=True)
    filler = fill(disk)
    report = subprocess.run([sys.executable, "-m", "arena", "report", str(out)], env=ENV, capture_output=True,
                            text=True, timeout=300)
    assert report.returncode == 1
    assert report.stderr.startswith("arena: error: the disk is full; free some space and try again (")
    assert len(report.stderr.splitlines()) == 1, report.stderr
    filler.unlink()
    report = subprocess.run([sys.executable, "-m", "arena", "report", str(out)], env=ENV, capture_output=True,
                            text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    assert (out / "site" / "index.html").is_file()


def test_the_door_tells_an_upload_the_disk_is_full_and_its_queue_waits_for_space(disk, tmp_path):
    registry = disk / "registry"
    registry.mkdir()
    token = token_for(registry, "ann")
    headers = {"Authorization": f"Bearer {token}"}
    server = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", str(tmp_path / "league"), "--submissions", "--registry",
         str(registry), "--validate-sandbox", "local", "--port", "0"],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    url = re.search(r"at (http://127\.0\.0\.1:\d+/)", server.stdout.readline()).group(1)
    errors = Lines(server.stderr)

    def state(sub_id: str) -> str:
        return httpx.get(url + f"api/submissions/{sub_id}", headers=headers, timeout=10).json()["state"]

    def upload(name: str, extra: str = "") -> httpx.Response:
        return httpx.post(url + "api/submissions", content=pack(bot_folder(tmp_path, name, extra=extra)),
                          headers=headers, timeout=60)

    try:
        slow = upload("slowbot", SLOW_START)
        assert slow.status_code == 202, slow.text
        wait_for(lambda: state(slow.json()["id"]) == "smoke match", "the smoke match", server, timeout=120)
        filler = fill(disk)  # the validation's copy into the registry, or its next write, meets it
        refused = upload("later")
        assert refused.status_code == 507, (refused.text, errors.lines)
        assert refused.json() == {"error": "the server's disk is full; submit again later"}
        wait_for(lambda: errors.said(r"^arena: the disk of the registry .* is full \(.*\); waiting for space"),
                 "the queue's line", server, timeout=120)
        assert state(slow.json()["id"]) not in ("accepted", "refused")
        filler.unlink()
        wait_for(lambda: state(slow.json()["id"]) == "accepted", "the slow bot's acceptance", server, timeout=180)
        after = upload("after")
        assert after.status_code == 202, after.text
        wait_for(lambda: state(after.json()["id"]) == "accepted", "the next upload's check", server, timeout=180)
        assert server.poll() is None
        assert not errors.said("Traceback"), errors.lines
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
