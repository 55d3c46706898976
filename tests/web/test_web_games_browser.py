"""A served league's game pages show their replays (headless Chromium): the league's site
holds no file per game, and `arena serve` answers the game list, the game page and its
replay from the store; the viewer plays it as it plays a tournament's replay file."""

from __future__ import annotations

from arena.league.ladder import run_league
from arena.store.db import Store
from arena.web.app import serve_site
from tests.league.test_league import NAMES, config, in_process, registry_of
from tests.browser_helpers import Watched, step_of
from tests.needs import ARGS, CHROMIUM, need_browser


def test_a_served_leagues_game_page_shows_its_replay(tmp_path):
    need_browser()
    from playwright.sync_api import sync_playwright

    out = tmp_path / "league"
    run_league(config(out, registry_of(tmp_path, ()), games=12), in_process=in_process(NAMES))
    assert not (out / "site" / "games").exists() and not (out / "site" / "replays").exists()
    with Store.open(out) as store:
        key = store.games("done")[4].key
        actions = len(store.game_result(key).replay.actions)
    server = serve_site(out / "site", 0).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            watched = Watched(browser, {"width": 1280, "height": 900})
            page = watched.page
            page.goto(server.url + "index.html")
            page.click("a.button:text('All 12 games')")  # the list page, answered from the store
            page.wait_for_url("**/games/page-1.html")
            assert page.locator("table.games tbody tr").count() == 12
            page.click(f"table.games a:text('{key}')")
            page.wait_for_url(f"**/games/{key}.html")
            page.wait_for_selector("#replay-table")
            assert step_of(page) == 0
            page.keyboard.press("End")
            page.wait_for_function(f"document.getElementById('replay-table').dataset.step === '{actions}'")
            assert page.locator("#replay-loading").count() == 0
            assert (out / ".replay-cache").is_dir() and len(list((out / ".replay-cache").iterdir())) == 1
            page.click("a[rel=next]")  # its neighbour, also served
            page.wait_for_selector("#replay-table")
            watched.check()
            browser.close()
    finally:
        server.shutdown()
