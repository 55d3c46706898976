"""The static HTML site of a tournament: `render_site(DIR)` writes `DIR/site/` from the store.

Pages (jinja2 templates in `templates/`, autoescaped: a bot controls its name, version and
log, and none of it can run in a spectator's browser):
- `index.html`: standings (sortable) with each bot's 90% rank interval and the groups of
  bots not separated (`arena.ratings.confidence`), a Swiss's score and tie-break, settings,
  format and progress;
- `bots/<slug>.html`: rating over time (inline SVG), results by seat, head-to-head,
  incidents with reasons, stderr excerpts, version and content hash;
- `h2h.html`: for each pair at the top of the table, the rating model's chance that one
  places ahead of the other, beside how often it did;
- `games/page-N.html`: the game list; `games/<key>.html`: a game with its replay viewer.
Replay data (`arena.site.replay`) lives in `replays/<key>.r<FORMAT>.js`, one script per
game loaded by its page (a file:// page may not fetch JSON). A stored result never
changes, so a replay file that exists is kept: re-rendering only adds the new games.
In duplicate mode a deal with a rotation still to play shows no replay (same cards).
Ratings come from `arena.ratings.results` (`rate_cached`: the same ledger as the runner's and
`arena standings`, and how sure the standings are), saved as JSON beside the store, so
the next render only rates the games added since (and recomputes nothing when no game
was added).
Nothing is loaded from the network: the CSS and the scripts are in `assets/` (each game's
viewer script copied from its folder in `engine/`).
Docs: docs/report.md.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2

from arena.config.botfolder import BotFolderError, load_bot, registry_folders
from arena.ratings.confidence import SETTLE_LEVEL, Confidence
from arena.ratings.ledger import SCORE_MEANS, WINS_MEANS, BotStanding, RatedGame
from arena.ratings.results import (
    inherited,
    is_league,
    is_swiss,
    rate_cached,
    settings_of,
)
from arena.ratings.standings import ranked
from arena.resources import templates_dir
from arena.site.pages import bot_membership, h2h_cells, last_lines, log_excerpt
from arena.site.pages import (
    settings_summary as settings_summary,  # re-exported: the report's API
)
from arena.site.replay import FORMAT, ReplayUnavailable, replay_frames, script_text
from arena.store.db import BotRecord, MemberRow
from arena.store.keys import deal_of
from engine.registry import all_games

SITE_DIR = "site"
GAMES_PER_PAGE = 100
MATRIX_BOTS = 40  # the matrix page shows the top of the standings; each bot page has its full row
RECENT_GAMES = 50  # games listed on a bot's page without script (its full list is a data file)
LOG_EXCERPTS = 3  # stderr excerpts on a bot's page
LOG_CHARS = 1500  # characters kept of each excerpt
CHART_POINTS = 300  # a rating chart is thinned to at most this many points
BACKGROUND_RATING_GAMES = 2000  # from this many games the rating pass runs in another process
PARALLEL_PAGES_GAMES = 5000  # from this many games the game pages are written by several processes


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


def _can_fork() -> bool:
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
    if background and len(games) >= BACKGROUND_RATING_GAMES and _can_fork():
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


# --- helpers for the pages ---------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def slug(bot: str) -> str:
    """A file name for a bot's page: safe characters of its id plus a short hash (ids may be anything)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", bot).strip("-.")[:40] or "bot"
    return f"{safe}-{hashlib.sha256(bot.encode()).hexdigest()[:8]}"


