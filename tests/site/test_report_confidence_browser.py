"""How sure the standings are, in a real headless Chromium (see test_report_browser.py): the
standings show each bot's band and its group, and the head-to-head page shows, for a
real tournament, the rating model's chance that the row places ahead beside the observed
share. Skipped without Chromium unless ARENA_REQUIRE_BROWSER=1."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.site.model import load_site_data
from tests.report_helpers import build_tournament
from tests.screenshots import keep_screenshot
from tests.browser_helpers import DESKTOP, Watched


@pytest.fixture(scope="module")
def cup(tmp_path_factory) -> Path:
    return build_tournament(tmp_path_factory.mktemp("confidence-browser") / "cup")


def test_the_standings_show_bands_and_groups(browser, cup, tmp_path):  # noqa: F811
    data = load_site_data(cup)
    order = [line.bot for line in data.standings]
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((cup / "site" / "index.html").as_uri())
    assert page.locator("#standings th:text-is('band')").count() == 1
    bands = page.locator("#standings tbody td.band").all_inner_texts()
    assert bands == [str(data.confidence.intervals[bot]) for bot in order]
    groups = [int(g) for g in page.locator("#standings tbody tr").evaluate_all("rows => rows.map(r => r.dataset.group)")]
    assert groups == [group + 1 for group in data.confidence.groups(order)]
    keep_screenshot(page, "standings-bands.png", full_page=True)
    watched.check()


def test_the_head_to_head_page_shows_the_models_chance_and_the_observed_share(browser, cup, tmp_path):  # noqa: F811
    data = load_site_data(cup)
    first, second = data.standings[0].bot, data.standings[1].bot
    together = sum(1 for game in data.games if first in game.seats and second in game.seats)
    ahead = sum(
        1
        for game in data.games
        if first in game.seats and second in game.seats
        and game.places[game.seats.index(first)] < game.places[game.seats.index(second)]
    )
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((cup / "site" / "h2h.html").as_uri())
    cell = page.locator(f'#h2h td[data-bot="{first}"][data-other="{second}"]')
    assert cell.locator(".model").inner_text() == f"{round(100 * data.confidence.ahead(first, second))}%"
    assert cell.locator(".seen").inner_text() == f"{round(100 * ahead / together)}% · {ahead}/{together}"
    assert "by the ratings" in cell.get_attribute("title")
    keep_screenshot(page, "h2h.png", full_page=True)
    watched.check()


def test_the_shaded_rows_are_the_bots_the_text_says_they_are(browser, cup, tmp_path):  # noqa: F811
    """Issue 34 part 7: the text said the shaded groups hold bots not separated from their
    neighbours, while groups were shaded every other one (the demo's one group of three,
    not separated, was plain). A row is shaded exactly when its bot is not separated from a
    neighbour (its group holds two or more), and the text says so."""
    from collections import Counter

    data = load_site_data(cup)
    order = [line.bot for line in data.standings]
    groups = data.confidence.groups(order)
    sizes = Counter(groups)
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((cup / "site" / "index.html").as_uri())
    hint = " ".join(page.inner_text("section:has(#standings) p.hint").split())
    assert ("Shaded rows are bots not separated from a neighbour: a rule marks where each group of them starts, and "
            "their order within a group may be luck; a plain row is a bot separated from both its neighbours.") in hint
    shade = page.evaluate("getComputedStyle(document.querySelector('.together-key')).backgroundColor")
    shown = page.locator("#standings tbody tr").evaluate_all(
        "rows => rows.map(r => getComputedStyle(r).backgroundColor)")
    assert shown == [shade if sizes[group] > 1 else "rgba(0, 0, 0, 0)" for group in groups]
    watched.check()
