"""How sure the standings are, on the site and in the terminal: each bot's band (90% rank
interval) and the groups of bots not separated, a Swiss's score and tie-break columns in
Swiss order, the head-to-head page's model chance beside the observed share, and the
confidence kept in the site's rating cache. Real tournaments (tests/report_helpers.py)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import arena.ratings.ledger
from arena.cli.app import app
from arena.ratings.ledger import SCORE_MEANS
from arena.ratings.results import store_ledger
from arena.site.model import CACHE_FILE, load_site_data, rate_with_confidence
from arena.store.db import Store
from tests.report_helpers import build_tournament


def stored_confidence(store):
    """The standings and the confidence as the ledger makes them, to check what each reader shows against."""
    ledger = store_ledger(store, record=True, swiss=True)
    return ledger.table(), ledger.confidence()


@pytest.fixture(scope="module")
def cup(tmp_path_factory) -> Path:
    return build_tournament(tmp_path_factory.mktemp("confidence") / "cup")


@pytest.fixture(scope="module")
def swiss(tmp_path_factory) -> Path:
    # 4 bots at 3 seats: each Swiss round is two tables of two.
    return build_tournament(tmp_path_factory.mktemp("confidence") / "swiss", format="swiss", rounds=3)


def rows_of(index: str) -> list[dict[str, str]]:
    """Each standings row of index.html: its group, bot, band, and every cell's data-value."""
    rows = []
    for row in re.findall(r'<tr [^>]*class="group-[^"]*" data-group="(\d+)"[^>]*>(.*?)</tr>', index, re.S):
        group, cells = row
        values = re.findall(r'<td[^>]*data-value="([^"]*)"', cells)
        band = re.search(r'<td class="band" data-value="\d+">([^<]*)</td>', cells).group(1)
        rows.append({"group": group, "bot": html.unescape(values[1]), "band": band, "values": values})
    return rows


def test_the_standings_page_shows_each_bots_band_and_group(cup):
    with Store.open(cup) as store:
        table, confidence = stored_confidence(store)
    order = [line.bot for line in table.standings]
    rows = rows_of((cup / "site" / "index.html").read_text())
    assert [row["bot"] for row in rows] == order
    assert [row["band"] for row in rows] == [str(confidence.intervals[bot]) for bot in order]
    assert [int(row["group"]) for row in rows] == [group + 1 for group in confidence.groups(order)]
    assert all("–" in row["band"] for row in rows)


def test_a_swiss_site_ranks_by_score_then_buchholz_and_shows_both(swiss):
    with Store.open(swiss) as store:
        table, _ = stored_confidence(store)
    index = (swiss / "site" / "index.html").read_text()
    assert f'<th data-type="num" title="{SCORE_MEANS}">score</th>' in index and "<th data-type=\"num\" class=\"wide\">Buchholz</th>" in index
    rows = rows_of(index)
    assert [row["bot"] for row in rows] == [line.bot for line in table.standings]
    # Columns: #, bot, score, Buchholz, band, ...
    assert [(float(row["values"][2]), float(row["values"][3])) for row in rows] == [
        (line.score, line.buchholz) for line in table.standings
    ]
    keys = [(-round(line.score, 9), -round(line.buchholz, 9)) for line in table.standings]
    assert keys == sorted(keys)


def test_a_round_robin_site_has_no_swiss_columns(cup):
    index = (cup / "site" / "index.html").read_text()
    assert "Buchholz</th>" not in index and ">score</th>" not in index


def test_the_head_to_head_page_gives_the_models_chance_beside_the_observed_share(cup):
    data = load_site_data(cup)
    page = (cup / "site" / "h2h.html").read_text()
    cells = re.findall(
        r'<td class="[a-z]+" style="--share: [^"]*" data-bot="([^"]*)" data-other="([^"]*)"[^>]*>'
        r'<span class="model">(\d+)%</span>\s*<small class="seen">([^<]*)</small></td>',
        page,
    )
    bots = [line.bot for line in data.standings]
    assert len(cells) == len(bots) * (len(bots) - 1)
    for row, col, model, seen in cells:
        row, col = html.unescape(row), html.unescape(col)
        assert int(model) == round(100 * data.confidence.ahead(row, col))
        together, ahead = _head_to_head(data, row, col)
        assert seen == (f"{round(100 * ahead / together)}% · {ahead}/{together}" if together else "not met")


