"""Starter kits (`arena new BOT_DIR --language L`): a complete bot per language, copied
from arena's kits/ folder (shipped in the wheel like bots/), its bot.toml named after
BOT_DIR. Each kit plays both games: the protocol loop, JSON with a library its image
has, a legal random move, one function for a strategy, and for Three Thirteen the
hand's least deadwood."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from arena.errors import ArenaError
from arena.resources import shipped

KIT_NAMES = {"c": "c", "cpp": "cpp", "rust": "rust", "go": "go", "java": "java", "node": "node",
             "javascript": "node", "js": "node", "python": "python"}
_NAME_LINE = re.compile(r'^name = ".*"$', re.M)
_BAD_NAME = re.compile(r"[^A-Za-z0-9._-]")


class KitError(ArenaError, ValueError):
    """A kit cannot be copied as asked (one line)."""


def kits_dir() -> Path:
    """arena's kits/ folder (installed or in the checkout)."""
    return shipped("kits")


def available() -> list[str]:
    """The languages that have a kit."""
    folder = kits_dir()
    return sorted(name for name in set(KIT_NAMES.values()) if (folder / name / "bot.toml").is_file())


def new_bot(target: str | Path, language: str) -> Path:
    """Copy the kit of `language` to `target` (which must not exist, or be empty); its
    bot.toml's name, and the name its source says in `ready`, become the folder's name.
    The folder made."""
    kit = KIT_NAMES.get(language.lower())
    if kit is None or kit not in available():
        raise KitError(f"no starter kit for {language!r}; kits: {', '.join(available())}")
    target = Path(target).expanduser().resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise KitError(f"{target} already exists and is not an empty folder; choose a new folder")
    name = _BAD_NAME.sub("-", target.name).strip("._-")[:64] or f"{kit}-bot"
    shutil.copytree(kits_dir() / kit, target, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("build", "target", "__pycache__", "*.class"))
    manifest = target / "bot.toml"
    manifest.write_text(_NAME_LINE.sub(f'name = "{name}"', manifest.read_text(), count=1))
    # The kit's source says its name in `ready` ("rust-kit"): the same name as bot.toml's.
    # A name is letters, digits, '.', '_' and '-': a string literal in every kit's language.
    for path in target.rglob("*"):
        if path.is_file() and path.name not in ("bot.toml", "README.md"):
            source = path.read_text(errors="surrogateescape")
            if f'"{kit}-kit"' in source:
                path.write_text(source.replace(f'"{kit}-kit"', f'"{name}"'), errors="surrogateescape")
    return target
