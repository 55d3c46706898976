"""No value a bot sets in one game is read by a later or concurrent game through the page
cache of its folder (issue 33, item 1).

The 'page-cache' test bot (tests/bots/page-cache) writes a 192-bit message at the start of
each game into which pages of `padding.bin` (a file of its folder) are cached, and reads
the message left there before it. On a bot folder shared by all its processes (every
sandbox before the fix) each game's process read the message of the game before: 192
bits a game. Each process or container now reads a private copy of the folder
(arena.sandbox.copies), made afresh for each game: nothing is carried, whether the copies
live on a tmpfs (the default: the state cannot even be read there) or on a disk (where
it can, so only the privacy of the copy keeps the message in).

Duplicate tournaments of 3UP 3DOWN, 4 games: per-game processes (the local sandbox's
warm spares; warm containers) and per-slot processes (one per seat rotation, alive at the
same time), locally and in Docker, cold and warm. Docker cases skip without an engine
unless ARENA_REQUIRE_DOCKER=1.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena.play.tournament import TournamentConfig, run_tournament
from arena.sandbox import get_sandbox
from arena.sandbox.docker import DockerSandbox
from tests.needs import need_runsc
from tests.sandbox_helpers import RecordingSandbox

BOTS = Path(__file__).parents[1] / "bots"
EXAMPLES = Path(__file__).parents[2] / "bots"
LIMITS = {"startup_s": 20.0, "decision_s": 2.0, "time_bank_s": 5.0, "memory_mb": 256}
PAGES = 256
BITS = 192  # the payload of one message
GAMES = 4


class Recording(RecordingSandbox):
    """A sandbox that keeps every process it starts, to read each one's stderr at the end."""

    def carried_bits(self) -> tuple[int, int]:
        """(bits read by a process from a message another process put, games checked)."""
        said = [
            (number, line.split())
            for number, (name, process) in enumerate(self.processes)
            if name == "page-cache"
            for line in process.stderr_text().splitlines()
            if line.startswith("PAGE-CACHE")
        ]
        assert not [words for _, words in said if words[1] == "error"], said
        put = {words[2]: number for number, words in said if words[1] == "put"}
        got = [(number, words[2]) for number, words in said if words[1] == "got"]
        checked = sum(1 for _, words in said if words[1] in ("got", "none"))
        return sum(BITS for number, message in got if put.get(message, number) != number), checked


def _bots(into: Path) -> Path:
    """The page-cache bot with its padding (written through to the disk, so that its pages
    can be dropped) and the random example bot beside it, readable by user nobody."""
    into.mkdir(mode=0o755)
    bot = into / "page-cache"
    shutil.copytree(BOTS / "page-cache", bot, ignore=shutil.ignore_patterns("__pycache__"))
    with open(bot / "padding.bin", "wb") as padding:
        padding.write(os.urandom(PAGES * 4096))
        padding.flush()
        os.fsync(padding.fileno())
    shutil.copytree(EXAMPLES / "random", into / "random", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [bot, into / "random", *bot.rglob("*"), *(into / "random").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return bot


def _copies_on(where: str, tmp_path: Path, monkeypatch) -> None:
    """Copies on the default tmpfs, or on a disk folder, where the page cache can be read."""
    if where == "disk":
        import arena.sandbox.copies as copies

        folder = tmp_path / "copies"
        monkeypatch.setattr(copies, "COPIES", folder)


def _play(box, tmp_path: Path, bot_process: str) -> Recording:
    recording = Recording(box)
    bots = tmp_path / "bots"
    bot = _bots(bots)
    config = TournamentConfig(
        game="3up3down", seats=2, duplicate=True, cycles=2, bots=[str(bot), str(bots / "random")],
        bot_process=bot_process, output=str(tmp_path / "out"), limits=LIMITS,
    )
    try:
        run_tournament(config, sandbox=recording, report=False)
    finally:
        box.close()
    return recording


def _docker(warm: bool):
    box = DockerSandbox(warm=warm)
    if warm and box.warm_reason(box.image) is not None:
        pytest.skip(f"warm slots start cold here: {box.warm_reason(box.image)}")
    return box


@pytest.mark.parametrize("where", ["tmpfs", "disk"])
@pytest.mark.parametrize("bot_process", ["per-game", "per-slot"])
def test_a_local_bot_carries_nothing_through_the_page_cache_of_its_folder(tmp_path, monkeypatch, where, bot_process):
    _copies_on(where, tmp_path, monkeypatch)
    box = get_sandbox("local", warn=False)
    if not box.isolate:
        pytest.skip("without namespaces (not root) a local bot reads its folder itself")
    recording = _play(box, tmp_path, bot_process)
    assert recording.carried_bits() == (0, GAMES)
    assert len(recording.processes) == (2 * GAMES if bot_process == "per-game" else 4)


@pytest.mark.parametrize("where", ["tmpfs", "disk"])
@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_docker_bot_carries_nothing_through_the_page_cache_of_its_folder(docker_engine, tmp_path, monkeypatch, where,
                                                                           warm):
    _copies_on(where, tmp_path, monkeypatch)
    recording = _play(_docker(warm), tmp_path, "per-game")
    assert recording.carried_bits() == (0, GAMES)


@pytest.mark.parametrize("where", ["tmpfs", "disk"])
def test_a_docker_bot_under_runsc_carries_nothing_through_the_page_cache_of_its_folder(docker_engine, tmp_path,
                                                                                       monkeypatch, where):
    # gVisor reads the folder through the host (its gofer): the host's page cache of the
    # private copy is the one a bot could mark, and each container has its own copy. The
    # bot's probe, preadv2(RWF_NOWAIT), answers ENOTSUP under gVisor's kernel (a "none"
    # line: checked, nothing read), so the channel is shut twice there.
    need_runsc()
    _copies_on(where, tmp_path, monkeypatch)
    recording = _play(DockerSandbox(runtime="runsc"), tmp_path, "per-game")
    assert recording.carried_bits() == (0, GAMES)


def test_a_docker_bot_per_slot_carries_nothing_between_its_concurrent_processes(docker_engine, tmp_path):
    recording = _play(_docker(True), tmp_path, "per-slot")
    assert recording.carried_bits() == (0, GAMES)


def test_the_copies_are_gone_after_the_run(tmp_path, monkeypatch):
    _copies_on("disk", tmp_path, monkeypatch)
    box = get_sandbox("local", warn=False)
    if not box.isolate:
        pytest.skip("without namespaces (not root) a local bot reads its folder itself")
    _play(box, tmp_path, "per-game")
    assert os.listdir(tmp_path / "copies") == []


def test_the_copies_of_a_run_that_was_killed_are_removed_by_the_next_and_a_live_runs_kept(tmp_path, monkeypatch):
    import arena.sandbox.copies as copies

    monkeypatch.setattr(copies, "COPIES", tmp_path / "copies")
    live = copies.FolderCopy(BOTS / "steady")
    dead = tmp_path / "copies" / "999999999-12345-0123456789ab"  # no such process
    (dead / "sub").mkdir(parents=True)
    assert copies.remove_leftovers() == 1
    assert os.listdir(tmp_path / "copies") == [live.path.name]
    assert sorted(os.listdir(live.path)) == sorted(os.listdir(BOTS / "steady"))
    live.remove()
    assert os.listdir(tmp_path / "copies") == []
