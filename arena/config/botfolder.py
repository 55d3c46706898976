"""Bot folders: a folder with a `bot.toml` manifest, checked with one message per mistake.

    name = "random"                      # letters, digits, '.', '_', '-'; at most 64
    version = "1.0"                      # the same pattern (it names the registry's folder)
    command = ["python3", "bot.py"]      # run in the bot's folder (/bot in Docker)
    games = ["3up3down", "three-thirteen"]
    dockerfile = "Dockerfile"            # optional: build the bot's own image from it
    language = "c"                       # optional: run in arena's image for it (c, cpp,
                                         # rust, go, java, node, python)
    build = ["make"]                     # optional: run in the sandbox before the bot
                                         # plays; only build/ is writable (BUILD_DIR)
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError
from arena.sandbox.base import BotSpec
from arena.sandbox.languages import LANGUAGES

MANIFEST = "bot.toml"
KEYS = ("name", "version", "command", "games", "dockerfile", "language", "build")
# Names and versions name folders of a registry (NAME/VERSION): starting with a letter or
# digit, so never "." or "..", and without "/".
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")


def shown_path(path: str | Path) -> str:
    """A path as it may be printed or stored: a name that is not UTF-8 with its bytes
    escaped (x\\xff.py, as `ls -b` shows it), any other as it is."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


class BotFolderError(ArenaError, ValueError):
    """A bot folder or its bot.toml is wrong; the message lists every mistake
    (`of_manifest`: the bot.toml's; else the folder's own, e.g. its name)."""

    def __init__(self, folder: Path, mistakes: list[str], *, of_manifest: bool = True):
        self.folder = folder
        self.mistakes = mistakes
        self.of_manifest = of_manifest
        listed = "\n".join(f"  - {mistake}" for mistake in mistakes)
        super().__init__(f"bot folder {shown_path(folder)}: {len(mistakes)} mistake(s):\n{listed}")

    def why(self) -> str:
        """Why the folder is not a bot, in a few words and its mistakes."""
        mistakes = "; ".join(self.mistakes)
        return f"its bot.toml is wrong: {mistakes}" if self.of_manifest else mistakes


@dataclass(frozen=True)
class BotManifest:
    """A checked bot.toml and the folder it came from."""

    folder: Path
    name: str
    version: str
    command: tuple[str, ...]
    games: tuple[str, ...]
    dockerfile: str | None = None
    language: str | None = None
    build: tuple[str, ...] = ()

    def plays(self, game: str) -> bool:
        """True if the bot says it plays `game`."""
        return game in self.games

    def spec(self, name: str | None = None) -> BotSpec:
        """What a sandbox needs to start this bot (optionally under another name)."""
        return BotSpec(
            name=name or self.name,
            folder=self.folder,
            command=self.command,
            dockerfile=self.dockerfile,
            language=self.language,
            build=self.build,
        )


# The registry when no --registry is given: this variable's folder, else ./bots.
REGISTRY_ENV = "ARENA_REGISTRY"


def default_registry() -> Path:
    """$ARENA_REGISTRY when set, else `./bots` in the working folder (made by the first
    submission); never a folder inside arena's installation."""
    chosen = os.environ.get(REGISTRY_ENV)
    return Path(chosen).expanduser().resolve() if chosen else Path("bots").resolve()


def registry_folders(registry: Path) -> list[Path]:
    """The bot folders of a registry, good or not: REGISTRY/NAME (a plain bot, like the
    examples) and REGISTRY/NAME/VERSION (a submitted one), each holding a bot.toml; hidden
    ones (a submission being checked, .incoming-*/bot) left out."""
    candidates = sorted(registry.glob("*/bot.toml")) + sorted(registry.glob("*/*/bot.toml"))
    return [
        path.parent for path in candidates
        if not any(part.startswith(".") for part in path.parent.relative_to(registry).parts)
    ]


def broken_folders(registry: Path) -> list[tuple[str, str]]:
    """A registry's bot folders that cannot join a league (their bot.toml is wrong, their
    name is not UTF-8): each one's path in the registry (never the registry's own place)
    and why."""
    if not registry.is_dir():
        return []
    broken = []
    for folder in registry_folders(registry):
        try:
            load_bot(folder)
        except BotFolderError as error:
            broken.append((shown_path(folder.relative_to(registry).as_posix()), error.why()))
    return broken


