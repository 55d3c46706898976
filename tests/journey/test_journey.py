"""The author's whole journey, on real parts (issue 34): a starter kit from `arena new`,
`arena match` in Docker, a ladder served by `arena league --serve` (Docker), an account
from `arena authors add`, `arena submit --to`, the league playing the bot (read over the
API and on its page), a second version that retires the first, one game against it in
the human seat over the WebSocket, and the door's API saying each state on the way.

Every step is the command a new user types, in a process of its own. One league serves
every kit's journey (a module fixture): its start is paid once. The Python, Go and Rust
kits walk it in CI (Rust: its build makes hard links and a big target/, the output that
once got a bot suspended after it was accepted); the C, C++, Java and Node kits walk it
too with ARENA_JOURNEY=all, run before a release (README, "Tests"). Needs a Docker engine
(skipped without, failed with ARENA_REQUIRE_DOCKER=1); a kit's language image is built
when missing. Each step's seconds are printed (`pytest -s`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from tests.polling import wait_until

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
RANDOM = BOTS / "random"
SWITCH = "ARENA_JOURNEY"  # =all: every kit walks the journey, not only those of CI
IN_CI = ["python", "go", "rust"]
BEFORE_RELEASE = ["c", "cpp", "java", "node"]
COMPILED = {"c", "cpp", "rust", "go", "java"}
WAIT_S = 300.0  # for the league to play what a step waits for, on a loaded machine
ENV = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="300")
LEAGUE_FILE = """\
[league]
name = "The journey"
game = "3up3down"
seats = 2
sandbox = "docker"
registry = "registry"
output = "ladder"

[league.limits]
startup_s = 30.0
decision_s = 2.0
time_bank_s = 30.0

[server]
validate_sandbox = "docker"
"""


def kits() -> list:
    chosen = IN_CI + BEFORE_RELEASE
    ask = "set ARENA_JOURNEY=all to walk it (before a release)"
    return [language if language in IN_CI or os.environ.get(SWITCH) == "all"
            else pytest.param(language, marks=pytest.mark.skip(reason=ask)) for language in chosen]


def arena(*args: str, cwd: Path, token: str | None = None, timeout: float = 900.0) -> list[str]:
    """`arena ARGS` as a user runs it; its output lines (it must succeed)."""
    env = dict(ENV, ARENA_TOKEN=token) if token else ENV
    done = subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"arena {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout.splitlines()


def until(what: str, check, timeout_s: float = WAIT_S, every_s: float = 1.0):  # noqa: ANN001, ANN201
    """Poll `check()` until it returns something true; that value (tests/polling.py)."""
    return wait_until(check, what, timeout_s, every_s)


class Steps:
    """Each step's seconds, printed at the end of a journey."""

    def __init__(self, name: str):
        self.name, self.times, self.started = name, [], time.monotonic()
        self.last = self.started

    def done(self, step: str) -> None:
        now = time.monotonic()
        self.times.append((step, now - self.last))
        self.last = now

    def say(self) -> str:
        parts = ", ".join(f"{step} {seconds:.1f}" for step, seconds in self.times)
        return f"journey {self.name}: {time.monotonic() - self.started:.0f} s ({parts})"


@pytest.fixture(scope="module")
def docker_client(docker_engine):
    """A client that waits for a kit's language image to build (minutes, once per machine)."""
    import docker

    return docker.from_env(timeout=1800)


@pytest.fixture(scope="module")
def league(tmp_path_factory, docker_client):
    """`arena league ladder.toml --serve 0` over a registry of two example bots, in Docker."""
    root = tmp_path_factory.mktemp("ladder")
    registry = root / "registry"
    registry.mkdir()
    for name in ("random", "threeup-heuristic"):
        shutil.copytree(BOTS / name, registry / name, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "ladder.toml").write_text(LEAGUE_FILE)
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "arena", "league", "ladder.toml", "--serve", "0"], cwd=root,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    serving = threading.Event()

    def read() -> None:  # the whole log, so the pipe never fills
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if "serving the league at" in line:
                serving.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert serving.wait(120), "\n".join(lines)
        url = re.search(r"serving the league at (http://127\.0\.0\.1:\d+/)", "\n".join(lines)).group(1)
        print(f"journey: the league serves in {time.monotonic() - started:.1f} s")
        yield SimpleNamespace(root=root, registry=registry, url=url, log=lines)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.returncode in (0, 130), "\n".join(lines[-40:])
    assert not any("Traceback" in line for line in lines), "\n".join(lines)


def standing(url: str, name: str) -> dict:
    return httpx.get(url + f"api/bots/{name}", timeout=30).json().get("standing") or {}


def bot_page(url: str, bot: str) -> str:
    from arena.site.writer import slug

    answer = httpx.get(url + f"bots/{slug(bot)}.html", timeout=30)
    return answer.text if answer.status_code == 200 else ""


