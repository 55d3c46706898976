"""What the site says is true, and fits (issue 22), in a real headless Chromium (driven as
in test_report_browser.py): a forfeited game's replay ends with the official places; a
crash's cause (the bot's last stderr lines) is on its game page, at the incident and at
the crash step; a suspended bot's page says when it played and from when it is
suspended; stderr boxes are keyboard-reachable and start at a line; a wide score box
scrolls by keyboard and keeps the focus when the replay redraws; 3UP card labels fit their
cards; score headers never break inside a word; a head-to-head cell is coloured by the
percent it shows; a live page reloads at most every 15 s, with a note between; a decision
shows the legal actions themselves; and axe-core finds no violation on any page type of
either game or of a league, at 1280 and 390 px. Skipped without Chromium unless
ARENA_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path

import pytest

from arena.game.seats import InProcessBot
from arena.league.ladder import run_league
from arena.play.tournament import run_tournament, validate_config
from arena.site.model import load_site_data
from arena.site.pages import last_lines, log_excerpt
from arena.site.writer import slug, write_site
from arena.store.db import Store
from arena.web.app import serve_site
from engine.registry import get_game
from tests.report_helpers import ROOT, build_tournament
from tests.screenshots import keep_screenshot
from tests.league.test_league import NAMES, config, in_process
from tests.browser_helpers import (
    DESKTOP, PHONE, Watched, axe_checker, check_accessible_and_fits, jump, open_game, step_of,
)

# A folder bot that logs each decision and, at its fourth decision of a process, says why
# it gives up and exits with code 3: every game it plays ends in a CRASH forfeit.
CRASHER = '''import sys

import arena_bot

count = 0


def decide(observation, legal_actions, ctx):
    global count
    count += 1
    print(f"decision {count}: {len(legal_actions)} choices", file=sys.stderr, flush=True)
    if count == 4:
        print("giving up: this hand makes no sense to me", file=sys.stderr, flush=True)
        sys.exit(3)
    return ctx.rng.randrange(len(legal_actions))


if __name__ == "__main__":
    arena_bot.run(decide, name="crasher", version="1")
'''

# Six long names (the Three Thirteen score table's headers) for a 6-seat game.
LONG_NAMES = (
    "annabelle-the-careful", "bartholomew-quickdraw", "cornelius-meldmaker",
    "desdemona-wildcard", "evangeline-deadwood", "ferdinand-goes-out-early",
)


@pytest.fixture(scope="module")
def cup(tmp_path_factory) -> Path:
    """3UP 3DOWN at 3 seats (build_tournament): `greedy` forfeits its first game; `chatty` logs."""
    return build_tournament(tmp_path_factory.mktemp("truth-3up") / "cup")


@pytest.fixture(scope="module")
def rummy(tmp_path_factory) -> Path:
    """Three Thirteen at 3 seats (build_tournament): `greedy` forfeits its first game."""
    return build_tournament(
        tmp_path_factory.mktemp("truth-313") / "rummy", game="three-thirteen", seats=3, rules={"max_turns_per_round": 12}
    )


@pytest.fixture(scope="module")
def six(tmp_path_factory) -> Path:
    """One Three Thirteen game at 6 seats of in-process bots with long names."""
    out = tmp_path_factory.mktemp("truth-six") / "six"

    def seat(name: str, seed: int):
        def make() -> InProcessBot:
            rng = random.Random(seed)
            return InProcessBot(lambda observation, legal: rng.randrange(len(legal)), name=name)

        return make

    data = {
        "name": "six", "game": "three-thirteen", "seats": 6, "bots": [], "seed": 11, "output": str(out),
        "rules": {"max_turns_per_round": 12},
    }
    run_tournament(validate_config(data), in_process={name: seat(name, n) for n, name in enumerate(LONG_NAMES)})
    return out


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    """A league of three in-process bots and `crasher@1`, which crashes at its fourth
    decision of every game and is suspended after two forfeits in a row."""
    base = tmp_path_factory.mktemp("truth-league")
    registry = base / "registry"
    folder = registry / "crasher" / "1"
    shutil.copytree(ROOT / "bots" / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "bot.py").write_text(CRASHER)
    (folder / "bot.toml").write_text('name = "crasher"\nversion = "1"\ncommand = ["python3", "bot.py"]\ngames = ["3up3down"]\n')
    out = base / "league"
    run_league(config(out, registry, games=16, suspend_after=2, batch=2), in_process=in_process(NAMES[:3]))
    return out


@pytest.fixture(scope="module")
def served_league(league):
    """The league's site served (`arena serve`): its game pages and replays are answered
    from the store, the site holds no file per game. Yields the site's URL."""
    from arena.web.app import serve_site

    server = serve_site(league / "site", 0).start()
    try:
        yield server.url
    finally:
        server.shutdown()


