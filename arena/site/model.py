"""The site's page model: `load_site_data(DIR)` reads a tournament's or a league's store into
plain dataclasses (`SiteData`, `SiteGame`, and the store's `BotRecord` without its folder)
with the ratings recomputed in schedule order (`arena.ratings.results.rate_cached`, resumed
from `CACHE_FILE` beside the store; on a big store in another process while the game pages
are written). `arena.site.writer` writes the pages from it. Docs: docs/report.md.
"""

from __future__ import annotations

import dataclasses
import os
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.ratings.confidence import Confidence
from arena.ratings.ledger import BotStanding, RatedGame
from arena.ratings.results import inherited, rate_cached
from arena.store.db import BotRecord, MemberRow
from arena.store.keys import deal_of

BACKGROUND_RATING_GAMES = 2000  # from this many games the rating pass runs in another process


class ReportError(Exception):
    """The site cannot be rendered (no store in the folder, unknown replay option)."""


@dataclass
class SiteGame:
    """A finished game: who sat where and how it ended."""

    key: str
    round: int
    table_no: int
    rotation: int
    seed: int
    seats: list[str]
    places: list[int]
    scores: list[float]
    forfeits: list[bool]
    finished_at: str | None = None
    duration_s: float | None = None
    rules_version: str | None = None
    incidents: list[dict[str, Any]] = field(default_factory=list)
    # Duplicate mode: another rotation of this deal is still to be played, so the deal's
    # cards must not be shown yet (the replay would give them away).
    withheld: bool = False


@dataclass
class SiteData:
    """Everything the pages need; `load_site_data` fills it from a tournament's store."""

    name: str
    game: str
    settings: dict[str, Any]
    bots: list[BotRecord]  # as stored, without the folder: the site never shows a local path
    standings: list[BotStanding]
    history: History  # bot -> (games, mu, sigma, conservative) after each of its rated updates
    games: list[SiteGame]  # finished games in schedule order
    total_games: int  # scheduled, finished or not
    logs: Callable[[str], dict[int, str]] = lambda key: {}
    tournament_dir: Path | None = None  # where replays are read from (None: no replays)
    pending_ratings: Any = None  # a _BackgroundRating while the rating pass runs in another process
    confidence: Confidence | None = None  # how sure the standings are (None until the rating pass is in)
    members: dict[str, MemberRow] = field(default_factory=dict)  # a league's bots: retired, suspended, ...

    def ratings_ready(self) -> None:
        """Wait for the background rating pass, if any, and take its standings, history and confidence."""
        if self.pending_ratings is not None:
            self.standings, self.history, self.confidence = self.pending_ratings.result()
            self.pending_ratings = None


# --- from the store ----------------------------------------------------------------------


CACHE_FILE = ".report-ratings.json"  # beside arena.sqlite: the rating pass as of the last render

History = dict[str, list[tuple[int, float, float, float]]]  # bot -> (games, mu, sigma, conservative)


def rate(
    games: Sequence[SiteGame], bots: Sequence[str], settings: dict[str, Any], cache: Path | None = None
) -> tuple[list[BotStanding], History]:
    """Standings and each bot's rating after each of its rated updates, in one pass
    (`arena.ratings.results.rate_cached`, resumed from `cache` when the games only grew)."""
    standings, history, _ = rate_with_confidence(games, bots, settings, cache)
    return standings, history


def rate_with_confidence(
    games: Sequence[SiteGame],
    bots: Sequence[str],
    settings: dict[str, Any],
    cache: Path | None = None,
    inherit: Mapping[str, str] | None = None,
) -> tuple[list[BotStanding], History, Confidence]:
    """`rate`, and how sure the standings are (rank intervals, skills given all the games;
    `inherit`: a league's versions that start from their predecessor's mu)."""
    duplicate = bool(settings.get("duplicate", False))
    rated = [
        RatedGame(
            key=game.key, bots=tuple(game.seats), places=tuple(game.places), forfeits=tuple(game.forfeits),
            deal=deal_of(game.key) if duplicate else None,
        )
        for game in games
    ]
    standings, points, confidence = rate_cached(rated, bots, settings, cache, inherit)
    history = {bot: [(p.games, p.mu, p.sigma, p.conservative) for p in line] for bot, line in points.items()}
    return standings, history, confidence


