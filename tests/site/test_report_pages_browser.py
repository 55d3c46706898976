"""The site's standings, bot, head-to-head and games-list pages in a real headless Chromium
(see test_report_browser.py for how it is driven): sorting puts the best first, the
head-to-head colours say who is ahead, nothing the site asks for is missing, and axe-core
finds no accessibility violation on any page type, for both games, at desktop and phone
widths. Skipped without Chromium unless ARENA_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

import arena.site.writer as writer
from arena.ratings.results import stored_history, stored_standings
from arena.site.model import load_site_data
from arena.site.writer import slug
from arena.store.db import Store
from arena.web.app import AppServer, create_app
from tests.report_helpers import build_league, build_tournament
from tests.screenshots import keep_screenshot
from tests.browser_helpers import DESKTOP, PHONE, Watched, axe_checker, check_accessible_and_fits, standings_names

GAMES = {
    "3up3down": {"seats": 3},
    "three-thirteen": {"seats": 2, "rules": {"max_turns_per_round": 12}},
}


@pytest.fixture(scope="module", params=sorted(GAMES))
def cup(request, tmp_path_factory) -> Path:
    """A real tournament of each game (the runner renders its site at the end)."""
    return build_tournament(tmp_path_factory.mktemp(request.param) / "cup", game=request.param, **GAMES[request.param])


def page_types(cup: Path) -> dict[str, str]:
    """One page of each type of the site, as paths under site/."""
    with Store.open(cup) as store:
        key = store.games("done")[0].key
        best = stored_standings(store).standings[0].bot
    return {
        "standings": "index.html",
        "head-to-head": "h2h.html",
        "games list": "games/page-1.html",
        "bot": f"bots/{slug(best)}.html",
        "game": f"games/{key}.html",
    }


# --- sorting -----------------------------------------------------------------------------


def test_a_first_click_sorts_numbers_largest_first_places_smallest_first_names_a_to_z(browser, cup):  # noqa: F811
    with Store.open(cup) as store:
        standings = stored_standings(store).standings
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((cup / "site" / "index.html").as_uri())
    header = page.locator("#standings th:text-is('rating')")
    header.click()
    by_rating = [line.bot for line in sorted(standings, key=lambda line: -line.conservative)]
    assert standings_names(page) == by_rating
    assert header.get_attribute("aria-sort") == "descending"
    header.click()
    assert standings_names(page) == by_rating[::-1]
    assert header.get_attribute("aria-sort") == "ascending"

    wins = page.locator("#standings th:text-is('wins')")
    wins.click()
    shown = [int(text) for text in page.locator("#standings tbody td:nth-child(" + str(column(page, "wins")) + ")").all_inner_texts()]
    assert shown == sorted(shown, reverse=True) and shown[0] == max(line.wins for line in standings)

    place = page.locator("#standings th:text-is('avg place')")
    place.click()  # a place: the best, the smallest, first
    assert place.get_attribute("aria-sort") == "ascending"
    shown_places = [float(v) for v in page.locator(f"#standings tbody td:nth-child({column(page, 'avg place')})").all_inner_texts()]
    assert shown_places == sorted(shown_places)

    page.locator("#standings th:text-is('bot')").click()
    assert standings_names(page) == sorted((line.bot for line in standings), key=str.lower)
    page.locator("#standings th:text-is('#')").click()  # sorted by rank at first: a click reverses
    assert page.locator("#standings th:text-is('#')").get_attribute("aria-sort") == "ascending"
    watched.check()


def column(page, name: str) -> int:
    """The 1-based position of the standings column headed `name`."""
    headers = page.locator("#standings thead th").all_inner_texts()
    return [text.strip(" ▲▼").lower() for text in headers].index(name) + 1


# --- head-to-head colours ----------------------------------------------------------------


def test_the_ahead_count_is_green_only_when_the_bot_finished_ahead_more_often(browser, cup):  # noqa: F811
    with Store.open(cup) as store:
        bots = [line.bot for line in stored_standings(store).standings]
    watched = Watched(browser, DESKTOP)
    page = watched.page
    seen = {"ahead": 0, "behind": 0, "even": 0}
    for bot in bots:
        page.goto((cup / "site" / "bots" / f"{slug(bot)}.html").as_uri())
        for row in page.locator("#opponents tbody tr").all():
            ahead_cell, behind_cell = row.locator("td").nth(2), row.locator("td").nth(3)
            ahead, behind = int(ahead_cell.inner_text()), int(behind_cell.inner_text())
            green = ahead_cell.evaluate("cell => getComputedStyle(cell).color") == "rgb(26, 115, 64)"
            red = behind_cell.evaluate("cell => getComputedStyle(cell).color") == "rgb(176, 51, 38)"
            assert green == (ahead > behind), (bot, ahead, behind)
            assert red == (behind > ahead), (bot, ahead, behind)
            seen["ahead" if ahead > behind else "behind" if behind > ahead else "even"] += 1
    assert seen["ahead"] and seen["behind"], seen  # both cases were looked at
    watched.check()


# --- nothing missing ---------------------------------------------------------------------


class _Recording:
    """Wraps the served app: every request's path and answer status, in order."""

    requests: list[tuple[str, int]] = []

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        async def noted(message):
            if message["type"] == "http.response.start":
                self.requests.append((scope["path"], message["status"]))
            await send(message)

        await self.app(scope, receive, noted)