def first_game(tournament: Path, where=lambda result: True):
    with Store.open(tournament) as store:
        for game in store.games("done"):
            result = store.game_result(game.key)
            if where(result):
                return game.key, result
    raise AssertionError("no such game")


# --- 1. a forfeited game's replay ends with the official places ------------------------------


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_forfeited_games_replay_ends_with_the_official_places(browser, cup, rummy, viewport):  # noqa: F811
    for tournament, badges in ((cup, "#replay-table .place"), (rummy, "#replay-table .seatbox .place")):
        key, result = first_game(tournament, lambda r: bool(r.forfeits))
        if tournament is cup:
            assert result.places != result.engine_places  # the case where the two disagree
        watched = open_game(browser, tournament, key, viewport)
        page = watched.page
        result_table = [int(text) for text in page.locator("#result tbody .place").all_inner_texts()]
        assert result_table == result.places
        jump(page, len(result.replay.actions))
        assert [int(text) for text in page.locator(badges).all_inner_texts()] == result.places
        said = page.inner_text("#replay-what")
        official = ", ".join(map(str, result.places))
        assert f"game over: places {official} (seat {result.forfeits[0]} forfeited" in said
        assert f"as played: {', '.join(map(str, result.engine_places))})" in said
        watched.check()


# --- 4. a crash's cause is on its game page ------------------------------------------------------


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_crash_shows_the_bots_last_stderr_lines_at_the_incident_and_at_the_crash_step(browser, league, served_league, viewport):  # noqa: F811, E501
    key, result = first_game(league, lambda r: any(i.reason.value == "CRASH" and i.request for i in r.incidents))
    incident = next(i for i in result.incidents if i.reason.value == "CRASH")
    lines = last_lines(incident.log_tail)
    assert lines[-2:] == ["decision 4: " + lines[-2].split(": ", 1)[1], "giving up: this hand makes no sense to me"]
    watched = Watched(browser, viewport)
    page = watched.page
    page.goto(served_league + f"games/{key}.html")
    page.wait_for_selector("#replay-table")
    assert "exited with code 3" in page.inner_text("#incident-1")
    log = page.locator("#incidents .incident-log")
    assert log.inner_text() == "\n".join(lines)
    assert log.get_attribute("tabindex") == "0"
    # The incident links to its step; there the box says who forfeited, why, and its last lines.
    page.click("#incident-1 a:text('see it in the replay')")
    step = incident.decision + 1
    page.wait_for_function(f"document.getElementById('replay-table').dataset.step === '{step}'")
    assert result.replay.actions[step - 1].seat == incident.seat and result.replay.actions[step - 1].by == "fallback"
    assert page.locator("#replay-decision").is_visible()
    assert page.inner_text(f"#replay-step-{step}").endswith(" (forfeited here; fallback)")
    later = next(n for n, a in enumerate(result.replay.actions, 1) if n > step and a.seat == incident.seat)
    assert page.inner_text(f"#replay-step-{later}").endswith(" (fallback)")
    fault = page.inner_text("#replay-fault")
    assert fault.startswith(f"seat {incident.seat} · crasher@1 forfeited here: CRASH ({incident.detail})")
    assert page.inner_text("#replay-fault-log") == "\n".join(lines)
    assert page.get_attribute("#replay-fault-log", "tabindex") == "0"
    page.keyboard.press("ArrowRight")  # the next step is an ordinary one again
    assert page.locator("#replay-fault").count() == 0
    watched.check()


