"""`arena league`: a ladder over a watched registry. Bots submitted while it runs join and
play, new versions retire old ones, a kill -9 and a resume give the ratings of an
uninterrupted league fed the same submissions at the same batches, a refused bot never
reaches it, a bot that forfeits every game is suspended until a new version comes."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trueskill

from arena.config.tournament_file import TournamentError
from arena.game.seats import InProcessBot
from arena.ratings.ledger import RatingLedger, Ratings
from arena.ratings.results import rated_games, stored_standings
from arena.ratings.standings import of_store
from arena.league.ladder import (
    LeagueConfig,
    LeagueInterrupted,
    load_league,
    run_league,
)
from arena.league.members import registry_field
from arena.registry.submit import SubmitRefused, submit_bot
from arena.schedule.formats import key_order
from arena.site.model import load_site_data
from arena.store.db import Store, StoreError
from tests.bot_folders import RANDOM, ROOT, random_bot
from tests.polling import wait_until

SHORT = {"max_turns": 60}  # short games: the tests are about the league, not the game
# Generous: a slow start on a loaded machine must not become a forfeit in one league only.
LIMITS = {"startup_s": 60.0, "decision_s": 20.0, "time_bank_s": 60.0}
WAIT_S = 90.0
NAMES = ("ann", "bob", "cat", "dan", "eve", "fay")


def bot_folder(where: Path, name: str, version: str = "1.0", source: Path = RANDOM) -> Path:
    """A copy of the random bot named `name` at `version`."""
    return random_bot(where / name, name, version, source=source)


def registry_of(where: Path, names=NAMES) -> Path:
    """A registry holding each bot as NAME/1.0 (as `arena submit` lays them out)."""
    registry = where / "registry"
    for name in names:
        bot_folder(registry / name, name).rename(registry / name / "1.0")
    return registry


def in_process(names) -> dict:
    """In-process players (no processes: fast) whose every choice is a function of their name
    and what they see, so a game's result does not depend on which games were played before."""
    def make(name):
        def choose(observation, legal):
            seen = json.dumps([name, observation], sort_keys=True).encode()
            return int.from_bytes(hashlib.sha256(seen).digest()[:4], "big") % len(legal)

        return lambda: InProcessBot(choose)

    return {name: make(name) for name in names}


def config(out: Path, registry: Path, **settings) -> LeagueConfig:
    data = {
        "game": "3up3down", "seats": 3, "seed": 5, "rules": SHORT, "limits": LIMITS, "output": str(out),
        "registry": str(registry), "jobs": 2,
    }
    data.update(settings)
    return LeagueConfig(**data)


wait_for = functools.partial(wait_until, timeout_s=WAIT_S)


def stored_count(out: Path) -> int:
    """Games stored so far by a league running in another process (0 before its store is
    made: the file exists a moment before its tables do)."""
    try:
        with Store.open(out) as store:
            return len(store.done_keys())
    except StoreError:
        return 0


def games_of(out: Path, bot: str) -> int:
    try:
        with Store.open(out) as store:
            return sum(1 for seat in store.seats() if seat.bot == bot)
    except StoreError:  # not made yet (see stored_count)
        return 0


def members_of(out: Path) -> dict:
    try:
        with Store.open(out) as store:
            return {m.bot: m for m in store.members()}
    except StoreError:  # not made yet (see stored_count)
        return {}


def ratings_of(out: Path) -> dict:
    with Store.open(out) as store:
        return {line.bot: (line.mu, line.sigma, line.games) for line in stored_standings(store).standings}


def schedule_of(out: Path) -> list:
    with Store.open(out) as store:
        return [(game.key, game.seq, game.bots, game.seed, game.status) for game in store.games()]


# ------------------------------------------------------------------ the schedule itself


