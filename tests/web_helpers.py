"""Helpers of the served arena's tests: a server with the authors' door on a loopback port
(uvicorn in a thread, port 0), bot folders, archives."""

from __future__ import annotations

import contextlib
import io
import tarfile
import time
from pathlib import Path

from arena.web.authors import Book
from arena.cli.authors import serve_door
from tests.bot_folders import RANDOM, random_bot

ROOT = Path(__file__).resolve().parent.parent


def bot_folder(where: Path, name: str, version: str = "1.0", *, games=("3up3down",), extra: str = "") -> Path:
    """A copy of bots/random named `name` (plays `games`); `extra` is added to bot.py's start."""
    listed = ", ".join(f'"{game}"' for game in games)
    folder = random_bot(where / f"{name}-{version}", name, version, games=f"[{listed}]")
    if extra:
        source = (folder / "bot.py").read_text()
        (folder / "bot.py").write_text(extra + "\n" + source)
    return folder


def files_at(folder: Path, files: dict[str, str | bytes]) -> Path:
    """`folder` holding `files` (each path relative to it: text or bytes), folders made as needed."""
    for relative, content in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (folder / relative).write_bytes(content)
        else:
            (folder / relative).write_text(content)
    return folder


def tar_of(entries) -> bytes:  # noqa: ANN001
    """A .tar.gz of (TarInfo, bytes or None) pairs, written as given (hostile ones too)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in entries:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return buffer.getvalue()


def tar_file(name: str, data: bytes, **fields) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.mode = 0o644
    for key, value in fields.items():
        setattr(info, key, value)
    return info, data


@contextlib.contextmanager
def door_server(tmp_path: Path, sandbox: str = "local", **upload_limits):
    """(server, door, registry) with the door on 127.0.0.1:<free port>, validating in the
    local sandbox (said explicitly, as the organiser must) unless `sandbox` says docker."""
    registry = tmp_path / "registry"
    registry.mkdir(exist_ok=True)
    server, door = serve_door(
        tmp_path / "league" / "site", registry=registry, host="127.0.0.1", port=0, league_dir=tmp_path / "league",
        validate_sandbox=sandbox, upload_limits=upload_limits,
    )
    door.start()
    server.start()
    try:
        yield server, door, registry
    finally:
        server.shutdown()
        door.stop()


def token_for(registry: Path, name: str, organiser: bool = False) -> str:
    return Book(registry).add(name, organiser)


def leftovers(registry: Path, within_s: float = 10.0) -> list[str]:
    """What an upload left behind: anything in quarantine, any staging folder. The worker
    publishes a submission's end (accepted, refused) before it removes its quarantine
    folder, so a client that saw the end may still see the folder for a moment: what is
    there after `within_s` is left behind."""
    deadline = time.monotonic() + within_s
    while True:
        found = [str(p.relative_to(registry)) for p in (registry / ".door" / "quarantine").glob("*")]
        found += [str(p.relative_to(registry)) for p in registry.glob(".incoming-*")]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def states_seen(lines: list[str]) -> list[str]:
    """The states `arena submit --to` printed between its "uploaded" and its last line, in
    order, less a first "queued": its first poll sees that state only when no worker has
    taken the upload yet (a busy machine), and what a test checks is what comes after."""
    states = [line.strip() for line in lines[1:-1]]
    return states[1:] if states[:1] == ["queued"] else states


# A folder bot that exits with code 3 at its fourth decision of every game (a CRASH forfeit).
CRASHER = """import sys

import arena_bot

count = 0


def decide(observation, legal_actions, ctx):
    global count
    count += 1
    if count == 4:
        print("giving up: this hand makes no sense to me", file=sys.stderr, flush=True)
        sys.exit(3)
    return ctx.rng.randrange(len(legal_actions))


if __name__ == "__main__":
    arena_bot.run(decide, name="crasher", version="1")
"""


def ladder_with_three_states(base: Path) -> Path:
    """A league (in `base`, where door_server looks) whose registry holds ann's `crashy@1`,
    suspended after two forfeits in a row, and `steady` 1.0 then 2.0: 1.0 retired when 2.0
    joined, 2.0 playing; three in-process bots fill the tables."""
    import shutil

    from arena.league.ladder import run_league
    from tests.league.test_league import NAMES, config, in_process
    from tests.league.test_league import bot_folder as league_bot

    registry = base / "registry"
    crashy = registry / "crashy" / "1"
    shutil.copytree(RANDOM, crashy, ignore=shutil.ignore_patterns("__pycache__"))
    (crashy / "bot.py").write_text(CRASHER)
    (crashy / "bot.toml").write_text('name = "crashy"\nversion = "1"\ncommand = ["python3", "bot.py"]\n'
                                     'games = ["3up3down"]\n')
    league_bot(registry / "steady", "steady").rename(registry / "steady" / "1.0")
    run_league(config(base / "league", registry, games=16, suspend_after=2, batch=2), in_process=in_process(NAMES[:3]))
    league_bot(registry / "steady", "steady", "2.0").rename(registry / "steady" / "2.0")
    run_league(config(base / "league", registry, games=30, suspend_after=2, batch=2), in_process=in_process(NAMES[:3]))
    return registry