def load_bot(folder: str | Path, check_games: bool = False) -> BotManifest:
    """Read and check `folder/bot.toml`; BotFolderError lists every mistake found (with
    `check_games`, a game this arena does not know is one of them)."""
    folder = Path(folder).resolve()
    if shown_path(folder) != str(folder):  # it could be neither stored nor printed
        raise BotFolderError(folder, ["its name is not UTF-8: rename the folder"], of_manifest=False)
    if not folder.is_dir():
        raise BotFolderError(folder, ["is not a folder (a bot is a folder with a bot.toml)"])
    path = folder / MANIFEST
    if path.is_symlink():  # read it, and a link to /etc/shadow would be "not valid TOML" and more
        raise BotFolderError(folder, [f"{MANIFEST} is a symbolic link; put the file itself in the folder"])
    if not path.is_file():
        raise BotFolderError(folder, [f"has no {MANIFEST} (needs: name, version, command, games)"])
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BotFolderError(folder, [f"{MANIFEST} is not valid TOML: {error}"]) from None
    return check_manifest(folder, data, check_games)


def check_manifest(folder: Path, data: dict, check_games: bool = False) -> BotManifest:
    """Check a parsed bot.toml; BotFolderError lists every mistake found, all at once."""
    mistakes: list[str] = []
    for key in data:
        if key not in KEYS:
            mistakes.append(f"unknown key {key!r}; allowed keys: {', '.join(KEYS)}")

    name = _checked_name(data, "name", "my-bot", mistakes)
    version = _checked_name(data, "version", "1.0", mistakes)

    command: tuple[str, ...] = ()
    raw_command = data.get("command")
    if raw_command is None:
        mistakes.append("'command' is missing (e.g. command = [\"python3\", \"bot.py\"])")
    elif isinstance(raw_command, str):
        try:
            command = tuple(shlex.split(raw_command))
        except ValueError as error:
            mistakes.append(f"'command' cannot be split into words: {error}")
        if not command and raw_command.strip() == "":
            mistakes.append("'command' is empty")
    elif isinstance(raw_command, list) and raw_command and all(
        isinstance(word, str) and word for word in raw_command
    ):
        command = tuple(raw_command)
    else:
        mistakes.append(f"'command' is {raw_command!r}; allowed: a non-empty list of non-empty strings, or a string")

    games: tuple[str, ...] = ()
    raw_games = data.get("games")
    if raw_games is None:
        mistakes.append("'games' is missing (e.g. games = [\"3up3down\"])")
    elif isinstance(raw_games, list) and raw_games and all(
        isinstance(game, str) and game for game in raw_games
    ):
        games = tuple(raw_games)
        if check_games:
            from engine.api import GameError
            from engine.registry import get_game

            for game in games:
                try:
                    get_game(game)
                except GameError as error:
                    mistakes.append(f"bot.toml games: {error}")
    else:
        mistakes.append(f"'games' is {raw_games!r}; allowed: a non-empty list of game names")

    dockerfile = data.get("dockerfile")
    if dockerfile is not None:
        if not isinstance(dockerfile, str) or not dockerfile:
            mistakes.append(f"'dockerfile' is {dockerfile!r}; allowed: a file name inside the bot folder")
        else:
            target = (folder / dockerfile).resolve()
            if not target.is_relative_to(folder):
                mistakes.append(f"'dockerfile' {dockerfile!r} points outside the bot folder")
            elif not target.is_file():
                mistakes.append(f"'dockerfile' {dockerfile!r} does not exist in the bot folder")

    language = data.get("language")
    if language is not None and language not in LANGUAGES:
        mistakes.append(f"'language' is {language!r}; allowed: {', '.join(LANGUAGES)}")
    build = _words(data.get("build"), "build", "[\"make\"]", mistakes)
    if build and dockerfile is not None:
        mistakes.append("'build' and 'dockerfile' together: put the build in the Dockerfile's RUN steps")

    if mistakes:
        raise BotFolderError(folder, mistakes)
    return BotManifest(
        folder=folder,
        name=name,
        version=version,
        command=command,
        games=games,
        dockerfile=dockerfile,
        language=language,
        build=build,
    )


def _words(raw, key: str, example: str, mistakes: list[str]) -> tuple[str, ...]:
    """An optional command: a list of non-empty strings, or a string split like a shell's."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        try:
            words = tuple(shlex.split(raw))
        except ValueError as error:
            mistakes.append(f"'{key}' cannot be split into words: {error}")
            return ()
        if not words:
            mistakes.append(f"'{key}' is empty (e.g. {key} = {example})")
        return words
    if isinstance(raw, list) and raw and all(isinstance(word, str) and word for word in raw):
        return tuple(raw)
    mistakes.append(f"'{key}' is {raw!r}; allowed: a non-empty list of non-empty strings, or a string")
    return ()


def _checked_name(data: dict, key: str, example: str, mistakes: list[str]) -> object:
    """bot.toml's `key` (a name or a version), with what is wrong with it added to mistakes."""
    value = data.get(key)
    if value is None:
        mistakes.append(f"'{key}' is missing (e.g. {key} = \"{example}\")")
    elif not isinstance(value, str) or not _NAME.match(value):
        mistakes.append(
            f"'{key}' is {value!r}; allowed: 1-64 letters, digits, '.', '_' or '-', starting with a letter or "
            f"digit (e.g. \"{example}\")"
        )
    return value
