"""A person plays whole games in a real headless Chromium (playwright), by clicking:
3UP 3DOWN and Three Thirteen against bots/random, served by `arena play`'s app on a
loopback port. At every decision the page is compared with the seat's observation: the
cards it shows are the seat's own hand, and no card id the seat may not know (another
seat's hand, a 3DOWN card, the draw pile or the stock) is ever in the DOM or in any
WebSocket message the page received. The stored game replays (`verify_replay`) and the
site's viewer can draw it; the page has no axe-core violation at 1280 and 390 px; a
reload rejoins the game in progress; two people play at one table in two tabs.

Skipped when Chromium or playwright is missing, unless ARENA_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import json
import random

import pytest

from arena.game.referee import verify_replay
from arena.human.table import TableConfig
from arena.site.replay import replay_frames
from arena.store.db import Store
from tests.play_helpers import RANDOM, Served, card_ids, ladder_door, seat_knowledge
from tests.screenshots import keep_screenshot
from tests.browser_helpers import DESKTOP, PHONE, Watched, axe_checker, violations

# Short games keep the suite's wall time down: 3UP 3DOWN with the one-colour classic
# deck (24 cards: the 3UP and 3DOWN are reached soon), Three Thirteen's eleven rounds at
# 4 turns each. Public seeds make the games (and the person's seeded clicks) the same on
# every run: seed 2 gives a 3UP 3DOWN game where the person chooses the 3UP, plays one
# card and several, a Clear, from the 3UP, picks up and turns a 3DOWN card over, and a
# Three Thirteen game where the person goes out.
GAMES = {
    "3up3down": ({"deck": "classic", "colours": 1, "max_turns": 60}, 2),
    "three-thirteen": ({"max_turns_per_round": 4}, 2),
}


class Player:
    """One seat's page: what it received over its WebSocket and what it showed at each turn."""

    def __init__(self, browser, viewport, link: str):  # noqa: F811
        self.watched = Watched(browser, viewport)
        self.page = self.watched.page
        self.frames: list[dict] = []
        self.page.on("websocket", lambda socket: socket.on("framereceived", self._frame))
        self.page.goto(link)

    def _frame(self, payload) -> None:
        self.frames.append(json.loads(payload if isinstance(payload, str) else payload.decode()))

    def turns(self) -> list[dict]:
        return [frame for frame in self.frames if frame["type"] == "turn"]

    def wait_turn_or_over(self, answered: int) -> dict | None:
        """The next turn after `answered` requests (None: the game ended first)."""
        self.page.wait_for_function(
            f"""() => (document.querySelector('#actions[data-request]') &&
                       Number(document.querySelector('#actions').getAttribute('data-request')) > {answered})
                      || !document.getElementById('result').hidden""",
            timeout=60_000,
        )
        request = self.page.locator("#actions").get_attribute("data-request")
        if request is None or int(request) <= answered:
            return None
        return next(frame for frame in self.turns() if frame["request"] == int(request))

    def dom_cards(self) -> set[int]:
        return {int(value) for value in self.page.eval_on_selector_all(
            "[data-card]", "nodes => nodes.map(node => node.getAttribute('data-card'))")}

    def own_hand(self, seat: int) -> list[int]:
        cards = self.page.locator(f'#table [data-seat="{seat}"] [data-zone="hand"] .pcard[data-card]')
        return sorted(int(card.get_attribute("data-card")) for card in cards.all())


def click_action(page, game: str, action: dict) -> None:
    """Make `action` on the page the way a person does: choose cards, press the button."""
    kind = action["type"]
    if game == "3up3down":
        if kind in ("choose_up", "play"):
            for card in action["cards"]:
                page.click(f'#actions button.cardbtn[data-card="{card}"]')
            page.click("#play-chosen")
        elif kind == "play_down":
            page.click(f'#actions button[data-position="{action["position"]}"]')
        else:
            page.click("#" + {"pickup": "pickup", "draw": "draw", "refill": "refill", "no_refill": "no-refill",
                              "keep": "keep"}[kind])
    elif kind == "draw":
        page.click(f"#draw-{action['source']}")
    elif kind == "go_out":
        page.click(f'#actions button[data-go-out="{action["card"]}"]')
    else:
        page.click(f'#actions button.cardbtn[data-card="{action["card"]}"]')
        page.click("#discard")


def kind_of(action: dict, turn: dict) -> str:
    """What sort of move it is, in the words the tests ask for."""
    if action["type"] == "draw" and "source" in action:
        return f"draw {action['source']}"
    if action["type"] != "play":
        return action["type"]
    if turn["observation"].get("source") == "up":
        return "play from 3UP"
    if turn["cards"][str(action["cards"][0])][0] != "number":
        return "play a Clear"
    return "play several" if len(action["cards"]) > 1 else "play one"


