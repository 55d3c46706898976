"""A league goes on when a bot cannot be prepared: the bot is suspended with its reason
(in the standings and on the site), its games not yet started are dropped, the others play.
Before, one unreadable file in one registry folder stopped every `arena league` run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.ratings.standings import of_store
from arena.league.ladder import run_league
from arena.store.db import Store
from tests.league.test_league import bot_folder, config, members_of

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


def test_a_bot_whose_image_does_not_build_is_suspended_with_the_builds_reason(tmp_path):
    from arena.sandbox.docker import default_image, engine_problem

    problem = engine_problem()
    if problem:
        pytest.skip(problem)
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