# --- 6. a suspended bot's page tells when it played and from when it is suspended -------------


def test_a_suspended_bots_page_says_when_it_played_and_from_which_batch_it_is_suspended(browser, league):  # noqa: F811
    with Store.open(league) as store:
        member = {m.bot: m for m in store.members()}["crasher@1"]
        rounds = sorted(g.round for g in store.games("done") if "crasher@1" in g.bots)
    assert member.status == "suspended" and rounds and rounds[-1] < member.left_at
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((league / "site" / "bots" / f"{slug('crasher@1')}.html").as_uri())
    said = page.inner_text("#membership")
    played = f"played in batches {rounds[0]} to {rounds[-1]} ({len(rounds)} games)"
    assert said == (
        f"suspended joined at batch {member.joined}; {played}; "
        f"suspended: not matched from batch {member.left_at} on ({member.reason})"
    )
    assert f"to batch {member.left_at - 1}" not in said  # the old words read as a time suspended
    watched.check()


# --- 12. keyboard, fit, colours, reloads ---------------------------------------------------------


def test_stderr_excerpts_on_a_bot_page_start_at_a_line_and_are_reached_by_tab(browser, cup):  # noqa: F811
    with Store.open(cup) as store:
        logs = {g.key: store.logs(g.key) for g in store.games("done")}
        seats = {g.key: g.bots for g in store.games("done")}
    watched = Watched(browser, PHONE)
    page = watched.page
    page.goto((cup / "site" / "bots" / f"{slug('chatty')}.html").as_uri())
    boxes = page.locator("pre.log")
    assert boxes.count() == 3
    for n in range(3):
        key = page.locator("section:has(pre.log) h3 a").nth(n).inner_text()
        log = logs[key][seats[key].index("chatty")]
        assert len(log) > 1500  # cut: the excerpt starts at a line, not inside one
        shown = boxes.nth(n).inner_text()
        assert shown == log_excerpt(log, 1500)[0] and shown.startswith("thinking ") and log.endswith(shown)
        assert log[len(log) - len(shown) - 1] == "\n"
    reached = set()
    for _ in range(200):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('pre.log')"):
            reached.add(page.evaluate("document.activeElement.getAttribute('aria-labelledby')"))
        if len(reached) == 3:
            break
    assert reached == {"log-1", "log-2", "log-3"}
    watched.check()


def test_the_six_seat_score_box_on_a_phone_scrolls_by_keyboard_and_keeps_the_focus(browser, six, tmp_path):  # noqa: F811
    key, result = first_game(six)
    last = len(result.replay.actions)
    watched = open_game(browser, six, key, PHONE, step=last - 1)
    page = watched.page
    box = page.locator(".scorescroll")
    assert box.evaluate("b => b.scrollWidth > b.clientWidth + 100")  # six seats: wider than a phone
    box.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert step_of(page) == last - 1  # the arrows scrolled the box, they did not step
    scrolled = settled_scroll(page)  # an arrow's scroll may be animated: read it once it ends
    assert scrolled > 0
    page.keyboard.press("End")  # a step (the table is drawn again): the focus and the scroll stay
    assert step_of(page) == last
    assert page.evaluate("document.activeElement.classList.contains('scorescroll')")
    assert page.evaluate("document.activeElement.scrollLeft") == scrolled
    page.keyboard.press("ArrowLeft")
    assert step_of(page) == last and settled_scroll(page) < scrolled
    keep_screenshot(page, "six-phone.png", full_page=True)
    watched.check()