def choose(rng: random.Random, legal: list[dict]) -> dict:
    """The person's move: going out whenever it can, a multiple now and then, else any."""
    for action in legal:
        if action["type"] == "go_out":
            return action
    several = [a for a in legal if a["type"] == "play" and len(a["cards"]) > 1]
    if several and rng.random() < 0.5:
        return rng.choice(several)
    return rng.choice(legal)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_person_plays_a_whole_game_by_clicking_and_sees_only_their_seat(browser, game, tmp_path):  # noqa: F811
    rules, seed = GAMES[game]
    served = Served(
        TableConfig(game=game, bots=[RANDOM], rules=rules, out=tmp_path / "play", seed=seed, render_site=True)
    )
    try:
        player = Player(browser, DESKTOP, served.link(0))
        rng = random.Random(f"{game}-person")
        chosen, shown, answered, went_out, kinds = [], [], 0, [], set()
        while True:
            turn = player.wait_turn_or_over(answered)
            if turn is None:
                break
            answered = turn["request"]
            shown.append((turn["step"], player.dom_cards(), player.own_hand(0)))
            action = choose(rng, turn["legal"])
            chosen.append(action)
            kinds.add(kind_of(action, turn))
            if action["type"] == "go_out":
                # The page shows the combinations going out lays down, before the click.
                melds = player.page.locator(f'#actions button[data-go-out="{action["card"]}"] ~ span .meld')
                laid = [sorted(int(c.get_attribute("data-card")) for c in meld.locator("[data-card]").all())
                        for meld in melds.all()]
                went_out.append((turn["step"], turn["hints"]["go_out"][str(action["card"])], laid))
            click_action(player.page, game, action)
        assert player.page.locator("#result-table tbody tr").count() == 2
        keep_screenshot(player.page, f"{game}-over.png", full_page=True)
        frames = list(player.frames)
        # The stored game, in the site's replay viewer: one click from the result.
        player.page.click("#replay-link", timeout=60_000)
        player.page.wait_for_selector("#replay-table")
        stored = served.table.games_stored
        assert player.page.locator("#replay-steps li").count() == len(
            Store.open(tmp_path / "play").game_result(stored[0]).replay.actions) + 1
        player.watched.check()
    finally:
        served.close()

    assert stored == ["00001-00001-0"]
    with Store.open(tmp_path / "play") as store:
        result = store.game_result(stored[0])
        assert {bot.bot: bot.kind for bot in store.bots()} == {"human": "human", "random": "folder"}
    verify_replay(result)  # the stored game replays
    assert replay_frames(result)["seats"] == ["human", "random"]  # and the site's viewer draws it
    mine = [step.action for step in result.replay.actions if step.seat == 0]
    assert mine == chosen  # every click made the very move meant
    assert all(step.by == "bot" for step in result.replay.actions)  # no forfeit, no fallback
    knowledge = seat_knowledge(result, 0)
    wanted = {
        "3up3down": {"choose_up", "play one", "play several", "play a Clear", "play from 3UP", "pickup", "play_down"},
        "three-thirteen": {"draw stock", "draw discard", "discard", "go_out"},
    }[game]
    assert wanted <= kinds, f"the game no longer makes the person {wanted - kinds}"
    if game == "three-thirteen":
        assert went_out, "the person never went out: the game no longer tests going out"
        for step, hinted, laid in went_out:
            # What the page offered is what the engine laid down.
            assert hinted == knowledge[step + 1]["observation"]["laid_down"]
            assert laid == [sorted(card["id"] for card in meld["cards"]) for meld in hinted]

    hidden_ever = set().union(*(k["hidden"] for k in knowledge))
    assert hidden_ever, "the game hid no card: the test would prove nothing"
    # Every message the page received: the seat's own observation, legal actions and
    # events at that step, and no card it may not know.
    checked = 0
    for frame in frames:
        if "observation" not in frame and "events" not in frame:
            assert not card_ids(frame, game), frame["type"]
            continue
        if frame["type"] == "over":
            known = knowledge[-1]
        else:
            known = knowledge[frame["step"]]
            assert frame["observation"] == json.loads(json.dumps(known["observation"]))
            events = frame.get("events", [])
            if events:
                assert json.loads(json.dumps(known["events"][-len(events):])) == events
        if frame["type"] == "turn":
            assert frame["legal"] == known["legal"]
        assert card_ids(frame, game) <= known["known"]
        assert not card_ids(frame, game) & known["hidden"]
        assert {int(card) for card in frame.get("cards", {})} <= known["known"]
        checked += 1
    assert checked > 20
    # What the page showed at every decision: only cards the seat knew; its own hand as dealt.
    for step, dom, hand in shown:
        known = knowledge[step]
        assert dom <= known["known"], f"step {step}: the page showed cards {dom - known['known']} it may not know"
        assert hand == sorted(card["id"] for card in known["observation"]["hand"])