def rating_chart(
    points: Sequence[tuple[int, float, float, float]], prior: tuple[float, float] = (25.0, 25.0 / 3)
) -> dict[str, Any]:
    """The geometry of a bot's rating chart, in percent of its plot area (x: games played,
    y: rating, top 0): the mu line, the mu ± 3 sigma band and the conservative line, from
    the prior (mu, sigma) at game 0, thinned to CHART_POINTS points; `points` are the
    drawn points after game 0 as (games, x, y of the conservative rating, mu, sigma). The page
    stretches the plot to its width (the lines keep their thickness) and writes the axis
    labels as text, so the chart reads the same on a phone as on a desktop."""
    if not points:
        return {}
    if points[0][0] != 0:  # a version that inherited its predecessor's mu has its own point at 0
        points = [(0, prior[0], prior[1], prior[0] - 3 * prior[1]), *points]
    if len(points) > CHART_POINTS:
        step = len(points) / CHART_POINTS
        points = [points[int(i * step)] for i in range(CHART_POINTS)] + [points[-1]]
    low = min(p[1] - 3 * p[2] for p in points)
    high = max(p[1] + 3 * p[2] for p in points)
    if high - low < 1:
        high, low = high + 0.5, low - 0.5
    last = max(p[0] for p in points) or 1

    def x(games: int) -> float:
        return round(100 * games / last, 2)

    def y(value: float) -> float:
        return round(100 * (high - value) / (high - low), 2)

    mu = " ".join(f"{x(g)},{y(m)}" for g, m, _, _ in points)
    conservative = " ".join(f"{x(g)},{y(c)}" for g, _, _, c in points)
    band = " ".join(f"{x(g)},{y(m + 3 * s)}" for g, m, s, _ in points) + " " + " ".join(
        f"{x(g)},{y(m - 3 * s)}" for g, m, s, _ in reversed(points)
    )
    ticks = [{"y": y(low + (high - low) * i / 4), "label": str(round(low + (high - low) * i / 4))} for i in range(5)]
    return {
        "mu": mu,
        "conservative": conservative,
        "band": band,
        "ticks": ticks,
        "games": last,
        "final": points[-1],
        "points": [(g, x(g), y(c), m, sd) for g, m, sd, c in points if g > 0],
    }


Move = tuple[float, float, int, int]  # a seat's rating after a game, its change, its rank after, rank change (+: up)


def rating_moves(
    games: Sequence[SiteGame], history: History, bots: Sequence[str], prior: float, swiss: bool = False
) -> list[tuple[Move, ...]]:
    """For each game (schedule order) and each of its seats: the bot's conservative rating
    after the game, how much the game changed it, the bot's rank in the whole field after
    the game and how many places it rose (negative: fell) across the game.

    The ranks are by conservative rating (in a Swiss by Swiss score, then rating: the
    Buchholz tie-break is left out, since it moves with every table-mate's later games);
    a bot with no game yet holds the prior; tied bots share the better rank. In duplicate
    mode a deal moves ratings once, at its last rotation: its other games change nothing.
    """
    after_games = {bot: {point[0]: point[3] for point in line} for bot, line in history.items()}
    field = set(bots).union(*(game.seats for game in games)) if games else set(bots)
    rating = {bot: after_games.get(bot, {}).get(0, prior) for bot in field}  # 0: an inherited prior
    score = dict.fromkeys(field, 0.0)
    played: dict[str, int] = dict.fromkeys(field, 0)

    def standing(bot: str) -> tuple[float, float]:
        return (round(score[bot], 9), rating[bot]) if swiss else (0.0, rating[bot])

    order = sorted(standing(bot) for bot in field)  # ascending; a bot's rank: 1 + those above it
    size = len(order)

    def rank(key: tuple[float, float]) -> int:
        return size - bisect.bisect_right(order, key) + 1

    moves: list[tuple[Move, ...]] = []
    for game in games:
        seats = game.seats
        before = [rank(standing(bot)) for bot in seats]
        old = [rating[bot] for bot in seats]
        table = len(seats)
        for bot, place in zip(seats, game.places):
            key = standing(bot)
            played[bot] += 1
            rating[bot] = after_games.get(bot, {}).get(played[bot], rating[bot])
            if swiss and table > 1:
                score[bot] += (table - place) / (table - 1)
            moved = standing(bot)
            if moved != key:
                del order[bisect.bisect_left(order, key)]
                bisect.insort(order, moved)
        after = [rank(standing(bot)) for bot in seats]
        moves.append(
            tuple((rating[bot], rating[bot] - old[seat], after[seat], before[seat] - after[seat]) for seat, bot in enumerate(seats))
        )
    return moves