def settled_scroll(page) -> int:
    """The focused box's scrollLeft once it stops changing (a smooth scroll takes a moment)."""
    seen = None
    for _ in range(50):
        now = page.evaluate("document.activeElement.scrollLeft")
        if now == seen:
            return now
        seen = now
        page.wait_for_timeout(150)
    raise AssertionError("the score box never stopped scrolling")


WORDS_ON_ONE_LINE = """th => {
  var broken = [], text = th.firstChild, at = 0;
  th.textContent.split(/(\\s+)/).forEach(function (word) {
    if (word.trim()) {
      var range = document.createRange();
      range.setStart(text, at); range.setEnd(text, at + word.length);
      var tops = new Set(Array.from(range.getClientRects()).map(function (r) { return Math.round(r.top); }));
      if (tops.size !== 1) broken.push(word);
    }
    at += word.length;
  });
  return broken;
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_three_thirteen_score_headers_never_break_inside_a_word(browser, six, viewport):  # noqa: F811
    key, result = first_game(six)
    watched = open_game(browser, six, key, viewport, step=len(result.replay.actions))
    page = watched.page
    headers = page.locator(".scoretable th")
    assert headers.evaluate_all("ths => ths.map(th => th.textContent)") == ["round", *result.seats]
    assert headers.evaluate_all(f"ths => ths.map({WORDS_ON_ONE_LINE})") == [[]] * 7
    watched.check()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_3up_card_labels_fit_their_cards(browser, cup, viewport, tmp_path):  # noqa: F811
    key, result = first_game(cup)
    watched = open_game(browser, cup, key, viewport)
    page = watched.page
    sizes = []
    for step in (0, 6, 30, len(result.replay.actions)):
        jump(page, step)
        sizes += page.locator("#replay-table .pcard small").evaluate_all(
            "ss => ss.map(s => [s.textContent, s.getBoundingClientRect().width, s.parentElement.clientWidth])"
        )
    assert {label for label, _, _ in sizes} >= {"green", "red", "blue"}
    assert [(label, width, room) for label, width, room in sizes if width > room] == []
    keep_screenshot(page, f"cards-{viewport['width']}.png")
    watched.check()


class _NearEven:
    """The rating model's confidence, with one pair made almost even (50.2% and 49.8%)."""

    def __init__(self, confidence, pair):
        self._confidence, self._pair = confidence, pair

    def __getattr__(self, name):
        return getattr(self._confidence, name)

    def ahead(self, row, col):
        if (row, col) == self._pair:
            return 0.502
        if (col, row) == self._pair:
            return 0.498
        return self._confidence.ahead(row, col)


def test_head_to_head_cells_are_coloured_by_the_percent_they_show(browser, cup, tmp_path):  # noqa: F811
    data = load_site_data(cup, cache_ratings=False)
    top = [line.bot for line in data.standings[:2]]
    data.confidence = _NearEven(data.confidence, tuple(top))
    site = tmp_path / "site"
    write_site(data, site, replays="none")
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((site / "h2h.html").as_uri())
    cells = page.locator("#h2h td[data-bot]").evaluate_all(
        "tds => tds.map(td => [td.dataset.bot, td.dataset.other, td.querySelector('.model').textContent, "
        "td.className, getComputedStyle(td).backgroundColor])"
    )
    assert len(cells) == 12
    for row, col, shown, colour, background in cells:
        percent = int(shown.rstrip("%"))
        assert colour == ("win" if percent > 50 else "loss" if percent < 50 else "even"), (row, col, shown)
        green, red = background.startswith("rgba(31, 138, 76"), background.startswith("rgba(192, 57, 43")
        assert (green, red) == (percent > 50, percent < 50), (row, col, shown, background)
    even = {(row, col) for row, col, shown, _, _ in cells if shown == "50%"}
    assert even == {tuple(top), tuple(top[::-1])}
    watched.check()


