"""The site's templates (jinja2, in `templates/`) and the filters they use: one
environment per process, for every page the site renders (the static site's files and a
served league's game pages alike)."""

from __future__ import annotations

import functools
import hashlib
import re

import jinja2

from arena.ratings.ledger import SCORE_MEANS, WINS_MEANS
from arena.resources import templates_dir
from arena.site.pages import last_lines
from engine.registry import get_game


@functools.lru_cache(maxsize=65536)
def slug(bot: str) -> str:
    """A file name for a bot's page: safe characters of its id plus a short hash (ids may be anything)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", bot).strip("-.")[:40] or "bot"
    return f"{safe}-{hashlib.sha256(bot.encode()).hexdigest()[:8]}"


def fmt_score(value: float) -> str:
    """A score as short as it is exact: 1, 0.5, 0.333333."""
    return f"{value:g}"


def signed(value: float) -> str:
    """A rating change: +0.45, −0.45 (a real minus sign), 0.00."""
    text = f"{abs(value):.2f}"
    return text if text == "0.00" else ("+" if value > 0 else "\u2212") + text


def rank_change(places: int) -> str:
    """Places gained (▲2) or lost (▼1) in the standings; – for none."""
    return "\u25b2" + str(places) if places > 0 else "\u25bc" + str(-places) if places < 0 else "\u2013"


def game_score_means(game: str) -> str:
    """What a game's own score counts and which way is better (its `Game.game_score`)."""
    try:
        return get_game(game).game_score
    except Exception:  # noqa: BLE001 - a store of a game this arena does not know
        return "the game's own score"


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates' environment, made once per process (a league's renderer renders
    after every batch: its templates are compiled once)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=True,  # every template is HTML; a bot's name or log must never become markup
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,  # templates do not change during a render; skips a stat per page
    )
    env.filters["score"] = fmt_score
    env.filters["slug"] = slug
    env.filters["signed"] = signed
    env.filters["rank_change"] = rank_change
    env.filters["last_lines"] = last_lines
    env.filters["game_score_means"] = game_score_means
    env.globals.update(wins_means=WINS_MEANS, score_means=SCORE_MEANS)  # the column headers' titles
    return env
