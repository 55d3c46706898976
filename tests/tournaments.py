"""Tournaments for tests, set up one way: short 3UP 3DOWN games at tables of three, from
bot folders, validated as `arena run` validates a file (tests/play/ gives each file its seed)."""

from __future__ import annotations

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
