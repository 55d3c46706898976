"""Where the shipped folders (`templates/`, example `bots/`) are, installed or not."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def shipped(name: str) -> Path:
    """The folder `name` ("templates", "bots" or "kits"): inside the wheel, else the checkout's top."""
    for candidate in (_PACKAGE / "_shipped" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"arena's {name}/ folder is missing from this installation")


def templates_dir() -> Path:
    """The jinja2 templates of the site."""
    return shipped("templates")


def bots_dir() -> Path:
    """The example bots (also the default registry)."""
    return shipped("bots")
