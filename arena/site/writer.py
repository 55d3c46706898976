"""The static HTML site of a tournament: `render_site(DIR)` writes `DIR/site/` from the store,
through the page model (`arena.site.model.load_site_data`) and `write_site`.

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
changes, so a replay file that exists is kept: re-rendering only adds the new games
(and, after a change of FORMAT, writes each game's new file and removes its older one).
A render writes a file only when its bytes change (atomically), and renders a game's page
only when what it shows changed (`PAGES_FILE` beside the store; `full=True` renders all).
In duplicate mode a deal with a rotation still to play shows no replay (same cards).
A league's site holds no file per game (`game_files`): its game pages, game lists and
replays are answered by the server from the store (`arena.web.games`).
Ratings come from `arena.ratings.results` (`rate_cached`, in `arena.site.model`: the same
ledger as the runner's and `arena standings`, and how sure the standings are), saved as
JSON beside the store, so the next render only rates the games added since (and
recomputes nothing when no game was added); each bot's band, group and league mark from
`arena.ratings.standings`; the charts' geometry and each game's rating moves from
`arena.site.charts`. The HTTP server (`arena serve`) is `arena.web.app`.
Nothing is loaded from the network: the CSS and the scripts are in `assets/` (each game's
viewer script copied from its folder in `engine/`).
Docs: docs/report.md.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2

from arena.config.botfolder import BotFolderError, load_bot, registry_folders
from arena.ratings.confidence import SETTLE_LEVEL
from arena.ratings.ledger import SCORE_MEANS, WINS_MEANS
from arena.ratings.results import is_league, is_swiss, settings_of
from arena.ratings.standings import ranked
from arena.resources import templates_dir
from arena.site.charts import Move, rating_chart, rating_moves
from arena.site.model import ReportError, SiteData, SiteGame, can_fork, load_site_data
from arena.site.pages import bot_membership, h2h_cells, last_lines, log_excerpt
from arena.site.pages import (
    settings_summary as settings_summary,  # re-exported: the report's API
)
from arena.site.replay import FORMAT, ReplayUnavailable, replay_frames, script_text
from arena.store.db import BotRecord
from engine.registry import all_games

SITE_DIR = "site"
GAMES_PER_PAGE = 100
MATRIX_BOTS = 40  # the matrix page shows the top of the standings; each bot page has its full row
RECENT_GAMES = 50  # games listed on a bot's page without script (its full list is a data file)
LOG_EXCERPTS = 3  # stderr excerpts on a bot's page
LOG_CHARS = 1500  # characters kept of each excerpt
PARALLEL_PAGES_GAMES = 5000  # from this many games the game pages are written by several processes


# --- helpers for the pages ---------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def slug(bot: str) -> str:
    """A file name for a bot's page: safe characters of its id plus a short hash (ids may be anything)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", bot).strip("-.")[:40] or "bot"
    return f"{safe}-{hashlib.sha256(bot.encode()).hexdigest()[:8]}"


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


