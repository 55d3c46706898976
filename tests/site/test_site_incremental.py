"""The site is brought up to date, never rewritten (issue 27, part 2): a render with nothing
changed writes no file (each keeps its inode and mtime) and renders no game page again;
a new game rewrites only what shows it (and no data script of a bot that did not play),
a bot whose record changed gets its page rewritten; every byte is what a full render
writes into an empty folder (tests/site/test_site_state.py: batch by batch)."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

import arena.site.writer as writer
from arena.cli.app import app
from arena.site.model import load_site_data
from arena.site.replay import FORMAT
from arena.site.state import STATE_FILE
from arena.site.writer import render_site, write_site
from arena.store.db import Store
from tests.report_helpers import LEAGUE, build_league
from tests.site.test_site_state import done_keys, grown


class _Frozen(datetime):
    """The index says when it was rendered (to the minute): held still, so that two renders
    a minute apart are compared on what they show."""

    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 12, 2, 2, 30, tzinfo=UTC)


@pytest.fixture
def league(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(writer, "datetime", _Frozen)
    out = build_league(tmp_path / "league", cycles=2)  # 40 games at 3 seats, six bots
    render_site(out)  # under the frozen clock
    return out


def files_of(site: Path) -> dict[str, tuple[int, int, bytes]]:
    return {
        path.relative_to(site).as_posix(): (path.stat().st_ino, path.stat().st_mtime_ns, path.read_bytes())
        for path in sorted(site.rglob("*")) if path.is_file()
    }


def rewritten(before: dict, after: dict) -> set[str]:
    return {name for name in after if before.get(name, (None, None))[:2] != after[name][:2]}


def render(out: Path) -> dict:
    data = load_site_data(out)
    return write_site(data, out / "site")


def test_a_render_with_nothing_changed_writes_no_file_and_renders_no_game_page(league, tmp_path):
    site = league / "site"
    before = files_of(site)
    games = len(list((site / "games").glob("0*.html")))
    assert games == 40 and (league / STATE_FILE).is_file()
    state = (league / STATE_FILE).stat()
    counts = render(league)
    assert counts["files_written"] == 0
    # index, h2h and the last list page: no game page, and no bot page (nothing it shows changed).
    assert counts["pages"] == 1 + 1 + 1
    after = files_of(site)
    assert rewritten(before, after) == set() and after == before
    assert (league / STATE_FILE).stat().st_size == state.st_size
    # A full render writes the same bytes, into its own folder as over this one.
    data = load_site_data(league)
    assert write_site(data, tmp_path / "fresh", full=True)["pages"] == 40 + 9
    fresh = files_of(tmp_path / "fresh")
    assert {name: blob for name, (_, _, blob) in fresh.items()} == {name: blob for name, (_, _, blob) in after.items()}
    counts = write_site(load_site_data(league), site, full=True)
    assert counts["pages"] == 49 and counts["files_written"] == 0 and files_of(site) == before


def test_a_new_game_rewrites_what_shows_it_and_a_changed_bot_its_pages(league, tmp_path):
    """The last game finishes after a render: its page and replay, the page before it (its "next"
    link), the list page, the index, h2h, live.json, data/site.js, its round's script, its bots' data scripts
    and pages (and other bots' pages, whose rank may move) are written; no other game
    page, and no data script of a bot that did not play."""
    keys = done_keys(league)
    grow = tmp_path / "grow"
    grown(league, grow, set(keys[:-1]))
    render(grow)
    before = files_of(grow / "site")
    grown(league, grow, set(keys))
    render(grow)
    changed = rewritten(before, files_of(grow / "site"))
    with Store.open(league) as store:
        players = {seat.bot for seat in store.seats(keys[-1])}
    allowed = {
        f"games/{keys[-1]}.html", f"replays/{keys[-1]}.r{FORMAT}.js", f"games/{keys[-2]}.html", "games/page-1.html", "index.html", "h2h.html", "live.json",
        "data/site.js", "data/rounds/1.js", *(f"data/bots/{writer.slug(bot)}/1.js" for bot in players),
        *(f"bots/{writer.slug(bot)}.html" for bot in LEAGUE),
    }
    assert f"games/{keys[-1]}.html" in changed and changed <= allowed, changed - allowed
    assert {name for name in changed if name.startswith("data/bots/")} == {
        f"data/bots/{writer.slug(bot)}/1.js" for bot in players
    }
    assert f'<a href="{keys[-1]}.html" rel="next">' in (grow / "site" / "games" / f"{keys[-2]}.html").read_text()

    # A bot's record changed (its version): its page and the index, nothing else.
    with sqlite3.connect(grow / "arena.sqlite") as db:
        db.execute("UPDATE bots SET version = '9.9' WHERE name = 'cy'")
    db.close()
    before = files_of(grow / "site")
    counts = render(grow)
    cy = f"bots/{writer.slug('cy')}.html"
    assert rewritten(before, files_of(grow / "site")) == {cy, "index.html"}
    assert counts["files_written"] == 2 and "9.9" in (grow / "site" / cy).read_text()


def test_a_missing_page_is_made_good(league):
    site = league / "site"
    before = files_of(site)
    for name in ("index.html", f"bots/{writer.slug('ann')}.html", "games/page-1.html", "data/site.js"):
        (site / name).unlink()
    render(league)
    assert {name: blob for name, (_, _, blob) in files_of(site).items()} == {
        name: blob for name, (_, _, blob) in before.items()
    }
    # A game page, a replay of another game and a list page deleted by hand are made again
    # by a plain render, and nothing else: the game folders changed since the last render,
    # so they are listed against the finished games' keys.
    game = sorted((site / "games").glob("0*.html"))[5]
    replay = sorted((site / "replays").glob("0*.js"))[20]
    for path in (game, replay, site / "games" / "page-1.html"):
        path.unlink()
    counts = render(league)
    assert counts["pages"] == 3 + 2  # index, h2h, the list page; the game page and the replay's game's page
    assert counts["replays_written"] == 1
    assert {name: blob for name, (_, _, blob) in files_of(site).items()} == {
        name: blob for name, (_, _, blob) in before.items()
    }


def test_a_games_folder_is_listed_only_when_it_changed(league, monkeypatch):
    """Looking for the game files deleted by hand costs one listing of the game folders,
    and only after a render whose folders were changed by another hand since the last."""
    import arena.site.gamepages as gamepages

    listed = []
    real = gamepages.missing_files
    monkeypatch.setattr(gamepages, "missing_files", lambda *args, **kwargs: listed.append(1) or real(*args, **kwargs))
    site = league / "site"

    def aged(stamp: int) -> None:  # the folders last changed long ago (not a moment before a render ends)
        for name in ("games", "replays"):
            os.utime(site / name, ns=(stamp, stamp))

    aged(10**18)
    render(league)  # the first render of this arena records the folders' times
    listed.clear()
    before = files_of(site)
    assert render(league)["pages"] == 3 and listed == []
    (site / "games" / "notes.txt").write_text("a reader's notes")  # another hand's file: listed, nothing made
    aged(10**18 + 1)
    counts = render(league)
    assert listed == [1] and counts["pages"] == 3 and counts["files_written"] == 0
    assert render(league)["pages"] == 3 and listed == [1]
    after = files_of(site)
    assert after.pop("games/notes.txt")[2] == b"a reader's notes" and after == before
    # A folder changed a moment ago is given no time (-1): a file deleted within the same
    # tick of the kernel's coarse clock would leave its time as it was recorded.
    (site / "games" / "notes.txt").unlink()
    assert gamepages.folder_times(site)["games"] == -1
    os.utime(site / "games", ns=(10**18, 10**18))
    assert gamepages.folder_times(site)["games"] == 10**18


def test_arena_report_full_renders_every_page_and_changes_no_file(league):
    site = league / "site"
    before = files_of(site)
    runner = CliRunner()
    done = runner.invoke(app, ["report", str(league), "--full"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "49 pages rendered, 0 files changed, 0 new replays" in said, said
    assert files_of(site) == before
    done = runner.invoke(app, ["report", str(league)])
    assert "3 pages rendered, 0 files changed, 0 new replays" in " ".join(done.output.split())
    assert files_of(site) == before
