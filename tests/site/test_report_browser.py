"""The site in a real headless Chromium (Debian's `chromium`, driven by playwright): sort
the standings, open a bot's page, open a game, step its replay with buttons and arrow
keys, switch to a seat's view, on a desktop and a phone viewport, from file:// and from
`arena serve`. A bot named like a script tag must run nothing: any dialog fails the test.
Screenshots only when asked: ARENA_SCREENSHOTS=DIR (tests/screenshots.py).

Skipped when Chromium or playwright is missing, unless ARENA_REQUIRE_BROWSER=1 (CI): the
fixture `browser`, tests/conftest.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.ratings.results import stored_standings
from arena.site.replay import rebuild, replay_frames
from arena.site.writer import slug
from arena.store.db import Store
from arena.web.app import serve_site
from engine.registry import get_game
from tests.browser_helpers import DESKTOP, PHONE, Watched, standings_names, step_of
from tests.report_helpers import HOSTILE, build_tournament
from tests.screenshots import keep_screenshot

@pytest.fixture(scope="module")
def cup(tmp_path_factory) -> Path:
    return build_tournament(tmp_path_factory.mktemp("browser") / "cup")


def hand_cards(page, seat: int) -> list[int]:
    cards = page.locator(f'#replay-table [data-seat="{seat}"] [data-zone="hand"] .pcard[data-card]')
    return [int(card.get_attribute("data-card")) for card in cards.all()]


def state_after(cup: Path, key: str, steps: int):
    with Store.open(cup) as store:
        result = store.game_result(key)
    actions = [step.action for step in result.replay.actions[:steps]]
    return result, get_game(result.game).replay(result.players, result.rules, result.seed, actions)


def test_standings_bot_page_and_replay_on_a_desktop(browser, cup, tmp_path):
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((cup / "site" / "index.html").as_uri())
    with Store.open(cup) as store:
        expected = [line.bot for line in stored_standings(store).standings]
    assert standings_names(page) == expected  # best conservative rating first
    keep_screenshot(page, "index-desktop.png", full_page=True)

    page.click("#standings th:has-text('bot')")
    assert standings_names(page) == sorted(expected, key=str.lower)
    page.click("#standings th:has-text('bot')")
    assert standings_names(page) == sorted(expected, key=str.lower, reverse=True)
    page.click("#standings th:has-text('rating')")  # a number: the largest, the best, first
    assert standings_names(page) == expected
    assert page.locator("#standings th:has-text('rating')").get_attribute("aria-sort") == "descending"

    page.click(f"#standings a:text-is('{HOSTILE}')")
    page.wait_for_selector("#rating-chart")
    assert page.url.endswith(f"bots/{slug(HOSTILE)}.html")
    assert page.locator("h1").inner_text() == HOSTILE  # shown as text, not run
    assert page.locator("#rating-chart polyline.mu").count() == 1
    keep_screenshot(page, "bot-desktop.png", full_page=True)

    page.wait_for_selector("#bot-games .found")  # every game of the bot, newest first
    first_game = page.locator("#bot-games table.games tbody tr td:first-child a").first
    key = first_game.inner_text()
    first_game.click()
    page.wait_for_selector("#replay-table")
    assert page.url.split("#")[0].endswith(f"games/{key}.html")  # the viewer may have said its step already
    what = page.locator("#replay-what")
    assert step_of(page) == 0 and what.inner_text().startswith("The deal")

    page.click("#replay-forward")
    result, state = state_after(cup, key, 1)
    assert step_of(page) == 1
    assert what.inner_text().startswith(f"seat 0 · {result.seats[0]} chooses 3UP")
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert step_of(page) == 5
    assert page.locator(".stepno").inner_text() == f"step 5 of {len(result.replay.actions)}"
    result, state = state_after(cup, key, 5)
    full = state.spectator_view()
    for seat in range(result.players):
        assert hand_cards(page, seat) == [card["id"] for card in full["hands"][seat]]
    keep_screenshot(page, "game-step5-full.png", full_page=True)

    page.select_option("#replay-view", "1")  # as seat 1 saw it
    seen = state.observation(1)
    assert hand_cards(page, 1) == [card["id"] for card in seen["hand"]]
    assert hand_cards(page, 0) == []  # seat 0's hand is only backs and a count
    hidden = page.locator('#replay-table [data-seat="0"] [data-zone="hand"] .count').inner_text()
    assert hidden == f"{seen['hand_sizes'][0]} cards"
    assert page.locator('#replay-table [data-zone="3DOWN"] .pcard[data-card]').count() == 0
    keep_screenshot(page, "game-step5-seat1.png", full_page=True)

    last = len(result.replay.actions)
    page.fill("#replay-jump", str(last))
    page.press("#replay-jump", "Enter")
    assert step_of(page) == last
    places = page.locator("#replay-table .seatbox .who .place").all_inner_texts()
    assert [int(p) for p in places] == result.engine_places
    page.click("#replay-back")
    assert step_of(page) == last - 1
    watched.check()


def test_a_forfeited_game_shows_the_incident_and_the_fallback_moves(browser, cup, tmp_path):
    with Store.open(cup) as store:
        (key, incident), = store.incidents()
        result = store.game_result(key)
    fallback = next(n for n, step in enumerate(result.replay.actions, 1) if step.by == "fallback")
    assert result.replay.actions[fallback - 1].seat == incident.seat
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((cup / "site" / "games" / f"{key}.html").as_uri())
    page.wait_for_selector("#replay-table")
    assert "ILLEGAL_ACTION" in page.locator("section:has(h2:text-is('Incidents'))").inner_text()
    assert page.locator("#result .tag.bad").inner_text() == "forfeit"
    page.fill("#replay-jump", str(fallback))
    page.press("#replay-jump", "Enter")
    assert step_of(page) == fallback
    assert "(fallback player: the bot had forfeited)" in page.locator("#replay-what").inner_text()
    keep_screenshot(page, "forfeit.png", full_page=True)
    watched.check()


def test_the_site_reads_well_on_a_phone(browser, cup, tmp_path):
    watched = Watched(browser, PHONE)
    page = watched.page
    for name, path in (("index", "index.html"), ("matrix", "h2h.html"), ("games", "games/page-1.html")):
        page.goto((cup / "site" / path).as_uri())
        # Nothing but the inner scrolling tables may be wider than the screen.
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], name
        keep_screenshot(page, f"{name}-phone.png", full_page=True)
    page.locator("table.games a").first.click()
    page.wait_for_selector("#replay-table")  # the viewer has drawn the deal
    page.keyboard.press("ArrowRight")
    assert step_of(page) == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    keep_screenshot(page, "game-phone.png", full_page=True)
    watched.check()


def test_served_over_http(browser, cup, tmp_path):
    server = serve_site(cup / "site", 0).start()
    watched = Watched(browser, DESKTOP)
    page = watched.page
    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        page.click("text=Games")
        page.locator("table.games a").first.click()
        page.wait_for_selector("#replay-table")
        page.click("#replay-forward")
        page.click("#replay-forward")
        assert step_of(page) == 2
        keep_screenshot(page, "served.png")
        watched.check()
    finally:
        server.shutdown()


def test_three_thirteen_wilds_and_suits_at_a_glance(browser, tmp_path):
    cup = build_tournament(tmp_path / "rummy", game="three-thirteen", seats=2, rules={"max_turns_per_round": 12})
    with Store.open(cup) as store:
        key = store.games("done")[0].key
        result = store.game_result(key)
    data = replay_frames(result)
    # The first step at which seat 0 holds a wild card (its rank is the round's wild rank).
    wild_step = next(
        index
        for index in range(len(data["frames"]))
        if any(data["cards"][str(card)][0] == rebuild(data, index, None)["wild"] for card in rebuild(data, index, None)["h0"])
    )
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((cup / "site" / "games" / f"{key}.html").as_uri())
    page.wait_for_selector("#replay-table")
    page.fill("#replay-jump", str(wild_step))
    page.press("#replay-jump", "Enter")
    assert step_of(page) == wild_step
    wilds = page.locator('#replay-table [data-seat="0"] [data-zone="hand"] .pcard.wild')
    assert wilds.count() >= 1
    suits = "".join(page.locator('#replay-table [data-seat="0"] [data-zone="hand"] .pcard small').all_inner_texts())
    assert set(suits) <= set("♠♥♦♣") and suits
    red = page.locator('#replay-table .pcard.red').count()
    black = page.locator('#replay-table .pcard.black').count()
    assert red + black == page.locator("#replay-table .pcard[data-card]").count()
    keep_screenshot(page, "three-thirteen.png", full_page=True)
    watched.check()
