"""One writer per folder: a second `arena league` (or `arena run`) on a folder another one
plays into says who holds it and exits 2, started seconds later or at the same moment;
`arena report --full` beside a running league never fails, and never deletes the site's
state under a process that has it open."""

from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.site.model import load_site_data
from arena.site.state import STATE_FILE
from arena.site.writer import write_site
from arena.store.lock import FolderBusy, one_writer, rendering
from tests.report_helpers import build_league
from tests.league.test_league_stops import put
from tests.tournaments import done_games as stored  # games stored so far, read only

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def league_command(out: Path, registry: Path, *more: str) -> list[str]:
    return [
        sys.executable, "-m", "arena", "league", str(out), "--game", "3up3down", "--seats", "2",
        "--registry", str(registry), "--seed", "5", "--rule", "max_turns=12", "--jobs", "1", *more,
    ]


def registry_of(where: Path) -> Path:
    registry = where / "registry"
    for name in ("va", "vb", "vc"):
        put(registry, name)
    return registry


def wait_for(condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def league_playing(out: Path, registry: Path, games: int) -> Iterator[subprocess.Popen]:
    """An `arena league` playing into `out` (its output thrown away), once it has stored
    `games` games; stopped at the end as Ctrl-C stops it (`stop`)."""
    league = subprocess.Popen(league_command(out, registry), env=ENV, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: stored(out) >= games, f"the league's first {games} games")
        yield league
    finally:
        stop(league)


def busy_line(stderr: str, pid: int) -> None:
    """One line, no traceback, naming the holder: its pid, host and since when."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr and lines[-1].startswith("arena: error: "), stderr
    said = lines[-1]  # after the public seed's warning, said before a tournament starts
    assert re.search(rf"is in use by arena league \(pid {pid} on {re.escape(socket.gethostname())} since "
                     r"(\d{4}-\d\d-\d\d )?\d\d:\d\d UTC\); stop that one first$", said), stderr


def test_a_second_league_on_a_folder_says_who_holds_it_and_exits_2(tmp_path):
    registry = registry_of(tmp_path)
    out = tmp_path / "league"
    with league_playing(out, registry, games=2) as first:
        second = subprocess.run(league_command(out, registry), env=ENV, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        busy_line(second.stderr, first.pid)
        assert "league " not in second.stdout  # refused before its banner
        tournament = subprocess.run(
            [sys.executable, "-m", "arena", "run", "--game", "3up3down", "--seats", "2", "--out", str(out),
             "--bots", str(registry / "va" / "1.0"), "--bots", str(registry / "vb" / "1.0"), "--seed", "5"],
            env=ENV, capture_output=True, text=True, timeout=60,
        )
        assert tournament.returncode == 2
        busy_line(tournament.stderr, first.pid)
        assert first.poll() is None
    resumed = subprocess.run(league_command(out, registry, "--games", str(stored(out) + 2)), env=ENV,
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr  # the holder gone, the lock went with it


def test_two_leagues_started_at_once_one_plays_the_other_exits_2(tmp_path):
    registry = registry_of(tmp_path)
    out = tmp_path / "league"
    both = [subprocess.Popen(league_command(out, registry), env=ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        wait_for(lambda: any(p.poll() is not None for p in both), "one of them to give up")
        loser = next(p for p in both if p.poll() is not None)
        winner = next(p for p in both if p is not loser)
        assert loser.returncode == 2
        busy_line(loser.stderr.read(), winner.pid)
        wait_for(lambda: stored(out) >= 2, "the other's games")
        assert winner.poll() is None
    finally:
        for process in both:
            stop(process)
            process.stderr.close()


def test_a_writer_lock_is_one_holder_even_in_one_process(tmp_path):
    with one_writer(tmp_path, "arena league"):
        with pytest.raises(FolderBusy, match=rf"pid {os.getpid()} "):
            with one_writer(tmp_path, "arena run"):
                pass
    with one_writer(tmp_path, "arena run"):  # let go at the end of the block
        pass


def test_a_full_render_empties_the_state_in_place_under_a_process_that_has_it_open(tmp_path):
    """`arena report --full` once deleted the state's files and made new ones: a league
    rendering at the same time then failed with "attempt to write a readonly database"."""
    out = build_league(tmp_path / "league", cycles=2)
    other = sqlite3.connect(out / STATE_FILE, isolation_level=None)  # another process's connection
    try:
        other.execute("SELECT COUNT(*) FROM meta").fetchone()
        write_site(load_site_data(out), out / "site", replays="none", full=True)
        other.execute("INSERT OR REPLACE INTO meta VALUES ('probe', '1')")  # still the file on disk
    finally:
        other.close()
    with sqlite3.connect(out / STATE_FILE) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'probe'").fetchone() == ("1",)
    db.close()
    write_site(load_site_data(out), out / "site", replays="none")


def test_a_render_waits_for_another_render_of_the_same_folder(tmp_path):
    out = build_league(tmp_path / "league", cycles=1)
    done = threading.Event()

    def render() -> None:
        write_site(load_site_data(out), out / "site", replays="none", full=True)
        done.set()

    with rendering(out):
        thread = threading.Thread(target=render)
        thread.start()
        assert not done.wait(1.0)  # held here: it waits (it would have finished well within)
    thread.join(timeout=120)
    assert done.is_set()


def test_arena_report_full_beside_a_running_league_never_fails(tmp_path):
    registry = registry_of(tmp_path)
    out = tmp_path / "league"
    with league_playing(out, registry, games=4) as league:
        for _ in range(5):
            report = subprocess.run([sys.executable, "-m", "arena", "report", str(out), "--full"], env=ENV,
                                    capture_output=True, text=True, timeout=120)
            assert report.returncode == 0, report.stderr
            assert league.poll() is None
    assert league.returncode == 130
