"""No bot process sees one deal twice, nor from two seats, on any path that replays a deal.

The 'deal-memory' test bot records its setup cards at each game and, once its opponent's
face-up cards are public, says whether they were among the setup cards of a deal it saw
before from the other seat (it would then know its opponent's whole setup). It keeps its
records in its own memory (`memory`), or in the kernel keyring (`keyring`: @u and @s, so
that a later process of the same user finds them). Every path that plays one deal from
two seats (a paired match, `arena match --sprt`; a duplicate tournament, by rotation
slot, per-slot or per-game, as `arena demo` runs one) must give it nothing: no process
meets a deal twice, and a process keeps nothing in the kernel for the next one.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena.play.match import run_match
from arena.play.tournament import TournamentConfig, run_tournament
from arena.sandbox import Limits, get_sandbox
from tests.needs import sandbox_named
from tests.sandbox_helpers import RecordingSandbox

BOTS = Path(__file__).parents[1] / "bots"
EXAMPLES = Path(__file__).parents[2] / "bots"
LIMITS = Limits(startup_s=10.0, decision_s=2.0, time_bank_s=5.0, memory_mb=256, cpu_s=60)
TOURNAMENT_LIMITS = {"startup_s": 10.0, "decision_s": 2.0, "time_bank_s": 5.0, "memory_mb": 256}


class Recording(RecordingSandbox):
    """A sandbox that keeps every process it starts, to read each one's whole stderr at the end."""

    def said(self, bot: str) -> list[str]:
        """Every 'DEAL-MEMORY' line of the bot's processes (each process's whole log)."""
        return [
            line
            for name, process in self.processes
            if name == bot
            for line in process.stderr_text().splitlines()
            if line.startswith("DEAL-MEMORY")
        ]


