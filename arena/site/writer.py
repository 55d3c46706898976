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
A render writes a file only when its bytes change (atomically). Everything summed over
the history (ratings, confidence, each bot's results, rating points and moves) comes
from the site's state beside the store (`arena.site.state`), brought up to date from the
games added since the last render; the game pages and list pages are read from the store
a page at a time (`arena.site.gamepages`), only from where the last render stopped
(`full=True` rebuilds the state and renders all). In duplicate mode a deal with a
rotation still to play shows no replay (same cards). Each bot's band, group and league
mark from `arena.ratings.standings`; the charts' geometry from `arena.site.charts`.
A league's site holds no file per game (`game_files`): its game pages, game lists and
replays are answered by the server from the store (`arena.web.league_games`).
The HTTP server (`arena serve`) is `arena.web.app`.
Nothing is loaded from the network: the CSS and the scripts are in `assets/` (each game's
viewer script copied from its folder in `engine/`).
Docs: docs/report.md.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from arena.ratings.confidence import SETTLE_LEVEL
from arena.ratings.results import is_league, is_swiss
from arena.ratings.standings import ranked
from arena.resources import templates_dir
from arena.site.gamepages import (
    _WRITTEN,
    GamePages,
    _write_if_changed,
    folder_times,
    write_game_pages,
)
from arena.site.gamepages import (
    page_links as page_links,  # re-exported: the report's API
)
from arena.site.model import ReportError, SiteData, load_site_data
from arena.site.pages import h2h_cells, membership_text
from arena.site.pages import (
    settings_summary as settings_summary,  # re-exported: the report's API
)
from arena.site.replay import (
    FORMAT,
    ReplayUnavailable,
    _script_json,
    replay_frames,
    script_text,
)
from arena.site.state import GAMES_PER_PAGE, SiteState
from arena.site.templating import environment, fmt_score, rank_change, signed
from arena.site.templating import slug as slug  # re-exported: the report's API
from arena.store.db import BotRecord
from arena.store.lock import rendering
from engine.registry import all_games

SITE_DIR = "site"
GAMES_PER_PAGE = GAMES_PER_PAGE  # re-exported: the pages' size lives with the state
MATRIX_BOTS = 40  # the matrix page shows the top of the standings; each bot page has its full row


# --- helpers for the pages ---------------------------------------------------------------


def _script_data(name: str, key: str, value: Any) -> str:
    """A data script for file:// pages (which cannot fetch JSON): registers `value` as
    window[name][key]. Escaped for a <script> context: nothing in it closes the tag."""
    return f"window.{name}=window.{name}||{{}};window.{name}[{_script_json(key)}]={_script_json(value)};\n"


def _compact(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value



# --- the site ----------------------------------------------------------------------------


def write_site(
    data: SiteData, site: Path, *, replays: str = "all", jobs: int | None = None, full: bool = False,
    game_files: bool | None = None, broken_bots: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """Bring the site in `site` up to date; returns counts (pages rendered, files written,
    replays written, failed). A file is written only when its bytes change.

    The history's sums come from the site's state beside the store (`arena.site.state`),
    brought up to date from the games added since the last render: the index, h2h.html,
    live.json, data/site.js and every bot page are rendered; a bot's data script only when
    it played; the game pages and game-list pages only from where the last render into
    this folder stopped. `full` rebuilds the state and renders every page (still writing
    only the files whose bytes differ). `jobs`: processes for a big site's game pages and
    for the replays (default: the machine's cores, at most 4).

    `game_files`: write a page per game, the game list's pages and the replays (default:
    yes for a tournament; no for a league, whose server answers them from its store,
    `arena.web.league_games`; the files an older render left there are removed).

    `broken_bots`: what a league's index says of its registry, handed by the caller (the
    site reads the store, never a bot folder): each folder that cannot join, by its path in
    the registry, and why (`arena.config.botfolder.broken_folders`).
    """
    from arena.store.db import Store, StoreError

    if replays not in ("all", "none"):
        raise ReportError(f"replays must be 'all' or 'none', not {replays!r}")
    if data.tournament_dir is None:
        raise ReportError("the site is written from a store: load_site_data(DIR) gives its folder")
    with rendering(data.tournament_dir):  # one render at a time (a league's, arena report)
        try:
            store = Store.open(data.tournament_dir)
        except StoreError as error:
            raise ReportError(str(error)) from None
        return _write_site(
            data, store, site, replays=replays, jobs=jobs, full=full, game_files=game_files, broken_bots=broken_bots,
        )


def _write_site(
    data: SiteData, store, site: Path, *, replays: str, jobs: int | None, full: bool,  # noqa: ANN001
    game_files: bool | None, broken_bots: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    try:
        state = SiteState(data.tournament_dir, store, full=full)
        try:
            state.refresh()
            if game_files is None:
                game_files = not is_league(data.settings)
            return _write_from_state(
                data, state, site, replays=replays, jobs=jobs, full=full, game_files=game_files, broken_bots=broken_bots,
            )
        finally:
            state.close()
    finally:
        store.close()


def _write_from_state(
    data: SiteData, state: SiteState, site: Path, *, replays: str, jobs: int | None, full: bool, game_files: bool,
    broken_bots: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    env = environment()
    site.mkdir(parents=True, exist_ok=True)
    for sub in ("bots", "games", "replays", "assets") if game_files else ("bots", "assets"):
        (site / sub).mkdir(exist_ok=True)
    for asset in (templates_dir() / "assets").iterdir():
        _write_if_changed(site / "assets" / asset.name, asset.read_bytes())
    for game in all_games():  # each game's viewer script lives beside its rules in engine/
        tables = game.replay_tables()
        if tables is not None:
            _write_if_changed(site / "assets" / f"replay-{game.name}.js", tables.script.read_bytes())
    for old in (".site-pages.json", ".report-ratings.json"):  # an older arena's records, superseded by the state
        (data.tournament_dir / old).unlink(missing_ok=True)  # type: ignore[operator]

    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    bots = {bot.bot: bot for bot in data.bots}
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

    # What the last render into this folder wrote (None: write everything).
    last = state.last_rendered if not (full or state.rebuilt) else None
    if last is not None and last.get("site") != str(site.resolve()):
        last = None
    done = state.count
    game_pages = max(1, -(-done // GAMES_PER_PAGE))
    if game_files:
        counts = write_game_pages(
            data, state, site, GamePages(common, data.settings.get("rules") or {}),
            since=None if last is None else last["count"], all_lists=last is None or last["pages"] != game_pages,
            replays=replays, jobs=jobs, folders=None if last is None else last.get("folders"),
        )
        pages += counts["pages"]
    else:
        _remove_game_files(site)
        counts = {"pages": 0, "replays": []}

    ledger = state.ledger
    table = ledger.table()
    confidence = data.confidence_given or state.confidence()
    for line in table.standings:  # a bot only seen in results still gets a page
        bots.setdefault(line.bot, BotRecord(line.bot, line.bot, "", "", "", "unknown"))
    # Each line's band, group, settled and league status, as the terminal has them.
    standings = ranked(table.standings, confidence, data.members, league=is_league(data.settings))
    rank = {line.bot: number for number, line in enumerate(standings.lines, 1)}
    order = [line.bot for line in standings.lines]
    swiss = is_swiss(data.settings)
    last_move = {bot: move for bot, move in state.moves.get("last_move", {}).items() if bot in rank}
    named = state.numbered  # the standings' bots by name, as the state's rows number them
    rewrite_all = last is None or last.get("numbered") != named
    _write_game_data(site, state, named, order if rewrite_all else sorted(state.touched & set(order)), every=rewrite_all)
    write(
        site / "index.html",
        "index.html",
        "",
        standings=standings.lines,
        group_sizes=Counter(line.group for line in standings.lines),
        swiss=swiss,
        last_move=last_move,
        summary=settings_summary(data.settings),
        settings=data.settings,
        done=done,
        total=data.total_games,
        game_pages=game_pages,
        generated=generated,
        marked=any(line.mark for line in standings.lines),
        suspended=standings.suspended(),
        settled_span=standings.settled_span,
        settle_level=f"{SETTLE_LEVEL:.0%}",
        broken_bots=list(broken_bots),
    )

    top = order[:MATRIX_BOTS]
    model = {row: {col: confidence.ahead(row, col) for col in top if col != row} for row in top}
    ahead = {bot: state.blob(bot)["ahead"] for bot in top}
    together = {bot: state.blob(bot)["together"] for bot in top}
    write(
        site / "h2h.html", "h2h.html", "", matrix_bots=top, h2h_rows=_h2h_rows(top, h2h_cells(top, model, ahead, together)),
        total_bots=len(standings.lines),
    )

    # A bot page is rendered again only when what it shows changed: its own games (the bot
    # played), or its line, rank, band, membership or record (moved by others' games).
    shown = last.get("bot_pages", {}) if last is not None else {}
    signatures: dict[str, str] = {}
    records = hashlib.blake2b(repr(sorted(bots.items())).encode(), digest_size=8).hexdigest()
    for line in standings.lines:
        bot = line.bot
        member = data.members.get(bot)
        signature = hashlib.blake2b(
            repr((records, line, rank[bot], line.mark, member, swiss, data.name, data.game)).encode(), digest_size=8,
        ).hexdigest()
        signatures[bot] = signature
        page = site / "bots" / f"{slug(bot)}.html"
        if bot not in state.touched and shown.get(bot) == signature and page.is_file():
            continue
        # Its sections below the top (chart, seats, head-to-head, incidents, stderr, games)
        # change only when it plays: kept rendered in the state for the next render.
        details = state.fragment(bot) if last is not None and bot not in state.touched else None
        blob = state.blob(bot)
        if details is None:
            chart, chart_keys = state.chart(bot)
            opponents = [
                {"bot": other, "games": count, "ahead": blob["ahead"].get(other, 0), "behind": blob["behind"].get(other, 0)}
                for other, count in blob["together"].items()
            ]
            opponents.sort(key=lambda o: (-(o["ahead"] - o["behind"]), o["bot"]))
            seats = [
                {"seat": int(seat), "games": cell[0], "wins": cell[1], "average": cell[2] / cell[0]}
                for seat, cell in sorted(blob["by_seat"].items(), key=lambda item: int(item[0]))
            ]
            if "bot_details.html" not in templates:
                templates["bot_details.html"] = env.get_template("bot_details.html")
            details = templates["bot_details.html"].render(
                root="../", **common, line=line, chart=chart, chart_links=_chart_links(chart, chart_keys), seats=seats,
                opponent_rows=_opponent_rows(opponents), recent_rows=_recent_rows(blob["recent"]),
                incidents=blob["incidents"], excerpts=blob["excerpts"], recent=blob["recent"], played=blob["played"],
                swiss=swiss,
            )
            state.keep_fragment(bot, details)
        first, last_round, count = blob["rounds"] or (0, 0, 0)
        write(
            page,
            "bot.html",
            "../",
            line=line,
            rank=rank[bot],
            interval=line.band,
            mark=line.mark,
            member=member,
            membership=membership_text(member, first, last_round, count) if member else "",
            info=bots[bot],
            details=markupsafe.Markup(details),
        )

    # What a page served by `arena serve` looks at to reload itself when the standings change.
    live = [done, sorted((bot, m.status) for bot, m in data.members.items())]
    version = hashlib.sha256(json.dumps(live).encode()).hexdigest()[:16]
    _write_if_changed(site / "live.json", json.dumps({"version": version, "games": done}) + "\n")

    written = failed = 0
    if counts["replays"]:
        written, failed = _write_replays(data.tournament_dir, site / "replays", counts["replays"], jobs)  # type: ignore[arg-type]
    state.save_rendered(named, str(site.resolve()), game_pages, signatures, folder_times(site) if game_files else None)
    return {
        "pages": pages, "files_written": _WRITTEN[0] - written_before, "replays_written": written,
        "replays_failed": failed, "games": done,
    }


@functools.lru_cache(maxsize=65536)
def _html(text: str) -> str:
    """`text` escaped for HTML as the templates escape it (markupsafe), once per name or key
    in a process: the rows made in Python name the same bots and games again and again."""
    return str(markupsafe.escape(text))


def _opponent_rows(opponents: Sequence[Mapping[str, Any]]) -> markupsafe.Markup:
    """The rows of a bot page's head-to-head table (made here, not in the template: up to
    a row per bot of the field, on every page of a bot that played)."""
    rows = []
    for o in opponents:
        name, games, ahead, behind = _html(o["bot"]), o["games"], o["ahead"], o["behind"]
        good = ' class="good"' if ahead > behind else ""
        bad = ' class="bad"' if behind > ahead else ""
        rows.append(
            f'<tr><td data-value="{name}"><a href="{slug(o["bot"])}.html">{name}</a></td>'
            f'<td data-value="{games}">{games}</td><td data-value="{ahead}"{good}>{ahead}</td>'
            f'<td data-value="{behind}"{bad}>{behind}</td></tr>'
        )
    return markupsafe.Markup("".join(rows))


def _h2h_rows(bots: Sequence[str], cells: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> markupsafe.Markup:
    """The rows of the head-to-head matrix (made here, not looped in the template: up to
    40 x 40 cells on a page rendered after every batch)."""
    escape = _html
    out = []
    for number, row in enumerate(bots, 1):
        name = escape(row)
        out.append(f'    <tr><th class="rowhead"><span class="muted">{number}</span> <a href="bots/{slug(row)}.html" title="{name}">{name}</a></th>\n')
        for col in bots:
            if col == row:
                out.append('<td class="self"></td>\n')
                continue
            cell, other = cells[row][col], escape(col)
            model = cell["model"] is not None
            title = f"{round(100 * cell['model_exact'], 1)}% by the ratings; " if model else ""
            title += f"{cell['ahead']} of {cell['games']} games seen" if cell["games"] else "never at one table"
            seen = f"{cell['seen']}% \u00b7 {cell['ahead']}/{cell['games']}" if cell["games"] else "not met"
            out.append(
                f'        <td class="{cell["colour"]}" style="--share: {cell["tint"]}" data-bot="{name}" data-other="{other}" '
                f'title="{name} ahead of {other}: {title}">{f"""<span class="model">{cell["model"]}%</span>""" if model else ""}'
                f'          <small class="seen">{seen}</small></td>\n'
            )
        out.append("    </tr>\n")
    return markupsafe.Markup("".join(out))


def _recent_rows(recent: Sequence[Mapping[str, Any]]) -> markupsafe.Markup:
    """The rows of a bot page's table of its recent games, newest first (made here, not
    in the template: up to RECENT rows on the page of every bot that played)."""
    if not recent:
        return markupsafe.Markup('<tr><td colspan="8" class="muted">No game yet.</td></tr>')
    escape = _html
    rows = []
    for r in recent:
        game, seat, move = r["g"], r["seat"], r["move"]
        key, places = escape(game["key"]), game["places"]
        forfeit = ' <span class="tag bad">forfeit</span>' if game["forfeits"][seat] else ""
        change = "up" if move[1] > 0.005 else ("down" if move[1] < -0.005 else "same")
        moved = "up" if move[3] > 0 else ("down" if move[3] < 0 else "same")
        mates = "".join(
            f'<span class="seatres"><span class="place p{places[other]}">{places[other]}</span> '
            f'<a href="{slug(name)}.html">{escape(name)}</a></span>'
            for other, name in enumerate(game["seats"]) if other != seat
        )
        rows.append(
            f'<tr><td><a href="../games/{key}.html">{key}</a></td><td>{game["round"]}</td><td>{seat}</td>'
            f'<td><span class="place p{places[seat]}">{places[seat]}</span>{forfeit}</td>'
            f'<td>{fmt_score(game["scores"][seat])}</td>'
            f'<td class="num">{"%.2f" % move[0]} <span class="{change}">{signed(move[1])}</span></td>'
            f'<td class="num">{move[2]} <span class="{moved}">{rank_change(move[3])}</span></td><td>{mates}</td></tr>'
        )
    return markupsafe.Markup("".join(rows))


def _chart_links(chart: Mapping[str, Any], keys: Sequence[str | None]) -> markupsafe.Markup:
    """The rating chart's points, each a link to the game after which it was taken."""
    return markupsafe.Markup("".join(
        f'<a class="pt" href="../games/{_html(key)}.html" tabindex="-1" style="left:{point[1]}%;top:{point[2]}%"></a>'
        for point, key in zip(chart.get("points", []), keys)
    ))


_GAME_FILE = re.compile(r"(page-)?[0-9-]+\.html|\.?[0-9-]+\.r[0-9]+\.js(\.[0-9]+\.part)?")


def _remove_game_files(site: Path) -> None:
    """A league's site holds no file per game (its server answers them): the game pages,
    list pages and replays an older render wrote are removed."""
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


DATA_DIR = "data"  # the site's data scripts: data/site.js, data/bots/<slug>/<n>.js
ROWS_PER_SCRIPT = 1000  # a bot's games per data script: a full one is never written again
ROUNDS_PER_SCRIPT = 1000  # rounds per data/rounds/<n>.js (the n-th: rounds (n-1) * 1000 + 1 to n * 1000)


def _round_script(round_number: int) -> int:
    """The data/rounds/<n>.js that holds a round (rounds 1 to ROUNDS_PER_SCRIPT: 1)."""
    return max(1, (round_number - 1) // ROUNDS_PER_SCRIPT + 1)


def _write_game_data(site: Path, state: SiteState, named: Sequence[str], bots: Sequence[str], *, every: bool) -> None:
    """The data the pages' scripts read (file:// pages cannot fetch JSON, so each is a script):

    - `data/site.js`: every bot (name, page, games) by id (not by standings: a bot's
      number stays the same when the standings change), the number of round scripts,
      ROWS_PER_SCRIPT and ROUNDS_PER_SCRIPT;
    - `data/rounds/<n>.js`: for each round of the n-th ROUNDS_PER_SCRIPT (a league's round
      is a batch) with a finished game, [round, the first and last game-list page holding
      it, its games]; written from the script holding the last round of the state's
      cursor (with `every`: all, and those past the last removed);
    - `data/bots/<slug>/<n>.js`: a bot's games, ROWS_PER_SCRIPT to a script (the n-th
      holds its games (n-1) * ROWS_PER_SCRIPT + 1 to n * ROWS_PER_SCRIPT), loaded only by
      the page that shows its games (its bot page, or the game list filtered by it, which
      load every script of the bot: `games / ROWS_PER_SCRIPT` rounded up). Written for
      `bots` (those that played since the last render) from the script that holds their
      first game after the state's last cursor: a full script is never written again, so
      a render after a batch writes a bounded amount however many games a bot played.
      With `every` (a first render, a full one, or new numbers) every script of `bots`,
      and those a render of an older arena left (`data/bots/<slug>.js`, every game in one)
      or beyond a bot's last are removed. A row:
      [key, round, table, rotation, seat, [bot numbers by seat], [places], [scores],
      forfeited seats as bits, rating after, its change, rank after, rank change,
      [[seat, incident reason], ...] or 0, mu after, sigma after].
    """
    folder = site / DATA_DIR / "bots"
    folder.mkdir(parents=True, exist_ok=True)
    last_round = state.last_round()
    round_scripts = 0 if last_round is None else _round_script(last_round)
    index_data = {
        "bots": [[bot, slug(bot), state.games_of(bot)] for bot in named],
        "round_scripts": round_scripts,
        "pages": max(1, -(-state.count // GAMES_PER_PAGE)),
        "rows_per_script": ROWS_PER_SCRIPT,
        "rounds_per_script": ROUNDS_PER_SCRIPT,
    }
    _write_if_changed(site / DATA_DIR / "site.js", _script_data("ARENA_DATA", "site", index_data))
    rounds_folder = site / DATA_DIR / "rounds"
    if every:
        for old in rounds_folder.glob("*.js") if rounds_folder.is_dir() else ():
            if not old.stem.isdigit() or not 1 <= int(old.stem) <= round_scripts:
                old.unlink()
    if round_scripts:
        rounds_folder.mkdir(exist_ok=True)
        saved = None if every else state.round_saved
        for number in range(1 if saved is None else _round_script(saved), round_scripts + 1):
            last = number * ROUNDS_PER_SCRIPT
            entries = state.round_entries(last - ROUNDS_PER_SCRIPT + 1 if number > 1 else -(1 << 62), last)
            _write_if_changed(rounds_folder / f"{number}.js", _script_data("ARENA_DATA", f"rounds/{number}", entries))
    for bot in bots:
        name = slug(bot)
        scripts = -(-state.games_of(bot) // ROWS_PER_SCRIPT)
        first = 0 if every else state.games_saved(bot) // ROWS_PER_SCRIPT  # the first script that changed
        rows = state.rows(bot, first * ROWS_PER_SCRIPT)
        if every:
            (folder / f"{name}.js").unlink(missing_ok=True)
            for old in (folder / name).glob("*.js") if (folder / name).is_dir() else ():
                if not old.stem.isdigit() or int(old.stem) > scripts:
                    old.unlink()
        if scripts:
            (folder / name).mkdir(exist_ok=True)
        for number in range(first + 1, scripts + 1):
            label = _script_json(f"bot:{name}/{number}")
            part = rows[(number - first - 1) * ROWS_PER_SCRIPT:(number - first) * ROWS_PER_SCRIPT]
            # The rows are kept as text (`_script_data`'s bytes): no row is parsed again.
            text = f"window.ARENA_DATA=window.ARENA_DATA||{{}};window.ARENA_DATA[{label}]=[{','.join(part)}];\n"
            _write_if_changed(folder / name / f"{number}.js", text)


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


def render_site(
    tournament_dir: str | Path, *, replays: str = "all", jobs: int | None = None,
    broken_bots: Sequence[tuple[str, str]] = (),
) -> Path:
    """Render `DIR/site/` from the tournament store in DIR (`broken_bots`: see `write_site`);
    returns the site folder."""
    tournament_dir = Path(tournament_dir)
    data = load_site_data(tournament_dir, background=True)
    site = tournament_dir / SITE_DIR
    write_site(data, site, replays=replays, jobs=jobs, broken_bots=broken_bots)
    return site
