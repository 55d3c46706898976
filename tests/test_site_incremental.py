"""The site is brought up to date, never rewritten (issue 27, part 2): a render with nothing
changed writes no file (each keeps its inode and mtime) and renders no game page again;
a game whose page shows something new (its duration, the next game's link) and a bot
whose record changed get their pages rewritten, and only they; every byte is what a full
render writes into an empty folder."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

import arena.site.writer as writer
from arena.cli.app import app
from arena.site.model import CACHE_FILE, load_site_data
from arena.site.writer import PAGES_FILE, render_site, write_site
from arena.store.db import Store
from tests.report_helpers import build_league


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
    assert games == 40 and (league / PAGES_FILE).is_file()
    cache = (league / CACHE_FILE).stat()
    counts = render(league)
    # The rating pass resumed from its cache with no game added: the cache is left alone.
    assert (league / CACHE_FILE).stat().st_mtime_ns == cache.st_mtime_ns
    assert counts["files_written"] == 0
    # index, h2h, one list page, six bot pages: no game page rendered again.
    assert counts["pages"] == 1 + 1 + 1 + 6
    after = files_of(site)
    assert rewritten(before, after) == set() and after == before
    # A full render writes the same bytes, into its own folder as over this one.
    data = load_site_data(league)
    assert write_site(data, tmp_path / "fresh", full=True)["pages"] == 40 + 9
    fresh = files_of(tmp_path / "fresh")
    assert {name: blob for name, (_, _, blob) in fresh.items()} == {name: blob for name, (_, _, blob) in after.items()}
    counts = write_site(load_site_data(league), site, full=True)
    assert counts["pages"] == 49 and counts["files_written"] == 0 and files_of(site) == before


def test_a_changed_game_and_a_changed_bot_are_rewritten_and_nothing_else(league):
    site = league / "site"
    with Store.open(league) as store:
        keys = [game.key for game in store.games("done")]
    last, second_last, third = keys[-1], keys[-2], keys[2]
    with sqlite3.connect(league / "arena.sqlite") as db:
        db.execute("UPDATE games SET duration_s = 12.34 WHERE key = ?", (third,))
        db.execute("UPDATE bots SET version = '9.9' WHERE name = 'cy'")
    db.close()
    before = files_of(site)
    counts = render(league)
    changed = rewritten(before, files_of(site))
    cy = f"bots/{writer.slug('cy')}.html"
    # The game's page (its duration), cy's page and the index (its version): nothing else.
    assert changed == {f"games/{third}.html", cy, "index.html"}, changed
    assert counts["files_written"] == 3
    assert " · 12.3 s</p>" in (site / "games" / f"{third}.html").read_text()
    assert "9.9" in (site / cy).read_text()

    # The last game leaves the list (as if not yet played): the one before it loses its
    # "next" link; back again, it gets it back, and the last game's page is as it was.
    with sqlite3.connect(league / "arena.sqlite") as db:
        db.execute("UPDATE games SET status = 'scheduled' WHERE key = ?", (last,))
    db.close()
    before = files_of(site)
    render(league)
    after = files_of(site)
    assert f"games/{second_last}.html" in rewritten(before, after)
    assert 'rel="next"' not in (site / "games" / f"{second_last}.html").read_text()
    assert f"games/{last}.html" not in rewritten(before, after)  # left on disk, not rendered
    with sqlite3.connect(league / "arena.sqlite") as db:
        db.execute("UPDATE games SET status = 'done' WHERE key = ?", (last,))
    db.close()
    before = after
    render(league)
    after = files_of(site)
    assert f"games/{second_last}.html" in rewritten(before, after)
    assert f'<a href="{last}.html" rel="next">' in (site / "games" / f"{second_last}.html").read_text()
    assert f"games/{last}.html" not in rewritten(before, after)


def test_a_missing_page_or_manifest_is_made_good(league):
    site = league / "site"
    key = sorted((site / "games").glob("0*.html"))[5]
    text = key.read_bytes()
    key.unlink()
    render(league)
    assert key.read_bytes() == text  # its signature was unchanged, but its file was gone
    before = files_of(site)
    (league / PAGES_FILE).write_text("{not json")  # a damaged manifest: every page compared
    counts = render(league)
    assert counts["pages"] == 49 and counts["files_written"] == 0 and files_of(site) == before
    assert (league / PAGES_FILE).read_text().startswith('{"head":')


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
    assert "9 pages rendered, 0 files changed, 0 new replays" in " ".join(done.output.split())
    assert files_of(site) == before
