"""A small real tournament for the report tests: the real runner, the real store, a folder
bot that writes to stderr and has a hostile version text, and in-process bots, one of them
named like a script tag and one that forfeits its first game by an illegal answer.

A bot.toml's version is now held to a strict pattern (arena.config.botfolder), so the hostile
version is written into the store after the run, as a store made elsewhere (an older
arena, a copied folder) may hold it, and the site is rendered again from it."""

from __future__ import annotations

import itertools
import random
import shutil
import sqlite3
from pathlib import Path

from arena.game.seats import InProcessBot
from arena.play.tournament import run_tournament, validate_config
from arena.site.writer import render_site

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "<script>alert(1)</script>"
HOSTILE_VERSION = '1.0 <img src=x onerror="alert(2)">'
HOSTILE_LOG = "thinking <script>alert(3)</script> &amp; done"


def chatty_bot(base: Path) -> Path:
    """bots/random, renamed `chatty`, that logs a line with markup to stderr every decision."""
    folder = base / "chatty"
    shutil.copytree(ROOT / "bots" / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (folder / "bot.toml").read_text()
    toml = toml.replace('name = "random"', 'name = "chatty"')
    (folder / "bot.toml").write_text(toml)
    code = (folder / "bot.py").read_text()
    code = code.replace(
        "    return ctx.rng.randrange(len(legal_actions))",
        f"    import sys\n    print({HOSTILE_LOG!r}, file=sys.stderr, flush=True)\n    return ctx.rng.randrange(len(legal_actions))",
    )
    (folder / "bot.py").write_text(code)
    return folder


def _random_seat(name: str, seed: int):
    def make() -> InProcessBot:
        rng = random.Random(seed)
        return InProcessBot(lambda observation, legal: rng.randrange(len(legal)), name=name)

    return make


def _blunders_once():
    """`greedy`: always the first legal action, but an out-of-range answer at its fourth
    decision of its first game: that game has an ILLEGAL_ACTION forfeit."""
    games = itertools.count()

    def make() -> InProcessBot:
        first = next(games) == 0
        decisions = itertools.count()
        return InProcessBot(lambda observation, legal: 999 if first and next(decisions) == 3 else 0, name="greedy")

    return make


def build_tournament(out: Path, game: str = "3up3down", seats: int = 3, progress=None, stop=None, **settings) -> Path:
    """Run a real tournament of 4 bots (C(4,3) = 4 games at 3 seats) into `out`; the runner
    renders the site at its end (`arena.play.tournament.render_report`)."""
    bots = out.parent / f"{out.name}-bots"
    bots.mkdir(parents=True, exist_ok=True)
    folder = chatty_bot(bots)
    in_process = {HOSTILE: _random_seat(HOSTILE, 1), "steady": _random_seat("steady", 2), "greedy": _blunders_once()}
    data = {
        "name": "Spring <b>cup</b>",
        "game": game,
        "seats": seats,
        "bots": [str(folder)],
        "seed": 3,
        "output": str(out),
        "limits": {"decision_s": 5.0},
    }
    data.update(settings)
    run_tournament(validate_config(data), in_process=in_process, progress=progress, stop=stop)
    if (out / "arena.sqlite").is_file():  # a run stopped before its store was made has none
        with sqlite3.connect(out / "arena.sqlite") as db:
            db.execute("UPDATE bots SET version = ? WHERE name = 'chatty'", (HOSTILE_VERSION,))
        db.close()
        render_site(out)
    return out


LEAGUE = ("ann", "bob", "cy", "dee", "eve", "fay")


def build_league(out: Path, game: str = "3up3down", seats: int = 3, cycles: int = 6, **settings) -> Path:
    """A real round-robin of six seeded random in-process bots played `cycles` times over
    (at 3 seats: 20 tables a cycle, each bot at 10 of them): enough games for the site's
    pages of games (100 a page) and a bot's pages of games (50 a page). The runner renders
    the site at its end."""
    data = {
        "name": "league", "game": game, "seats": seats, "bots": [], "seed": 5, "output": str(out),
        "cycles": cycles, "rules": {"max_turns": 60} if game == "3up3down" else {"max_turns_per_round": 12},
    }
    data.update(settings)
    in_process = {name: _random_seat(name, number) for number, name in enumerate(LEAGUE)}
    run_tournament(validate_config(data), in_process=in_process)
    return out
