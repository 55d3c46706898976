"""SIGTERM (systemd, `docker stop`, Kubernetes) stops every long-running command as
Ctrl-C does: `arena league`, `arena run`, `arena serve` (with a validation running) and
`arena play`, each sent a real SIGTERM. The games in flight are stored, every process
the command started is gone (bots, workers, validations), no semaphore is left to
multiprocessing's tracker, one line is said, no traceback; a Docker league's warm
containers go with it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from arena.web.client import pack
from tests.league.test_league_stops import put
from tests.web.test_web_resume import SLOW_START, processes_mentioning
from tests.web_helpers import bot_folder, token_for
from tests.tournaments import done_games as stored  # games stored so far, read only

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "COLUMNS": "80"}


def children_of(pid: int) -> set[tuple[int, str]]:
    """The process's descendants now, each as (pid, start time): a pid reused later is
    another process."""
    parents: dict[int, list[tuple[int, str]]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append((int(entry.name), fields[19]))
    found: set[tuple[int, str]] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child[0])
    return found


def alive(process: tuple[int, str]) -> bool:
    try:
        fields = Path(f"/proc/{process[0]}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == process[1] and fields[0] != "Z"


def wait_for(condition, what: str, timeout: float = 90.0, watch=None):  # noqa: ANN001, ANN201
    """Wait for `condition`, gathering the descendants of `watch` (a Popen) meanwhile."""
    seen: set[tuple[int, str]] = set()
    deadline = time.monotonic() + timeout
    while not (got := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        if watch is not None:
            assert watch.poll() is None, watch.communicate()
            seen |= children_of(watch.pid)
        time.sleep(0.05)
    return seen | (children_of(watch.pid) if watch is not None else set())


def terminate(process: subprocess.Popen, seen: set[tuple[int, str]]) -> tuple[str, str]:
    """SIGTERM, then its output (read to the end: multiprocessing's resource tracker,
    which says leaked semaphores, writes there as it ends); every process it started gone."""
    seen = seen | children_of(process.pid)
    process.send_signal(signal.SIGTERM)
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    deadline = time.monotonic() + 10
    while any(alive(child) for child in seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [child for child in seen if alive(child)], "processes outlived the command"
    assert "Traceback" not in err and "leaked" not in err, err
    return out, err


def arena_started(*args: str, **options) -> subprocess.Popen:
    """`arena ARGS` started as a user starts it (ENV), its output piped as text."""
    return subprocess.Popen([sys.executable, "-m", "arena", *args], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **options)


def stopped_after_six_games(process: subprocess.Popen, out: Path, what: str, line: str) -> None:
    """SIGTERM to `process`, a league or a tournament storing its games in `out`, once it
    stored six (`terminate`): it exits as Ctrl-C makes it exit, saying one line that
    matches `line`, whose first group is the number of games stored (all there are)."""
    seen = wait_for(lambda: stored(out) >= 6, what, watch=process)
    _, err = terminate(process, seen)
    assert process.returncode == 128 + signal.SIGTERM
    stop = re.fullmatch(line, " / ".join(said(err)))
    assert stop, err
    assert int(stop.group(1)) == stored(out) >= 6


def said(text: str) -> list[str]:
    """The lines said, each whole (the terminal wraps a line at 80 columns, indenting what
    follows), less the local sandbox's warning."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("  ") and lines:
            lines[-1] += " " + line.strip()
        elif line.strip():
            lines.append(line.strip())
    return [line for line in lines if not line.startswith("arena: the local sandbox does not isolate")]


def registry_of(where: Path) -> Path:
    registry = where / "registry"
    for name in ("va", "vb", "vc"):
        put(registry, name)
    return registry


def test_sigterm_stops_a_league_as_ctrl_c_does(tmp_path):
    registry = registry_of(tmp_path)
    out = tmp_path / "league"
    league = arena_started("league", str(out), "--game", "3up3down", "--seats", "2", "--registry", str(registry),
                           "--seed", "5", "--rule", "max_turns=12", "--jobs", "2", "--public-seed-ok")
    stopped_after_six_games(league, out, "the league's games", r"arena: stopped: (\d+) games are stored in (\S+); "
                            r"run the same command to resume: arena league .*")