def test_no_page_asks_for_a_file_the_site_does_not_have_favicon_included(browser, cup):  # noqa: F811
    server = AppServer(_Recording(create_app(cup / "site")), "127.0.0.1", 0).start()
    _Recording.requests = []
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        for path in ("index.html", "h2h.html", "games/page-1.html", page_types(cup)["bot"]):
            watched = Watched(browser, DESKTOP)  # a new browser context: nothing cached
            page = watched.page
            _Recording.requests.clear()
            page.goto(base + path)
            # The browser asks for an icon on its own after the load: wait for that request.
            for _ in range(100):
                if any("favicon" in asked for asked, _ in _Recording.requests):
                    break
                page.wait_for_timeout(50)
            asked = [asked for asked, _ in _Recording.requests]
            assert any("favicon" in one for one in asked) and any(one.endswith("site.css") for one in asked), asked
            failed = [(asked, code) for asked, code in _Recording.requests if code >= 400]
            assert failed == [], f"{path}: {failed}"
            watched.check()
    finally:
        server.shutdown()


# --- accessibility -----------------------------------------------------------------------

# Every page type; the game page at more moments of its replay in test_replay_browser.py.
CHECKED = ("standings", "head-to-head", "games list", "bot", "game")
READY = {
    "game": "#replay-table",
    "standings": "#standings-search:visible",
    "games list": "#games-filter:not([hidden])",
    "bot": "#bot-games .found",
}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_axe_finds_no_violation_on_any_page_type(browser, cup, viewport, tmp_path):  # noqa: F811
    axe = axe_checker()
    watched = Watched(browser, viewport)
    page = watched.page
    found = {}
    for kind, path in page_types(cup).items():
        if kind not in CHECKED:
            continue
        page.goto((cup / "site" / path).as_uri())
        page.wait_for_load_state("load")
        if kind in READY:
            page.wait_for_selector(READY[kind])  # what the page's script draws is checked too
        check_accessible_and_fits(axe, page, viewport, kind, found)
        keep_screenshot(page, f"{kind.replace(' ', '-')}-{viewport['width']}.png", full_page=True)
    assert found == {}
    watched.check()


# --- a phone's view (issue 34 part 7) ---------------------------------------------------

# Each cell of `column` (its header's text; or another, after a |), as far right as it reaches on the screen.
RIGHT_EDGES = """([table, column]) => {
  const t = document.querySelector(table), heads = [...t.tHead.rows[0].cells];
  const at = heads.findIndex(h => column.split("|").includes(h.innerText.trim().toLowerCase().replace(/[▲▼ ]+$/, '')));
  if (at < 0) return null;
  return [...t.rows].filter(r => r.cells.length > at).map(r => r.cells[at].getBoundingClientRect())
    .map(box => box.width ? Math.ceil(box.right) : -1);
}"""