def play_one_game(url: str, token: str, name: str) -> str:
    """One game in the human seat against the ladder bot `name`, over the WebSocket (the
    /play/ page's own messages); the stored game's key."""
    from websockets.sync.client import connect

    opened = httpx.post(url + "play/tables", json={"bot": name, "game": "3up3down"}, timeout=60,
                        headers={"Authorization": f"Bearer {token}"})
    assert opened.status_code == 200, opened.text
    seat_token = opened.json()["url"].split("#t=", 1)[1]
    with connect(url.replace("http://", "ws://") + "play/ws") as socket:
        socket.send(json.dumps({"type": "join", "token": seat_token}))
        while True:
            message = json.loads(socket.recv(timeout=120))
            assert message["type"] != "error", message
            if message["type"] == "turn":
                time.sleep(0.06)  # a person's pace: a page may send at most 20 messages a second
                # The move that plays the most cards: a game of about a hundred moves, never the turn cap.
                action = max(message["legal"], key=lambda legal: len(legal.get("cards", ())))
                socket.send(json.dumps({"type": "act", "request": message["request"], "action": action}))
            elif message["type"] == "notice" and message.get("stored"):
                return message["stored"]


@pytest.mark.parametrize("language", kits())
def test_a_new_author_s_bot_goes_from_the_kit_to_the_ladder_and_a_human_seat(league, docker_client, tmp_path,
                                                                           language):
    from arena.langs.built import read_mark
    from arena.sandbox.docker.engine import default_image
    from arena.sandbox.languages import build_language_image

    build_language_image(docker_client, language, default_image())  # once per machine
    steps = Steps(language)
    name = f"{language}-journey"
    url, registry = league.url, league.registry

    # A new bot from the kit, played locally (in Docker, as its README says).
    arena("new", name, "--language", language, cwd=tmp_path)
    bot = tmp_path / name
    steps.done("new")
    said = arena("match", "3up3down", name, str(RANDOM), "--games", "2", "--sandbox", "docker", cwd=tmp_path)
    assert any(line.startswith(name) for line in said), said
    if language in COMPILED:
        assert (bot / "build" / ".arena-built").is_file()  # built by the match: it travels no further
    steps.done("match")

    # An account, then the upload: checked, built, smoke-tested, accepted.
    added = arena("authors", "add", f"{language}-author", "--registry", str(registry), cwd=tmp_path)
    token = next(word for line in added for word in line.split() if re.fullmatch(r"arena_[0-9a-f]{10}_\S+", word))
    said = arena("submit", name, "--to", url, "--league", "x", "--wait-s", "5", cwd=tmp_path, token=token)
    uploaded = re.match(r"uploaded (\d+) KB: submission \w+ \(" + re.escape(name) + r" 1\.0\)", said[0])
    assert uploaded and int(uploaded.group(1)) < 200, said  # the sources only, never build/
    states = [line.strip() for line in said[1:-2] if line.startswith("  ")]
    assert states[-2:] == ["smoke match", "accepted"] and ("building" in states) == (language in COMPILED), said
    assert said[-2].startswith(f"accepted: {name}@1.0 (sha256 "), said
    v1 = registry / name / "1.0"
    mark = (v1 / "build" / ".arena-built") if language in COMPILED else None
    built = (mark.read_bytes(), mark.stat().st_mtime_ns) if mark else None
    steps.done("submit")

    # The league takes it in and plays it: a few games, over the API and on its page.
    first = until(f"{name}@1.0's games", lambda: (s := standing(url, name)).get("games", 0) >= 3 and s)
    assert (first["joined"], first["bot"], first["status"]) == (True, f"{name}@1.0", "active"), first
    page = until(f"{name}@1.0's page", lambda: (text := bot_page(url, f"{name}@1.0")) and "played in" in text and text)
    assert f"{name}@1.0" in page and "suspended" not in page
    if mark:  # built once, at validation: the league played the registry's build, untouched
        assert read_mark(v1)["where"].startswith("docker ") and (mark.read_bytes(), mark.stat().st_mtime_ns) == built
    steps.done("league plays v1")

    # Version 2: the league retires 1.0 and plays 2.0.
    toml = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(toml.replace('version = "1.0"', 'version = "2.0"'))
    said = arena("submit", name, "--to", url, cwd=tmp_path, token=token)
    assert said[-1].startswith(f"accepted: {name}@2.0 (sha256 "), said
    second = until(f"{name}@2.0's games",
                   lambda: (s := standing(url, name)).get("bot") == f"{name}@2.0" and s.get("games", 0) >= 1 and s)
    assert second["status"] == "active", second
    retired = until(f"{name}@1.0 retired on its page", lambda: "retired" in (text := bot_page(url, f"{name}@1.0"))
                    and text)
    assert f"replaced by {name}@2.0" in retired or "retired: not matched from batch" in retired
    steps.done("v2 replaces v1")

    # One game against the ladder's version in the human seat, over the WebSocket.
    key = play_one_game(url, token, name)
    from arena.store.db import Store

    with Store.open(league.root / "human-games") as store:
        played = store.game_result(key)
    assert f"human:{language}-author" in played.seats and any(seat.startswith(name) for seat in played.seats)
    steps.done("human game")

    # What the door says of it: each submission, accepted; the bot's versions; the page.
    headers = {"Authorization": f"Bearer {token}"}
    rows = httpx.get(url + "api/submissions", headers=headers, timeout=30).json()["submissions"]
    assert [(row["version"], row["state"], row["bot"]) for row in rows] == [
        ("2.0", "accepted", f"{name}@2.0"), ("1.0", "accepted", f"{name}@1.0")]
    public = httpx.get(url + f"api/bots/{name}", timeout=30).json()
    assert [version["version"] for version in public["versions"]] == ["1.0", "2.0"]
    assert public["owner"] == f"{language}-author" and public["standing"]["bot"] == f"{name}@2.0"
    assert httpx.get(url + "door/", timeout=30).status_code == 200
    steps.done("door")
    print(steps.say())