def test_sigterm_stops_a_tournament_as_ctrl_c_does(tmp_path):
    registry = registry_of(tmp_path)
    out = tmp_path / "cup"
    run = arena_started(
        "run", "--game", "3up3down", "--seats", "2", "--out", str(out),
        *[arg for name in ("va", "vb", "vc") for arg in ("--bots", str(registry / name / "1.0"))],
        "--cycles", "200", "--seed", "5", "--rule", "max_turns=12", "--jobs", "2", "--quiet", "--public-seed-ok",
    )
    stopped_after_six_games(run, out, "the tournament's games", r"arena: stopped: (\d+) of 600 games are stored in "
                            r"\S+; run the same command to resume: arena run .*")


def test_sigterm_stops_the_server_and_the_validation_it_is_running(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    token = token_for(registry, "ann")
    server = arena_started("serve", str(tmp_path / "league"), "--submissions", "--registry", str(registry),
                           "--validate-sandbox", "local", "--port", "0")
    first = ""
    while not (found := re.search(r"at +(http://127\.0\.0\.1:\d+/)", first)):
        line = server.stdout.readline()
        assert line, server.communicate()
        first += " " + line.strip()
    url = found.group(1)
    made = httpx.post(url + "api/submissions", content=pack(bot_folder(tmp_path, "slowbot", extra=SLOW_START)),
                      headers={"Authorization": f"Bearer {token}"}, timeout=60)
    sub_id = made.json()["id"]

    def in_smoke_match() -> bool:
        reply = httpx.get(url + f"api/submissions/{sub_id}", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        return reply.json()["state"] == "smoke match"

    seen = wait_for(in_smoke_match, "the smoke match", watch=server)
    assert processes_mentioning(sub_id)
    _, err = terminate(server, seen)
    assert server.returncode == 0
    assert " / ".join(said(err)) == f"arena: stopped (SIGTERM): {tmp_path / 'league' / 'site'} is no longer served"
    assert not processes_mentioning(sub_id)


def test_sigterm_stops_arena_play_and_its_bots(tmp_path):
    play = arena_started("play", "3up3down", "--no-open", "--port", "0", "--out", str(tmp_path / "p"), cwd=tmp_path)
    seen = wait_for(lambda: any(True for _ in children_of(play.pid)), "the bot's process", watch=play)
    out, err = terminate(play, seen)
    assert play.returncode == 0
    assert out.splitlines()[-1] == "stopped; every finished game is stored", out


# ------------------------------------------------------------------------------ Docker


@pytest.fixture
def docker_engine():
    from arena.sandbox.docker import engine_problem

    problem = engine_problem()
    if problem:
        if os.environ.get("ARENA_REQUIRE_DOCKER") == "1":
            pytest.fail(f"ARENA_REQUIRE_DOCKER=1 but {problem}")
        pytest.skip(problem)
    if os.geteuid() != 0:
        pytest.skip("warm slots need arena to run as root")
    import docker

    return docker.from_env(timeout=30)


def test_sigterm_removes_a_docker_leagues_warm_containers(tmp_path, docker_engine):
    registry = registry_of(tmp_path)
    out = tmp_path / "league"
    league = arena_started("league", str(out), "--game", "3up3down", "--seats", "2", "--registry", str(registry),
                           "--seed", "5", "--rule", "max_turns=12", "--jobs", "1", "--sandbox", "docker",
                           "--warm-start", "--public-seed-ok")
    owner = f"{socket.gethostname()}:{league.pid}:"

    def ours() -> list:
        # The engine's own listing (the SDK's would inspect each, and one may go meanwhile).
        listed = docker_engine.api.containers(all=True, filters={"label": "arena.sandbox"})
        return [c["Id"] for c in listed if (c.get("Labels") or {}).get("arena.owner", "").startswith(owner)]

    try:
        seen = wait_for(lambda: stored(out) >= 3 and len(ours()) >= 2, "warm containers", timeout=300, watch=league)
    finally:
        if league.poll() is not None:
            print(league.communicate())
    _, err = terminate(league, seen)
    assert league.returncode == 128 + signal.SIGTERM
    assert " / ".join(said(err)).startswith("arena: stopped: "), err
    assert ours() == []