def test_games_are_numbered_in_schedule_order_and_rated_in_it(tmp_path):
    registry = tmp_path / "empty"
    registry.mkdir()
    out = tmp_path / "league"
    outcome = run_league(config(out, registry, games=30, jobs=3), in_process=in_process(NAMES), report=False)
    assert (outcome.done, outcome.played) == (30, 30)
    games = schedule_of(out)
    assert [seq for _, seq, *_ in games] == list(range(1, 31))
    assert [key for key, *_ in games] == sorted((key for key, *_ in games), key=key_order)
    # Six bots at three seats: two tables a batch, every bot once, every batch.
    for batch in range(1, 16):
        tables = [bots for key, _, bots, _, _ in games if key_order(key)[0] == batch]
        assert sorted(bot for table in tables for bot in table) == sorted(NAMES)
    # The stored standings rate in that order and count every game.
    assert sum(games for _, _, games in ratings_of(out).values()) == 90


def test_a_resumed_league_plays_what_an_uninterrupted_one_plays(tmp_path):
    registry = tmp_path / "empty"
    registry.mkdir()
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    run_league(config(whole, registry, games=40), in_process=in_process(NAMES), report=False)
    stop = threading.Event()
    seen = []

    def stop_after_a_few(update):
        seen.append(update.done)
        if update.done >= 9:
            stop.set()

    with pytest.raises(LeagueInterrupted):
        run_league(config(halves, registry, games=40), in_process=in_process(NAMES), report=False,
                   progress=stop_after_a_few, stop=stop)
    assert 9 <= len(Store.open(halves).done_keys()) < 40
    run_league(config(halves, registry, games=40, jobs=1), in_process=in_process(NAMES), report=False)
    assert schedule_of(halves) == schedule_of(whole)
    assert ratings_of(halves) == ratings_of(whole)


def test_duplicate_deals_play_every_table_in_every_seat_rotation(tmp_path):
    registry = tmp_path / "empty"
    registry.mkdir()
    out = tmp_path / "league"
    outcome = run_league(config(out, registry, games=18, duplicate=True), in_process=in_process(NAMES), report=False)
    assert outcome.done == 18
    games = schedule_of(out)
    deals = {}
    for key, _, bots, seed, _ in games:
        deals.setdefault(key.rsplit("-", 1)[0], []).append((int(key.rsplit("-", 1)[1]), bots, seed))
    assert len(deals) == 6
    for rotations in deals.values():
        (_, first, seed), *rest = rotations
        assert [rotation for rotation, _, _ in rotations] == [0, 1, 2]
        assert {s for _, _, s in rotations} == {seed}
        for rotation, bots, _ in rest:  # the bot in seat p moves to seat p + rotation
            assert bots == tuple(first[(seat - rotation) % 3] for seat in range(3))
    assert sum(games for _, _, games in ratings_of(out).values()) == 54


def test_other_settings_on_a_league_folder_are_refused(tmp_path):
    registry = tmp_path / "empty"
    registry.mkdir()
    out = tmp_path / "league"
    run_league(config(out, registry, games=4), in_process=in_process(NAMES[:3]), report=False)
    with pytest.raises(TournamentError, match=r"holds a league with other settings \(seats\)"):
        run_league(config(out, registry, games=4, seats=2), in_process=in_process(NAMES[:3]), report=False)
    # Its folder alone resumes it with its own settings; when to stop is this run's choice.
    resumed = load_league(out, {"games": 8})
    assert (resumed.game, resumed.seats, resumed.seed, resumed.games) == ("3up3down", 3, 5, 8)


def test_until_stable_stops_once_every_bot_is_settled(tmp_path):
    registry = tmp_path / "empty"
    registry.mkdir()
    out = tmp_path / "league"
    # Two bots: each one's interval spans at most the two places there are, so both are
    # settled once they have played. Batches 1 and 2 start at once; after batch 1 is
    # stored nothing more is scheduled, and batch 2, already playing, is stored.
    outcome = run_league(config(out, registry, seats=2, until_stable=True), in_process=in_process(NAMES[:2]), report=False)
    assert outcome.stable and (outcome.batches, outcome.done) == (2, 2)
    assert [key for key, *_ in schedule_of(out)] == ["00001-00001-0", "00002-00001-0"]


def test_a_new_league_without_its_game_says_what_to_give(tmp_path):
    with pytest.raises(TournamentError) as refused:
        load_league(tmp_path / "new")
    assert refused.value.mistakes == [
        "game is missing: give --game, or game = ... in a [league] table",
        "seats is missing: give --seats, or seats = ... in a [league] table",
    ]


