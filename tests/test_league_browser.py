"""A league's standings page served by `arena serve` picks up new results without a manual
reload (headless Chromium): the league re-renders the site after each batch, and the page
reloads itself when live.json says the standings changed; a game's page does not."""

from __future__ import annotations

import threading

from arena.league import run_league
from arena.report import make_server
from tests.test_league import NAMES, config, in_process
from tests.test_report_browser import ARGS, CHROMIUM, _need_browser


def test_a_served_standings_page_follows_the_league(tmp_path):
    _need_browser()
    from playwright.sync_api import sync_playwright

    registry = tmp_path / "registry"
    registry.mkdir()
    out = tmp_path / "league"
    run_league(config(out, registry, games=6), in_process=in_process(NAMES))
    server = make_server(out / "site", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = browser.new_page()
            page.goto(url + "index.html")
            assert "6 of 6 games played" in page.inner_text("body")
            game = browser.new_page()
            game.goto(url + "games/00001-00001-0.html")
            game.evaluate("window.__kept = 1")
            page.evaluate("window.__kept = 1")
            # More games: the league re-renders the site; nobody touches the page.
            run_league(config(out, registry, games=12), in_process=in_process(NAMES))
            page.wait_for_function("document.body.innerText.includes('12 of 12 games played')", timeout=20_000)
            assert page.evaluate("window.__kept") is None  # it was reloaded, not patched
            assert game.evaluate("window.__kept") == 1  # a replay is never interrupted
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