def test_on_a_phone_forfeits_and_results_are_in_view_and_no_name_is_cut(browser, cup):  # noqa: F811
    """At 390 px the standings showed nothing after RATING (forfeits), the game lists
    nothing after a game's table number (its result) without a scroll; a head-to-head
    row's name was cut with "..." and nowhere said whole."""
    watched = Watched(browser, PHONE)
    page = watched.page
    width = PHONE["width"]
    site = cup / "site"
    page.goto((site / "index.html").as_uri())
    edges = page.evaluate(RIGHT_EDGES, ["#standings", "forf.|forfeits"])
    assert edges and all(0 < edge <= width for edge in edges), edges
    page.goto((site / "games" / "page-1.html").as_uri())
    edges = page.evaluate(RIGHT_EDGES, ["table.games", "result (place · bot · game score)"])
    assert edges and all(0 < edge <= width for edge in edges), edges
    page.goto((site / page_types(cup)["bot"]).as_uri())
    page.wait_for_selector("#bot-games .found")
    for column in ("place", "score"):
        edges = page.evaluate(RIGHT_EDGES, ["#bot-games table.games", column])
        assert edges and all(0 < edge <= width for edge in edges), (column, edges)
    page.goto((site / "h2h.html").as_uri())
    names = page.locator("#h2h th.rowhead a")
    for at in range(names.count()):
        name = names.nth(at)
        assert name.evaluate("a => a.parentElement.scrollWidth <= a.parentElement.clientWidth")  # nothing hidden
        assert name.get_attribute("title") == name.inner_text()
    watched.check()


# --- the game lists ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    """Six bots, 120 games (2 pages of the game list), 60 games a bot (2 pages of its list),
    its site rendered again with 25 games to a data script and 2 rounds to a script of
    rounds (1,000 each in use): a bot's games come from three scripts (25, 25 and 10
    games), joined in order by the pages, and a round's pages from its script."""
    out = build_league(tmp_path_factory.mktemp("league") / "league")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer, "ROWS_PER_SCRIPT", 25)
        patch.setattr(writer, "ROUNDS_PER_SCRIPT", 2)
        writer.write_site(load_site_data(out), out / "site", full=True)
    assert sorted(path.name for path in (out / "site" / "data" / "bots" / slug("ann")).iterdir()) == ["1.js", "2.js", "3.js"]
    return out


def expected_moves(cup: Path) -> dict[str, dict[str, tuple[str, str, str, str]]]:
    """bot -> game key -> (rating after, its change, rank after, rank change) as the pages
    write them, computed here from the store's rating history (keyed by game) by brute force."""
    with Store.open(cup) as store:
        history = stored_history(store)
        games = [(row.key, row.bots) for row in store.games("done")]
        bots = [line.bot for line in stored_standings(store).standings]
    after_game = defaultdict(dict)
    for bot, points in history.items():
        for point in points:
            after_game[point.key][bot] = point.conservative
    rating = dict.fromkeys(bots, 0.0)  # the prior: 25 - 3 x 25/3

    def rank(bot: str) -> int:
        return 1 + sum(1 for other in bots if rating[other] > rating[bot])

    moves: dict[str, dict[str, tuple[str, str, str, str]]] = defaultdict(dict)
    for key, seated in games:
        before = {bot: (rank(bot), rating[bot]) for bot in seated}
        rating.update(after_game.get(key, {}))
        for bot in seated:
            change = rating[bot] - before[bot][1]
            text = f"{abs(change):.2f}"
            shown = text if text == "0.00" else ("+" if change > 0 else "\u2212") + text
            places = before[bot][0] - rank(bot)
            arrow = f"\u25b2{places}" if places > 0 else f"\u25bc{-places}" if places < 0 else "\u2013"
            moves[bot][key] = (f"{rating[bot]:.2f}", shown, str(rank(bot)), arrow)
    return moves