def test_a_league_file_holds_a_league_table(tmp_path):
    good = tmp_path / "club.toml"
    good.write_text('[league]\nname = "club"\ngame = "3up3down"\nseats = 4\nregistry = "bots"\noutput = "ladder"\n')
    league = load_league(good)
    assert (league.name, league.seats) == ("club", 4)
    assert league.output_dir() == (tmp_path / "ladder").resolve()
    assert league.registry_dir() == (tmp_path / "bots").resolve()
    bad = tmp_path / "bad.toml"
    bad.write_text('[league]\ngame = "3up3down"\nseats = 9\ncolour = 1\n')
    with pytest.raises(TournamentError) as refused:
        load_league(bad)
    assert any("unknown key 'colour'" in line for line in refused.value.mistakes)
    assert any(line.startswith("seats = 9") for line in refused.value.mistakes)
    (tmp_path / "none.toml").write_text('game = "3up3down"\n')
    with pytest.raises(TournamentError, match="has no \\[league\\] table"):
        load_league(tmp_path / "none.toml")


# ---------------------------------------------------------------- the registry, live


def test_the_newest_version_of_each_bot_in_the_registry_plays(tmp_path):
    registry = registry_of(tmp_path, ("ann", "bob"))
    bot_folder(registry / "ann", "ann", "2.0").rename(registry / "ann" / "2.0")
    (registry / "ann" / "2.0" / "submission.json").write_text(json.dumps({"date": "2999-01-01T00:00:00+00:00"}))
    bot_folder(registry / "cat", "cat").rename(registry / "cat" / "1.0")
    (registry / "cat" / "1.0" / "bot.toml").write_text(
        'name = "cat"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\ngames = ["three-thirteen"]\n'
    )
    field = registry_field(registry, "3up3down")
    assert {name: entry.version for name, entry in field.items()} == {"ann": "2.0", "bob": "1.0"}