def can_fork() -> bool:
    """More than one core, and workers can be forked (they share the page model, not a copy)."""
    import multiprocessing

    return (os.cpu_count() or 1) > 1 and "fork" in multiprocessing.get_all_start_methods()


class _BackgroundRating:
    """`rate_with_confidence()` in a child process; `result()` waits for it."""

    def __init__(
        self, games: Sequence[SiteGame], bots: Sequence[str], settings: dict[str, Any], cache: Path | None,
        inherit: Mapping[str, str],
    ):
        import multiprocessing

        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
        self._future = self._pool.submit(rate_with_confidence, list(games), list(bots), settings, cache, inherit)

    def result(self) -> tuple[list[BotStanding], History, Confidence]:
        try:
            return self._future.result()
        finally:
            self._pool.shutdown()


def load_site_data(tournament_dir: str | Path, *, background: bool = False, cache_ratings: bool = True) -> SiteData:
    """Read a tournament's store into the page model (ratings recomputed in schedule order).

    With `background`, a big store's rating pass runs in another process until
    `SiteData.ratings_ready()` (write_site calls it once the game pages are written).
    """
    from arena.store.db import STORE_FILE, Store, StoreError

    tournament_dir = Path(tournament_dir)
    if not (tournament_dir / STORE_FILE).is_file():
        raise ReportError(f"no tournament store ({STORE_FILE}) in {tournament_dir}; run `arena run` into it first")
    try:
        store = Store.open(tournament_dir)
    except StoreError as error:
        raise ReportError(str(error)) from None
    settings = store.settings() or {}
    bots = [dataclasses.replace(bot, folder="") for bot in store.bots()]
    rows = store.games()
    seats_by_game: dict[str, list[Any]] = defaultdict(list)
    for seat in store.seats():
        seats_by_game[seat.game_key].append(seat)
    incidents_by_game: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for key, incident in store.incidents():
        # `when` in the bot's own terms (the request id it saw), as the terminal says it.
        incidents_by_game[key].append({**incident.model_dump(mode="json"), "when": incident.when()})
    games = []
    open_deals = {row.deal for row in rows if row.status != "done"} if settings.get("duplicate") else set()
    for row in rows:
        seats = seats_by_game.get(row.key)
        if row.status != "done" or not seats:
            continue
        games.append(
            SiteGame(
                key=row.key,
                round=row.round,
                table_no=row.table_no,
                rotation=row.rotation,
                seed=row.seed,
                seats=[s.bot for s in seats],
                places=[s.place for s in seats],
                scores=[s.score for s in seats],
                forfeits=[s.forfeit for s in seats],
                finished_at=row.finished_at,
                duration_s=row.duration_s,
                rules_version=row.rules_version,
                incidents=incidents_by_game.get(row.key, []),
                withheld=row.deal in open_deals,
            )
        )
    # TrueSkill costs about a millisecond per game: on a big store the pass runs in another
    # process while this one writes the game pages, which do not need ratings.
    pending = None
    cache = tournament_dir / CACHE_FILE if cache_ratings else None
    standings: list[BotStanding] = []
    history: History = {}
    confidence = None
    members = store.members()
    inherit = inherited(settings, members)
    if background and len(games) >= BACKGROUND_RATING_GAMES and can_fork():
        pending = _BackgroundRating(games, [bot.bot for bot in bots], settings, cache, inherit)
    else:
        standings, history, confidence = rate_with_confidence(
            games, [bot.bot for bot in bots], settings, cache, inherit
        )
    return SiteData(
        name=str(settings.get("name") or tournament_dir.resolve().name),
        game=str(settings.get("game") or ""),
        settings=settings,
        bots=bots,
        standings=standings,
        history=history,
        games=games,
        total_games=len(rows),
        logs=store.logs,
        tournament_dir=tournament_dir,
        pending_ratings=pending,
        confidence=confidence,
        members={member.bot: member for member in members},
    )
