"""The site's game pages (`games/<key>.html`) and game-list pages (`games/page-N.html`):
their one renderer (`GamePages`: the static site's files and a served league's answers,
`arena.web.league_games`, are the same bytes), and the static site's, read from the store
a list page at a time (never every game at
once): only from where the last render into the folder stopped (the new games, the one
before them for its "next" link, their list pages; every list page when their number
changed, as each pager names the last), or all of them. A page or replay of an earlier
game deleted by hand is made again (`missing_files`: looked for only when the folder
changed since the last render). Called by `arena.site.writer`. Docs: docs/report.md.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from arena.site.model import SiteData, SiteGame, can_fork
from arena.site.replay import FORMAT
from arena.site.state import GAMES_PER_PAGE, SiteState, game_rows, read_games
from arena.site.templating import environment
from arena.store.db import Store
from arena.store.keys import deal_of

PARALLEL_PAGES_GAMES = 5000  # from this many game pages to render, several processes render them

_WORK: dict[str, Any] = {}  # what the workers need, inherited through fork


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


class GamePages:
    """The one renderer of a game's page and a game-list page, with what every page shows
    (`common`: the tournament's name, the game's, the bots, whether a server answers the
    game pages) and the game's rules."""

    def __init__(self, common: Mapping[str, Any], rules: Mapping[str, Any]):
        env = environment()
        self.common, self.rules = dict(common), rules
        self.list_template, self.game_template = env.get_template("games.html"), env.get_template("game.html")

    def game_page(
        self, game: SiteGame, *, previous: str | None, following: str | None, list_page: int, replay_ready: bool,
    ) -> str:
        """games/<key>.html: the game, the keys of the games before and after it, its list page."""
        return self.game_template.render(
            root="../", **self.common, rules=self.rules, g=game, replay_file=replay_name(game.key),
            replay_ready=replay_ready, previous=previous, next=following, list_page=list_page,
        )

    def list_page(self, games: Sequence[SiteGame], page: int, pages: int) -> str:
        """games/page-N.html: the page's games, and its pager."""
        return self.list_template.render(
            root="../", **self.common, games=games, page=page, pages=pages, links=page_links(page, pages),
        )


def replay_name(key: str) -> str:
    """The file name of a game's replay script (in the site's replays/)."""
    return f"{key}.r{FORMAT}.js"


def site_games(state: SiteState, store: Store, offset: int, limit: int) -> list[SiteGame]:
    """Finished games offset .. offset + limit in schedule order, as the pages show them."""
    rows = game_rows(store.done_game_rows(offset, limit))
    return [
        SiteGame.of_rows(game.row, game.seats, game.incidents, game.row.deal in state.open_deals)
        for game in read_games(store, rows)
    ]


GAME_FOLDERS = ("games", "replays")  # a tournament's site's folders of files per game


RACY_NS = 100_000_000  # a folder changed this recently may change again within the same clock tick


def folder_times(site: Path) -> dict[str, int]:
    """The modification times (ns) of the site's folders of game files: a file created,
    renamed or deleted in one changes its time (an edit inside a file does not). The
    kernel stamps them with a coarse clock (a tick of 1-10 ms), so a folder changed in
    the last RACY_NS is given as -1, a time no folder has: a file deleted by hand within
    the same tick as the render's last write is found by the next render all the same."""
    times = {}
    now = time.time_ns()
    for name in GAME_FOLDERS:
        try:
            changed = (site / name).stat().st_mtime_ns
        except FileNotFoundError:
            continue
        times[name] = -1 if now - changed < RACY_NS else changed
    return times


def missing_files(state: SiteState, site: Path, *, before: int, pages: int, replays: bool) -> tuple[set[int], set[int]]:
    """The places (0-based, in schedule order) of the first `before` finished games whose
    page, or (with `replays`) replay, is not in the site, and the list pages (1 ..
    `pages`) not in it: one listing of each folder and the finished games' keys, no file
    opened or rendered."""

    def names(folder: Path) -> set[str]:
        try:
            return {entry.name for entry in os.scandir(folder)}
        except FileNotFoundError:
            return set()

    pages_there = names(site / "games")
    replays_there = names(site / "replays") if replays else set()
    games: set[int] = set()
    for index, key in enumerate(state.store.done_keys_in_order(before)):
        if f"{key}.html" not in pages_there:
            games.add(index)
        elif replays and replay_name(key) not in replays_there:
            withheld = state.duplicate and deal_of(key) in state.open_deals  # no replay while its deal is open
            if not withheld:
                games.add(index)
    return games, {page for page in range(1, pages + 1) if f"page-{page}.html" not in pages_there}