def test_bots_submitted_while_the_league_runs_join_retire_and_survive_kill_9(tmp_path):
    """Six bots; a seventh is submitted while the league runs and plays; a new version of one
    retires the old; kill -9; the resumed league ends with the ratings of an uninterrupted
    league fed the same submissions at the same batches. With --inherit-rating, so that the
    new version's rating starts from its predecessor's (the ratings then depend on the
    membership records too; without the option they are those of the results alone, as the
    in-process resume test above shows)."""
    registry = registry_of(tmp_path)
    out = tmp_path / "league"
    # One table a batch: the league plays slowly while the test submits (runs until killed).
    command = [
        sys.executable, "-m", "arena", "league", str(out), "--game", "3up3down", "--seats", "3",
        "--registry", str(registry), "--seed", "5", "--rule", "max_turns=60", "--jobs", "2", "--batch", "1",
        "--startup-s", "60", "--decision-s", "20", "--time-bank-s", "60", "--inherit-rating",
    ]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    league = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: stored_count(out) >= 4, "the first games")
        gil = bot_folder(tmp_path / "new", "gil")
        submit_bot(gil, registry)
        wait_for(lambda: games_of(out, "gil@1.0") >= 2, "the seventh bot's games")
        ann2 = bot_folder(tmp_path / "v2", "ann", "2.0")
        submit_bot(ann2, registry)
        wait_for(lambda: games_of(out, "ann@2.0") >= 1, "the new version's first game")
        members = members_of(out)
        assert members["ann@1.0"].status == "retired" and members["ann@1.0"].reason == "replaced by ann@2.0"
        assert members["ann@2.0"].status == "active"
        league.send_signal(signal.SIGKILL)
        league.wait()
    finally:
        if league.poll() is None:
            league.kill()
            league.wait()
    with Store.open(out) as store:
        scheduled = store.last_seq()  # games in flight when killed are played by the resume
    games = scheduled + 6  # six more batches of one table
    resumed = subprocess.run([*command, "--games", str(games)], env=environment, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "ann@1.0 (retired)" in resumed.stdout
    members = members_of(out)
    assert len(Store.open(out).done_keys()) == games
    assert games_of(out, "ann@1.0") > 0 and games_of(out, "gil@1.0") > 0
    # The retired version never played after the batch the new one joined.
    with Store.open(out) as store:
        after = [g for g in store.games() if key_order(g.key)[0] >= members["ann@2.0"].joined]
    assert after and all("ann@1.0" not in g.bots for g in after)

    # The same league uninterrupted, fed the same submissions before the same batches.
    again = tmp_path / "again"
    registry_again = tmp_path / "registry-again"
    shutil.copytree(registry, registry_again, ignore=shutil.ignore_patterns("gil", "2.0"))
    arrivals = {members["gil@1.0"].joined: registry / "gil", members["ann@2.0"].joined: registry / "ann" / "2.0"}

    def submit_at(batch: int) -> None:
        if batch in arrivals:
            source = arrivals[batch]
            shutil.copytree(source, registry_again / source.relative_to(registry))

    run_league(
        config(again, registry_again, games=games, batch=1, inherit_rating=True), before_batch=submit_at, report=False
    )
    assert {bot: m.joined for bot, m in members_of(again).items()} == {bot: m.joined for bot, m in members.items()}
    assert schedule_of(again) == schedule_of(out)
    assert ratings_of(again) == ratings_of(out)
    # The option counted: rated as bots of their own, ann 2.0 would stand elsewhere.
    with Store.open(out) as store:
        fresh = RatingLedger()
        for result in rated_games(store):
            fresh.add(result)
    assert fresh.ratings.rating("ann@2.0").mu != ratings_of(out)["ann@2.0"][0]


def test_with_inherit_rating_a_new_version_starts_from_its_predecessors_mu(tmp_path):
    """ann 1.0 plays two batches; ann 2.0 arrives before batch 3. With the option its first
    game is rated from ann 1.0's mu as it stands after every game scheduled before it, with
    the prior's sigma; without it, from the prior. Everything else is the same league."""
    outs = {}
    for inherit in (False, True):
        registry = registry_of(tmp_path / f"inherit-{inherit}", ("ann",))

        def new_version(batch: int, registry=registry) -> None:
            if batch == 3:
                bot_folder(registry / "ann", "ann", "2.0").rename(registry / "ann" / "2.0")
                (registry / "ann" / "2.0" / "submission.json").write_text(
                    json.dumps({"date": "2999-01-01T00:00:00+00:00"})
                )

        outs[inherit] = out = tmp_path / f"league-{inherit}"
        run_league(
            config(out, registry, games=8, seats=2, inherit_rating=inherit),
            in_process=in_process(["bob"]), before_batch=new_version, report=False,
        )
        assert members_of(out)["ann@2.0"].joined == 3
    assert schedule_of(outs[True]) == schedule_of(outs[False])  # the same games: ann v bob (in process)
    with Store.open(outs[True]) as store:
        assert store.settings()["inherit_rating"] is True
        results = rated_games(store)
    with Store.open(outs[False]) as store:
        assert "inherit_rating" not in store.settings()  # off: stored as before the option existed
    # ann 1.0's mu after batches 1 and 2 (its last games), by a ledger that knows nothing of versions.
    before = RatingLedger()
    for result in results:
        if key_order(result.key)[0] < 3:
            before.add(result)
    predecessor = before.ratings.rating("ann@1.0")
    assert predecessor.mu != 25.0
    # From there on, ann 2.0 is a bot of its own whose prior is that mu with the wide sigma.
    expected = Ratings(initial={**before.ratings._ratings, "ann@2.0": trueskill.Rating(predecessor.mu, 25.0 / 3)})
    for result in results:
        if key_order(result.key)[0] >= 3:
            expected.update(result.bots, [place - 1 for place in result.places])
    got = ratings_of(outs[True])
    assert got["ann@2.0"][:2] == (expected.rating("ann@2.0").mu, expected.rating("ann@2.0").sigma)
    assert got["ann@1.0"][:2] == (predecessor.mu, predecessor.sigma)
    fresh = ratings_of(outs[False])
    assert fresh["ann@1.0"] == got["ann@1.0"] and fresh["ann@2.0"] != got["ann@2.0"]
    # `arena standings`, the site's pass and the league's own ledgers agree on it.
    site = load_site_data(outs[True], cache_ratings=False)
    assert {line.bot: (line.mu, line.sigma) for line in site.standings} == {b: r[:2] for b, r in got.items()}
    # Its chart and its first game's change start from the inherited mu: a point at game 0.
    sigma = 25.0 / 3
    assert site.history["ann@2.0"][0] == (0, predecessor.mu, sigma, predecessor.mu - 3 * sigma)
    assert site.history["ann@2.0"][1][0] == 1
    assert load_site_data(outs[False], cache_ratings=False).history["ann@2.0"][0][0] == 1


def test_a_refused_bot_never_joins_and_a_crashing_one_is_suspended_until_a_new_version(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    crasher = tmp_path / "crasher"
    crasher.mkdir()
    (crasher / "bot.toml").write_text(
        'name = "crasher"\nversion = "1"\ncommand = ["python3", "-c", "import sys; sys.exit(3)"]\ngames = ["3up3down"]\n'
    )
    with pytest.raises(SubmitRefused):
        submit_bot(crasher, registry)
    assert registry_field(registry, "3up3down") == {}
    # A bot that passed its smoke match and then broke: it forfeits every game.
    shutil.copytree(crasher, registry / "crasher" / "1")
    out = tmp_path / "league"
    fixed = bot_folder(tmp_path / "fixed", "crasher", "2")

    def mend(batch: int) -> None:
        if batch == 9:
            shutil.copytree(fixed, registry / "crasher" / "2")
            (registry / "crasher" / "2" / "submission.json").write_text(json.dumps({"date": "2999-01-01T00:00:00+00:00"}))

    run_league(
        config(out, registry, games=30, suspend_after=2, seats=3, batch=2),
        in_process=in_process(NAMES[:4]), before_batch=mend, report=False,
    )
    members = members_of(out)
    assert members["crasher@1"].status == "retired"
    assert members["crasher@1"].reason == "2 forfeits in a row; the last: CRASH: exited with code 3; replaced by crasher@2"
    with Store.open(out) as store:
        seats = store.seats()
        suspended_from = members["crasher@1"].left_at
        assert suspended_from is not None and suspended_from < 9
        # Two forfeits in batches up to b-2 suspend it from batch b: it plays nothing after.
        late = [s for s in seats if s.bot == "crasher@1" and key_order(s.game_key)[0] >= suspended_from]
        assert late == []
        assert all(s.forfeit for s in seats if s.bot == "crasher@1")
    assert members["crasher@2"].status == "active" and members["crasher@2"].joined == 9
    assert games_of(out, "crasher@2") > 0
    with Store.open(out) as store:
        assert not any(s.forfeit for s in store.seats() if s.bot == "crasher@2")


def test_suspension_is_shown_with_its_reason_in_the_standings(tmp_path):
    registry = tmp_path / "registry"
    (registry / "crasher" / "1").mkdir(parents=True)
    (registry / "crasher" / "1" / "bot.toml").write_text(
        'name = "crasher"\nversion = "1"\ncommand = ["python3", "-c", "import sys; sys.exit(3)"]\ngames = ["3up3down"]\n'
    )
    out = tmp_path / "league"
    run_league(config(out, registry, games=16, suspend_after=2, batch=2), in_process=in_process(NAMES[:3]))
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "standings", str(out)], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )
    assert shown.returncode == 0, shown.stderr
    assert "crasher@1 (suspended)" in shown.stdout
    assert "crasher@1 is suspended: 3 forfeits in a row; the last: CRASH: exited with code 3" in shown.stdout
    with Store.open(out) as store:
        standing = of_store(store)
    assert standing.members["crasher@1"].status == "suspended"
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "standings", str(out), "--json"], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    lines = {line["bot"]: line for line in json.loads(shown.stdout)}
    # Last for sure (it forfeits every game): its band is one place, settled, whatever its status.
    assert (lines["crasher@1"]["status"], lines["crasher@1"]["settled"]) == ("suspended", True)
    assert lines["crasher@1"]["reason"] == "3 forfeits in a row; the last: CRASH: exited with code 3"
    assert {lines[bot]["status"] for bot in NAMES[:3]} == {"active"}
    index = (out / "site" / "index.html").read_text()
    assert "suspended" in index and "forfeits in a row; the last: CRASH" in index


