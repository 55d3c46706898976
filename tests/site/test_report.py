"""The report: replay frames equal the engine at every step (full view and each seat's own
observation), hidden cards stay hidden in a seat's view, everything a bot controls is
escaped, pages are local and small, ratings over time end at the standings, `arena report`
and `arena serve` work. The browser tests are in test_report_browser.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.app import app
from arena.game.record import GameResult, Replay, ReplayAction
from arena.ratings.results import stored_history, stored_standings
from arena.play.tournament import TournamentInterrupted
from arena.site.charts import rating_chart, rating_moves
from arena.site.model import ReportError, load_site_data, rate
from arena.site.replay import (
    FORMAT,
    ReplayUnavailable,
    diff,
    mask,
    patch,
    read_script,
    rebuild,
    replay_frames,
    script_text,
)
from arena.site.writer import (
    page_links,
    render_site,
    settings_summary,
    slug,
    write_site,
)
from arena.store.db import Store
from arena.web.app import serve_site
from arena.web.errors import WebError
from engine.players import play_random_game
from engine.registry import get_game
from tests.report_helpers import HOSTILE, build_tournament


def result_of(game: str, players: int, seed: int, rules: dict | None = None) -> GameResult:
    """A random game as the referee would record it."""
    state = play_random_game(game, players, rules or {}, seed)
    return GameResult(
        game=game,
        seed=seed,
        rules=state.options,
        seats=[f"bot{seat}" for seat in range(players)],
        places=state.places(),
        scores=[float(s) for s in state.scores()],
        engine_places=state.places(),
        forfeits=[],
        incidents=[],
        replay=Replay(
            actions=[ReplayAction(seat=seat, action=action, by="bot") for seat, action in state.history],
            events=state.events(None),
        ),
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build_tournament(tmp_path_factory.mktemp("report") / "cup")


# --- replay frames ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "game, players, seed, rules",
    [
        ("3up3down", 3, 4, {"max_turns": 40}),
        ("3up3down", 4, 9, {"choose_for_others": True, "swap_stacks": True, "max_turns": 30}),
        ("three-thirteen", 2, 5, {"max_turns_per_round": 6}),
    ],
)
def test_every_frame_equals_the_engine_in_full_and_in_each_seats_own_view(game, players, seed, rules):
    result = result_of(game, players, seed, rules)
    data = replay_frames(result)
    assert len(data["frames"]) == len(result.replay.actions) + 1
    tables = get_game(game).replay_tables()
    full_table, seat_table = tables.full, tables.seat
    state = get_game(game).new_game(players, result.rules, seed)
    for index in range(len(data["frames"])):
        if index:
            state.apply(result.replay.actions[index - 1].action)
        views = [state.observation(seat) for seat in range(players)]
        assert rebuild(data, index, None) == full_table(state, views), f"full view at step {index}"
        for seat in range(players):
            assert rebuild(data, index, seat) == seat_table(views[seat], seat), f"seat {seat} at step {index}"


def test_a_seat_view_names_no_card_that_seat_may_not_see():
    result = result_of("3up3down", 3, 11, {"max_turns": 50})
    data = replay_frames(result)
    state = get_game("3up3down").new_game(3, result.rules, 11)
    for index in range(len(data["frames"])):
        if index:
            state.apply(result.replay.actions[index - 1].action)
        for seat in range(3):
            shown = json.dumps(rebuild(data, index, seat))
            allowed = json.dumps(state.observation(seat))
            visible = {int(i) for i in re.findall(r'"id": (\d+)', allowed)}
            table = rebuild(data, index, seat)
            for zone, value in table.items():
                if zone.startswith("h") and zone[1:].isdigit() and int(zone[1:]) != seat:
                    assert isinstance(value, int), f"seat {seat} sees hand {zone} at step {index}"
            assert all(card in (-1, None) for slots in table["down"] for card in slots)
            ids = set()
            for zone in ("discard", "removed", f"h{seat}", "setup", "own_up"):
                if isinstance(table.get(zone), list):
                    ids.update(table[zone])
            for cards in table["up"] or []:
                ids.update(cards)
            assert ids <= visible, f"seat {seat} at step {index}: {sorted(ids - visible)} shown, view {shown[:200]}"


def test_a_list_that_grew_at_its_end_is_stored_as_its_tail():
    old = {"discard": [4, 8, 15], "cur": 0}
    new = {"discard": [4, 8, 15, 16], "cur": 1}
    change = diff(old, new)
    assert change == {"discard": {"k": 3, "t": [16]}, "cur": 1}
    assert patch(old, change) == new
    assert patch(new, diff(new, {"cur": 1})) == {"cur": 1}  # a zone that disappears


def test_the_mask_turns_other_hands_into_counts_and_3down_cards_into_backs():
    full = {"h0": [1, 2], "h1": [3, 4, 5], "down": [[7, None, 9], [10, 11, 12]], "setup": [[1], [2, 3]]}
    assert mask(full, 1) == {"h0": 2, "h1": [3, 4, 5], "down": [[-1, None, -1], [-1, -1, -1]], "setup": [2, 3]}


def test_a_stored_game_that_does_not_replay_is_reported_not_drawn():
    result = result_of("3up3down", 2, 3, {"max_turns": 20})
    broken = result.model_copy(update={"replay": Replay(actions=result.replay.actions[:5], events=[])})
    with pytest.raises(ReplayUnavailable, match="end before the game is over"):
        replay_frames(broken)
    wrong = result.model_copy(
        update={"replay": Replay(actions=[ReplayAction(seat=0, action={"type": "pickup"}, by="bot")], events=[])}
    )
    with pytest.raises(ReplayUnavailable, match="action 1 of the stored game does not replay"):
        replay_frames(wrong)


def test_replay_script_cannot_close_its_script_tag():
    text = script_text({"seats": ["</script><script>alert(1)</script>"], "x": "<!--"}, "k</script>")
    assert "<" not in text and ">" not in text
    payload = text.split("=", 2)[2].rstrip(";\n")
    assert json.loads(payload)["seats"] == ["</script><script>alert(1)</script>"]


# --- the site ----------------------------------------------------------------------------


def test_the_runner_renders_every_page_and_replay(site):
    pages = site / "site"
    with Store.open(site) as store:
        keys = [game.key for game in store.games("done")]
        bots = [bot.bot for bot in store.bots()]
    assert len(keys) == 4
    assert (pages / "index.html").is_file() and (pages / "h2h.html").is_file()
    assert (pages / "games" / "page-1.html").is_file()
    for key in keys:
        assert (pages / "games" / f"{key}.html").is_file()
        replay = read_script((pages / "replays" / f"{key}.r{FORMAT}.js").read_text())
        assert len(replay["frames"]) == len(replay["steps"]) + 1 and "error" not in replay
    assert sorted(path.name for path in (pages / "bots").iterdir()) == sorted(f"{slug(bot)}.html" for bot in bots)


def test_a_forfeit_shows_on_the_game_page_and_the_bots_page(site):
    with Store.open(site) as store:
        faulted = [(key, incident) for key, incident in store.incidents()]
    assert [(i.bot, i.reason.value, i.decision > 0) for _, i in faulted] == [("greedy", "ILLEGAL_ACTION", True)]
    key, incident = faulted[0]
    game_page = (site / "site" / "games" / f"{key}.html").read_text()
    assert '<span class="tag bad">forfeit</span>' in game_page
    # In the bot's own terms, as the terminal says it: the id of the request it answered illegally.
    assert incident.request is not None and incident.request > 0
    when = f"at request {incident.request} (after {incident.decision} moves of the game)"
    assert f"<span class=\"tag bad\">ILLEGAL_ACTION</span> seat {incident.seat} (greedy) {when}:" in game_page
    bot_page = (site / "site" / "bots" / f"{slug('greedy')}.html").read_text()
    assert f'<a href="../games/{key}.html">{key}</a></td><td>{incident.seat}</td><td><span class="tag bad">ILLEGAL_ACTION</span>' in bot_page
    assert f"<td>{when}</td>" in bot_page
    replay = read_script((site / "site" / "replays" / f"{key}.r{FORMAT}.js").read_text())
    marked = [n for n, step in enumerate(replay["steps"], 1) if step[-1] == "fallback"]
    assert marked and all(replay["steps"][n - 1][0] == incident.seat for n in marked)  # the fallback's steps are marked


def test_everything_a_bot_controls_is_escaped(site):
    html = {path: path.read_text() for path in (site / "site").rglob("*.html")}
    everything = "\n".join(html.values())
    assert HOSTILE not in everything
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in everything
    assert "<img" not in everything and "alert(3)</script>" not in everything
    bot_page = (site / "site" / "bots" / f"{slug('chatty')}.html").read_text()
    assert "1.0 &lt;img src=x onerror=&#34;alert(2)&#34;&gt;" in bot_page  # the version, as text
    assert "thinking &lt;script&gt;alert(3)&lt;/script&gt; &amp;amp; done" in bot_page  # the stderr excerpt
    for path in (site / "site" / "replays").iterdir():
        assert "<" not in path.read_text()
    assert "Spring &lt;b&gt;cup&lt;/b&gt;" in html[site / "site" / "index.html"]


def test_pages_load_nothing_from_the_network_and_are_small(site):
    for path in (site / "site").rglob("*"):
        if path.is_file():
            assert path.stat().st_size <= 1_000_000, path
        if path.suffix in (".html", ".css", ".js") and path.parent.name != "replays":
            text = path.read_text()
            assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text), path
            assert "@import" not in text and "url(http" not in text, path


def settings_shown(index: str) -> dict[str, str]:
    """The settings block of an index page: label -> text (tags stripped)."""
    block = index[index.index("<h2>Settings</h2>"):]
    pairs = re.findall(r"<dt>(.*?)</dt>\s*<dd>(.*?)</dd>", block, re.S)
    return {label: re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text)).strip() for label, text in pairs}


def test_the_settings_are_a_summary_in_words_without_local_paths(site, tmp_path):
    index = (site / "site" / "index.html").read_text()
    shown = settings_shown(index)
    assert shown["game"] == "3UP 3DOWN"
    assert shown["format"] == "round-robin"
    assert shown["tables"] == "3 seats"
    assert shown["deals"] == "a new deal every game"
    assert shown["seed"] == "public: 3 (anyone can replay the deals)"
    assert shown["limits"] == "5 s per decision, 10 s time bank, 10 s to start, 600 s of CPU per game, 512 MB of memory, 1 CPU"
    assert shown["rating"] == "TrueSkill: mu 25, sigma 8.333, beta 4.167, tau 0, draw probability 0.001"
    assert shown["rules"].startswith("the game's defaults all 16 rules")
    for hidden in ("output", "jobs", "cluster", "cycles", "name"):
        assert hidden not in shown
    assert str(site) not in index and str(tmp_path.parent) not in index and "4.16666" not in index

    swiss = build_tournament(tmp_path / "swiss", format="swiss", rounds=2, rules={"max_turns": 400})
    shown = settings_shown((swiss / "site" / "index.html").read_text())
    assert shown["format"] == "Swiss, 2 rounds" and "cycles" not in shown
    assert shown["rules"].startswith("max_turns = 400 (")
    assert "the rest as the game's defaults" in shown["rules"]


def test_a_settings_summary_names_only_what_a_spectator_needs():
    summary = settings_summary({
        "name": "ladder", "game": "three-thirteen", "seats": 2, "format": "league", "registry": "/home/me/bots",
        "output": "/home/me/league", "jobs": 8, "cluster": "tcp://10.1.2.3:8786", "seed": None, "duplicate": True,
        "sandbox": "docker", "suspend_after": 5, "until_stable": True, "games": None, "batch": None,
        "rating": {"mu": 25.0, "sigma": 25 / 3, "beta": 25 / 6, "tau": 0.0, "draw_probability": 0.001, "duplicate_update": "deal"},
        "rules": {"wild_penalty": 15, "ace_high": False}, "unknown_setting": "/somewhere/else",
    })
    rows = dict(summary["rows"])
    assert rows == {
        "game": "Three Thirteen",
        "format": "league: a ladder that bots join when they are submitted (a new version retires the old one); "
                  "a bot that forfeits 5 games in a row is suspended; it stops once every active bot is settled",
        "tables": "2 seats",
        "deals": "duplicate: every deal is played once in each seat rotation",
        "seed": "secret (kept with the results)",
        "sandbox": "docker: each bot in its own container",
        "rating": "TrueSkill: mu 25, sigma 8.333, beta 4.167, tau 0, draw probability 0.001; one update per deal (by total of places)",
    }
    assert "/home/me" not in json.dumps(summary) and "10.1.2.3" not in json.dumps(summary) and "/somewhere" not in json.dumps(summary)
    assert [(rule["name"], rule["value"]) for rule in summary["changed_rules"]] == [("wild_penalty", "15")]
    assert [rule["name"] for rule in summary["rules"]] == ["ace_high", "wild_penalty"]
    assert settings_summary({"format": "gauntlet", "challengers": [{"id": "mine"}], "cycles": 1})["rows"] == [
        ("format", "gauntlet: mine against the field")
    ]
    assert dict(settings_summary({"format": "round-robin", "cycles": 3})["rows"])["format"] == "round-robin, 3 times over"


def test_the_standings_page_lists_every_bot_in_rating_order(site):
    with Store.open(site) as store:
        standings = stored_standings(store).standings
    index = (site / "site" / "index.html").read_text()
    rows = re.findall(r'<td data-value="([^"]*)"><a href="bots/', index)
    assert rows == [
        line.bot.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for line in standings
    ]
    assert "4 of 4 games played" in index


def test_rating_over_time_ends_at_the_standings(site):
    data = load_site_data(site)
    with Store.open(site) as store:
        standings = {line.bot: line for line in stored_standings(store).standings}
        history = stored_history(store)
    for bot, line in standings.items():
        games, mu, sigma, conservative = data.history[bot][-1]
        assert (games, mu, sigma, conservative) == (
            line.games, pytest.approx(line.mu), pytest.approx(line.sigma), pytest.approx(line.conservative)
        )
        assert [(p.games, pytest.approx(p.mu)) for p in history[bot]] == [(g, m) for g, m, _, _ in data.history[bot]]


def test_duplicate_deals_rated_as_one_update_each_as_the_store_does(tmp_path):
    cup = build_tournament(tmp_path / "duplicate", duplicate=True, rules={"max_turns": 40})
    data = load_site_data(cup)
    with Store.open(cup) as store:
        expected = stored_standings(store).standings
        history = stored_history(store)
    assert len(data.games) == 12  # 4 tables x 3 rotations
    assert data.standings == expected
    for line in expected:
        # One point per deal (3 rotations), the last one at the standings.
        assert [games for games, *_ in data.history[line.bot]] == [3, 6, 9]
        assert data.history[line.bot][-1] == (line.games, line.mu, line.sigma, line.conservative)
        after_each_deal = [point for point in history[line.bot] if point.games % 3 == 0]
        assert [(p.games, pytest.approx(p.mu)) for p in after_each_deal] == [(g, m) for g, m, _, _ in data.history[line.bot]]
    assert not (cup / ".report-ratings.json").exists()  # duplicate passes are not cached


def test_a_duplicate_deal_still_being_played_shows_no_cards(tmp_path):
    stop = threading.Event()

    def stop_after_four(update) -> None:
        if update.done >= 4:
            stop.set()

    with pytest.raises(TournamentInterrupted):
        build_tournament(tmp_path / "open", duplicate=True, rules={"max_turns": 40}, progress=stop_after_four, stop=stop)
    cup = tmp_path / "open"
    site = render_site(cup)
    with Store.open(cup) as store:
        done = [game.key for game in store.games("done")]
    assert done == ["00001-00001-0", "00001-00001-1", "00001-00001-2", "00001-00002-0"]
    for key in done[:3]:  # the first deal is complete: its replays are shown
        assert (site / "replays" / f"{key}.r{FORMAT}.js").is_file()
        assert 'id="replay"' in (site / "games" / f"{key}.html").read_text()
    page = (site / "games" / "00001-00002-0.html").read_text()
    assert not (site / "replays" / f"00001-00002-0.r{FORMAT}.js").exists()
    assert 'id="replay-withheld"' in page and "../replays/" not in page


def test_a_rating_pass_resumed_from_its_cache_equals_a_full_one(site, tmp_path):
    data = load_site_data(site, cache_ratings=False)
    bots = [bot.bot for bot in data.bots]
    with Store.open(site) as store:
        expected = stored_standings(store).standings
    cache = tmp_path / "ratings.json"
    rate(data.games[:2], bots, data.settings, cache)
    assert json.loads(cache.read_text())["fed"] == 2
    assert rate(data.games, bots, data.settings, cache) == (expected, data.history)
    assert json.loads(cache.read_text())["fed"] == 4
    # A cache for other games (here: places changed) is not used; a damaged one neither.
    state = json.loads(cache.read_text())
    state["ratings"] = {bot: [99.0, 1.0] for bot in bots}
    state["digest"] = "0" * 64
    cache.write_text(json.dumps(state))
    assert rate(data.games, bots, data.settings, cache)[0] == expected
    cache.write_text("{not json")
    assert rate(data.games, bots, data.settings, cache)[0] == expected


def brute_force_moves(cup: Path, swiss: bool = False) -> list[list[tuple[float, float, int, int]]]:
    """rating_moves computed the slow way: the store's rating history keyed by game, every
    bot's rank counted afresh before and after each game."""
    with Store.open(cup) as store:
        history = stored_history(store)
        games = [(row.key, row.bots) for row in store.games("done")]
        places = {key: [seat.place for seat in seats] for key, seats in _seats_by_game(store).items()}
        bots = [line.bot for line in stored_standings(store).standings]
    after = defaultdict(dict)
    for bot, points in history.items():
        for point in points:
            after[point.key][bot] = point.conservative
    rating, score = dict.fromkeys(bots, 0.0), dict.fromkeys(bots, 0.0)

    def rank(bot: str) -> int:
        mine = (round(score[bot], 9), rating[bot]) if swiss else rating[bot]
        return 1 + sum(1 for other in bots if ((round(score[other], 9), rating[other]) if swiss else rating[other]) > mine)

    moves = []
    for key, seated in games:
        before = [(rank(bot), rating[bot]) for bot in seated]
        rating.update(after.get(key, {}))
        for bot, place in zip(seated, places[key]):
            score[bot] += (len(seated) - place) / (len(seated) - 1)
        moves.append([(rating[bot], rating[bot] - before[i][1], rank(bot), before[i][0] - rank(bot)) for i, bot in enumerate(seated)])
    return moves