def _render_pages(numbers: Sequence[int]) -> tuple[int, int, list[str]]:
    """Render the list pages and game pages of these page numbers; returns (pages rendered,
    files written, keys of games whose replay is missing)."""
    work = _WORK
    site: Path = work["site"]
    state: SiteState = work["state"]
    renderer: GamePages = work["pages"]
    pages = 0
    before = _WRITTEN[0]
    missing: list[str] = []
    with Store.open(work["dir"]) as store:
        for page in numbers:
            first = (page - 1) * GAMES_PER_PAGE
            lead = 1 if first else 0  # the game before the page, for its first game's "previous" link
            games = site_games(state, store, first - lead, GAMES_PER_PAGE + lead + 1)
            chunk = games[lead : lead + GAMES_PER_PAGE]
            if page >= work["first_list"] or page in work["lists"]:
                html = renderer.list_page(chunk, page, work["page_count"])
                _write_if_changed(site / "games" / f"page-{page}.html", html)
                pages += 1
            for offset, game in enumerate(chunk):
                index = first + offset
                if index < work["start"] and index not in work["remake"]:
                    continue
                replay = site / "replays" / replay_name(game.key)
                if work["replays"] and not game.withheld and not replay.exists():
                    missing.append(game.key)
                html = renderer.game_page(
                    game, replay_ready=work["replays"] or replay.exists(),
                    previous=games[lead + offset - 1].key if lead + offset else None,
                    following=games[lead + offset + 1].key if lead + offset + 1 < len(games) else None,
                    list_page=page,
                )
                _write_if_changed(site / "games" / f"{game.key}.html", html)
                pages += 1
    return pages, _WRITTEN[0] - before, missing


def write_game_pages(
    data: SiteData, state: SiteState, site: Path, renderer: GamePages, *, since: int | None, all_lists: bool,
    replays: str, jobs: int | None,
    folders: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Render the game pages from game `since - 1` on (None: all) and the list pages that
    hold them (`all_lists`: every list page); returns pages rendered and the keys of the
    rendered games whose replay is to be written (`replays == "all"`). With `since`, the
    pages and replays of earlier games and the list pages missing from the site are made
    too, looked for when the game folders' times are not `folders` (`folder_times` after
    the last render)."""
    global _WORK
    done = state.count
    pages = max(1, -(-done // GAMES_PER_PAGE))
    # The game before the new ones gets its "next" link; with none new, no game page.
    start = 0 if since is None else (max(0, since - 1) if done > since else done)
    first_list = 1 if all_lists or since is None else start // GAMES_PER_PAGE + 1
    remake: set[int] = set()
    lists: set[int] = set()
    # A file made or deleted by another hand since the last render (or maybe: -1, a folder
    # that render changed a moment before it recorded the times).
    if since is not None and (not folders or -1 in folders.values() or folder_times(site) != folders):
        remake, lists = missing_files(state, site, before=start, pages=pages, replays=replays == "all")
    numbers = sorted(
        {*range(min(first_list, start // GAMES_PER_PAGE + 1), pages + 1), *lists,
         *(index // GAMES_PER_PAGE + 1 for index in remake)}
    )
    if not done:
        numbers = [1]
    _WORK = {
        "site": site, "state": state, "dir": data.tournament_dir, "pages": renderer, "page_count": pages,
        "first_list": first_list,
        "start": start, "replays": replays == "all", "remake": remake, "lists": lists,
    }
    try:
        workers = min(jobs or os.cpu_count() or 1, 4)
        if workers > 1 and done - start >= PARALLEL_PAGES_GAMES and can_fork():
            import multiprocessing

            # Game pages are most of a big site: rendered by forked workers, each reading
            # its own pages from the store.
            parts = [numbers[worker::workers] for worker in range(workers)]
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                results = list(pool.map(_render_pages, parts))
            _WRITTEN[0] += sum(result[1] for result in results)
        else:
            results = [_render_pages(numbers)]
    finally:
        _WORK = {}
    return {
        "pages": sum(result[0] for result in results),
        "replays": sorted(key for result in results for key in result[2]),
        "remade": len(remake) + len(lists),
    }