def test_a_failure_of_the_sandbox_itself_stops_the_league_saying_what_is_safe(tmp_path):
    from arena.faults import SandboxError
    from arena.sandbox.base import Sandbox

    class Unreachable(Sandbox):
        name = "unreachable"

        def start(self, bot, limits):
            raise SandboxError("the Docker engine is not answering")

    registry = registry_of(tmp_path, ("ann",))
    out = tmp_path / "league"
    with pytest.raises(SandboxError) as stopped:
        run_league(config(out, registry, games=3), in_process=in_process(NAMES[1:3]), sandbox=Unreachable(), report=False)
    assert str(stopped.value) == (
        "the Docker engine is not answering; the game was not stored and no bot was charged; every finished "
        "game is stored: run the same command to resume"
    )
    with Store.open(out) as store:
        assert not any(seat.bot == "ann@1.0" for seat in store.seats())  # nobody charged


def test_a_removed_bot_stops_playing(tmp_path):
    registry = registry_of(tmp_path, ("ann", "bob", "cat", "dan"))
    out = tmp_path / "league"

    def remove(batch: int) -> None:
        if batch == 4:
            shutil.rmtree(registry / "dan")

    run_league(config(out, registry, games=18, jobs=2), before_batch=remove, report=False)
    members = members_of(out)
    assert (members["dan@1.0"].status, members["dan@1.0"].left_at) == ("removed", 4)
    with Store.open(out) as store:
        assert all("dan@1.0" not in g.bots for g in store.games() if key_order(g.key)[0] >= 4)
        assert any("dan@1.0" in g.bots for g in store.games())


