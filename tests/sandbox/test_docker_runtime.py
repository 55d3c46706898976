"""The docker sandbox's runtime setting (runc, or gVisor's runsc): where it is set (a
flag, a tournament's or a league's file, a server's table, $ARENA_DOCKER_RUNTIME), how a
mistake is said (one line, exit 2), and how an engine without runsc is told apart. None
of these needs an engine: a fake one says which runtimes it has. What runsc does to a
bot is tested with the engine (tests/sandbox/test_sandbox_docker.py, test_hostile.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.config.league_file import LeagueConfig
from arena.config.tournament_file import TournamentConfig
from arena.sandbox import UnknownSandbox
from arena.sandbox.docker import (
    RUNTIME_ENV,
    DockerSandbox,
    RuntimeMissing,
    UnknownRuntime,
    choose_runtime,
)
from arena.web.settings import ServerConfig

BOTS = Path(__file__).resolve().parents[2] / "bots"
PAIR = (str(BOTS / "random"), str(BOTS / "random"))


class FakeEngine:
    """An engine client that answers `info` with the runtimes it has."""

    def __init__(self, *runtimes: str):
        self.runtimes = runtimes

    def info(self) -> dict:
        return {"Runtimes": {name: {"path": name} for name in self.runtimes}}


def test_the_runtime_is_the_settings_or_the_environments_or_runc(monkeypatch):
    monkeypatch.delenv(RUNTIME_ENV, raising=False)
    assert DockerSandbox(client=FakeEngine("runc", "runsc")).runtime == "runc"
    assert DockerSandbox(client=FakeEngine("runc", "runsc"), runtime="runsc").runtime == "runsc"
    monkeypatch.setenv(RUNTIME_ENV, "runsc")
    assert DockerSandbox(client=FakeEngine("runc", "runsc")).runtime == "runsc"
    assert DockerSandbox(client=FakeEngine("runc", "runsc"), runtime="runc").runtime == "runc"


def test_runsc_asked_of_an_engine_without_it_says_how_to_install_and_register_it(monkeypatch):
    monkeypatch.delenv(RUNTIME_ENV, raising=False)
    box = DockerSandbox(client=FakeEngine("runc", "io.containerd.runc.v2"), runtime="runsc")
    with pytest.raises(RuntimeMissing) as missing:
        box.runtime  # noqa: B018
    message = str(missing.value)
    assert "no runtime 'runsc'" in message and "io.containerd.runc.v2, runc" in message
    assert "apt-get install runsc" in message and "/etc/docker/daemon.json" in message
    assert "\n" not in message
    assert isinstance(missing.value, UnknownSandbox)  # the CLI says it as a mistake: exit 2
    # an engine that lists no runtimes at all still runs runc, its own
    assert choose_runtime("runc", set()) == "runc"
    with pytest.raises(RuntimeMissing):
        choose_runtime("runsc", set())


def test_an_unknown_runtime_is_refused_at_once_with_the_known_ones(monkeypatch):
    with pytest.raises(UnknownRuntime, match=r"unknown Docker runtime 'gvisor'; allowed: runc, runsc"):
        DockerSandbox(client=FakeEngine("runc"), runtime="gvisor")
    monkeypatch.setenv(RUNTIME_ENV, "kata")
    with pytest.raises(UnknownRuntime, match=r"'kata' \(\$ARENA_DOCKER_RUNTIME\)"):
        DockerSandbox(client=FakeEngine("runc"))


def test_a_tournament_or_league_file_sets_it_for_docker_only():
    tournament = TournamentConfig(game="3up3down", seats=2, sandbox="docker", runtime="runsc")
    assert tournament.runtime == "runsc"
    assert TournamentConfig(game="3up3down", seats=2, sandbox="docker").runtime is None
    with pytest.raises(ValueError, match="'runtime' 'runsc' is a setting of the docker sandbox"):
        TournamentConfig(game="3up3down", seats=2, runtime="runsc")
    with pytest.raises(ValueError, match="runtime"):
        TournamentConfig(game="3up3down", seats=2, sandbox="docker", runtime="gvisor")
    assert LeagueConfig(game="3up3down", seats=2, sandbox="docker", runtime="runsc").runtime == "runsc"
    with pytest.raises(ValueError, match="'runtime' 'runc' is a setting of the docker sandbox"):
        LeagueConfig(game="3up3down", seats=2, runtime="runc")
    assert ServerConfig(validate_runtime="runsc").validate_runtime == "runsc"
    with pytest.raises(ValueError):
        ServerConfig(validate_runtime="gvisor")


def test_the_games_of_a_run_carry_its_runtime_to_the_sandbox_they_play_in(monkeypatch):
    from arena.play import executor as play

    made = []
    monkeypatch.setattr(play, "get_sandbox", lambda name, **settings: made.append((name, settings)) or object())
    monkeypatch.setattr(play, "_sandboxes", {})
    first = play.sandbox_named("docker", "runsc")
    assert play.sandbox_named("docker", "runsc") is first  # one per kind and runtime
    assert play.sandbox_named("docker") is not first
    assert made == [("docker", {"runtime": "runsc"}), ("docker", {})]
    assert play.GameSpec.model_fields["runtime"].default is None


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("match", "3up3down", *PAIR, "--runtime", "runsc"),
         "--runtime runsc is a setting of --sandbox docker, not of --sandbox local"),
        (("match", "3up3down", *PAIR, "--sandbox", "docker", "--runtime", "gvisor"),
         "unknown Docker runtime 'gvisor'; allowed: runc, runsc"),
        (("submit", str(BOTS / "random"), "--runtime", "runc"),
         "--runtime runc is a setting of --sandbox docker, not of --sandbox local"),
    ],
)
def test_a_runtime_mistake_on_the_command_line_is_one_line_and_exit_code_2(tmp_path, args, message):
    run = arena(*args, cwd=tmp_path)
    assert (run.returncode, run.stderr.strip()) == (2, f"arena: error: {message}")


def test_a_run_may_resume_under_the_other_runtime_and_old_stores_keep_their_fingerprint():
    from arena.config.fingerprint import changed_keys, fingerprint_of, settings_of

    runc = settings_of(TournamentConfig(game="3up3down", seats=2, sandbox="docker", runtime="runc"))
    runsc = settings_of(TournamentConfig(game="3up3down", seats=2, sandbox="docker", runtime="runsc"))
    default = settings_of(TournamentConfig(game="3up3down", seats=2, sandbox="docker"))
    before = {key: value for key, value in default.items() if key != "runtime"}  # a store from before
    assert fingerprint_of(runc) == fingerprint_of(runsc) == fingerprint_of(default) == fingerprint_of(before)
    assert changed_keys(before, runsc) == []
    league = settings_of(LeagueConfig(game="3up3down", seats=2, sandbox="docker"))
    assert "runtime" not in league  # a league stored before the setting resumes as it was
