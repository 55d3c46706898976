"""The Python bot helper, `bots/arena_bot.py`, for the tests that drive it directly: it
lives outside the arena package (the example bots carry copies of it), so it is loaded
from its file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HELPER = Path(__file__).resolve().parent.parent / "bots" / "arena_bot.py"


def _load():
    if "arena_bot" in sys.modules and Path(sys.modules["arena_bot"].__file__ or "") == HELPER:
        return sys.modules["arena_bot"]
    spec = importlib.util.spec_from_file_location("arena_bot", HELPER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


arena_bot = _load()