def test_a_live_page_reloads_at_most_every_15_seconds_with_a_note_between(browser, cup, tmp_path):  # noqa: F811
    site = tmp_path / "site"
    shutil.copytree(cup / "site", site)
    server = serve_site(site, 0).start()
    watched = Watched(browser, DESKTOP)
    page = watched.page
    loads: list[float] = []
    looks: list[float] = []  # when a look at live.json was answered (its body received)
    page.on("load", lambda _: loads.append(time.monotonic()))
    page.on("requestfinished", lambda request: looks.append(time.monotonic()) if request.url.endswith("live.json") else None)

    def first_look_since(moment: float) -> None:
        """Wait for the page's first look at live.json after `moment` (it learns the version
        it shows then: a change written before that look would go unseen)."""
        for _ in range(100):
            if any(at > moment for at in looks):
                return
            page.wait_for_timeout(100)
        raise AssertionError("the page never looked at live.json")

    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        page.evaluate("window.__kept = 1")
        first_look_since(loads[0])
        # New results at once: within a look at live.json (3 s) the note says so, and the
        # page is not reloaded (checked long before the 15 s are up, never during a reload).
        (site / "live.json").write_text(json.dumps({"version": "v0", "games": 0}) + "\n")
        page.wait_for_selector("#live-note", timeout=8_000)
        assert "New results are in" in page.inner_text("#live-note")
        assert page.evaluate("window.__kept") == 1 and time.monotonic() - loads[0] < 12
        version = 0
        while time.monotonic() < loads[0] + 33:  # a fast league: new results every 2 seconds
            version += 1
            (site / "live.json").write_text(json.dumps({"version": f"v{version}", "games": version}) + "\n")
            page.wait_for_timeout(2000)
            if time.monotonic() < loads[0] + 14:
                assert len(loads) == 1  # no reload in the first 15 s
        gaps = [later - earlier for earlier, later in zip(loads, loads[1:])]
        assert 1 <= len(gaps) <= 2 and all(gap >= 14.5 for gap in gaps), gaps
        # After the last reload (about 30 s): new results, the note, and a click shows them at once.
        page.wait_for_load_state("load")
        first_look_since(loads[-1])
        (site / "live.json").write_text(json.dumps({"version": "last", "games": 0}) + "\n")
        page.wait_for_selector("#live-note", timeout=8_000)
        page.evaluate("window.__kept = 1")
        clicked = time.monotonic()
        page.click("#live-note button")  # the reader wants them now: at once
        page.wait_for_function("window.__kept === undefined && document.readyState === 'complete'")
        assert loads[-1] - clicked < 5
    finally:
        server.shutdown()
    watched.check()


# --- 13. the legal actions themselves ------------------------------------------------------------


def test_a_decision_shows_its_legal_actions_collapsed_when_many_and_only_in_the_right_view(browser, cup):  # noqa: F811
    key, result = first_game(cup, lambda r: "chatty" in r.seats)
    steps = result.replay.actions
    game = get_game(result.game)

    def legal_at(step: int) -> int:
        state = game.replay(result.players, result.rules, result.seed, [s.action for s in steps[: step - 1]])
        return len(state.legal_actions())

    many, other_many = [n for n, s in enumerate(steps, 1) if s.by == "bot" and legal_at(n) > 8][:2]
    few = next(n for n, s in enumerate(steps, 1) if s.by == "bot" and 1 < legal_at(n) <= 8)
    watched = open_game(browser, cup, key, DESKTOP, step=many)
    page = watched.page
    choices = page.locator("#replay-choices")
    assert choices.evaluate("d => d.open") is False  # many: collapsed
    assert page.inner_text("#replay-choices summary") == f"its {legal_at(many)} legal actions"
    page.click("#replay-choices summary")
    items = page.locator("#replay-choices li")
    assert items.count() == legal_at(many) == steps[many - 1].legal
    chosen = page.locator("#replay-choices li.chosen")
    assert chosen.count() == 1
    told = page.inner_text(f"#replay-step-{many}").split(": ", 1)[1]
    assert chosen.inner_text() == told + " ← chosen"
    jump(page, other_many)
    assert page.locator("#replay-choices").evaluate("d => d.open") is True  # opened by the reader: kept
    page.reload()
    page.wait_for_selector("#replay-table")
    jump(page, few)
    assert page.locator("#replay-choices").evaluate("d => d.open") is True  # few: open
    assert page.locator("#replay-choices li").count() == legal_at(few)
    # A seat's view shows another seat's choices nowhere (they would show its hand).
    acting = steps[few - 1].seat
    page.select_option("#replay-view", str((acting + 1) % result.players))
    assert page.locator("#replay-choices").count() == 0
    assert "not shown in" in page.inner_text("#replay-decision")
    page.select_option("#replay-view", str(acting))
    assert page.locator("#replay-choices li").count() == legal_at(few)
    watched.check()