def list_rows(page, box: str) -> list[dict[str, str]]:
    """The rows of a game list the page's script drew: game key, round, rating and rank cells."""
    rows = []
    for row in page.locator(f"{box} table.games tbody tr").all():
        cells = row.locator("td").all_inner_texts()
        if len(cells) < 8:
            continue
        rows.append({"key": cells[0], "round": cells[1], "rating": cells[5], "rank": cells[6], "table": cells[7]})
    return rows


def test_the_standings_search_shows_only_the_bots_whose_name_holds_the_text(browser, league):  # noqa: F811
    watched = Watched(browser, PHONE)
    page = watched.page
    page.goto((league / "site" / "index.html").as_uri())
    search = page.get_by_label("find a bot")
    search.fill("E")
    visible = page.locator("#standings tbody tr:visible td:nth-child(2) a").all_inner_texts()
    assert sorted(visible) == ["dee", "eve"]
    assert page.locator("#standings-found").inner_text() == "2 of 6 bots"
    search.fill("zz")
    assert page.locator("#standings tbody tr:visible").count() == 0
    search.fill("")
    assert page.locator("#standings tbody tr:visible").count() == 6
    watched.check()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_bots_page_lists_every_game_with_its_rating_and_rank_change(browser, league, viewport, tmp_path):  # noqa: F811
    moves = expected_moves(league)
    bot = "ann"
    with Store.open(league) as store:
        keys = [row.key for row in store.games("done") if bot in row.bots]
    assert len(keys) == 60
    watched = Watched(browser, viewport)
    page = watched.page
    page.goto((league / "site" / "bots" / f"{slug(bot)}.html").as_uri())
    page.wait_for_selector("#bot-games .found")
    assert page.locator("#bot-games .found").inner_text() == "60 games, 50 to a page"
    shown = list_rows(page, "#bot-games")
    assert [row["key"] for row in shown] == keys[::-1][:50]  # newest first
    page.locator("#bot-games .pager button:text-is('next ›')").click()
    shown += list_rows(page, "#bot-games")
    assert [row["key"] for row in shown] == keys[::-1]  # every game, not only the last 50
    for row in shown:
        rating, change, rank, arrow = moves[bot][row["key"]]
        assert row["rating"] == f"{rating} {change}" and row["rank"] == f"{rank} {arrow}", row
    assert any("\u25b2" in row["rank"] for row in shown) and any("\u25bc" in row["rank"] for row in shown)
    assert "#page=2" in page.url
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    keep_screenshot(page, "bot-games.png", full_page=True)

    page.get_by_label("round", exact=True).fill("3")
    rounds = {row["round"] for row in list_rows(page, "#bot-games")}
    assert rounds == {"3"} and page.locator("#bot-games .found").inner_text() == "10 of 60 games"
    page.get_by_label("table-mate").fill("BOB")
    rows = list_rows(page, "#bot-games")
    with Store.open(league) as store:
        both = [row.key for row in store.games("done") if row.round == 3 and {"ann", "bob"} <= set(row.bots)]
    assert [row["key"] for row in rows] == both[::-1] and all("bob" in row["table"] for row in rows)
    assert page.url.endswith("#round=3&with=BOB")
    page.reload()  # the filters are in the address
    page.wait_for_selector("#bot-games .found")
    assert [row["key"] for row in list_rows(page, "#bot-games")] == both[::-1]
    page.locator("#bot-games button:text-is('clear')").click()
    assert page.locator("#bot-games .found").inner_text() == "60 games, 50 to a page"
    watched.check()