def test_arena_submit_to_a_league_says_where_the_bot_stands(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    out = tmp_path / "league"
    stop = threading.Event()

    def league() -> None:
        with pytest.raises(LeagueInterrupted):
            run_league(config(out, registry), in_process=in_process(NAMES[:4]), stop=stop, report=False, poll_s=0.2)

    running = threading.Thread(target=league, daemon=True)
    running.start()
    try:
        wait_for(lambda: len(members_of(out)) == 4, "the league to start")
        gil = bot_folder(tmp_path / "new", "gil")
        shown = subprocess.run(
            [sys.executable, "-m", "arena", "submit", str(gil), "--league", str(out), "--wait-s", "60"],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}, timeout=120,
        )
    finally:
        stop.set()
        running.join(timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert f"gil 1.0 accepted: {registry / 'gil' / '1.0'}" in shown.stdout
    where = shown.stdout.strip().splitlines()[-1]
    assert re.fullmatch(
        r"gil@1\.0: [1-9]\d* games so far, rank [1-5] of 5, 90% interval [1-5]–[1-5]; "
        r"(settled \(its 95% interval [1-5]–[1-5]\)|provisional \(settled when its 95% interval spans at most 2 places\))",
        where,
    ), where
    assert members_of(out)["gil@1.0"].status == "active"


def test_the_site_marks_a_league_and_says_when_it_changed(tmp_path):
    registry = registry_of(tmp_path, ("ann",))
    out = tmp_path / "league"

    def retire(batch: int) -> None:
        if batch == 3:
            bot_folder(registry / "ann", "ann", "2.0").rename(registry / "ann" / "2.0")
            (registry / "ann" / "2.0" / "submission.json").write_text(json.dumps({"date": "2999-01-01T00:00:00+00:00"}))

    run_league(config(out, registry, games=6, seats=2), in_process=in_process(NAMES[:2]), before_batch=retire)
    site = out / "site"
    index = (site / "index.html").read_text()
    assert '<span class="tag" title="replaced by ann@2.0">retired</span>' in index
    assert 'id="hide-retired"' in index and 'assets/live.js' in index
    live = json.loads((site / "live.json").read_text())
    assert live["games"] == 6
    run_league(config(out, registry, games=9, seats=2), in_process=in_process(NAMES[:2]))
    again = json.loads((site / "live.json").read_text())
    assert again["games"] == 9 and again["version"] != live["version"]
    bot_page = next(site.glob("bots/ann-2.0*.html"), None) or next(p for p in (site / "bots").iterdir() if "ann-1.0" in p.name)
    assert re.search(r"joined at batch \d+; played in batch(es \d+ to)? \d+ \(\d+ games?\)", bot_page.read_text())