def test_a_reload_rejoins_the_game_in_progress_and_two_people_play_in_two_tabs(browser, tmp_path):  # noqa: F811
    served = Served(
        TableConfig(game="three-thirteen", seats=3, humans=2, bots=[RANDOM], rules={"max_turns_per_round": 2},
                    out=tmp_path / "two")
    )
    try:
        tabs = {seat: Player(browser, DESKTOP, served.link(seat)) for seat in (0, 1)}
        answered = {0: 0, 1: 0}
        moves = 0
        while True:
            # Whoever is to move moves; the other tab waits and says whom for.
            states = {seat: tab.page.locator("#actions").get_attribute("data-request") for seat, tab in tabs.items()}
            over = [not tab.page.locator("#result").is_hidden() for tab in tabs.values()]
            if all(over):
                break
            mover = next((seat for seat, request in states.items() if request and int(request) > answered[seat]), None)
            if mover is None:
                tabs[0].page.wait_for_timeout(50)
                continue
            tabs[1 - mover].page.wait_for_function(
                f"() => document.getElementById('status').textContent.includes('Waiting for seat {mover}')"
            )
            turn = tabs[mover].wait_turn_or_over(answered[mover])
            answered[mover] = turn["request"]
            if moves == 3:
                # A reload rejoins: the same turn is offered again, and the move made after it counts.
                tabs[mover].page.reload()
                again = tabs[mover].wait_turn_or_over(answered[mover] - 1)
                assert again["request"] == turn["request"] and again["observation"] == turn["observation"]
                assert tabs[mover].page.locator("#log li").count() > 0  # the moves so far are listed again
            click_action(tabs[mover].page, "three-thirteen", turn["legal"][0])
            moves += 1
        # Neither tab ever received the other seat's hand: a token opens one seat only.
        for seat, tab in tabs.items():
            for frame in tab.frames:
                if frame["type"] in ("turn", "update"):
                    assert frame["observation"]["seat"] == seat
        # Play again: a new deal starts once both have asked.
        tabs[0].page.click("#again")
        tabs[0].page.wait_for_function("() => (document.getElementById('notice') || {}).textContent.includes("
                                       "'starts when seat 1')")
        assert tabs[0].page.locator("#again").is_disabled()
        tabs[1].page.click("#again")
        tabs[1].page.wait_for_function("() => document.getElementById('result').hidden")
        for tab in tabs.values():
            tab.watched.check()
    finally:
        served.close()
    assert len(served.table.games_stored) == 1


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_axe_finds_no_violation_on_the_play_page(browser, game, viewport, tmp_path):  # noqa: F811
    axe = axe_checker()
    served = Served(TableConfig(game=game, bots=[RANDOM], rules=GAMES[game][0], out=tmp_path / "axe", seed=5))
    try:
        player = Player(browser, viewport, served.link(0))
        turn = player.wait_turn_or_over(0)
        problems = violations(axe, player.page)
        assert problems == [], "\n".join(problems)
        # Keyboard only: Tab to a move and press it.
        legal = turn["legal"]
        player.page.keyboard.press("Tab")
        for _ in range(60):
            focused = player.page.evaluate("() => document.activeElement && document.activeElement.id")
            if focused in ("draw-stock", "pickup") or player.page.evaluate(
                "() => document.activeElement.classList.contains('cardbtn') && !document.activeElement.disabled"
            ):
                break
            player.page.keyboard.press("Tab")
        player.page.keyboard.press("Enter")
        if legal[0]["type"] in ("choose_up",):
            for _ in range(2):
                player.page.keyboard.press("Tab")
                player.page.keyboard.press("Enter")
            for _ in range(20):
                if player.page.evaluate("() => document.activeElement.id") == "play-chosen":
                    break
                player.page.keyboard.press("Tab")
            player.page.keyboard.press("Enter")
        next_turn = player.wait_turn_or_over(turn["request"])
        assert next_turn is None or next_turn["request"] == turn["request"] + 1
        keep_screenshot(player.page, "page.png", full_page=True)
        problems = violations(axe, player.page)
        assert problems == [], "\n".join(problems)
        player.watched.check()
    finally:
        served.close()