def _seats_by_game(store: Store) -> dict:
    seats = defaultdict(list)
    for seat in store.seats():
        seats[seat.game_key].append(seat)
    return seats


def same_moves(got, expected) -> bool:
    return [[(pytest.approx(r), pytest.approx(c, abs=1e-12), k, m) for r, c, k, m in game] for game in expected] == [
        list(game) for game in got
    ]


def test_rating_moves_give_each_seats_rating_change_and_rank_change(site, tmp_path):
    data = load_site_data(site)
    order = [line.bot for line in data.standings]
    moves = rating_moves(data.games, data.history, order, 0.0)
    assert same_moves(moves, brute_force_moves(site))
    last = {bot: moves[index][game.seats.index(bot)] for index, game in enumerate(data.games) for bot in game.seats}
    for line in data.standings:
        assert last[line.bot][0] == pytest.approx(line.conservative)
    place = {line.bot: number for number, line in enumerate(data.standings, 1)}
    # After the last game, its seats hold their places in the standings.
    assert [rank for _, _, rank, _ in moves[-1]] == [place[bot] for bot in data.games[-1].seats]
    # Duplicate: a deal moves ratings once, at its last rotation.
    duplicate = build_tournament(tmp_path / "duplicate", duplicate=True, rules={"max_turns": 40})
    data = load_site_data(duplicate)
    moves = rating_moves(data.games, data.history, [line.bot for line in data.standings], 0.0)
    assert same_moves(moves, brute_force_moves(duplicate))
    assert all(change == 0 for game, seats in zip(data.games, moves) if not game.key.endswith("-2") for _, change, _, _ in seats)
    assert any(change != 0 for game, seats in zip(data.games, moves) if game.key.endswith("-2") for _, change, _, _ in seats)
    # A Swiss ranks by Swiss score, then rating.
    swiss = build_tournament(tmp_path / "swiss", format="swiss", rounds=3, rules={"max_turns": 40})
    data = load_site_data(swiss)
    moves = rating_moves(data.games, data.history, [line.bot for line in data.standings], 0.0, swiss=True)
    assert same_moves(moves, brute_force_moves(swiss, swiss=True))


