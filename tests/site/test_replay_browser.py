"""The game page's replay viewer in a real headless Chromium (driven as in
test_report_browser.py), for both games, at desktop (1280 px) and phone (390 px) widths:
what each wild card and place badge shows, the keys, the step list and the cards for a
keyboard and a screen reader, a page whose replay was not rendered, play and pause, a URL
per step, the control bar on a phone, the acting bot's decision (think time, legal
actions, its stderr) and the downloadable record; axe-core finds no violation on a game
page at any of the moments checked. Skipped without Chromium unless ARENA_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arena.site.replay import rebuild, replay_frames
from arena.site.writer import render_site
from arena.store.db import Store
from engine.registry import get_game
from tests.report_helpers import HOSTILE_LOG, build_tournament
from tests.screenshots import keep_screenshot
from tests.browser_helpers import (
    DESKTOP, PHONE, Watched, axe_checker, check_accessible_and_fits, jump, open_game, step_of,
)

RUMMY_RULES = {"max_turns_per_round": 12}


@pytest.fixture(scope="module")
def cup(tmp_path_factory) -> Path:
    """3UP 3DOWN at 3 seats: three in-process bots and `chatty`, a program that logs each decision."""
    return build_tournament(tmp_path_factory.mktemp("replay-3up") / "cup")


@pytest.fixture(scope="module")
def rummy(tmp_path_factory) -> Path:
    """Three Thirteen at 3 seats (a round column and three seat columns of scores)."""
    return build_tournament(tmp_path_factory.mktemp("replay-313") / "rummy", game="three-thirteen", seats=3, rules=RUMMY_RULES)


def stored(tournament: Path, bot: str | None = None):
    """The first stored game (with `bot` in it, when given)."""
    with Store.open(tournament) as store:
        for game in store.games("done"):
            result = store.game_result(game.key)
            if bot is None or bot in result.seats:
                return game.key, result
    raise AssertionError(f"no game with {bot}")


CONTRAST = """element => {
  function rgb(text) { return text.match(/[\\d.]+/g).slice(0, 3).map(Number); }
  function lum(c) {
    var v = c.map(function (x) { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  }
  var style = getComputedStyle(element);
  var a = lum(rgb(style.color)), b = lum(rgb(style.backgroundColor));
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


# --- the bugs ------------------------------------------------------------------------------


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_three_thirteen_round_as_scored_marks_that_rounds_wild_rank(browser, rummy, viewport, tmp_path):  # noqa: F811
    key, result = stored(rummy)
    data = replay_frames(result)
    faces = data["cards"]
    # A step showing the last round as scored, where its wild rank is not the round's now
    # and both ranks are among the scored cards (so a wrong mark would show).
    chosen = None
    for index in range(len(data["frames"])):
        table = rebuild(data, index, None)
        last = table.get("last")
        if not last or last["wild"] == table["wild"]:
            continue
        scored = [c for hand in last["hands"] for c in hand["deadwood"] + [c for m in hand["melds"] for c in m["cards"]]]
        ranks = {faces[str(c)][0] for c in scored}
        if last["wild"] in ranks and table["wild"] in ranks:
            chosen = (index, last, scored)
            break
    assert chosen is not None
    index, last, scored = chosen
    watched = open_game(browser, rummy, key, viewport)
    page = watched.page
    jump(page, index)
    zone = page.locator('#replay-table [data-zone*="as scored"]')
    assert zone.count() == 1 and f"round {last['round']} as scored" in zone.get_attribute("data-zone")
    marked = sorted(int(c) for c in zone.locator(".pcard.wild").evaluate_all("cs => cs.map(c => c.dataset.card)"))
    assert marked == sorted(c for c in scored if faces[str(c)][0] == last["wild"])
    keep_screenshot(page, f"as-scored-{viewport['width']}.png", full_page=True)
    watched.check()


def test_three_thirteen_scores_fit_a_phone(browser, rummy, tmp_path):  # noqa: F811
    key, result = stored(rummy)
    watched = open_game(browser, rummy, key, PHONE)
    page = watched.page
    jump(page, len(result.replay.actions))
    assert page.locator(".scoretable tr").count() == 1 + 11  # a header and the 11 rounds
    assert page.locator(".scoretable tr").first.locator("th").count() == 4
    # Nothing is drawn past the felt (white text on the white page): a wide table scrolls
    # inside its own box, which a keyboard can reach.
    felt = page.locator("#replay-table")
    assert felt.evaluate("e => e.scrollWidth <= e.clientWidth")
    box, table = felt.bounding_box(), page.locator(".scorescroll").bounding_box()
    assert box["x"] <= table["x"] and table["x"] + table["width"] <= box["x"] + box["width"]
    assert page.locator(".scorescroll").get_attribute("tabindex") == "0"
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    keep_screenshot(page, "scores-phone.png", full_page=True)
    watched.check()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_3up_place_badges_are_readable_at_game_over(browser, cup, viewport):  # noqa: F811
    key, result = stored(cup)
    watched = open_game(browser, cup, key, viewport)
    page = watched.page
    jump(page, len(result.replay.actions))
    badges = page.locator("#replay-table .place")
    assert [int(text) for text in badges.all_inner_texts()] == result.places
    for ratio in badges.evaluate_all(f"bs => bs.map({CONTRAST})"):
        assert ratio >= 4.5
    watched.check()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_arrows_step_after_a_view_is_chosen_and_after_the_jump_box_and_home_end_do_not_scroll(browser, cup, viewport):  # noqa: F811
    key, result = stored(cup)
    last = len(result.replay.actions)
    watched = open_game(browser, cup, key, viewport)
    page = watched.page
    page.select_option("#replay-view", "1")
    page.focus("#replay-view")  # as after choosing with the mouse or the keyboard
    page.keyboard.press("ArrowRight")
    assert step_of(page) == 1 and page.input_value("#replay-view") == "1"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert step_of(page) == 1 and page.input_value("#replay-view") == "1"
    page.keyboard.press("ArrowDown")  # up and down still choose the view
    assert page.input_value("#replay-view") == "2"
    jump(page, 10)
    page.keyboard.press("ArrowRight")
    assert step_of(page) == 11
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert step_of(page) == 9
    page.evaluate("window.scrollTo(0, 200)")
    page.keyboard.press("End")
    assert step_of(page) == last and page.evaluate("window.scrollY") == 200
    page.keyboard.press("Home")
    assert step_of(page) == 0 and page.evaluate("window.scrollY") == 200
    watched.check()


def test_a_site_without_replays_asks_for_no_replay_file(browser, cup, tmp_path):  # noqa: F811
    copy = tmp_path / "cup"
    shutil.copytree(cup, copy, ignore=shutil.ignore_patterns("site"))
    render_site(copy, replays="none")
    key, _ = stored(copy)
    watched = Watched(browser, DESKTOP)
    page = watched.page
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("console", lambda message: failed.append(message.text) if message.type == "error" else None)
    page.goto((copy / "site" / "games" / f"{key}.html").as_uri())
    page.wait_for_load_state("load")
    assert failed == []
    assert "arena report" in page.locator("#replay-missing").inner_text()
    assert page.locator("#replay-table").count() == 0
    watched.check()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("game", ["3up3down", "three-thirteen"])
def test_the_step_list_is_one_tab_stop_and_every_card_has_a_name(browser, cup, rummy, game, viewport):  # noqa: F811
    tournament = cup if game == "3up3down" else rummy
    key, result = stored(tournament)
    data = replay_frames(result)
    watched = open_game(browser, tournament, key, viewport, step=3)
    page = watched.page
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "replay-steps":
            break
    else:
        raise AssertionError("Tab never reached the step list")
    assert page.locator("#replay-steps").get_attribute("role") == "listbox"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    assert step_of(page) == 4
    assert page.locator("#replay-steps").get_attribute("aria-activedescendant") == "replay-step-4"
    assert page.locator("#replay-step-4").get_attribute("aria-selected") == "true"
    cards = page.locator("#replay-table .pcard")
    named = cards.evaluate_all("cs => cs.map(c => [c.getAttribute('role'), c.getAttribute('aria-label') || '', c.dataset.card || null])")
    assert named and all(role == "img" and label for role, label, _ in named)
    kinds = {"clear": "Clear", "clear1": "Clear +1", "clear2": "Clear +2"}
    face_of = {"3up3down": lambda f: f"{f[1] if f[0] == 'number' else kinds[f[0]]} {f[2]}", "three-thirteen": None}[game]
    wild = rebuild(data, 4, None).get("wild")
    for _, label, card in named:
        if card is None:
            continue
        face = data["cards"][card]
        if face_of is not None:
            assert label == face_of(face)
        else:
            rank = {1: "A", 11: "J", 12: "Q", 13: "K"}.get(face[0], str(face[0]))
            suit = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[face[1]]
            assert label == rank + suit + (" (wild)" if face[0] == wild else "")
    watched.check()


# --- what a bot author wants -----------------------------------------------------------------


def test_play_pause_and_speed(browser, cup):  # noqa: F811
    key, _ = stored(cup)
    watched = open_game(browser, cup, key)
    page = watched.page
    page.select_option("#replay-speed", "20")
    page.click("#replay-play")
    assert page.inner_text("#replay-play") == "Pause"
    page.wait_for_function("Number(document.getElementById('replay-table').dataset.step) >= 6")
    page.click("#replay-play")
    assert page.inner_text("#replay-play") == "Play"
    paused = step_of(page)
    page.wait_for_timeout(400)  # 8 steps' time at 20 steps/s
    assert step_of(page) == paused
    page.locator("#replay-steps").focus()
    page.keyboard.press(" ")  # space plays and pauses too
    page.wait_for_function(f"Number(document.getElementById('replay-table').dataset.step) > {paused}")
    page.keyboard.press(" ")
    assert page.inner_text("#replay-play") == "Play"
    watched.check()


def test_each_step_has_its_own_url(browser, cup):  # noqa: F811
    key, result = stored(cup)
    watched = open_game(browser, cup, key, step=7)
    page = watched.page
    assert step_of(page) == 7
    page.keyboard.press("ArrowRight")
    page.wait_for_function("location.hash === '#step=8'")
    page.select_option("#replay-view", "2")
    page.wait_for_function("location.hash === '#step=8&view=2'")
    page.reload()
    page.wait_for_selector("#replay-table")
    assert step_of(page) == 8 and page.input_value("#replay-view") == "2"
    page.evaluate("location.hash = '#step=12'")  # a link within the page
    page.wait_for_function("document.getElementById('replay-table').dataset.step === '12'")
    watched.check()


@pytest.mark.parametrize("game", ["3up3down", "three-thirteen"])
def test_on_a_phone_the_control_bar_stays_on_screen(browser, cup, rummy, game, tmp_path):  # noqa: F811
    tournament = cup if game == "3up3down" else rummy
    key, result = stored(tournament)
    watched = open_game(browser, tournament, key, PHONE, step=40)
    page = watched.page
    seats = page.locator("#replay-table .seatbox")
    for seat in range(seats.count()):
        seats.nth(seat).scroll_into_view_if_needed()
        bar = page.locator(".replay .controls").bounding_box()
        assert 0 <= bar["y"] and bar["y"] + bar["height"] <= PHONE["height"], seat
    page.click("#replay-forward")
    assert step_of(page) == 41
    keep_screenshot(page, f"bar-{game}.png")
    watched.check()


def test_each_step_shows_the_bots_think_time_legal_actions_and_stderr(browser, cup):  # noqa: F811
    key, result = stored(cup, bot="chatty")
    chatty = result.seats.index("chatty")
    steps = result.replay.actions
    own = next(n for n, step in enumerate(steps, 1) if step.seat == chatty and step.by == "bot")
    other = next(n for n, step in enumerate(steps, 1) if step.seat != chatty and step.by == "bot")
    watched = open_game(browser, cup, key, step=own)
    page = watched.page
    facts = page.locator("#replay-decision .facts")
    made = steps[own - 1]
    assert made.think_s is not None and made.legal and made.stderr == [HOSTILE_LOG]
    assert float(facts.get_attribute("data-think")) == made.think_s
    assert int(facts.get_attribute("data-legal")) == made.legal
    assert f"chose among {made.legal} legal action" in facts.inner_text()
    assert page.inner_text("#replay-stderr") == HOSTILE_LOG  # shown as text, run nowhere
    jump(page, other)  # an in-process bot: legal actions counted, no time, no stderr
    assert facts.get_attribute("data-think") == "" and int(facts.get_attribute("data-legal")) == steps[other - 1].legal
    assert page.locator("#replay-stderr").count() == 0
    jump(page, 0)
    assert page.locator("#replay-decision").is_hidden()
    watched.check()


def test_the_downloaded_record_replays_the_game(browser, cup, tmp_path):  # noqa: F811
    key, result = stored(cup, bot="chatty")
    watched = open_game(browser, cup, key)
    page = watched.page
    with page.expect_download() as download:
        page.click("#replay-download")
    assert download.value.suggested_filename == f"game-{key}.json"
    record = json.loads(Path(download.value.path()).read_text())
    assert (record["game"], record["seed"], record["rules"], record["seats"]) == (result.game, result.seed, result.rules, result.seats)
    assert (record["places"], record["scores"], record["forfeits"]) == (result.places, result.scores, result.forfeits)
    assert record["actions"] == [
        {"seat": s.seat, "action": s.action, "by": s.by, "think_s": s.think_s, "legal": s.legal, "stderr": s.stderr}
        for s in result.replay.actions
    ]
    state = get_game(record["game"]).replay(len(record["seats"]), record["rules"], record["seed"], [a["action"] for a in record["actions"]])
    assert state.is_over and [float(x) for x in state.scores()] == result.scores
    watched.check()


def test_an_older_game_without_decisions_still_shows(browser, cup, tmp_path):  # noqa: F811
    key, result = stored(cup, bot="chatty")
    older = result.model_copy(deep=True)
    for step in older.replay.actions:
        step.think_s = step.legal = step.stderr = None
    data = replay_frames(older)
    assert data["decisions"] is None
    copy = tmp_path / "site"
    shutil.copytree(cup / "site", copy)
    from arena.site.replay import FORMAT, script_text

    (copy / "replays" / f"{key}.r{FORMAT}.js").write_text(script_text(data, key))
    watched = Watched(browser, DESKTOP)
    page = watched.page
    page.goto((copy / "games" / f"{key}.html").as_uri() + "#step=5")
    page.wait_for_selector("#replay-table")
    assert step_of(page) == 5 and page.locator("#replay-decision").is_hidden()
    watched.check()


# --- accessibility -----------------------------------------------------------------------------


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("game", ["3up3down", "three-thirteen"])
def test_axe_finds_no_violation_on_a_game_page(browser, cup, rummy, game, viewport, tmp_path):  # noqa: F811
    axe = axe_checker()
    tournament = cup if game == "3up3down" else rummy
    key, result = stored(tournament, bot="chatty")
    chatty = result.seats.index("chatty")
    own = next(n for n, step in enumerate(result.replay.actions, 1) if step.seat == chatty and step.by == "bot")
    last = len(result.replay.actions)
    watched = open_game(browser, tournament, key, viewport)
    page = watched.page
    found = {}
    for moment, step, view in (("deal", 0, "full"), ("chatty's decision", own, "full"), ("the end", last, "full"),
                               ("seat 1's view", own, "1")):
        page.select_option("#replay-view", view)
        jump(page, step)
        check_accessible_and_fits(axe, page, viewport, moment, found)
    keep_screenshot(page, f"{game}-{viewport['width']}.png", full_page=True)
    assert found == {}
    watched.check()


# --- the packed data (issue 27) ------------------------------------------------------------


def test_a_packed_replay_is_drawn_from_disk_or_says_in_one_line_why_not(browser, rummy, tmp_path):  # noqa: F811
    """The replay file holds its bulk packed (zlib, base64): the page opened from disk
    inflates it and draws the game; a browser without DecompressionStream and a packed
    part that does not inflate each get one line instead, and no script error."""
    from arena.site.replay import FORMAT, read_script

    key, result = stored(rummy)
    script = rummy / "site" / "replays" / f"{key}.r{FORMAT}.js"
    data = read_script(script.read_text())
    assert '"z":"' in script.read_text() and len(data["frames"]) == len(result.replay.actions) + 1
    watched = open_game(browser, rummy, key, step=len(data["steps"]))
    assert watched.page.locator(".stepno").inner_text() == f"step {len(data['steps'])} of {len(data['steps'])}"
    assert step_of(watched.page) == len(data["steps"])
    watched.check()

    old = Watched(browser, DESKTOP)
    old.page.add_init_script("delete window.DecompressionStream;")
    old.page.goto((rummy / "site" / "games" / f"{key}.html").as_uri())
    old.page.wait_for_selector("#replay-loading", state="detached")  # replaced by the note
    assert old.page.locator("#replay").inner_text() == (
        "This replay cannot be read: this browser cannot unpack it (it needs DecompressionStream: "
        "Chrome 80, Firefox 113, Safari 16.4 or later)."
    )
    assert old.page.locator("#replay-table").count() == 0
    old.check()

    copy = tmp_path / "site"
    shutil.copytree(rummy / "site", copy)
    broken = copy / "replays" / script.name
    text = broken.read_text()
    at = text.index('"z":"') + 5
    broken.write_text(text[:at] + "AAAA" + text[at + 4:])  # the zlib header is gone
    bad = Watched(browser, DESKTOP)
    bad.page.goto((copy / "games" / f"{key}.html").as_uri())
    bad.page.wait_for_selector("#replay-loading", state="detached")
    assert bad.page.locator("#replay").inner_text().startswith("This replay cannot be read: ")
    assert bad.page.locator("#replay-table").count() == 0
    bad.check()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_step_list_leaves_room_for_a_four_digit_step_number(browser, cup, viewport):  # noqa: F811
    """Issue 34 part 7: "410." showed as "ł10." (a long game's step numbers were clipped)."""
    from tests.web.test_play_browser import MARKER_ROOM

    key, _ = stored(cup)
    watched = open_game(browser, cup, key, viewport)
    room, widest = watched.page.eval_on_selector("#replay-steps", MARKER_ROOM)
    assert room >= widest, (room, widest)
    watched.check()