def test_the_game_list_filters_by_bot_and_round_and_jumps_to_any_page(browser, league, tmp_path):  # noqa: F811
    with Store.open(league) as store:
        done = store.games("done")
    assert len(done) == 120
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((league / "site" / "games" / "page-1.html").as_uri())
    page.wait_for_selector("#games-filter:not([hidden])")
    # A round on the next page: the list goes there and shows only that round.
    page.locator("#filter-round").fill("6")
    page.locator("#games-filter button:text-is('show')").click()
    page.wait_for_url("**/page-2.html#round=6")
    page.wait_for_selector("#games-note:has-text('Round 6')")
    visible = page.locator("#games-pages table.games tbody tr:visible td:first-child").all_inner_texts()
    assert visible == [row.key for row in done if row.round == 6]
    assert page.locator("#games-note").inner_text() == "Round 6: 20 games, all on this page."
    # ... and no pager or page box beside it (they page through every round): issue 22.
    assert page.locator("#games-pages nav.pager").count() == 2
    assert not page.locator("#games-pages nav.pager").first.is_visible()
    assert not page.locator("#games-pages nav.pager").last.is_visible()
    assert not page.locator("#page-jump").is_visible()
    # A bot (typed in any case) and a round: that bot's games of that round.
    page.locator("#filter-bot").fill("Eve")
    page.locator("#filter-round").fill("2")
    page.locator("#games-filter button:text-is('show')").click()
    page.wait_for_selector("#games-filtered .found")
    assert page.locator("#games-filtered h2").inner_text() == "Games of eve"
    expected = [row.key for row in done if row.round == 2 and "eve" in row.bots][::-1]
    assert [row["key"] for row in list_rows(page, "#games-filtered")] == expected
    assert page.locator("#games-pages").is_hidden()
    keep_screenshot(page, "games-of-eve.png", full_page=True)
    page.locator("#filter-clear").click()
    assert page.locator("#games-pages table.games tbody tr:visible").count() == 20
    assert page.locator("#games-pages nav.pager").first.is_visible() and page.locator("#page-jump").is_visible()
    # Page jumps: numbered links, and a box for any page.
    page.locator("#games-pages nav.pager").first.locator("a[aria-label='page 1']").click()
    page.wait_for_url("**/page-1.html")
    page.locator("#page-number").fill("2")
    page.locator("#page-jump button").click()
    page.wait_for_url("**/page-2.html")
    assert page.locator("nav.pager .current").first.inner_text() == "2"
    page.goto((league / "site" / "games" / "page-1.html").as_uri() + "#bot=nobody")
    page.wait_for_selector("#games-note:has-text('No bot is named')")
    # A round past the last (its script of rounds not written): said, not an error.
    page.goto((league / "site" / "games" / "page-1.html").as_uri() + "#round=7")
    page.wait_for_selector("#games-note:has-text('No game of round 7 has been played.')")
    watched.check()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_axe_finds_no_violation_in_the_filtered_game_lists(browser, league, viewport):  # noqa: F811
    axe = axe_checker()
    watched = Watched(browser, viewport)
    page = watched.page
    found = {}
    for name, path, ready in (
        ("a bot's games, filtered, page 2", f"bots/{slug('bob')}.html#with=a&page=2", "#bot-games .found"),
        ("the game list by bot", "games/page-1.html#bot=cy&round=2", "#games-filtered .found"),
        ("the game list by round", "games/page-2.html#round=4", "#games-note:has-text('Round 4')"),
    ):
        page.goto((league / "site" / path.split("#")[0]).as_uri() + "#" + path.split("#")[1])
        page.wait_for_selector(ready)
        check_accessible_and_fits(axe, page, viewport, name, found)
    assert found == {}
    watched.check()


# --- the rating chart --------------------------------------------------------------------


def test_rating_chart_points_link_to_their_games_and_read_out_under_the_pointer(browser, league, tmp_path):  # noqa: F811
    moves = expected_moves(league)
    with Store.open(league) as store:
        keys = [row.key for row in store.games("done") if "bob" in row.bots]
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((league / "site" / "bots" / f"{slug('bob')}.html").as_uri())
    dots = page.locator("#rating-chart a.pt")
    assert dots.count() == 60
    assert [dot.get_attribute("href") for dot in dots.all()] == [f"../games/{key}.html" for key in keys]
    readout = page.locator("#chart-readout")
    for number in (0, 23, 59):
        dots.nth(number).hover()
        rating, change, rank, arrow = moves["bob"][keys[number]]
        text = readout.inner_text()
        assert text.startswith(f"After game {number + 1}, {keys[number]} (round ")
        assert f"rating {rating} ({change}), rank {rank} ({arrow if arrow != chr(0x2013) else 'unchanged'})" in text
        assert readout.locator("a").get_attribute("href") == f"../games/{keys[number]}.html"
    keep_screenshot(page, "chart-desktop.png", full_page=True)
    # The keyboard: the chart takes focus, the arrows choose a game, Enter opens it.
    page.locator("#rating-chart .area").focus()
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    assert readout.inner_text().startswith(f"After game 59, {keys[58]} ")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/games/{keys[58]}.html")
    # A click on a point opens its game.
    page.go_back()
    page.locator("#rating-chart a.pt").nth(10).click()
    page.wait_for_url(f"**/games/{keys[10]}.html")
    watched.check()