def _script_data(name: str, key: str, value: Any) -> str:
    """A data script for file:// pages (which cannot fetch JSON): registers `value` as
    window[name][key]. Escaped for a <script> context: nothing in it closes the tag."""
    payload = json.dumps(value, separators=(",", ":"), ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")
    label = json.dumps(key, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")
    return f"window.{name}=window.{name}||{{}};window.{name}[{label}]={payload};\n"


def _compact(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _fmt_score(value: float) -> str:
    return f"{value:g}"


def _signed(value: float) -> str:
    """A rating change: +0.45, −0.45 (a real minus sign), 0.00."""
    text = f"{abs(value):.2f}"
    return text if text == "0.00" else ("+" if value > 0 else "\u2212") + text


def _rank_change(places: int) -> str:
    """Places gained (▲2) or lost (▼1) in the standings; – for none."""
    return "\u25b2" + str(places) if places > 0 else "\u25bc" + str(-places) if places < 0 else "\u2013"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=True,  # every template is HTML; a bot's name or log must never become markup
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,  # templates do not change during a render; skips a stat per page
    )
    env.filters["score"] = _fmt_score
    env.filters["slug"] = slug
    env.filters["signed"] = _signed
    env.filters["rank_change"] = _rank_change
    env.filters["last_lines"] = last_lines
    env.globals.update(wins_means=WINS_MEANS, score_means=SCORE_MEANS)  # the column headers' titles
    return env


# --- the site ----------------------------------------------------------------------------


def _aggregate(data: SiteData) -> dict[str, Any]:
    """Per-bot results by seat, head-to-head counts, recent games and incidents: one pass."""
    by_seat: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))  # games, wins, place sum
    ahead: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))  # bot -> other -> times ahead
    together: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))  # bot -> other -> games
    recent: dict[str, list[SiteGame]] = defaultdict(list)
    incidents: dict[str, list[tuple[SiteGame, dict[str, Any]]]] = defaultdict(list)
    played: dict[str, list[int]] = defaultdict(list)  # bot -> indices of its games in data.games
    for index, game in enumerate(data.games):
        size = len(game.seats)
        for seat, bot in enumerate(game.seats):
            cell = by_seat[bot][seat]
            cell[0] += 1
            cell[1] += game.places[seat] == 1
            cell[2] += game.places[seat]
            played[bot].append(index)
            mates, behind = together[bot], ahead[bot]
            for other in range(size):
                if other != seat:
                    mates[game.seats[other]] += 1
                    if game.places[seat] < game.places[other]:
                        behind[game.seats[other]] += 1
        for incident in game.incidents:
            incidents[incident["bot"]].append((game, incident))
    for bot, indices in played.items():
        recent[bot] = [data.games[index].key for index in indices[-RECENT_GAMES:][::-1]]
    return {
        "by_seat": by_seat, "ahead": ahead, "together": together, "recent": recent, "incidents": incidents,
        "played": played,
    }


