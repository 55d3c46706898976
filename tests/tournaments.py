"""Tournaments for tests, set up one way: short 3UP 3DOWN games at tables of three, from
bot folders, validated as `arena run` validates a file (tests/play/ gives each file its seed);
and how many games a run in another process has stored so far."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from arena.play.tournament import TournamentConfig, validate_config

SHORT = {"max_turns": 60}  # short games: the tests are about where and how games run, not the game


def tournament_config(out: Path, bots: Iterable[Path], **settings) -> TournamentConfig:
    """The tournament of `bots` stored in `out`: 3UP 3DOWN, 3 seats, SHORT rules, then `settings`."""
    data = {"game": "3up3down", "seats": 3, "bots": [str(bot) for bot in bots], "rules": SHORT}
    data.update(settings)
    data["output"] = str(out)
    return validate_config(data)


def done_games(out: Path) -> int:
    """The games a tournament or league in another process has stored in `out` so far (read
    only; 0 before its store has its tables)."""
    try:
        with sqlite3.connect(f"file:{out / 'arena.sqlite'}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM games WHERE status = 'done'").fetchone()[0]
    except sqlite3.Error:
        return 0