def test_the_rating_chart_reads_well_on_a_phone_and_a_tap_reads_a_point_out(browser, league, tmp_path):  # noqa: F811
    with Store.open(league) as store:
        keys = [row.key for row in store.games("done") if "cy" in row.bots]
    watched = Watched(browser, PHONE, has_touch=True, is_mobile=True)
    page = watched.page
    page.goto((league / "site" / "bots" / f"{slug('cy')}.html").as_uri())
    chart = page.locator("#rating-chart")
    assert chart.bounding_box()["width"] <= PHONE["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    sizes = chart.locator(".yaxis span, .xaxis span").evaluate_all("spans => spans.map(s => parseFloat(getComputedStyle(s).fontSize))")
    assert len(sizes) == 7 and min(sizes) >= 10.5  # text, not a drawing shrunk to the screen
    chart.evaluate("figure => figure.scrollIntoView({block: 'center'})")
    box = chart.locator("a.pt").nth(30).bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.touchscreen.tap(x, y)  # the first tap reads out the point nearest the finger
    assert page.locator("#chart-readout").inner_text().startswith(f"After game 31, {keys[30]} ")
    assert page.url.endswith(f"bots/{slug('cy')}.html")
    keep_screenshot(page, "chart-phone.png", full_page=True)
    page.touchscreen.tap(x + 1, y)  # a second tap on it opens its game
    page.wait_for_url(f"**/games/{keys[30]}.html")
    watched.check()


def test_a_game_ended_by_its_turn_cap_says_so_and_every_game_score_says_which_is_better(browser, league, cup):  # noqa: F811
    """Issue 34 part 7: a game stopped by its turn cap ended like any other (a reader could
    not tell why a bot with cards left lost); a game score never said which way is better."""
    from arena.game.referee import verify_replay

    def first(tournament: Path, ended: str):
        with Store.open(tournament) as store:
            for game in store.games("done"):
                result = store.game_result(game.key)
                if getattr(verify_replay(result), "end_reason", None) == ended:
                    return tournament, game.key, len(result.replay.actions)
        return None

    game = load_site_data(cup).settings["game"]
    means = {
        "3up3down": "the cards a player still holds at the end (their points with the points rule): lower is better",
        "three-thirteen": "penalty points over the eleven rounds: lower is better",
    }[game]
    capped = first(league, "max_turns")  # the league's games stop at 60 turns
    ends = [(capped, True)] + ([(first(cup, "finished"), False)] if game == "3up3down" else [])
    watched = Watched(browser, DESKTOP)
    page = watched.page
    for (tournament, key, steps), said in ends:
        page.goto((tournament / "site" / "games" / f"{key}.html").as_uri() + f"#step={steps}")
        page.wait_for_selector("#replay-table")
        what = page.inner_text("#replay-what")
        assert "game over: places " in what
        assert ("it reached its turn cap (max_turns): the players still in are placed by the cards they hold, "
                "fewer first" in what) is said, what
        assert (page.locator("#replay-table .label:text-is('ended at the turn cap')").count() == 1) is said
    site = cup / "site"
    for path, box in ((page_types(cup)["game"], "main"), ("games/page-1.html", "main"), (page_types(cup)["bot"], "#games")):
        page.goto((site / path).as_uri())
        assert f"game score: {means}." in " ".join(page.inner_text(box).split()), path
    watched.check()
