"""What arena says in the terminal is true and names what it means: a league's batches name
the bots that settled or stopped being settled; a mistake in a league's settings comes
alone, before the banner; `arena submit --league` waits for the new version's own games;
standings without the retired versions rank the bots shown; two versions of one bot are
name@version."""

from __future__ import annotations

import functools
import html
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arena.game.seats import InProcessBot
from arena.league.ladder import LeagueInterrupted, render, run_league, where_it_stands
from tests import command
from tests.league.test_league import (
    NAMES,
    WAIT_S,
    bot_folder,
    config,
    games_of,
    in_process,
    members_of,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[2]


arena = functools.partial(command.arena, columns=80)


def test_each_batch_names_the_bots_that_settled_or_unsettled_with_it(tmp_path):
    registry = tmp_path / "empty"
    registry.mkdir()
    bots = in_process(NAMES[:3])  # three alike, and two that always take the last or the first action
    bots["dim"] = lambda: InProcessBot(lambda observation, legal: len(legal) - 1)
    bots["low"] = lambda: InProcessBot(lambda observation, legal: 0)
    updates = []
    run_league(config(tmp_path / "league", registry, seats=2, games=60), in_process=bots, report=False,
               progress=updates.append)
    settled: set[str] = set()
    for update in updates:
        assert not set(update.now_settled) & settled, update  # "now settled" is news
        assert set(update.unsettled) <= settled, update  # "no longer settled" was settled
        settled = (settled | set(update.now_settled)) - set(update.unsettled)
        assert len(settled) == update.settled, update  # the names add up to the count shown
    # In this league bots settle and unsettle as their intervals move: the count alone
    # would stay at 1 from batch 15 to 18 while dim and low take turns.
    assert any(update.now_settled for update in updates) and any(update.unsettled for update in updates)
    assert any(update.now_settled and update.unsettled for update in updates)
    # Resumed, the first batch names only who changes with it, not who was settled before.
    resumed = []
    run_league(config(tmp_path / "league", registry, seats=2, games=64), in_process=bots, report=False,
               progress=resumed.append)
    assert resumed and settled
    for update in resumed:
        assert not set(update.now_settled) & settled, update
        assert set(update.unsettled) <= settled, update
        settled = (settled | set(update.now_settled)) - set(update.unsettled)
        assert len(settled) == update.settled, update


def test_the_league_command_names_them_on_its_batch_lines(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    for name in ("ann", "bob"):
        (registry / name / "1.0").mkdir(parents=True)
        for file in ("bot.py", "arena_bot.py"):
            (registry / name / "1.0" / file).write_bytes((ROOT / "bots" / "random" / file).read_bytes())
        (registry / name / "1.0" / "bot.toml").write_text(
            f'name = "{name}"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\ngames = ["3up3down"]\n'
        )
    run = arena("league", str(tmp_path / "league"), "--game", "3up3down", "--seats", "2", "--registry",
                str(registry), "--games", "2", "--until-stable", "--rule", "max_turns=40", "--seed", "1")
    assert run.returncode == 0, run.stderr
    # Two bots: both settle with the first batch (an interval of two places spans the field).
    assert "1 games (1 by this run), 2 bots playing, 2 settled (now settled: ann@1.0, bob@1.0); leader:" in (
        " ".join(run.stdout.split())
    )


def test_other_settings_on_a_league_folder_are_said_alone_before_the_banner(tmp_path):
    registry = tmp_path / "empty"
    registry.mkdir()
    out = tmp_path / "league"
    run_league(config(out, registry, games=4), in_process=in_process(NAMES[:3]), report=False)
    run = arena("league", str(out), "--seats", "4")
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr == (
        f"arena: error: {out} holds a league with other settings (seats); resume it with its own settings "
        "(`arena league DIR` alone), or use another folder\n"
    )


def test_a_league_on_a_registry_that_is_not_there_says_so_and_exits_2(tmp_path):
    """Issue 35: pointed at a missing registry, a league waited for ever, silently."""
    missing = tmp_path / "regsitry"
    run = arena("league", str(tmp_path / "league"), "--game", "3up3down", "--seats", "2", "--registry", str(missing))
    assert run.returncode == 2 and run.stdout == ""
    assert " ".join(run.stderr.split()) == (
        f"arena: error: the registry {missing} is not there: give --registry the folder bots are submitted to, "
        f"or submit one there first (arena submit BOT --registry {missing})"
    )


def test_a_league_short_of_bots_says_what_it_waits_for(tmp_path):
    registry = tmp_path / "registry"
    bot_folder(registry, "ann")  # a plain bot folder (REGISTRY/ann): one bot of the two a game needs
    league = subprocess.Popen(
        [sys.executable, "-m", "arena", "league", str(tmp_path / "league"), "--game", "3up3down", "--seats", "2",
         "--registry", str(registry)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "1000"},
    )
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(league.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + WAIT_S
    while len(said) < 2 and time.monotonic() < deadline and league.poll() is None:
        time.sleep(0.1)
    league.kill()
    league.wait()
    reader.join(10)
    assert len(said) >= 2, said
    banner, waiting = said[:2]
    assert banner.startswith(f"league {tmp_path / 'league'}: 3up3down, 2 seats; watching {registry} ")
    assert waiting == (f"waiting for bots: 1 in the registry play 3up3down and a game needs 2 "
                       f"(`arena submit BOT --registry {registry}`)\n")


def test_submit_to_a_league_waits_for_the_new_versions_own_games(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    bot_folder(registry / "ann", "ann").rename(registry / "ann" / "1.0")
    out = tmp_path / "league"
    stop = threading.Event()

    def league() -> None:
        with pytest.raises(LeagueInterrupted):
            run_league(config(out, registry, seats=2), in_process=in_process(NAMES[1:3]), stop=stop, report=False,
                       poll_s=0.2)

    running = threading.Thread(target=league, daemon=True)
    running.start()
    try:
        wait_for(lambda: games_of(out, "ann@1.0") >= 1, "ann 1.0's first game")
        # Not joined yet: said so, after the wait, never ann 1.0's standing instead.
        assert where_it_stands(out, "ann", "2.0", wait_s=0.5) == (
            f"ann@2.0 has not joined {out} yet: a running league takes it in within seconds "
            f"(`arena standings {out}` shows it)"
        )
        bot_folder(tmp_path / "new", "ann", "2.0").rename(registry / "ann" / "2.0")  # as `arena submit` puts it
        began = time.monotonic()
        where = where_it_stands(out, "ann", "2.0", wait_s=WAIT_S, poll_s=0.1)
        assert time.monotonic() - began < WAIT_S
    finally:
        stop.set()
        running.join(timeout=60)
    assert re.fullmatch(r"ann@2\.0: [1-9]\d* games so far, rank [1-4] of 4, .*", where), where
    assert members_of(out)["ann@1.0"].status == "retired"


def test_standings_without_the_retired_versions_rank_the_bots_shown(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    for name in ("ann", "bob"):
        bot_folder(registry / name, name).rename(registry / name / "1.0")
    out = tmp_path / "league"

    def new_versions(batch: int) -> None:
        if batch == 4:  # both bots replaced: two retired versions rank among four live bots
            for name in ("ann", "bob"):
                bot_folder(tmp_path / "new", name, "2.0").rename(registry / name / "2.0")

    run_league(config(out, registry, seats=2, games=16), in_process=in_process(NAMES[2:4]), before_batch=new_versions,
               report=False, poll_s=0.1)
    full = arena("standings", str(out))
    shown = arena("standings", str(out), "--hide-retired")
    assert full.returncode == shown.returncode == 0, (full.stderr, shown.stderr)
    rows = [line.split() for line in shown.stdout.splitlines() if re.match(r"^\d+ +\d+–\d+ ", line)]
    assert sorted(row[2] for row in rows) == ["ann@2.0", "bob@2.0", "cat", "dan"]
    assert [int(row[0]) for row in rows] == [1, 2, 3, 4]
    for row in rows:  # each band within the four places shown
        low, high = map(int, row[1].split("–"))
        assert 1 <= low <= high <= 4, row
    full_rows = [line.split() for line in full.stdout.splitlines() if re.match(r"^\d+ +\d+–\d+ ", line)]
    assert len(full_rows) == 6 and sum(row[3] == "(retired)" for row in full_rows) == 2
    # The site names a league's bot by its id, which holds its version: said once.
    render(out, registry)
    index = (out / "site" / "index.html").read_text()
    assert '>ann@2.0</a> <span class="muted">2.0</span>' not in index and ">ann@2.0</a>" in index


def test_two_versions_of_one_bot_in_a_match_are_name_at_version(tmp_path):
    for version in ("1.0", "2.0"):
        bot_folder(tmp_path / version, "c313", version)
    run = arena("match", "3up3down", str(tmp_path / "1.0" / "c313"), str(tmp_path / "2.0" / "c313"), "--games", "2",
                "--rule", "max_turns=30")
    assert run.returncode == 0, run.stderr
    standings = run.stdout[run.stdout.index("standings"):].splitlines()
    assert sorted(line.split()[0] for line in standings[3:5]) == ["c313@1.0", "c313@2.0"], run.stdout
    assert "#2" not in run.stdout


def broken_bot(folder: Path) -> Path:
    """A bot folder put straight into a registry, its bot.toml without a command."""
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text('name = "zed"\nversion = "1.0"\ngames = ["3up3down"]\n')
    return folder


def test_a_broken_bot_toml_in_a_registry_is_said_once_by_the_league(tmp_path):
    registry = tmp_path / "registry"
    zed = broken_bot(registry / "zed" / "1.0")
    said = []
    out = tmp_path / "league"
    run_league(config(out, registry, seats=2, games=8), in_process=in_process(NAMES[:2]), report=False, poll_s=0.05,
               notice=said.append)
    assert said == [
        f"{zed} cannot join, its bot.toml is wrong: 'command' is missing (e.g. command = [\"python3\", \"bot.py\"])"
    ]
    # The site says it too, naming the folder by its place in the registry only.
    render(out, registry)
    index = html.unescape((out / "site" / "index.html").read_text())
    assert (
        "The registry's zed/1.0 cannot join: its bot.toml is wrong: 'command' is missing "
        '(e.g. command = ["python3", "bot.py"])'
    ) in index
    assert str(registry) not in index


def test_a_broken_bot_toml_in_a_registry_is_said_by_arena_bots(tmp_path):
    registry = tmp_path / "registry"
    bot_folder(registry / "ann", "ann").rename(registry / "ann" / "1.0")
    zed = broken_bot(registry / "zed" / "1.0")
    run = arena("bots", "--registry", str(registry))
    assert run.returncode == 0, run.stderr
    said = f"not listed: {zed}: its bot.toml is wrong: 'command' is missing (e.g. command = [\"python3\", \"bot.py\"])"
    assert "".join(run.stdout.split()).endswith("".join(said.split()))  # wrapped at 80 columns
    assert re.search(r"^ann +1\.0 +3up3down ", run.stdout, re.M)