def write_site(data: SiteData, site: Path, *, replays: str = "all", jobs: int | None = None) -> dict[str, Any]:
    """Write every page of the site into `site`; returns counts (pages, replays written, failed).

    `jobs`: processes for the game pages of a big site and for the replays (default: the
    machine's cores, at most 4).
    """
    if replays not in ("all", "none"):
        raise ReportError(f"replays must be 'all' or 'none', not {replays!r}")
    env = _environment()
    site.mkdir(parents=True, exist_ok=True)
    for sub in ("bots", "games", "replays", "assets"):
        (site / sub).mkdir(exist_ok=True)
    for asset in (templates_dir() / "assets").iterdir():
        shutil.copyfile(asset, site / "assets" / asset.name)
    for game in all_games():  # each game's viewer script lives beside its rules in engine/
        tables = game.replay_tables()
        if tables is not None:
            shutil.copyfile(tables.script, site / "assets" / f"replay-{game.name}.js")

    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    bots = {bot.bot: bot for bot in data.bots}
    rating_settings = settings_of(data.settings)
    prior = (rating_settings.mu, rating_settings.sigma)
    agg = _aggregate(data)
    games_by_key = {game.key: game for game in data.games}
    pages = 0
    # The time is only on the index: other pages stay byte-identical between renders when
    # nothing they show changed, so a re-render rewrites only what changed.
    common = {"tournament": data.name, "game_name": data.game, "bots": bots}

    templates: dict[str, jinja2.Template] = {}

    def write(path: Path, template: str, root: str, **values: Any) -> None:
        nonlocal pages
        if template not in templates:
            templates[template] = env.get_template(template)
        html = templates[template].render(root=root, **common, **values)
        _write_if_changed(path, html)
        pages += 1

    game_pages = max(1, -(-len(data.games) // GAMES_PER_PAGE))
    for page in range(1, game_pages + 1):
        chunk = data.games[(page - 1) * GAMES_PER_PAGE : page * GAMES_PER_PAGE]
        write(
            site / "games" / f"page-{page}.html", "games.html", "../", games=chunk, page=page, pages=game_pages,
            links=page_links(page, game_pages),
        )

    global _GAME_PAGES
    _GAME_PAGES = {"site": site, "games": data.games, "template": env.get_template("game.html"), "common": common,
                   "rules": data.settings.get("rules") or {},
                   # A page loads its replay only if there is one (--replays none writes none).
                   "replays_written": replays == "all" and data.tournament_dir is not None}
    try:
        workers = min(jobs or os.cpu_count() or 1, 4)
        if workers > 1 and len(data.games) >= PARALLEL_PAGES_GAMES and _can_fork():
            import multiprocessing

            # Game pages are most of a big site: written by forked workers sharing this
            # process's memory (the page model is not copied).
            step = -(-len(data.games) // workers)
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                pages += sum(pool.map(_write_game_pages, [(start, start + step) for start in range(0, len(data.games), step)]))
        else:
            pages += _write_game_pages((0, len(data.games)))
    finally:
        _GAME_PAGES = {}

    data.ratings_ready()  # the pages below need the standings
    for line in data.standings:  # a bot only seen in results still gets a page
        bots.setdefault(line.bot, BotRecord(line.bot, line.bot, "", "", "", "unknown"))
    confidence = data.confidence
    # Each line's band, group, settled and league status, as the terminal has them.
    standings = ranked(data.standings, confidence, data.members, league=is_league(data.settings))
    rank = {line.bot: number for number, line in enumerate(standings.lines, 1)}
    order = [line.bot for line in standings.lines]
    swiss = is_swiss(data.settings)
    moves = rating_moves(data.games, data.history, order, prior[0] - 3 * prior[1], swiss)
    last_move = {}
    for bot, indices in agg["played"].items():
        game = data.games[indices[-1]]
        last_move[bot] = moves[indices[-1]][game.seats.index(bot)]
    _write_game_data(site, data, order, agg["played"], moves, prior)
    write(
        site / "index.html",
        "index.html",
        "",
        standings=standings.lines,
        swiss=swiss,
        last_move=last_move,
        summary=settings_summary(data.settings),
        settings=data.settings,
        done=len(data.games),
        total=data.total_games,
        game_pages=game_pages,
        generated=generated,
        marked=any(line.mark for line in standings.lines),
        suspended=standings.suspended(),
        settled_span=standings.settled_span,
        settle_level=f"{SETTLE_LEVEL:.0%}",
        broken_bots=_broken_bots(data.settings),
    )

    top = order[:MATRIX_BOTS]
    model = {row: {col: confidence.ahead(row, col) for col in top if col != row} for row in top}
    write(
        site / "h2h.html", "h2h.html", "", matrix_bots=top, cells=h2h_cells(top, model, agg["ahead"], agg["together"]),
        total_bots=len(standings.lines),
    )

    for line in standings.lines:
        bot = line.bot
        opponents = [
            {"bot": other, "games": count, "ahead": agg["ahead"][bot].get(other, 0), "behind": agg["ahead"][other].get(bot, 0)}
            for other, count in agg["together"][bot].items()
        ]
        opponents.sort(key=lambda o: (-(o["ahead"] - o["behind"]), o["bot"]))
        seats = [
            {"seat": seat, "games": cell[0], "wins": cell[1], "average": cell[2] / cell[0]}
            for seat, cell in sorted(agg["by_seat"][bot].items())
        ]
        excerpts = []
        for key in agg["recent"].get(bot, []):
            if len(excerpts) >= LOG_EXCERPTS:
                break
            game = games_by_key[key]
            for seat, text in data.logs(key).items():
                if seat < len(game.seats) and game.seats[seat] == bot and text.strip():
                    excerpt, cut = log_excerpt(text, LOG_CHARS)
                    excerpts.append({"key": key, "text": excerpt, "cut": cut})
        played = agg["played"].get(bot, [])
        member = data.members.get(bot)
        chart = rating_chart(data.history.get(bot, []), prior)
        # Each point links to the game after which it was taken (its readout comes from the
        # bot's data script, which the page loads for its game list anyway).
        chart_keys = [data.games[played[games - 1]].key for games, *_ in chart.get("points", [])]
        recent = []
        for index in played[-RECENT_GAMES:][::-1]:
            game = data.games[index]
            seat = game.seats.index(bot)
            recent.append({"g": game, "seat": seat, "move": moves[index][seat]})
        write(
            site / "bots" / f"{slug(bot)}.html",
            "bot.html",
            "../",
            line=line,
            rank=rank[bot],
            interval=line.band,
            mark=line.mark,
            member=member,
            membership=bot_membership(member, [data.games[index].round for index in played]) if member else "",
            info=bots[bot],
            chart=chart,
            chart_keys=chart_keys,
            seats=seats,
            opponents=opponents,
            incidents=agg["incidents"].get(bot, []),
            excerpts=excerpts,
            recent=recent,
            played=len(played),
            swiss=swiss,
        )

    # What a page served by `arena serve` looks at to reload itself when the standings change.
    live = [len(data.games), sorted((bot, m.status) for bot, m in data.members.items())]
    version = hashlib.sha256(json.dumps(live).encode()).hexdigest()[:16]
    _write_if_changed(site / "live.json", json.dumps({"version": version, "games": len(data.games)}) + "\n")

    written = failed = 0
    if replays == "all" and data.tournament_dir is not None:
        missing = [
            g.key for g in data.games if not g.withheld and not (site / "replays" / f"{g.key}.r{FORMAT}.js").exists()
        ]
        written, failed = _write_replays(data.tournament_dir, site / "replays", missing, jobs)
    return {"pages": pages, "replays_written": written, "replays_failed": failed, "games": len(data.games)}


def _broken_bots(settings: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A league's registry folders that cannot join (their bot.toml is wrong): each one's
    path in the registry (never the registry's own place) and its mistakes."""
    registry = Path(settings.get("registry") or "")
    if settings.get("format") != "league" or not settings.get("registry") or not registry.is_dir():
        return []
    broken = []
    for folder in registry_folders(registry):
        try:
            load_bot(folder)
        except BotFolderError as error:
            broken.append((folder.relative_to(registry).as_posix(), "; ".join(error.mistakes)))
    return broken


DATA_DIR = "data"  # the site's data scripts: data/site.js, data/bots/<slug>.js


def _write_game_data(
    site: Path, data: SiteData, order: Sequence[str], played: dict[str, list[int]], moves: Sequence[tuple[Move, ...]],
    prior: tuple[float, float] = (25.0, 25.0 / 3),
) -> None:
    """The data the pages' scripts read (file:// pages cannot fetch JSON, so each is a script):

    - `data/site.js`: every bot (name, page) by id, and for each round the first and last
      game-list page holding it and its number of games (by id, not by standings: a bot's
      number stays the same when the standings change, and so does the file of a bot that
      played no new game, which a render then leaves alone);
    - `data/bots/<slug>.js`: every game of one bot, loaded only by the page that shows its
      games (its bot page, or the game list filtered by it). A row:
      [key, round, table, rotation, seat, [bot numbers by seat], [places], [scores],
      forfeited seats as bits, rating after, its change, rank after, rank change,
      [[seat, incident reason], ...] or 0, mu after, sigma after].
    """
    folder = site / DATA_DIR / "bots"
    folder.mkdir(parents=True, exist_ok=True)
    named = sorted(order)
    number = {bot: index for index, bot in enumerate(named)}
    rounds: list[list[int]] = []  # [round, first page, last page, games]
    for index, game in enumerate(data.games):
        page = index // GAMES_PER_PAGE + 1
        if rounds and rounds[-1][0] == game.round:
            rounds[-1][2] = page
            rounds[-1][3] += 1
        else:
            rounds.append([game.round, page, page, 1])
    index_data = {
        "bots": [[bot, slug(bot)] for bot in named],
        "rounds": rounds,
        "pages": max(1, -(-len(data.games) // GAMES_PER_PAGE)),
    }
    _write_if_changed(site / DATA_DIR / "site.js", _script_data("ARENA_DATA", "site", index_data))
    for bot in order:
        rows = []
        after = {point[0]: point for point in data.history.get(bot, [])}
        # Until the bot's first rating update (a duplicate deal's last rotation): the prior,
        # or the predecessor's mu it inherited (its point at game 0).
        mu, sigma = (after[0][1], after[0][2]) if 0 in after else prior
        for count, index in enumerate(played.get(bot, []), 1):
            if count in after:
                mu, sigma = after[count][1], after[count][2]
            game = data.games[index]
            seat = game.seats.index(bot)
            rating, change, rank, rank_change = moves[index][seat]
            rows.append([
                game.key, game.round, game.table_no, game.rotation, seat,
                [number[other] for other in game.seats], game.places, [_compact(score) for score in game.scores],
                sum(1 << other for other, forfeited in enumerate(game.forfeits) if forfeited),
                round(rating, 2), round(change, 2), rank, rank_change,
                [[incident["seat"], incident["reason"]] for incident in game.incidents] or 0,
                round(mu, 2), round(sigma, 2),
            ])
        name = slug(bot)
        _write_if_changed(folder / f"{name}.js", _script_data("ARENA_DATA", f"bot:{name}", rows))


def page_links(page: int, pages: int, around: int = 2) -> list[int | None]:
    """The page numbers a pager links to: the first, the last, and those within `around`
    of this one, with None where numbers are left out."""
    shown = sorted({1, pages, *range(max(1, page - around), min(pages, page + around) + 1)})
    links: list[int | None] = []
    for number in shown:
        if links and number - (links[-1] or 0) > 1:
            links.append(None)
        links.append(number)
    return links


def _write_if_changed(path: Path, text: str) -> None:
    """Write `text` unless the file already holds it (re-renders of a big site are I/O-bound)."""
    data = text.encode("utf-8")
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    path.write_bytes(data)


_GAME_PAGES: dict[str, Any] = {}  # what the game-page workers need, inherited through fork


def _write_game_pages(span: tuple[int, int]) -> int:
    """Write the pages of games[start:stop]; returns how many."""
    site, games, template = _GAME_PAGES["site"], _GAME_PAGES["games"], _GAME_PAGES["template"]
    start, stop = span
    for index in range(start, min(stop, len(games))):
        game = games[index]
        html = template.render(
            root="../",
            **_GAME_PAGES["common"],
            g=game,
            rules=_GAME_PAGES["rules"],
            replay_file=f"{game.key}.r{FORMAT}.js",
            replay_ready=_GAME_PAGES["replays_written"] or (site / "replays" / f"{game.key}.r{FORMAT}.js").exists(),
            previous=games[index - 1].key if index else None,
            next=games[index + 1].key if index + 1 < len(games) else None,
            list_page=index // GAMES_PER_PAGE + 1,
        )
        _write_if_changed(site / "games" / f"{game.key}.html", html)
    return max(0, min(stop, len(games)) - start)


def render_replay(tournament_dir: Path, key: str, out: Path) -> bool:
    """Re-simulate one stored game into its replay script; False when it cannot be replayed."""
    from arena.store.db import Store

    with Store.open(tournament_dir) as store:
        result = store.game_result(key)
    try:
        data: dict[str, Any] = replay_frames(result)
        ok = True
    except ReplayUnavailable as reason:
        data, ok = {"format": FORMAT, "error": str(reason)}, False
    target = out / f"{key}.r{FORMAT}.js"
    partial = target.with_suffix(".part")
    partial.write_text(script_text(data, key), encoding="utf-8")
    os.replace(partial, target)  # a stopped render never leaves half a replay behind
    return ok


def _render_replay_job(args: tuple[str, str, str]) -> bool:
    return render_replay(Path(args[0]), args[1], Path(args[2]))


def _write_replays(tournament_dir: Path, out: Path, keys: list[str], jobs: int | None) -> tuple[int, int]:
    if not keys:
        return 0, 0
    jobs = jobs or min(4, os.cpu_count() or 1)
    work = [(str(tournament_dir), key, str(out)) for key in keys]
    if jobs <= 1 or len(keys) < 16:  # a pool costs more than it saves on a few games
        results = [_render_replay_job(item) for item in work]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_render_replay_job, work, chunksize=4))
    return sum(results), len(results) - sum(results)


def render_site(tournament_dir: str | Path, *, replays: str = "all", jobs: int | None = None) -> Path:
    """Render `DIR/site/` from the tournament store in DIR; returns the site folder."""
    tournament_dir = Path(tournament_dir)
    data = load_site_data(tournament_dir, background=True)
    site = tournament_dir / SITE_DIR
    write_site(data, site, replays=replays, jobs=jobs)
    return site