def test_each_bots_games_are_a_data_script_with_every_game(site):
    data = load_site_data(site)
    scripts = site / "site" / "data"
    index = json.loads(re.search(r'\["site"\]=(.*);\n$', (scripts / "site.js").read_text()).group(1))
    assert index["bots"] == [
        [bot, slug(bot), sum(bot in game.seats for game in data.games)] for bot in sorted(line.bot for line in data.standings)
    ]
    assert index["pages"] == 1 and index["rows_per_script"] == 1000 and index["rounds_per_script"] == 1000
    assert index["round_scripts"] == 1  # round 1: its game-list pages and its games
    assert (scripts / "rounds" / "1.js").read_text() == 'window.ARENA_DATA=window.ARENA_DATA||{};window.ARENA_DATA["rounds/1"]=[[1,1,1,4]];\n'
    moves = rating_moves(data.games, data.history, [line.bot for line in data.standings], 0.0)
    for line in data.standings:
        number = [name for name, *_ in index["bots"]].index(line.bot)
        # A bot's games: its first (here its only) script of a thousand.
        assert [path.name for path in (scripts / "bots" / slug(line.bot)).iterdir()] == ["1.js"]
        text = (scripts / "bots" / slug(line.bot) / "1.js").read_text()
        assert "<" not in text  # a hostile name cannot close the script tag
        assert text.startswith(f'window.ARENA_DATA=window.ARENA_DATA||{{}};window.ARENA_DATA["bot:{slug(line.bot)}/1"]=')
        rows = json.loads(re.search(r"\]=(.*);\n$", text).group(1))
        mine = [(i, game) for i, game in enumerate(data.games) if line.bot in game.seats]
        assert [row[0] for row in rows] == [game.key for _, game in mine]
        for row, (i, game) in zip(rows, mine):
            seat = game.seats.index(line.bot)
            assert row[4] == seat and row[5][seat] == number
            assert [index["bots"][n][0] for n in row[5]] == game.seats
            assert row[6] == game.places and row[8] == sum(1 << s for s, f in enumerate(game.forfeits) if f)
            assert row[9:13] == [round(moves[i][seat][0], 2), round(moves[i][seat][1], 2), *moves[i][seat][2:]]
            assert row[13] == ([[inc["seat"], inc["reason"]] for inc in game.incidents] or 0)
        # mu and sigma after each game: the last rating update of the bot so far.
        points = data.history[line.bot]
        assert [row[14:16] for row in rows] == [
            [round(p[1], 2), round(p[2], 2)] for p in (max((p for p in points if p[0] <= n), key=lambda p: p[0]) for n in range(1, len(rows) + 1))
        ]