def _deal_memory(into: Path, where: str) -> Path:
    """A copy of the test bot keeping its records `where` ("memory" or "keyring"), with the
    random example bot beside it, both readable by user nobody."""
    into.chmod(0o755)
    target = into / f"deal-memory-{where}"
    shutil.copytree(BOTS / "deal-memory", target, ignore=shutil.ignore_patterns("__pycache__"))
    toml = target / "bot.toml"
    toml.write_text(toml.read_text().replace('"memory"]', f'"{where}"]'))
    shutil.copytree(EXAMPLES / "random", into / "random", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [target, into / "random", *target.rglob("*"), *(into / "random").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def _checked(said: list[str], games: int) -> list[str]:
    """The bot's verdicts (one per game it played); fails if it did not check every game."""
    verdicts = [line for line in said if line.startswith(("DEAL-MEMORY MATCH", "DEAL-MEMORY NONE"))]
    assert len(verdicts) == games, said
    return [line for line in verdicts if "MATCH" in line]


@pytest.mark.parametrize("sandbox_name", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_paired_match_never_shows_a_process_one_deal_from_both_seats(tmp_path, sandbox_name):
    box = Recording(sandbox_named(sandbox_name))
    bot = _deal_memory(tmp_path, "memory")
    result = run_match(
        "3up3down", [bot, tmp_path / "random"], games=6, sandbox=box, limits=LIMITS, paired=True
    )
    assert [game.seed for game in result.games][::2] == [game.seed for game in result.games][1::2]
    assert [game.seats.index("deal-memory") for game in result.games] == [0, 1, 0, 1, 0, 1]
    assert _checked(box.said("deal-memory"), 6) == []
    # One process per bot and seat rotation, each told the games of its rotation.
    assert len(box.processes) == 4
    assert result.bots[0].starts == 2


def test_a_plain_match_deals_every_game_afresh(tmp_path):
    box = Recording(sandbox_named("local"))
    bot = _deal_memory(tmp_path, "memory")
    result = run_match("3up3down", [bot, tmp_path / "random"], games=6, sandbox=box, limits=LIMITS)
    assert len({game.seed for game in result.games}) == 6
    assert _checked(box.said("deal-memory"), 6) == []
    assert len(box.processes) == 2  # one process per bot: it may remember, but sees no deal twice


@pytest.mark.parametrize(
    "form, bot_process",
    [("round-robin", "per-slot"), ("round-robin", "per-game"), ("swiss", "per-slot"), ("gauntlet", "per-slot")],
)
def test_a_duplicate_tournament_never_shows_a_process_one_deal_from_both_seats(tmp_path, form, bot_process):
    # Every format's games go through the same slots (one per bot and seat rotation): the
    # bot plays 6 games, 3 deals from both seats, in one process per rotation (per-slot).
    box = Recording(sandbox_named("local"))
    bot = _deal_memory(tmp_path, "memory")
    shape = {
        "round-robin": {"cycles": 3, "bots": [str(bot), str(tmp_path / "random")]},
        "swiss": {"rounds": 3, "bots": [str(bot), str(tmp_path / "random")]},
        "gauntlet": {"rounds": 3, "challengers": [str(bot)], "bots": [str(tmp_path / "random")]},
    }[form]
    config = TournamentConfig(
        game="3up3down", seats=2, format=form, duplicate=True, bot_process=bot_process,
        output=str(tmp_path / "out"), limits=TOURNAMENT_LIMITS, **shape,
    )
    run_tournament(config, sandbox=box, report=False)
    assert _checked(box.said("deal-memory"), 6) == []
    started = [name for name, _ in box.processes if name == "deal-memory"]
    assert len(started) == (2 if bot_process == "per-slot" else 6)


# -- the kernel keyring ------------------------------------------------------------------


@pytest.mark.parametrize("bot_process", ["per-game", "per-slot"])
def test_a_key_stored_in_one_game_is_not_read_in_the_next(tmp_path, bot_process):
    # Without a filter, every local bot (user nobody as root, else the organiser) shares a
    # user keyring, and a process without a session keyring of its own shares one too: the
    # rotation-1 process would read the setup cards its rotation-0 twin stored.
    box = Recording(sandbox_named("local"))
    bot = _deal_memory(tmp_path, "keyring")
    config = TournamentConfig(
        game="3up3down", seats=2, duplicate=True, cycles=2, bots=[str(bot), str(tmp_path / "random")],
        bot_process=bot_process, output=str(tmp_path / "out"), limits=TOURNAMENT_LIMITS,
    )
    run_tournament(config, sandbox=box, report=False)
    said = box.said("deal-memory")
    assert _checked(said, 4) == []
    attempts = [line for line in said if line.startswith("DEAL-MEMORY KEYRING")]
    # Each game: two adds at its setup (each after a read of both rings), a read of both at play.
    assert sorted(set(attempts)) == [
        "DEAL-MEMORY KEYRING add @s: EPERM",
        "DEAL-MEMORY KEYRING add @u: EPERM",
        "DEAL-MEMORY KEYRING read @s: EPERM",
        "DEAL-MEMORY KEYRING read @u: EPERM",
    ]
    assert len(attempts) == 4 * 6


def test_the_docker_sandbox_closes_the_kernel_keyring(docker_engine, tmp_path):
    # Docker's default seccomp profile refuses add_key, request_key and keyctl (EPERM);
    # without it the containers' user nobody (the host's uid 65534: no user namespace)
    # would share one user keyring.
    box = Recording(sandbox_named("docker"))
    bot = _deal_memory(tmp_path, "keyring")
    run_match("3up3down", [bot, tmp_path / "random"], games=2, sandbox=box, limits=LIMITS, paired=True)
    said = box.said("deal-memory")
    assert _checked(said, 2) == []
    assert sorted(set(line for line in said if "KEYRING" in line)) == [
        "DEAL-MEMORY KEYRING add @s: EPERM",
        "DEAL-MEMORY KEYRING add @u: EPERM",
        "DEAL-MEMORY KEYRING read @s: EPERM",
        "DEAL-MEMORY KEYRING read @u: EPERM",
    ]


_AS_NOBODY = r"""
import ctypes, json, os, sys
from arena.sandbox.keyring import keyctl_number
ADD_KEY = {250: 248, 219: 217}[keyctl_number()]
os.setgroups([]); os.setgid(65534); os.setuid(65534)
libc = ctypes.CDLL(None, use_errno=True)
if sys.argv[1] == "plant":
    print(libc.syscall(ADD_KEY, b"user", b"deal-memory-left", b"x", 1, -4) > 0)
else:
    print(libc.syscall(keyctl_number(), 10, -4, b"user", b"deal-memory-left", 0) > 0)  # KEYCTL_SEARCH @u
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="as a normal user local bots run as that user")
def test_what_nobody_left_in_its_user_keyring_is_cleared_before_a_run():
    # A key left by a bot of an arena without the filter (planted here as user nobody,
    # where no filter runs) is gone once a run cleans up: it cannot reach the new bots.
    import subprocess
    import sys

    def nobody(action: str) -> str:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        return subprocess.run(
            [sys.executable, "-c", _AS_NOBODY, action], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()

    assert nobody("plant") == "True"
    assert nobody("find") == "True"
    get_sandbox("local", warn=False).cleanup_leftovers()
    assert nobody("find") == "False"