def write_site(
    data: SiteData, site: Path, *, replays: str = "all", jobs: int | None = None, full: bool = False,
    manifest: Path | None = None, game_files: bool | None = None,
) -> dict[str, Any]:
    """Write every page of the site into `site`; returns counts (pages rendered, files
    written, replays written, failed). A file is written only when its bytes change.

    `jobs`: processes for the game pages of a big site and for the replays (default: the
    machine's cores, at most 4). A game page the last render wrote for the same game (its
    signature in `manifest`, by default `PAGES_FILE` beside the store) is not rendered
    again; `full` renders every page (still writing only those whose bytes differ).

    `game_files`: write a page per game, the game list's pages and the replays (default:
    yes for a tournament; no for a league, whose server answers them from its store,
    `arena.web.games`; the files an older render left there are removed).
    """
    if replays not in ("all", "none"):
        raise ReportError(f"replays must be 'all' or 'none', not {replays!r}")
    if game_files is None:
        game_files = not is_league(data.settings)
    env = _environment()
    site.mkdir(parents=True, exist_ok=True)
    for sub in ("bots", "games", "replays", "assets") if game_files else ("bots", "assets"):
        (site / sub).mkdir(exist_ok=True)
    for asset in (templates_dir() / "assets").iterdir():
        _write_if_changed(site / "assets" / asset.name, asset.read_bytes())
    for game in all_games():  # each game's viewer script lives beside its rules in engine/
        tables = game.replay_tables()
        if tables is not None:
            _write_if_changed(site / "assets" / f"replay-{game.name}.js", tables.script.read_bytes())

    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    bots = {bot.bot: bot for bot in data.bots}
    rating_settings = settings_of(data.settings)
    prior = (rating_settings.mu, rating_settings.sigma)
    agg = _aggregate(data)
    games_by_key = {game.key: game for game in data.games}
    pages = 0
    written_before = _WRITTEN[0]
    # The time is only on the index: other pages stay byte-identical between renders when
    # nothing they show changed, so a re-render rewrites only what changed.
    common = {"tournament": data.name, "game_name": data.game, "bots": bots, "served_games": not game_files}

    templates: dict[str, jinja2.Template] = {}

    def write(path: Path, template: str, root: str, **values: Any) -> None:
        nonlocal pages
        if template not in templates:
            templates[template] = env.get_template(template)
        html = templates[template].render(root=root, **common, **values)
        _write_if_changed(path, html)
        pages += 1

    game_pages = max(1, -(-len(data.games) // GAMES_PER_PAGE))
    if not game_files:
        _remove_game_files(site, manifest if manifest is not None else _default_manifest(data, site))
    for page in range(1, game_pages + 1 if game_files else 1):
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
    # A game's page changes only with what it shows (the game, its neighbours' keys, its
    # list page, whether its replay is there): the pages whose signature is the one the
    # last render recorded (beside the store), and whose file is there, are not rendered.
    ledger = _PageLedger(manifest if manifest is not None else _default_manifest(data, site), site, data, full)
    todo = ledger.stale(_GAME_PAGES) if game_files else []
    _GAME_PAGES["todo"] = todo
    try:
        workers = min(jobs or os.cpu_count() or 1, 4)
        if workers > 1 and len(todo) >= PARALLEL_PAGES_GAMES and can_fork():
            import multiprocessing

            # Game pages are most of a big site: written by forked workers sharing this
            # process's memory (the page model is not copied).
            step = -(-len(todo) // workers)
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                _WRITTEN[0] += sum(pool.map(_write_game_pages, [(start, start + step) for start in range(0, len(todo), step)]))
        else:
            _write_game_pages((0, len(todo)))
        pages += len(todo)
    finally:
        _GAME_PAGES = {}
    if game_files:
        ledger.save()

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
    if replays == "all" and data.tournament_dir is not None and game_files:
        missing = [
            g.key for g in data.games if not g.withheld and not (site / "replays" / f"{g.key}.r{FORMAT}.js").exists()
        ]
        written, failed = _write_replays(data.tournament_dir, site / "replays", missing, jobs)
    return {
        "pages": pages, "files_written": _WRITTEN[0] - written_before, "replays_written": written,
        "replays_failed": failed, "games": len(data.games),
    }


_GAME_FILE = re.compile(r"(page-)?[0-9-]+\.html|\.?[0-9-]+\.r[0-9]+\.js(\.[0-9]+\.part)?")


def _remove_game_files(site: Path, manifest: Path | None) -> None:
    """A league's site holds no file per game (its server answers them): the game pages,
    list pages and replays an older render wrote are removed, and their manifest."""
    if manifest is not None:
        manifest.unlink(missing_ok=True)
    for sub in ("games", "replays"):
        try:
            entries = list(os.scandir(site / sub))
        except FileNotFoundError:
            continue
        for entry in entries:
            if entry.is_file() and _GAME_FILE.fullmatch(entry.name):
                os.unlink(entry.path)
        try:
            (site / sub).rmdir()
        except OSError:
            pass  # it holds something else: left as it is


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


_WRITTEN = [0]  # files this process wrote (write_site reports its own share)


def _write_if_changed(path: Path, text: str | bytes) -> bool:
    """Write `text` unless the file already holds it (an unchanged file keeps its inode and
    mtime; re-renders of a big site are I/O-bound); a change is written whole to a
    temporary file and renamed over the old one, so a reader (`arena serve`) never sees
    half a page. True when it wrote."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    _WRITTEN[0] += 1
    return True


PAGES_FILE = ".site-pages.json"  # beside arena.sqlite: each game page's signature as of the last render


def _default_manifest(data: SiteData, site: Path) -> Path | None:
    """The game pages' manifest of a store's own site (`DIR/site`): `DIR/PAGES_FILE`; none
    for a site written elsewhere (every game page is then rendered and compared)."""
    if data.tournament_dir is None or site.resolve() != (data.tournament_dir / SITE_DIR).resolve():
        return None
    return data.tournament_dir / PAGES_FILE


@functools.lru_cache(maxsize=1)
def _code_version() -> str:
    """What a game page's bytes depend on besides its game: the templates and the site's
    code (a new arena renders every page again)."""
    digest = hashlib.sha256(str(FORMAT).encode())
    sources = [*sorted(templates_dir().glob("*.html")), *sorted(Path(__file__).parent.glob("*.py"))]
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


class _PageLedger:
    """Which game pages need rendering: those whose signature differs from the manifest's
    (or whose file is missing). The manifest is removed before any page is written and
    saved after, so a stopped render leaves none and the next one compares every page."""

    def __init__(self, path: Path | None, site: Path, data: SiteData, full: bool):
        self.path, self.site = path, site
        self.head = json.dumps(
            [_code_version(), data.name, data.game, data.settings.get("rules") or {}], sort_keys=True, default=str,
        )
        self.old: dict[str, str] = {}
        if path is not None and not full:
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
                if stored.get("head") == self.head and isinstance(stored.get("pages"), dict):
                    self.old = stored["pages"]
            except (OSError, ValueError, AttributeError):
                self.old = {}
        self.new: dict[str, str] = {}
        self.removed = False

    def stale(self, context: Mapping[str, Any]) -> list[int]:
        """Indices of the games whose page must be rendered."""
        games = context["games"]
        present = {entry.name for entry in os.scandir(self.site / "games")} if self.old else set()
        todo = []
        for index, game in enumerate(games):
            signature = _page_signature(context, index)
            self.new[game.key] = signature
            if self.old.get(game.key) != signature or f"{game.key}.html" not in present:
                todo.append(index)
        if todo and self.path is not None:
            self.path.unlink(missing_ok=True)
            self.removed = True
        return todo

    def save(self) -> None:
        if self.path is None or (self.new == self.old and not self.removed):
            return
        if _write_if_changed(self.path, json.dumps({"head": self.head, "pages": self.new}, separators=(",", ":"))):
            _WRITTEN[0] -= 1  # not a file of the site


def _page_values(context: Mapping[str, Any], index: int) -> dict[str, Any]:
    """What game.html is given for games[index], besides `common` and `rules`."""
    games, site = context["games"], context["site"]
    game = games[index]
    return {
        "g": game,
        "replay_file": f"{game.key}.r{FORMAT}.js",
        "replay_ready": context["replays_written"] or (site / "replays" / f"{game.key}.r{FORMAT}.js").exists(),
        "previous": games[index - 1].key if index else None,
        "next": games[index + 1].key if index + 1 < len(games) else None,
        "list_page": index // GAMES_PER_PAGE + 1,
    }


def _page_signature(context: Mapping[str, Any], index: int) -> str:
    """A digest of everything games[index]'s page is rendered from (the game's every field)."""
    values = _page_values(context, index)
    game = values.pop("g")
    fields = [getattr(game, name) for name in _GAME_FIELDS]
    text = json.dumps([fields, values], separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


_GAME_PAGES: dict[str, Any] = {}  # what the game-page workers need, inherited through fork
_GAME_FIELDS = tuple(field.name for field in dataclasses.fields(SiteGame))


def _write_game_pages(span: tuple[int, int]) -> int:
    """Write the pages of the games todo[start:stop] (indices into games); returns how many
    files it wrote (a page whose bytes are already on disk is left alone)."""
    site, games, template = _GAME_PAGES["site"], _GAME_PAGES["games"], _GAME_PAGES["template"]
    todo = _GAME_PAGES["todo"]
    start, stop = span
    written = 0
    for index in todo[start:stop]:
        html = template.render(root="../", **_GAME_PAGES["common"], rules=_GAME_PAGES["rules"],
                               **_page_values(_GAME_PAGES, index))
        written += _write_if_changed(site / "games" / f"{games[index].key}.html", html)
    return written


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
    for older in range(1, FORMAT):  # this game's file in an older format (FORMAT 3: about 5x larger)
        (out / f"{key}.r{older}.js").unlink(missing_ok=True)
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
