"""A league's pages served by `arena serve` pick up new results without a manual reload
(headless Chromium): the league re-renders the site after each batch, and every page that
shows standings (the index, a bot's page with its rank, interval and mark) reloads itself
when live.json says the standings changed, keeping what the reader chose (hide retired
versions); a game's page does not."""

from __future__ import annotations

import json
import re

from arena.league.ladder import run_league
from arena.site.writer import slug
from arena.web.app import serve_site
from tests.league.test_league import NAMES, bot_folder, config, in_process, registry_of
from tests.needs import ARGS, CHROMIUM, need_browser


def test_served_standings_and_bot_pages_follow_the_league(tmp_path):
    need_browser()
    from playwright.sync_api import sync_playwright

    registry = registry_of(tmp_path, ("ann",))
    out = tmp_path / "league"

    def new_version(batch: int) -> None:
        if batch == 2 and not (registry / "ann" / "2.0").exists():
            bot_folder(registry / "ann", "ann", "2.0").rename(registry / "ann" / "2.0")
            (registry / "ann" / "2.0" / "submission.json").write_text(json.dumps({"date": "2999-01-01T00:00:00+00:00"}))

    others = in_process(NAMES[1:])
    run_league(config(out, registry, games=6), in_process=others, before_batch=new_version)
    server = serve_site(out / "site", 0).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = browser.new_page()
            page.goto(url + "index.html")
            assert "6 of 6 games played" in page.inner_text("body")
            retired = page.locator("#standings tr.retired")
            assert retired.count() == 1 and retired.is_visible()
            page.check("#hide-retired")
            assert not retired.is_visible()
            page.click("#standings th:nth-child(2)")  # sorted by name
            page.fill("#standings-search", "a")  # the reader is typing: focus stays in the box
            assert page.inner_text("#standings-found") == "5 of 7 bots"
            bot = browser.new_page()
            bot.goto(url + f"bots/{slug('bob')}.html")
            before = bot.inner_text(".cards-row")
            game = browser.new_page()
            game.goto(url + "games/00001-00001-0.html")
            for each in (page, bot, game):
                each.evaluate("window.__kept = 1")
            # More games: the league re-renders the site; nobody touches the pages.
            run_league(config(out, registry, games=12), in_process=others)
            # Reloaded (at most once every 15 s from its load: a fast league does not flicker it).
            bot.wait_for_function("window.__kept === undefined", timeout=40_000)
            page.wait_for_timeout(4000)  # more than a look at live.json: nothing while typing
            assert page.evaluate("window.__kept") == 1
            page.evaluate("document.activeElement.blur()")
            page.wait_for_function("document.body.innerText.includes('12 of 12 games played')", timeout=40_000)
            assert page.evaluate("window.__kept") is None  # it was reloaded, not patched
            # What the reader chose survived the reload: retired versions stay hidden, the
            # search and the sorted column stay.
            assert page.is_checked("#hide-retired")
            assert page.locator("#standings tr.retired").count() == 1
            assert not page.locator("#standings tr.retired").is_visible()
            assert page.input_value("#standings-search") == "a"
            assert page.inner_text("#standings-found") == "5 of 7 bots"
            assert page.get_attribute("#standings th:nth-child(2)", "aria-sort") == "ascending"
            names = page.locator("#standings tbody tr:not([hidden])").evaluate_all(
                "rows => rows.map(row => row.getAttribute('data-bot'))"
            )
            assert names == ["ann@1.0", "ann@2.0", "cat", "dan", "fay"]
            # The bot's page (its rank, interval, games and mark) shows the new standings.
            games = int(re.search(r"(\d+)\s*games", bot.inner_text(".cards-row")).group(1))
            assert games > int(re.search(r"(\d+)\s*games", before).group(1))
            assert re.search(r"rank \d+ \(could be \d+–\d+, 90%\)", bot.inner_text(".hero"))
            assert game.evaluate("window.__kept") == 1  # a replay is never interrupted
            browser.close()
    finally:
        server.shutdown()
