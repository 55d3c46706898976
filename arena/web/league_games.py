"""A league's game pages, game lists and replays, answered from its store on request.

A league runs for months: a file per game (its page, its replay) would be a million files
and the site's biggest cost after each batch. So for a league (settings format "league")
the site's writer writes none of them, and the server (`arena serve DIR`, `arena league
--serve`: `arena.web.app`) answers these paths itself, rendered with the site's own
templates, so a page is byte for byte what the static site would hold:

- `games/<key>.html`: the game's stored rows (game, seats, incidents), its neighbours'
  keys and its list page;
- `games/page-N.html`: the finished games in key order (schedule order), GAMES_PER_PAGE
  a page: where each page starts is kept by `arena.store.partial.DoneIndex` (one pass
  over the finished games' keys at the first request, then only what changed), so a
  page is one short range of the key index however many games came before;
- `replays/<key>.r<FORMAT>.js`: the game re-simulated (`arena.site.replay`) on its first
  request, in a thread of a small pool of its own (SIMULATIONS at a time; one per game
  however many ask at once), then kept in a bounded cache folder beside the store
  (`CACHE_DIR`, CACHE_BYTES, least recently used evicted first; a file's name holds the
  game's key and a digest of its seed, seats and finish time).

Every request is hostile: a path is matched whole against a strict pattern (a key is
digits and dashes, a page number at most nine digits) before the store is asked, and a
key that is not a finished game of the store, a page out of range and a replay of a
duplicate deal that still has a rotation to play (its cards would tell the games to come)
are 404 with a one-line reason. An answer is kept in memory (ANSWER_BYTES in all) until
the store changes (SQLite's data_version: any commit), so a page many readers ask for is
rendered once a batch; a replay as answered (stderr stripped: the costly part) is kept by
its game's identity whatever the league commits (REPLAY_BYTES in all), since a finished
game's replay never changes (re-read and re-stripped after every commit, replays took
most of the server's threads' time with 100 readers, bench/server.py). With `hide_stderr` (a served league's default, see
`arena.web.stderr`) the bots' stderr is left out of pages and replays, as for files.
A tournament keeps its static site; these paths are then its files. Docs: docs/report.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.responses import PlainTextResponse, Response

from arena.store.keys import deal_of
from arena.store.partial import DoneIndex

CACHE_DIR = ".replay-cache"  # beside arena.sqlite
CACHE_BYTES = 256 << 20  # the replay cache's bound on disk
SIMULATIONS = 1  # replays re-simulated at once (each is CPU-bound: 1-2 s for Three Thirteen)
PAGE_THREADS = 4  # threads answering this module's requests (the store's reads, renders)
ANSWER_BYTES = 32 << 20  # answers kept in memory, rendered once until the store changes
REPLAY_BYTES = 64 << 20  # replays kept in memory as answered (a replay of 3UP 3DOWN: 5-40 KB)

_KEY = r"[0-9]{1,9}-[0-9]{1,9}-[0-9]{1,4}"
GAME_PAGE = re.compile(rf"games/({_KEY})\.html")
LIST_PAGE = re.compile(r"games/page-([1-9][0-9]{0,8})\.html")
REPLAY = re.compile(rf"replays/({_KEY})\.r([0-9]{{1,4}})\.js")


@dataclass
class Answer:
    """What a request gets: a status, a body and its type."""

    status: int
    body: bytes
    media: str = "text/html; charset=utf-8"
    cache: str = "no-cache"

    def response(self) -> Response:
        if self.status != 200:
            return PlainTextResponse(self.body, self.status, headers={"cache-control": "no-store"})
        return Response(self.body, self.status, media_type=self.media, headers={"cache-control": self.cache})


def _missing(text: str) -> Answer:
    return Answer(404, (text + "\n").encode(), "text/plain; charset=utf-8")


class ServedGames:
    """The game pages, game lists and replays of the league whose store is in `league_dir`
    (`answer(path)`: None when the path is none of them or the store holds no league, so
    the site's files answer it)."""

    def __init__(
        self, league_dir: str | Path, *, hide_stderr: bool = False, cache_bytes: int = CACHE_BYTES,
        simulations: int = SIMULATIONS,
    ):
        self.league_dir = Path(league_dir)
        self.hide_stderr = hide_stderr
        self.cache = self.league_dir / CACHE_DIR
        self.cache_bytes = cache_bytes
        self._store: Any = None
        self._kind: str | None = None  # "league", "tournament" or None (no store with settings yet)
        self._lock = threading.Lock()  # the store's connection: one query at a time
        self._simulating = threading.Semaphore(max(1, simulations))
        self._replay_locks: dict[str, list[Any]] = {}  # key -> [its lock, requests holding it]
        self._cached: OrderedDict[str, int] | None = None  # cache file -> bytes, oldest use first
        self._cache_lock = threading.Lock()
        self._caching = True  # False when the cache folder cannot be made
        # Answers as of the store's data_version (any commit of the league's makes them old):
        # a page many readers ask for is rendered once a batch. Least recently used first.
        self._answers: OrderedDict[str, tuple[int, Answer]] = OrderedDict()
        self._answer_bytes = 0
        # Replays as answered (stderr stripped), by the cache file's name (the game's
        # identity): unlike a page, a finished game's replay is the same after any commit.
        self._replays: OrderedDict[str, Answer] = OrderedDict()
        self._replay_bytes = 0
        self._limiter: Any = None
        self._done: Any = None  # where each list page starts (arena.store.partial.DoneIndex)

    # -- the store ------------------------------------------------------------------------

    def _open(self) -> Any:
        """The store, once it holds a league (None before a league's first run makes it,
        and for a tournament's store, which is then never asked again)."""
        if self._store is None and self._kind is None:
            from arena.store.db import STORE_FILE, Store, StoreError

            if not (self.league_dir / STORE_FILE).is_file():
                return None
            try:
                store = Store.open(self.league_dir)
            except StoreError:
                return None
            settings = store.settings()
            if settings is None or settings.get("format") != "league":
                store.close()
                if settings is not None:
                    self._kind = "tournament"  # its site's files answer for it
                return None
            from arena.site.writer import GAMES_PER_PAGE

            self._store, self._kind = store, "league"
            self._done = DoneIndex(store, GAMES_PER_PAGE)
        return self._store

    def is_league(self) -> bool:
        """True once the folder's store is a league's."""
        with self._lock:
            return self._open() is not None

    def warm(self) -> ServedGames:
        """Read where each list page starts now, in a thread of its own (a server's start:
        at 1M games the pass takes seconds, which its first reader would otherwise wait)."""

        def read() -> None:
            with self._lock:
                if self._open() is not None:
                    self._done.refresh()

        threading.Thread(target=read, name="arena-served-games", daemon=True).start()
        return self

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    # -- the answers ----------------------------------------------------------------------

    def answer(self, path: str) -> Answer | None:
        """The answer to GET `path` (relative to the site, normalised), or None when the
        site's files answer it. Blocking: call it from a thread."""
        game, page, replay = GAME_PAGE.fullmatch(path), LIST_PAGE.fullmatch(path), REPLAY.fullmatch(path)
        if not (game or page or replay):
            return None
        with self._lock:
            if self._open() is None:
                return None
            version = self._store.data_version()  # moves when the league commits
        with self._cache_lock:
            kept = self._answers.get(path)
            if kept is not None and kept[0] == version:
                self._answers.move_to_end(path)
                return kept[1]
        if game:
            found = self.game_page(game.group(1))
        elif page:
            found = self.list_page(int(page.group(1)))
        else:
            found = self.replay(replay.group(1), int(replay.group(2)))
        if not replay and len(found.body) <= ANSWER_BYTES // 16:  # a replay is kept by its game's identity
            with self._cache_lock:
                old = self._answers.pop(path, None)
                self._answer_bytes += len(found.body) - (len(old[1].body) if old else 0)
                self._answers[path] = (version, found)
                while self._answer_bytes > ANSWER_BYTES:
                    self._answer_bytes -= len(self._answers.popitem(last=False)[1][1].body)
        return found

    async def respond(self, path: str) -> Response | None:
        """`answer` in a thread of this module's own pool (a burst of replays never holds
        the threads the door's routes use)."""
        if self._kind == "tournament" or not (
            GAME_PAGE.fullmatch(path) or LIST_PAGE.fullmatch(path) or REPLAY.fullmatch(path)
        ):
            return None  # the site's files, at once (no thread)
        import anyio.to_thread
        from anyio import CapacityLimiter

        if self._limiter is None:
            self._limiter = CapacityLimiter(PAGE_THREADS)
        found = await anyio.to_thread.run_sync(self.answer, path, limiter=self._limiter)
        return None if found is None else found.response()

    def _site(self) -> tuple[Any, bool]:
        """The site's renderer of game pages, with the league's names and rules, and
        whether its deals are duplicate."""
        from arena.site.gamepages import GamePages

        with self._lock:
            settings = self._store.settings() or {}
        common = {
            "tournament": str(settings.get("name") or self.league_dir.resolve().name),
            "game_name": str(settings.get("game") or ""),
            "bots": {},
            "served_games": True,
        }
        return GamePages(common, settings.get("rules") or {}), bool(settings.get("duplicate", False))

    def _site_game(self, row: Any, duplicate: bool) -> Any:
        """A finished game's page model, as the static site's writer builds it."""
        from arena.site.model import SiteGame, incident_view

        with self._lock:
            seats = self._store.seats(row.key)
            incidents = self._store.incidents(row.key)
            withheld = duplicate and self._store.deal_open(row.deal)
        return SiteGame.of_rows(row, seats, [incident_view(incident) for _, incident in incidents], withheld)

    def _finished(self, key: str) -> Any:
        with self._lock:
            row = self._store.game_row(key)
        return row if row is not None and row.status == "done" else None

    def _page_html(self, html: str) -> Answer:
        if self.hide_stderr:
            from arena.web.stderr import HIDDEN_NOTE, LOG

            html = LOG.sub(HIDDEN_NOTE, html)
        return Answer(200, html.encode("utf-8"))

    def game_page(self, key: str) -> Answer:
        """games/<key>.html: the game, its neighbours and its list page."""
        from arena.site.writer import GAMES_PER_PAGE

        row = self._finished(key)
        if row is None:
            return _missing(f"no finished game {key} in this league")
        pages, duplicate = self._site()
        game = self._site_game(row, duplicate)
        with self._lock:
            previous, following = self._store.done_neighbours(key)
            self._done.refresh()
            index = self._done.place(key)
        html = pages.game_page(
            game, previous=previous, following=following, list_page=index // GAMES_PER_PAGE + 1, replay_ready=True,
        )
        return self._page_html(html)

    def list_page(self, number: int) -> Answer:
        """games/page-N.html: GAMES_PER_PAGE finished games in schedule order."""
        renderer, duplicate = self._site()
        with self._lock:
            self._done.refresh()
            pages = max(1, len(self._done.starts))
            rows = self._done.games_of_page(number)
        if number > pages:
            return _missing(f"no page {number} of games: there are {pages}")
        games = [self._site_game(row, duplicate) for row in rows]
        return self._page_html(renderer.list_page(games, number, pages))

    # -- replays --------------------------------------------------------------------------

    def replay(self, key: str, version: int) -> Answer:
        """replays/<key>.r<FORMAT>.js: from the cache, or re-simulated now and cached."""
        from arena.site.replay import FORMAT

        if version != FORMAT:
            return _missing(f"no replay {key}.r{version}.js: replays are in format {FORMAT}")
        row = self._finished(key)
        if row is None:
            return _missing(f"no finished game {key} in this league")
        with self._lock:
            duplicate = bool((self._store.settings() or {}).get("duplicate"))
            still_open = duplicate and self._store.deal_open(row.deal)
        if still_open:
            return _missing(f"the replay of game {key} is withheld until every rotation of deal "
                            f"{deal_of(key)} is played")
        # The cache's name holds the game's identity: a new league in the same folder, whose
        # keys start again, never gets the old one's replays.
        identity = json.dumps([row.seed, row.bots, row.finished_at, row.rules_version]).encode()
        name = f"{key}.{hashlib.blake2b(identity, digest_size=6).hexdigest()}.r{FORMAT}.js"
        with self._cache_lock:  # a finished game's replay never changes: kept whatever the league commits
            kept = self._replays.get(name)
            if kept is not None:
                self._replays.move_to_end(name)
                return kept
        text = self._replay_text(key, name)
        if self.hide_stderr:
            from arena.web.stderr import strip_replay

            text = strip_replay(text)
        found = Answer(200, text.encode("utf-8"), "text/javascript; charset=utf-8", "max-age=3600")
        with self._cache_lock:
            if name not in self._replays and len(found.body) <= REPLAY_BYTES // 16:
                self._replays[name] = found
                self._replay_bytes += len(found.body)
                while self._replay_bytes > REPLAY_BYTES:
                    self._replay_bytes -= len(self._replays.popitem(last=False)[1].body)
        return found

    def _replay_text(self, key: str, name: str) -> str:
        with self._cache_lock:
            entry = self._replay_locks.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:  # a second request for the same game waits for the first one's work
                text = self._cache_read(name)
                if text is None:
                    with self._simulating:
                        text = self._simulate(key)
                    self._cache_write(name, text)
                return text
        finally:
            with self._cache_lock:
                entry[1] -= 1
                if entry[1] == 0:
                    self._replay_locks.pop(key, None)

    def _simulate(self, key: str) -> str:
        from arena.site.replay import (
            FORMAT,
            ReplayUnavailable,
            replay_frames,
            script_text,
        )

        with self._lock:
            result = self._store.game_result(key)
        try:
            data: dict[str, Any] = replay_frames(result)
        except ReplayUnavailable as reason:
            data = {"format": FORMAT, "error": str(reason)}
        return script_text(data, key)

    def _index(self) -> OrderedDict[str, int]:
        """The cache's files by last use (read once, then kept up to date)."""
        if self._cached is None:
            found = []
            try:
                self.cache.mkdir(mode=0o700, exist_ok=True)
                for entry in os.scandir(self.cache):
                    if entry.is_file() and entry.name.endswith(".js"):
                        stat = entry.stat()
                        found.append((stat.st_mtime_ns, entry.name, stat.st_size))
            except OSError:  # no folder can be made there (read-only, a file in its place)
                self._caching = False  # replays are still answered, each simulated again
            self._cached = OrderedDict((name, size) for _, name, size in sorted(found))
        return self._cached

    def _cache_read(self, name: str) -> str | None:
        with self._cache_lock:
            index = self._index()
            if name not in index:
                return None
            index.move_to_end(name)
        try:
            text = (self.cache / name).read_text(encoding="utf-8")
            _touch(self.cache / name)  # its last use, for the next server's eviction order
            return text
        except (OSError, UnicodeDecodeError):
            with self._cache_lock:
                self._index().pop(name, None)
            return None

    def _cache_write(self, name: str, text: str) -> None:
        data = text.encode("utf-8")
        with self._cache_lock:
            index = self._index()
            if not self._caching:
                return
            partial = self.cache / f".{name}.{os.getpid()}.{threading.get_ident()}.part"
            try:
                partial.write_bytes(data)
                os.replace(partial, self.cache / name)
                _touch(self.cache / name)
            except OSError:
                _unlink(partial)
                return  # a full disk: the replay is still answered, just not kept
            index[name] = len(data)
            index.move_to_end(name)
            total = sum(index.values())
            while total > self.cache_bytes and len(index) > 1:
                oldest, size = index.popitem(last=False)
                _unlink(self.cache / oldest)
                total -= size

    def cached_bytes(self) -> int:
        """The bytes the replay cache holds now."""
        with self._cache_lock:
            return sum(self._index().values())


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # the cache's bound is kept in memory; a file left over is found by the next start


def _touch(path: Path) -> None:
    """Stamp a file's time of use with the clock's own precision (a file system's stamp
    may lag by milliseconds: two uses in a row would look simultaneous)."""
    now = time.time_ns()
    os.utime(path, ns=(now, now))


def served_games_for(site: str | Path, *, hide_stderr: bool = False) -> ServedGames:
    """The ServedGames of a site written into its store's folder (`DIR/site`: DIR's store,
    which may appear later, when a league's first run makes it)."""
    return ServedGames(Path(site).resolve().parent, hide_stderr=hide_stderr).warm()