# --- axe on every page type ---------------------------------------------------------------------


def test_axe_finds_no_violation_on_any_page_type_of_either_game_or_a_league(browser, cup, rummy, league, served_league):  # noqa: F811, E501
    """Every page type, both games' replays at several moments, and a league's pages (a
    suspended bot, a crash), at 1280 and 390 px: not one violation."""
    axe = axe_checker()
    pages: list[tuple[str, str, str, list[int | None]]] = []  # (name, site's URL, path, replay steps)
    for name, tournament in (("3up3down", cup), ("three-thirteen", rummy)):
        key, result = first_game(tournament, lambda r: bool(r.forfeits))
        chatty, played = first_game(tournament, lambda r: "chatty" in r.seats)
        seat = played.seats.index("chatty")
        site = (tournament / "site").as_uri() + "/"
        own = next(n for n, s in enumerate(played.replay.actions, 1) if s.seat == seat and s.by == "bot")
        fault = next(i for i in result.incidents if i.forfeit).decision + 1
        pages += [
            (f"{name} standings", site, "index.html", []),
            (f"{name} head-to-head", site, "h2h.html", []),
            (f"{name} games list", site, "games/page-1.html", []),
            (f"{name} games list of round 1", site, "games/page-1.html#round=1", []),
            (f"{name} bot page", site, f"bots/{slug('chatty')}.html", []),
            (f"{name} forfeited game", site, f"games/{key}.html", [0, fault, len(result.replay.actions)]),
            (f"{name} chatty's game", site, f"games/{chatty}.html", [own]),
        ]
    crashed, result = first_game(league, lambda r: any(i.reason.value == "CRASH" and i.request for i in r.incidents))
    crash = next(i for i in result.incidents if i.reason.value == "CRASH").decision + 1
    files = (league / "site").as_uri() + "/"  # a league's games are served (arena serve), its other pages files
    pages += [
        ("league standings", files, "index.html", []),
        ("league suspended bot", files, f"bots/{slug('crasher@1')}.html", []),
        ("league bot", files, f"bots/{slug(NAMES[0])}.html", []),
        ("league head-to-head", files, "h2h.html", []),
        ("league games list", served_league, "games/page-1.html", []),
        ("league crashed game", served_league, f"games/{crashed}.html", [crash, len(result.replay.actions)]),
    ]
    found: dict[str, list[str]] = {}
    for viewport in (DESKTOP, PHONE):
        watched = Watched(browser, viewport)
        page = watched.page
        for name, site, path, steps in pages:
            page.goto(site + path)
            page.wait_for_load_state("load")
            page.wait_for_timeout(100)  # what the page's scripts draw is checked too
            moments = [(name, None)] if not steps else [(f"{name} at step {step}", step) for step in steps]
            for moment, step in moments:
                if step is not None:
                    page.wait_for_selector("#replay-table")
                    jump(page, step)
                    if page.locator("#replay-choices").count():
                        page.locator("#replay-choices").evaluate("d => { d.open = true; }")
                label = f"{moment} at {viewport['width']} px"
                check_accessible_and_fits(axe, page, viewport, label, found)
        watched.check()
    assert found == {}
