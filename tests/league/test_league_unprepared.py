"""A league goes on when a bot cannot be prepared: the bot is suspended with its reason
(in the standings and on the site), its games not yet started are dropped, the others play.
Before, one unreadable file in one registry folder stopped every `arena league` run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.ratings.standings import of_store
from arena.league.ladder import run_league
from arena.store.db import Store
from tests.league.test_league import bot_folder, config, members_of

ROOT = Path(__file__).resolve().parent.parent
as_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root: only then do local bots run as nobody, who cannot read a 0600 file"
)


def registry_with(where: Path, names: tuple[str, ...]) -> Path:
    registry = where / "registry"
    for name in names:
        bot_folder(registry / name, name).rename(registry / name / "1.0")
    return registry


def players(out: Path) -> set[str]:
    with Store.open(out) as store:
        return {seat.bot for seat in store.seats()}


def test_a_bot_whose_folder_cannot_be_played_from_is_suspended_and_the_league_goes_on(tmp_path):
    registry = registry_with(tmp_path, ("ann", "bob", "cat"))
    outside = tmp_path / "outside.txt"
    outside.write_text("not cat's")
    (registry / "cat" / "1.0" / "leak").symlink_to(outside)  # put there by hand: no submit refused it
    out = tmp_path / "league"
    outcome = run_league(config(out, registry, seats=2, games=4, jobs=1), report=True)
    assert outcome.done == 4 and players(out) == {"ann@1.0", "bob@1.0"}
    cat = members_of(out)["cat@1.0"]
    reason = (
        f"its folder cannot be played from: leak: is a symbolic link (to '{outside}'); links are not accepted: "
        "put the file itself in the folder"
    )
    assert (cat.status, cat.reason, cat.joined, cat.left_at) == ("suspended", reason, 1, 1)
    with Store.open(out) as store:
        notes = of_store(store).league_notes()
    assert f"cat@1.0 is suspended: {reason} (a new version plays again)" in notes
    site = (out / "site" / "index.html").read_text()
    assert "cat@1.0 is suspended: its folder cannot be played from: leak: is a symbolic link" in site
    from arena.site.writer import slug

    page = (out / "site" / "bots" / f"{slug('cat@1.0')}.html").read_text()
    assert "never faulted" not in page  # issue 34 part 3: it said so of a bot suspended before its first game
    assert "No incident in its games (it has played none)." in page and "suspended" in page


@as_root
def test_a_root_only_file_in_a_registry_folder_suspends_that_bot_not_the_league(tmp_path):
    """The issue's case: a registry folder holding a 0600 file (an older arena copied one in),
    at the join, and a folder that becomes unreadable between two runs of the league."""
    registry = registry_with(tmp_path, ("ann", "bob", "cat", "dan"))
    (registry / "dan" / "1.0" / "stolen.txt").write_text("root's")
    (registry / "dan" / "1.0" / "stolen.txt").chmod(0o600)
    out = tmp_path / "league"
    run_league(config(out, registry, seats=2, games=4, jobs=1), report=False)
    dan = members_of(out)["dan@1.0"]
    assert dan.status == "suspended" and dan.reason == (
        "its folder cannot be played from: stolen.txt is not readable by user nobody (uid 65534), who runs the "
        "bots; submit it again (arena submit copies it readable)"
    )
    assert "dan@1.0" not in players(out)

    (registry / "bob" / "1.0" / "bot.py").chmod(0o600)  # between runs: the resume finds it so
    outcome = run_league(config(out, registry, seats=2, games=10, jobs=1), report=False)
    assert outcome.done == 10
    bob = members_of(out)["bob@1.0"]
    assert bob.status == "suspended" and bob.reason.startswith(
        "its folder cannot be played from: bot.py is not readable by user nobody (uid 65534)"
    )
    with Store.open(out) as store:
        late = [game for game in store.games() if game.round > bob.left_at]
    assert late and all("bob@1.0" not in game.bots for game in late)


@as_root
def test_a_folder_that_becomes_unreadable_while_the_league_runs_suspends_its_bot(tmp_path):
    """bob's bot.py turns 0600 between two of its games: its next start fails with arena's
    error (the sandbox's check that nobody can read the folder); the league looks at why,
    suspends bob, drops its games not yet started and plays on."""
    from arena.sandbox.local import LocalSandbox

    registry = registry_with(tmp_path, ("ann", "bob", "cat"))
    bob_py = registry / "bob" / "1.0" / "bot.py"

    class ChangingUnderfoot(LocalSandbox):
        bob_starts = 0

        def start(self, bot, limits, *, slot=None):
            if bot.name.startswith("bob"):
                ChangingUnderfoot.bob_starts += 1
                if ChangingUnderfoot.bob_starts == 3:
                    bob_py.chmod(0o600)
                    self._readable.clear()  # as a new run's sandbox would: it checks again
            return super().start(bot, limits, slot=slot)

    box = ChangingUnderfoot()
    try:
        outcome = run_league(config(tmp_path / "league", registry, seats=2, games=12, jobs=1), sandbox=box,
                             report=False)
    finally:
        box.close()
    bob = members_of(tmp_path / "league")["bob@1.0"]
    assert bob.status == "suspended" and bob.reason.startswith(
        "its folder cannot be played from: bot.py is not readable by user nobody (uid 65534)"
    )
    with Store.open(tmp_path / "league") as store:
        games = store.games()
        last_seq = store.last_seq()
    # Numbered up to 12; the failed game and bob's games not yet started were dropped.
    assert last_seq == 12 and outcome.done == len(games) < 12
    assert all(game.status == "done" for game in games)
    assert len([game for game in games if "bob@1.0" in game.bots]) == 2  # the two it played
    assert any(game.round >= bob.left_at for game in games)  # ann and cat played on


def test_a_bot_whose_image_does_not_build_is_suspended_with_the_builds_reason(docker_engine, tmp_path):
    from arena.sandbox.docker import default_image

    registry = registry_with(tmp_path, ("ann", "bob", "cat"))
    cat = registry / "cat" / "1.0"
    (cat / "Dockerfile").write_text(f"FROM {default_image()}\nRUN exit 3\n")
    with (cat / "bot.toml").open("a") as toml:
        toml.write('dockerfile = "Dockerfile"\n')
    out = tmp_path / "league"
    outcome = run_league(config(out, registry, seats=2, games=2, jobs=1, sandbox="docker"), report=False)
    assert outcome.done == 2 and players(out) == {"ann@1.0", "bob@1.0"}
    member = members_of(out)["cat@1.0"]
    assert member.status == "suspended"
    assert member.reason.startswith("its Docker image cannot be built: its Dockerfile did not build:")
    assert "returned a non-zero code: 3" in member.reason


def test_a_file_name_that_is_not_utf8_suspends_its_bot_once_and_the_league_goes_on(tmp_path):
    """The issue's case: `x\\xff.py` in a registry bot's folder, there when the league
    starts (bob) and put there while it runs (cat, between batches 2 and 3); `arena bots`
    lists them."""
    registry = registry_with(tmp_path, ("ann", "bob", "cat", "dan"))
    odd = os.fsdecode(b"x\xff.py")
    (registry / "bob" / "1.0" / odd).write_text("")

    def later(batch: int) -> None:
        if batch == 3:
            (registry / "cat" / "1.0" / odd).write_text("")

    said: list[str] = []
    out = tmp_path / "league"
    outcome = run_league(config(out, registry, seats=2, games=12, jobs=1), before_batch=later, report=False,
                         progress=lambda update: said.extend(update.events))
    assert outcome.done == 12
    members = members_of(out)
    reason = "its folder cannot be played from: x\\xff.py: its name is not UTF-8; rename it"
    assert (members["bob@1.0"].status, members["bob@1.0"].reason) == ("suspended", reason)
    assert "bob@1.0" not in players(out)
    (cat,) = [m for m in members.values() if m.lineage == "cat" and m.bot != "cat@1.0"]  # new content
    assert (cat.status, cat.reason) == ("suspended", reason)
    assert members["cat@1.0"].status == "retired"
    assert [line for line in said if "suspended" in line] == [f"bob@1.0 suspended: {reason}",
                                                              f"{cat.bot} suspended: {reason}"]
    listed = subprocess.run([sys.executable, "-m", "arena", "bots", "--registry", str(registry)],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    rows = [line.split()[0] for line in listed.stdout.splitlines() if re.match(r"^\w+ +1\.0 +3up3down ", line)]
    assert sorted(rows) == ["ann", "bob", "cat", "dan"]


def test_a_registry_folder_whose_name_is_not_utf8_cannot_join_and_is_said_once(tmp_path):
    registry = registry_with(tmp_path, ("ann", "bob"))
    bad = registry / os.fsdecode(b"c\xffz")
    bot_folder(bad, "cat").rename(bad / "1.0")
    said: list[str] = []
    out = tmp_path / "league"
    outcome = run_league(config(out, registry, seats=2, games=6, jobs=1), report=False, notice=said.append)
    assert outcome.done == 6 and players(out) == {"ann@1.0", "bob@1.0"}
    assert said == [f"{registry}/c\\xffz/1.0 cannot join, its name is not UTF-8: rename the folder"]
    listed = subprocess.run([sys.executable, "-m", "arena", "bots", "--registry", str(registry)],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    said = f"not listed: {registry}/c\\xffz/1.0: its name is not UTF-8: rename the folder"
    assert "".join(listed.stdout.split()).endswith("".join(said.split()))  # wrapped at 80 columns