def test_a_pager_links_the_first_the_last_and_the_pages_near_this_one():
    assert page_links(1, 1) == [1]
    assert page_links(1, 4) == [1, 2, 3, 4]
    assert page_links(6, 20) == [1, None, 4, 5, 6, 7, 8, None, 20]
    assert page_links(20, 20) == [1, None, 18, 19, 20]
    assert page_links(4, 20) == [1, 2, 3, 4, 5, 6, None, 20]


def test_rating_chart_starts_at_the_prior_and_ends_at_the_last_point():
    chart = rating_chart([(1, 27.0, 7.0, 6.0), (2, 29.0, 6.0, 11.0)], prior=(25.0, 25 / 3))
    # In percent of the plot: y spans mu ± 3 sigma, 0 (the prior's 25 - 25) at the bottom
    # (100) to 50 at the top (0); x spans games 0..2.
    assert chart["mu"] == "0.0,50.0 50.0,46.0 100.0,42.0"
    assert chart["conservative"] == "0.0,100.0 50.0,88.0 100.0,78.0"
    assert chart["points"] == [(1, 50.0, 88.0, 27.0, 7.0), (2, 100.0, 78.0, 29.0, 6.0)]  # a point per game, not the prior
    assert [tick["label"] for tick in chart["ticks"]] == ["0", "12", "25", "38", "50"]
    assert chart["final"] == (2, 29.0, 6.0, 11.0) and chart["games"] == 2
    assert rating_chart([(1, 20.0, 6.8, -0.4)], prior=(20.0, 6.7))["ticks"][0]["label"] == "0"  # never "-0"