def test_a_signed_in_author_picks_a_ladder_bot_on_the_page_and_plays_it(browser, tmp_path):  # noqa: F811
    from arena.web.app import AppServer

    door, token, host, app = ladder_door(tmp_path)
    server = AppServer(app, "127.0.0.1", 0).start()
    try:
        stranger = Watched(browser, PHONE)
        stranger.page.goto(f"{server.url}play/")
        assert "sign in on the authors' page (/door/)" in stranger.page.locator("#status").inner_text()
        stranger.check()
        author = Watched(browser, DESKTOP)
        # Signed in on /door/: the token is in the tab's sessionStorage (the door's page puts it there).
        author.page.add_init_script(f"sessionStorage.setItem('arena-token', {json.dumps(token)})")
        author.page.goto(f"{server.url}play/")
        option = author.page.locator("#ladder-bot option", has_text="three-thirteen")
        author.page.select_option("#ladder-bot", option.get_attribute("value"))
        author.page.click("#open-table")
        author.page.wait_for_function("() => document.title.startsWith('Three Thirteen')")
        assert author.page.evaluate("() => location.hash").startswith("#t=")
        author.page.wait_for_selector("#table .seatbox")
        assert author.page.locator("#table [data-seat='0'] .who").inner_text().startswith("seat 0 · human:alice")
        author.check()
    finally:
        server.shutdown()
        host.close()
        door.stop()


def test_with_a_time_limit_the_page_counts_down_and_a_silent_person_times_out_as_a_bot_would(browser, tmp_path):  # noqa: F811
    served = Served(TableConfig(game="three-thirteen", bots=[RANDOM], rules={"max_turns_per_round": 1},
                                out=tmp_path / "slow", human_time_s=8))
    try:
        player = Player(browser, PHONE, served.link(0))
        player.wait_turn_or_over(0)
        assert "s left for this move" in player.page.locator("#clock").inner_text()
        # The person does nothing: the seat times out, the fallback finishes the game.
        player.page.wait_for_function("() => !document.getElementById('result').hidden", timeout=60_000)
        assert "time for this move ran out" in player.page.locator("#message").inner_text()
        assert "forfeit" in player.page.locator("#result-table tbody tr").first.inner_text()
        player.page.wait_for_function("() => document.getElementById('notice')", timeout=60_000)
        player.watched.check()
        stored = served.table.games_stored
    finally:
        served.close()
    with Store.open(tmp_path / "slow") as store:
        result = store.game_result(stored[0])
    (incident,) = result.incidents
    assert (incident.seat, incident.reason.value, incident.detail) == (
        0, "TIMEOUT", "the person at seat 0 gave no answer within 8 s"
    )
    assert result.forfeits == [0] and result.places == [2, 1]


def contrast(one: str, two: str) -> float:
    """WCAG contrast of two CSS rgb()/rgba() colours (opaque)."""
    def luminance(colour: str) -> float:
        parts = [float(x) for x in colour[colour.index("(") + 1:-1].split(",")[:3]]
        linear = [c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in parts]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(one), luminance(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


# The room an ordered list leaves its numbers (its padding) against the width of the widest
# number it may show, "9999. " in bold (a move's or a step's, as the list's own font draws it).
MARKER_ROOM = """ol => {
  const li = ol.querySelector('li') || ol, s = getComputedStyle(li);
  const pen = document.createElement('canvas').getContext('2d');
  pen.font = `700 ${s.fontSize} ${s.fontFamily}`;
  return [parseFloat(getComputedStyle(ol).paddingLeft), pen.measureText('9999. ').width];
}"""


def test_a_focused_card_stands_out_on_the_green_table_and_move_numbers_have_room(browser, tmp_path):  # noqa: F811
    """Issue 34 part 7: the focus ring on a card was the site's blue, 1.2:1 on the felt (3:1
    needed); the log's numbers of three digits and more were clipped."""
    served = Served(TableConfig(game="3up3down", bots=[RANDOM], rules=GAMES["3up3down"][0], out=tmp_path / "f", seed=5))
    try:
        player = Player(browser, PHONE, served.link(0))
        player.wait_turn_or_over(0)
        page = player.page
        for _ in range(80):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.classList.contains('cardbtn')"):
                break
        ring, behind = page.evaluate("""() => {
          const card = document.activeElement, style = getComputedStyle(card);
          let under = card.parentElement;
          while (under && getComputedStyle(under).backgroundColor === 'rgba(0, 0, 0, 0)') under = under.parentElement;
          return [style.outlineStyle === 'none' ? 'none' : style.outlineColor, getComputedStyle(under).backgroundColor];
        }""")
        assert ring != "none" and contrast(ring, behind) >= 3, (ring, behind)
        room, widest = page.eval_on_selector("#log", MARKER_ROOM)
        assert room >= widest, (room, widest)
        player.watched.check()
    finally:
        served.close()
