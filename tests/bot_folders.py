"""Bot folders for tests, made one way: copies of an example or test bot under other names,
a copy of the random bot with a bot.toml of its own, a bot written from its command line
(and a few lines of Python), and the paths they come from."""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Iterable
from pathlib import Path

from arena.sandbox.base import BotSpec

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "bots"  # the example bots
TEST_BOTS = ROOT / "tests" / "bots"  # the test bots (hostile, counting, probing)
RANDOM = BOTS / "random"


def renamed_copy(source: Path, folder: Path, name: str, version: str | None = None) -> Path:
    """A copy of the bot in `source` at `folder`, its bot.toml naming it `name` (and `version`)."""
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = re.sub(r"^name = .*$", f'name = "{name}"', (folder / "bot.toml").read_text(), count=1, flags=re.M)
    if version is not None:
        toml = re.sub(r"^version = .*$", f'version = "{version}"', toml, count=1, flags=re.M)
    (folder / "bot.toml").write_text(toml)
    return folder


def renamed_copies(base: Path, bots: Iterable[tuple[str, str]]) -> list[Path]:
    """base/NAME for each (NAME, example bot) pair: `renamed_copy` of bots/EXAMPLE."""
    return [renamed_copy(BOTS / source, base / name, name) for name, source in bots]


def random_bot(folder: Path, name: str, version: str = "1.0", *, games: str = '["3up3down"]',
               source: Path = RANDOM) -> Path:
    """A copy of the random bot (or `source`) at `folder` with a bot.toml of its own:
    `name`, `version`, `python3 bot.py`, `games` (TOML)."""
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "{version}"\ncommand = ["python3", "bot.py"]\ngames = {games}\n'
    )
    return folder


def written_bot(folder: Path, command: str, code: str = "", *, version: str = "1.0", games: str = '["3up3down"]') -> Path:
    """A bot folder named as `folder` is: bot.toml with `command` (TOML) and `games`, and
    bot.py = `code` when given; readable by everyone (the local sandbox runs bots as nobody
    under root)."""
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(
        f'name = "{folder.name}"\nversion = "{version}"\ncommand = {command}\ngames = {games}\n'
    )
    if code:
        (folder / "bot.py").write_text(textwrap.dedent(code))
    folder.chmod(0o755)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


def code_bot(folder: Path, code: str, name: str = "probe", dockerfile: str | None = None, **files: str) -> BotSpec:
    """A bot that runs bot.py = `code` (plus `files`, and its own Dockerfile when given),
    readable by the container's user and by nobody (the local sandbox's user under root)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    (folder / "bot.py").write_text(textwrap.dedent(code))
    for filename, content in files.items():
        (folder / filename).write_text(textwrap.dedent(content))
    if dockerfile is not None:
        (folder / "Dockerfile").write_text(dockerfile)
    for path in folder.iterdir():
        path.chmod(0o644)
    return BotSpec(name=name, folder=folder, command=("python3", "bot.py"),
                   dockerfile=None if dockerfile is None else "Dockerfile")
