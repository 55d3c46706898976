"""Think time is measured true: the decision clock starts before the request is written.

A bot that reads its request, thinks and answers while the referee's thread is
descheduled inside its write must still be charged all of it. The 'spinner' test bot
busy-waits 3 ms per decision on its own clock (CLOCK_MONOTONIC, the clock arena reads)
and says on stderr how long it spun: every think time arena records is at least that,
by construction (the bot's interval lies inside arena's), also on a loaded machine; and
the time bank is drawn by the same figures.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from nimtest_game import nim_registered

from arena.play.match import run_match
from arena.sandbox import Limits
from tests.needs import sandbox_named

BOTS = Path(__file__).parents[1] / "bots"
DECISION_S = 0.002  # below the spinner's 3 ms: every decision draws on the bank
BANK_S = 60.0
LIMITS = Limits(startup_s=10.0, decision_s=DECISION_S, time_bank_s=BANK_S, memory_mb=128, cpu_s=60)


@pytest.fixture(scope="module", autouse=True)
def nim():
    with nim_registered() as game:
        yield game


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def sandbox(request):
    return sandbox_named(request.param)


def _copy(name: str, into: Path) -> Path:
    target = into / name
    shutil.copytree(BOTS / name, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [into, target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def test_every_think_time_covers_the_bots_own_measured_time_and_the_bank_pays_it(tmp_path, sandbox):
    folders = tmp_path / "bots"
    folders.mkdir()
    folders.chmod(0o755)
    tmp_path.chmod(0o755)
    spinner, steady = _copy("spinner", folders), _copy("steady", folders)
    # 150 stones, one taken per move: 75 decisions of each bot per game.
    result = run_match(
        "nim-test", [spinner, steady], games=2, seed=5, sandbox=sandbox, rules={"stones": 150}, limits=LIMITS
    )
    # The bot's own figures, by request id (ids count up through the match), from its log:
    # a line on stderr travels apart from the answer (in Docker, by another way).
    (log,) = [bot.log for bot in result.bots if bot.name == "spinner"]
    said = {int(words[1]): (int(words[2]), float(words[3])) for words in map(str.split, log.splitlines())
            if words and words[0] == "SPUN"}
    decisions = []  # (think_s, request id, own microseconds, bank the bot was told), in order
    for game in result.games:
        assert game.incidents == []
        seat = game.seats.index("spinner")
        for step in game.replay.actions:
            if step.seat == seat:
                assert step.by == "bot" and step.think_s is not None
                request = len(decisions) + 1
                decisions.append((step.think_s, request, *said[request]))
    assert len(decisions) == 150
    assert sorted(said) == list(range(1, 151))
    # Every decision: arena's think time (recorded to the microsecond) is at least the
    # time the bot itself measured from reading the request to writing its answer.
    short = [(request, think, own) for think, request, own, _ in decisions if round(think * 1e6) < own]
    assert short == []
    assert min(own for _, _, own, _ in decisions) >= 3000
    # The bank the bot is told before each request is the first bank less every overrun
    # so far, each overrun being the recorded think time over the decision limit (the
    # bot's one bank for the match; told to the millisecond).
    drawn = 0.0
    for think, request, _, bank in decisions:
        assert bank == pytest.approx(round(BANK_S - drawn, 3), abs=0.0011), request
        drawn += max(0.0, think - DECISION_S)
    assert drawn >= sum(own / 1e6 - DECISION_S for _, _, own, _ in decisions) - 1e-4