def _head_to_head(data, row: str, col: str) -> tuple[int, int]:
    together = ahead = 0
    for game in data.games:
        if row in game.seats and col in game.seats:
            together += 1
            ahead += game.places[game.seats.index(row)] < game.places[game.seats.index(col)]
    return together, ahead


def test_the_sites_confidence_is_kept_until_a_game_is_added(cup, monkeypatch, tmp_path):
    data = load_site_data(cup, cache_ratings=False)
    bots = [bot.bot for bot in data.bots]
    cache = tmp_path / CACHE_FILE
    full = rate_with_confidence(data.games, bots, data.settings)
    assert rate_with_confidence(data.games, bots, data.settings, cache) == full
    assert json.loads(cache.read_text())["confidence"]["intervals"] == {
        bot: [interval.low, interval.high] for bot, interval in full[2].intervals.items()
    }

    def recomputed(self):
        raise AssertionError("the confidence was computed again")

    with monkeypatch.context() as patched:
        patched.setattr(arena.ratings.ledger.RatingLedger, "confidence", recomputed)
        assert rate_with_confidence(data.games, bots, data.settings, cache) == full
    # Games added since the cache: resumed ratings, confidence from every game again.
    rate_with_confidence(data.games[:2], bots, data.settings, cache)
    assert json.loads(cache.read_text())["fed"] == 2
    assert rate_with_confidence(data.games, bots, data.settings, cache) == full


def test_arena_standings_prints_bands_and_groups_within_80_columns(swiss):
    runner = CliRunner()
    shown = runner.invoke(app, ["standings", str(swiss)], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    with Store.open(swiss) as store:
        table, confidence = stored_confidence(store)
    lines = shown.output.splitlines()
    assert all(len(line) <= 80 for line in lines)
    header = next(line for line in lines if line.lstrip().startswith("#"))
    # A 25-character name: the wins column is left out to stay within 80 columns.
    assert header.split() == ["#", "band", "bot", "score", "bhz", "mu", "sigma", "mu-3σ", "games", "place", "forf"]
    wide = runner.invoke(app, ["standings", str(swiss)], env={"COLUMNS": "120"})
    header = next(line for line in wide.output.splitlines() if line.lstrip().startswith("#"))
    assert header.split() == ["#", "band", "bot", "score", "bhz", "mu", "sigma", "mu-3σ", "games", "wins", "place", "forf"]
    rows = [line.split() for line in lines if re.match(r"\s*\d+\s+\d+–\d+ ", line)]
    assert [(row[0], row[1], row[3], row[4]) for row in rows] == [
        (str(rank), str(confidence.intervals[line.bot]), f"{line.score:.2f}", f"{line.buchholz:.2f}")
        for rank, line in enumerate(table.standings, 1)
    ]
    assert "Buchholz" in shown.output and "band: the places the bot could hold" in shown.output


def test_arena_standings_json_has_each_bots_rank_interval_and_group(cup):
    runner = CliRunner()
    shown = runner.invoke(app, ["standings", str(cup), "--json"])
    assert shown.exit_code == 0, shown.output
    with Store.open(cup) as store:
        table, confidence = stored_confidence(store)
    order = [line.bot for line in table.standings]
    printed = json.loads(shown.output)
    assert [line["bot"] for line in printed] == order
    assert [line["rank_interval"] for line in printed] == [
        [confidence.intervals[bot].low, confidence.intervals[bot].high] for bot in order
    ]
    assert [line["group"] for line in printed] == [group + 1 for group in confidence.groups(order)]
    assert all(line["buchholz"] is None for line in printed)