def test_rendering_again_keeps_the_replays_already_written(site):
    data = load_site_data(site)
    again = write_site(data, site / "site")
    assert again["replays_written"] == 0 and again["games"] == 4
    # index, matrix, game list; the games' and bots' pages are as the runner wrote them
    # (not rendered again: tests/site/test_site_incremental.py); no file changed but the index
    # when the minute it says it was rendered in has changed.
    assert again["pages"] == 1 + 1 + 1 and again["files_written"] <= 1


def test_report_and_serve_commands(site, tmp_path):
    runner = CliRunner()
    done = runner.invoke(app, ["report", str(site), "--replays", "none"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())  # wrapped to the width the console library finds
    assert "site written to" in said and "3 pages rendered" in said
    missing = runner.invoke(app, ["report", str(tmp_path)])
    assert isinstance(missing.exception, ReportError) and "no tournament store" in str(missing.exception)
    with pytest.raises(WebError, match="port 70000 is not allowed"):
        serve_site(site / "site", 70000)
    server = serve_site(site / "site", 0).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        index = urllib.request.urlopen(f"{base}/index.html", timeout=10).read().decode()
        assert "Standings" in index and "&lt;script&gt;alert(1)&lt;/script&gt;" in index
        script = urllib.request.urlopen(f"{base}/assets/replay.js", timeout=10)
        assert script.headers["Content-Type"].startswith("text/javascript")
        assert script.headers["X-Content-Type-Options"] == "nosniff"
        with pytest.raises(urllib.error.HTTPError) as outside:  # nothing outside the site's folder
            urllib.request.urlopen(f"{base}/..%2farena.sqlite", timeout=10)
        assert outside.value.code == 404
    finally:
        server.shutdown()


def test_arena_serve_serves_the_site_until_stopped(site):
    env = dict(os.environ, PYTHONUNBUFFERED="1", COLUMNS="200")
    server = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", str(site), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    try:
        line = server.stdout.readline()
        url = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        assert url, line
        page = urllib.request.urlopen(url.group(1) + "games/page-1.html", timeout=10).read().decode()
        assert "page 1 of 1" in page
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(url.group(1) + "no-such-page.html", timeout=10)
        assert missing.value.code == 404
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.parametrize("required, outcome", [("1", "1 error"), ("", "1 skipped")])
def test_browser_tests_skip_without_chromium_unless_required(tmp_path, required, outcome):
    env = dict(os.environ, ARENA_CHROMIUM=str(tmp_path / "no-chromium"), ARENA_REQUIRE_BROWSER=required)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/site/test_report_browser.py", "-k", "served"],
        cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert outcome in done.stdout, done.stdout[-2000:]
    assert (done.returncode != 0) == bool(required)  # a missing browser fails CI, skips elsewhere
    if required:
        assert "ARENA_REQUIRE_BROWSER=1 but no Chromium at" in done.stdout


def test_render_site_without_a_store_says_what_is_missing(tmp_path):
    with pytest.raises(ReportError, match="no tournament store"):
        render_site(tmp_path)


# --- what the pages say (arena.site.pages; the browser side: test_site_truth_browser.py) ---


def test_a_log_excerpt_starts_at_a_line_and_an_incident_tail_drops_its_partial_first_line():
    from arena.site.pages import last_lines, log_excerpt

    log = "".join(f"line {n}\n" for n in range(1, 400))
    text, cut = log_excerpt(log, 100)
    assert cut and log.endswith(text) and text.startswith("line ") and log[len(log) - len(text) - 1] == "\n"
    assert len(text) <= 100 and len(text) + len("line 399\n") > 100  # as much as fits, from a line
    assert log_excerpt("short\n", 100) == ("short\n", False)
    assert log_excerpt("x" * 300, 100) == ("x" * 100, True)  # one long line: its end
    tail = log[-2000:]  # as the referee keeps it: it may start inside a line
    lines = last_lines(tail, count=500)
    assert lines[0] == tail.split("\n")[1] and lines[-1] == "line 399" and all(line.startswith("line ") for line in lines)
    assert last_lines("a\nb\nc\n", count=2) == ["b", "c"] and last_lines("") == [] and last_lines("  \n") == []
    assert last_lines("y" * 400)[0] == "y" * 299 + "\u2026"


def test_head_to_head_cells_show_percents_that_add_up_and_colour_by_what_they_show():
    from arena.site.pages import h2h_cells

    bots = ["a", "b", "c"]
    model = {"a": {"b": 0.505, "c": 0.625}, "b": {"a": 0.495, "c": 0.502}, "c": {"a": 0.375, "b": 0.498}}
    ahead = {"a": {"b": 3, "c": 1}, "b": {"a": 1, "c": 0}, "c": {"a": 2, "b": 0}}
    together = {"a": {"b": 4, "c": 3}, "b": {"a": 4, "c": 0}, "c": {"a": 3, "b": 0}}
    cells = h2h_cells(bots, model, ahead, together)
    shown = {(row, col): (cell["model"], cell["colour"]) for row in bots for col, cell in cells[row].items()}
    assert shown == {
        ("a", "b"): (50, "even"), ("b", "a"): (50, "even"),  # 50.5 and 49.5: both 50, neither coloured
        ("a", "c"): (62, "win"), ("c", "a"): (38, "loss"),  # 62.5 and 37.5 add up to 100
        ("b", "c"): (50, "even"), ("c", "b"): (50, "even"),
    }
    assert (cells["a"]["b"]["seen"], cells["b"]["c"]["seen"]) == (75, None)
    observed = h2h_cells(bots, {}, ahead, together)  # no model: the observed share decides
    assert (observed["a"]["b"]["colour"], observed["b"]["a"]["colour"], observed["b"]["c"]["colour"]) == ("win", "loss", "even")


def test_a_league_bots_membership_says_when_it_played_and_from_when_it_stopped():
    from arena.site.pages import bot_membership
    from arena.store.db import MemberRow

    suspended = MemberRow("c@1", "c", 42, 56, "suspended", "5 forfeits in a row")
    assert bot_membership(suspended, [42, 43, 55]) == (
        "joined at batch 42; played in batches 42 to 55 (3 games); suspended: not matched from batch 56 on "
        "(5 forfeits in a row)"
    )
    assert bot_membership(MemberRow("a", "a", 3, None, "active", ""), [3]) == "joined at batch 3; played in batch 3 (1 game)"
    assert bot_membership(MemberRow("a", "a", 3, 4, "retired", "replaced by a@2"), []) == (
        "joined at batch 3; no game played; retired: not matched from batch 4 on (replaced by a@2)"
    )
