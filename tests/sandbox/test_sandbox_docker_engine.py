"""The Docker engine's own failures and delays are never a bot's: an engine that cannot be
reached, lacks the base image, dies, stalls or freezes mid-match, or that another run
empties while arena lists it, is a SandboxError (the run stops, no bot charged, a resume
completes it) or changes nothing at all. Split from tests/sandbox/test_sandbox_docker.py, whose
fixtures and bots these share.

Tests that need an engine skip when none is reachable, unless ARENA_REQUIRE_DOCKER=1.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from arena.faults import BotFault, Reason, SandboxError
from arena.sandbox import get_sandbox
from arena.sandbox.docker import LABEL, OWNER_LABEL, DockerSandbox, default_image
from tests.sandbox_helpers import exists
from tests.sandbox.test_sandbox_docker import (
    ECHO,
    LIMITS,
    REPO,
    TIMING,
    make_bot,
    owner_gone_for_this_test_only,
)


def test_unreachable_engine_is_a_sandbox_error(tmp_path, closing):
    bot = make_bot(tmp_path / "echo", ECHO)
    with pytest.raises(SandboxError, match="not reachable"):
        closing(DockerSandbox(base_url=f"unix://{tmp_path}/no-engine.sock")).start(bot, LIMITS)
    with pytest.raises(SandboxError, match="not reachable"):
        get_sandbox("docker", base_url="tcp://127.0.0.1:9").cleanup_leftovers()


def test_missing_base_image_is_a_sandbox_error_that_says_how_to_get_one(engine, tmp_path, closing):
    bot = make_bot(tmp_path / "echo", ECHO)
    with pytest.raises(SandboxError, match=r"docker-up.*python:3\.12-slim"):
        closing(DockerSandbox(image="arena-no-such-image:0")).start(bot, LIMITS)


class EngineProxy:
    """A Unix-socket relay to the real engine that can be cut, like a daemon dying, or
    frozen (nothing moves either way until it thaws), like a daemon stopped with SIGSTOP."""

    def __init__(self, path: Path, target: str = "/var/run/docker.sock"):
        self.path, self.target = path, target
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(str(path))
        self.listener.listen(16)
        self.sockets: list[socket.socket] = []
        self.thawed = threading.Event()
        self.thawed.set()
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self):
        self.thawed.clear()

    def thaw(self):
        self.thawed.set()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.target)
            self.sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._relay, args=(source, sink), daemon=True).start()

    def _relay(self, source, sink):
        try:
            while chunk := source.recv(65536):
                self.thawed.wait()
                sink.sendall(chunk)
        except OSError:
            pass
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def cut(self):
        """The engine gone: every connection through the relay dropped (also its end)."""
        self.listener.close()
        self.path.unlink(missing_ok=True)
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    close = cut


@pytest.fixture
def closing():
    """Keeps what a test opens (sandboxes, engine clients, proxies) and closes it when the
    test ends, so that the worker's open descriptors are what they were before: an engine
    client holds a connection per thread that used it until it is closed."""
    held = []
    yield lambda thing: held.append(thing) or thing
    for thing in reversed(held):
        with contextlib.suppress(Exception):  # a cut engine's sandbox may fail to close: done
            thing.close()


@pytest.mark.parametrize("stdio", ["fifo", "attach"])
def test_engine_failing_mid_match_is_a_sandbox_error_not_the_bots_fault(engine, tmp_path, stdio, closing):
    proxy = closing(EngineProxy(tmp_path / "engine.sock"))
    sandbox = closing(DockerSandbox(base_url=f"unix://{proxy.path}", stdio=stdio))
    process = sandbox.start(make_bot(tmp_path / "echo", ECHO), LIMITS)
    try:
        process.send_line(b"one")
        assert process.receive_line(LIMITS.startup_s) == b"one"
        proxy.cut()
        began = time.monotonic()
        with pytest.raises(SandboxError, match="engine failed"):
            process.receive_line(5)  # not a TIMEOUT of the bot: the engine is gone
        assert time.monotonic() - began < 4
        with pytest.raises(SandboxError):
            process.close()
    finally:
        engine.containers.get(process.id).remove(force=True)


# --- the engine's time and failures are never a bot's ----------------------------------------

RANDOM = REPO / "bots" / "random"


def engine_client(api_class):
    """A docker SDK client whose low-level calls go through `api_class` (a docker.APIClient)."""
    import docker

    client = docker.DockerClient.__new__(docker.DockerClient)
    client.api = api_class(timeout=30, **docker.utils.kwargs_from_env())
    return client  # the test's to close (fixture closing): a DockerSandbox closes only its own


def random_copies(folder: Path, names: list[str]) -> list[Path]:
    """Copies of bots/random under other names (deterministic: seeded by `hello`), readable by nobody."""
    folders = []
    for name in names:
        target = folder / name
        shutil.copytree(RANDOM, target, ignore=shutil.ignore_patterns("__pycache__"))
        toml = target / "bot.toml"
        toml.write_text(toml.read_text().replace('name = "random"', f'name = "{name}"'))
        for path in [folder, target, *target.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        folders.append(target)
    return folders


def tournament(out: Path, bots: list[Path], **limits: float):
    from arena.play.tournament import validate_config

    return validate_config({
        "game": "3up3down", "seats": 3, "bots": [str(b) for b in bots], "seed": 11,
        "rules": {"max_turns": 60}, "limits": limits, "output": str(out), "jobs": 2, "sandbox": "docker",
    })


def stored_results(out: Path) -> dict:
    """Every stored game: key -> its whole record (seats, places, scores, incidents, replay)."""
    from arena.store.db import Store

    with Store.open(out) as store:
        return {game.key: store.game_result(game.key).model_dump(exclude=TIMING) for game in store.games("done")}


def test_an_engine_slow_to_create_and_start_charges_no_bot_and_changes_no_result(engine, tmp_path, closing):
    import docker

    from arena.play.tournament import run_tournament

    class SlowEngine(docker.APIClient):
        """An engine that takes 1.6 s for each create and each start (a stalled daemon)."""

        def create_container(self, *args, **kwargs):
            time.sleep(1.6)
            return super().create_container(*args, **kwargs)

        def start(self, *args, **kwargs):
            time.sleep(1.6)
            return super().start(*args, **kwargs)

    bots = random_copies(tmp_path / "bots", ["ann", "bob", "cat", "dan"])
    # 3.2 s of engine work per container, past the start-up limit of 3 s
    slow = run_tournament(
        tournament(tmp_path / "slow", bots, startup_s=3),
        sandbox=DockerSandbox(client=closing(engine_client(SlowEngine))), report=False,
    )
    calm = run_tournament(tournament(tmp_path / "calm", bots, startup_s=3), sandbox=DockerSandbox(), report=False)
    assert slow.done == calm.done == 4
    results = stored_results(tmp_path / "slow")
    assert [record["incidents"] for record in results.values()] == [[]] * 4
    assert results == stored_results(tmp_path / "calm")


@pytest.mark.parametrize("design", ["cold", "warm-launcher"])
def test_a_failing_engine_stops_the_run_charging_no_bot_and_a_resume_completes_it(engine, tmp_path, design, closing):
    import docker

    from arena.play.tournament import run_tournament

    warm_start = design != "cold"

    class SickEngine(docker.APIClient):
        """Cold: an engine that creates 7 containers (the image probe and two games of three),
        then fails. Warm (the launcher asks the engine nothing once a slot's container is
        made): one that creates the probe and the first game's three slots' containers,
        then fails, so the second game (its newcomer's slot) cannot start."""

        creates = 0

        def create_container(self, *args, **kwargs):
            SickEngine.creates += 1
            if SickEngine.creates > (7 if design == "cold" else 4):
                raise docker.errors.APIError("500 Server Error: the engine is sick")
            return super().create_container(*args, **kwargs)

    def sandbox(client=None) -> DockerSandbox:
        return DockerSandbox(client=client) if client else DockerSandbox()

    bots = random_copies(tmp_path / "bots", ["ann", "bob", "cat", "dan"])
    settings = tournament(tmp_path / "out", bots, startup_s=20).model_copy(
        update={"jobs": 1, "warm_start": warm_start}
    )
    with pytest.raises(SandboxError) as stopped:
        run_tournament(settings, sandbox=sandbox(closing(engine_client(SickEngine))), report=False)
    assert "the engine is sick" in str(stopped.value)
    assert str(stopped.value).endswith(
        "; the game was not stored and no bot was charged; every finished game is stored: "
        "run the same command to resume"
    )
    first = stored_results(tmp_path / "out")
    stored = 1 if design == "warm-launcher" else 2
    assert len(first) == stored and [record["incidents"] for record in first.values()] == [[]] * stored
    resumed = run_tournament(settings, sandbox=sandbox(), report=False)
    assert (resumed.resumed, resumed.played, resumed.done) == (stored, 4 - stored, 4)
    run_tournament(
        tournament(tmp_path / "whole", bots, startup_s=20).model_copy(
            update={"jobs": 1, "warm_start": warm_start}
        ),
        sandbox=sandbox(), report=False,
    )
    assert stored_results(tmp_path / "out") == stored_results(tmp_path / "whole")


def test_a_frozen_engine_never_reaches_a_bot_over_pipes(engine, tmp_path, closing):
    proxy = closing(EngineProxy(tmp_path / "engine.sock"))
    sandbox = closing(DockerSandbox(base_url=f"unix://{proxy.path}", stdio="fifo"))
    process = sandbox.start(make_bot(tmp_path / "echo", ECHO), LIMITS)
    try:
        proxy.freeze()
        for n in range(3):  # stdin/stdout do not pass through the engine: nothing waits for it
            process.send_line(b"%d" % n)
            assert process.receive_line(2) == b"%d" % n
        with pytest.raises(BotFault) as fault:
            process.receive_line(0.3)  # the bot's own silence is still its own
        assert fault.value.reason is Reason.TIMEOUT
    finally:
        proxy.thaw()
        process.close()


def test_an_engine_frozen_at_a_decision_deadline_is_a_sandbox_error_over_the_attach_socket(engine, tmp_path, closing):
    proxy = closing(EngineProxy(tmp_path / "engine.sock"))
    sandbox = closing(DockerSandbox(base_url=f"unix://{proxy.path}", stdio="attach"))
    process = sandbox.start(make_bot(tmp_path / "echo", ECHO), LIMITS)
    try:
        process.send_line(b"one")
        assert process.receive_line(LIMITS.startup_s) == b"one"
        proxy.freeze()
        process.send_line(b"two")  # the engine holds the line: the bot cannot answer in time
        began = time.monotonic()
        with pytest.raises(SandboxError, match="did not answer a ping within 2 s"):
            process.receive_line(0.5)
        assert time.monotonic() - began < 4
        proxy.thaw()
        assert process.receive_line(5) == b"two"  # the bot had answered; the engine held it
        with pytest.raises(BotFault) as fault:
            process.receive_line(0.3)  # with the engine well, silence is the bot's own again
        assert fault.value.reason is Reason.TIMEOUT
    finally:
        proxy.thaw()
        process.close()


# --- the engine listed while other runs' containers come and go ------------------------------


def test_leftovers_are_cleaned_while_another_run_removes_containers_from_the_listing(engine, tmp_path, monkeypatch, closing):
    import docker

    gone = owner_gone_for_this_test_only(monkeypatch)
    ours = [
        engine.containers.create(default_image(), ["true"], network_mode="none", labels={LABEL: "docker", OWNER_LABEL: gone})
        for _ in range(2)
    ]
    others = [
        engine.containers.create(
            default_image(), ["true"], network_mode="none", labels={LABEL: "docker", OWNER_LABEL: "another-machine:1:1"}
        )
        for _ in range(2)
    ]

    class AnotherRunRemoves(docker.APIClient):
        """The engine as a listing sees it beside another run: what was listed is gone
        before it can be inspected (404) or removed (404)."""

        def containers(self, *args, **kwargs):
            listed = super().containers(*args, **kwargs)
            for container in [ours[1], *others]:
                super().remove_container(container.id, force=True)
            return listed

        def inspect_container(self, container):
            if container in {c.id for c in [ours[1], *others]}:
                raise docker.errors.NotFound(f"404 Client Error: No such container: {container}")
            return super().inspect_container(container)

    assert DockerSandbox(client=closing(engine_client(AnotherRunRemoves))).cleanup_leftovers() == 1
    for container in [*ours, *others]:
        assert not exists(engine, container.id)


@pytest.mark.parametrize("stdio", ["fifo", "attach"])
def test_a_container_removed_by_someone_else_is_gone_not_an_engine_failure(engine, stdio, tmp_path, closing):
    process = closing(DockerSandbox(stdio=stdio)).start(make_bot(tmp_path / "echo", ECHO), LIMITS)
    process.send_line(b"hi")
    assert process.receive_line(LIMITS.startup_s) == b"hi"
    engine.api.remove_container(process.id, force=True)
    assert process.close() is None
    assert process.close() is None
