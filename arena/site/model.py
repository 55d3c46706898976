"""The site's page model: `load_site_data(DIR)` reads what every page shows of a
tournament's or a league's store (`SiteData`, the store's `BotRecord` without its folder);
a game as a page shows it is a `SiteGame`. The history's sums and the ratings come from
the site's state (`arena.site.state`), which `arena.site.writer` brings up to date.
`rate` and `rate_with_confidence` rate a list of games in one pass (for tests and tools).
Docs: docs/report.md.
"""

from __future__ import annotations

import dataclasses
import os
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.game.record import Incident
from arena.ratings.confidence import Confidence
from arena.ratings.ledger import BotStanding, RatedGame
from arena.ratings.results import rate_cached
from arena.store.db import BotRecord, GameRow, MemberRow, SeatRow
from arena.store.keys import deal_of


class ReportError(ArenaError):
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

    @classmethod
    def of_rows(
        cls, row: GameRow, seats: Sequence[SeatRow], incidents: list[dict[str, Any]], withheld: bool
    ) -> SiteGame:
        """A finished game from its stored rows (`incidents`: each as `incident_view` has it)."""
        return cls(
            key=row.key, round=row.round, table_no=row.table_no, rotation=row.rotation, seed=row.seed,
            seats=[s.bot for s in seats], places=[s.place for s in seats], scores=[s.score for s in seats],
            forfeits=[s.forfeit for s in seats], finished_at=row.finished_at, duration_s=row.duration_s,
            rules_version=row.rules_version, incidents=incidents, withheld=withheld,
        )


def incident_view(incident: Incident) -> dict[str, Any]:
    """An incident as the pages show it: its record, and `when` in the bot's own terms (the
    request id it saw), as the terminal says it."""
    return {**incident.model_dump(mode="json"), "when": incident.when()}


@dataclass
class SiteData:
    """What every page shows of a store; `load_site_data` fills it. The standings, rating
    history and confidence are the state's when the site is written; read before that
    (tests, tools), they are computed from every game (`rate_with_confidence`)."""

    name: str
    game: str
    settings: dict[str, Any]
    bots: list[BotRecord]  # as stored, without the folder: the site never shows a local path
    total_games: int  # scheduled, finished or not
    logs: Callable[[str], dict[int, str]] = lambda key: {}
    tournament_dir: Path | None = None  # the store's folder
    members: dict[str, MemberRow] = field(default_factory=dict)  # a league's bots: retired, suspended, ...
    _rated: tuple[list[BotStanding], History, Confidence] | None = field(default=None, repr=False)
    # A confidence given by the caller (a test's), which the written site then shows.
    confidence_given: Confidence | None = field(default=None, repr=False)

    def ratings_ready(self) -> None:
        """Kept for callers: the ratings come from the site's state when the site is written."""

    @property
    def games(self) -> list[SiteGame]:
        """Every finished game in schedule order, read on demand (the writer never does)."""
        if self.tournament_dir is None:
            return []
        return all_site_games(self.tournament_dir)

    def _rating(self) -> tuple[list[BotStanding], History, Confidence]:
        if self._rated is None:
            from arena.ratings.results import inherited

            self._rated = rate_with_confidence(
                self.games, [bot.bot for bot in self.bots], self.settings, None,
                inherited(self.settings, self.members.values()),
            )
        return self._rated

    @property
    def standings(self) -> list[BotStanding]:
        return self._rating()[0]

    @property
    def history(self) -> History:
        return self._rating()[1]

    @property
    def confidence(self) -> Confidence:
        return self.confidence_given or self._rating()[2]

    @confidence.setter
    def confidence(self, value: Confidence) -> None:
        self.confidence_given = value


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


def load_site_data(tournament_dir: str | Path, *, background: bool = False, cache_ratings: bool = True) -> SiteData:
    """Read what every page shows of a store (its name, settings, bots, members and the
    number of games); the history's sums and the ratings come from the site's state
    (`arena.site.state`), brought up to date by `arena.site.writer.write_site`.
    `background` and `cache_ratings` are kept for callers: neither changes anything now.
    `SiteData.games` reads every finished game (for tests and small tools, not the writer).
    """
    from arena.store.db import STORE_FILE, Store, StoreError

    tournament_dir = Path(tournament_dir)
    if not (tournament_dir / STORE_FILE).is_file():
        raise ReportError(f"no tournament store ({STORE_FILE}) in {tournament_dir}; run `arena run` into it first")
    try:
        store = Store.open(tournament_dir)
    except StoreError as error:
        raise ReportError(str(error)) from None
    with store:
        settings = store.settings() or {}
        bots = [dataclasses.replace(bot, folder="") for bot in store.bots()]
        members = store.members()
        total = store.count_games()

    def logs(key: str) -> dict[int, str]:
        with Store.open(tournament_dir) as reader:
            return reader.logs(key)

    return SiteData(
        name=str(settings.get("name") or tournament_dir.resolve().name),
        game=str(settings.get("game") or ""),
        settings=settings,
        bots=bots,
        total_games=total,
        logs=logs,
        tournament_dir=tournament_dir,
        members={member.bot: member for member in members},
    )


def all_site_games(tournament_dir: Path) -> list[SiteGame]:
    """Every finished game of a store in schedule order (all in memory: for tests and small tools)."""
    from arena.store.db import Store

    with Store.open(tournament_dir) as store:
        settings = store.settings() or {}
        rows = store.games()
        seats_by_game: dict[str, list[Any]] = defaultdict(list)
        for seat in store.seats():
            seats_by_game[seat.game_key].append(seat)
        incidents_by_game: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for key, incident in store.incidents():
            incidents_by_game[key].append(incident_view(incident))
    open_deals = {row.deal for row in rows if row.status != "done"} if settings.get("duplicate") else set()
    games = []
    for row in rows:
        seats = seats_by_game.get(row.key)
        if row.status != "done" or not seats:
            continue
        games.append(SiteGame.of_rows(row, seats, incidents_by_game.get(row.key, []), row.deal in open_deals))
    return games
