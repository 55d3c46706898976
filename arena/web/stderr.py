"""A bot's stderr on a served league is its author's (`Door.hide_stderr`, the default;
`--show-stderr` turns it off). The static site keeps every line (a tournament's site is
published as it is); the served one answers without them:

- a game's replay script (`replays/<key>.r<N>.js`): each decision's stderr lines and each
  forfeit's last lines become null (the viewer then says they are not shown), think time
  and choices stay (the decisions are in the script's compressed part: it is inflated,
  stripped and packed again, `arena.site.replay.unpack`/`pack`);
- a bot's page (`bots/<slug>.html`): its log excerpts are replaced by a note;
- a game's page (`games/<key>.html`): each incident's last stderr lines, likewise.

Which file a request gets is decided as the file server decides it: the path normalised
as Starlette's StaticFiles normalises it (doubled slashes, dot segments, percent-encoded
dots and slashes, a trailing slash), then the real file it names (links resolved, a
folder's index.html); the kind is the real file's place in the site, its folder and its
suffix in any case (`bots/`, `games/`: .html; `replays/`: .js). So no other name of a file
serves what its own name hides (issue 33: `/bots//X.html` did).

The author (or the organiser) reads them with their token: `GET /api/games/{key}/stderr`
gives, for each seat of theirs, its lines per decision and the end of its log.
"""

from __future__ import annotations

import json
import os
import re
from collections import OrderedDict
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.responses import Response

STRIPPED = {"replays": (".js", "replay"), "bots": (".html", "page"), "games": (".html", "page")}
SCRIPT = re.compile(r"^(.*?\]=)(\{.*\})(;?\s*)$", re.DOTALL)
LOG = re.compile(r'<pre class="log[" ][^>]*>.*?</pre>', re.DOTALL)  # any <pre> of class log, whatever its attributes
HIDDEN_NOTE = ('<pre class="log">(hidden: a bot\'s stderr is its author\'s; they read it at /door/ '
               'with their token)</pre>')
KEY = re.compile(r"^[0-9]+(-[0-9]+)*$")


def strip_replay(text: str) -> str:
    """A replay script without the bots' stderr lines."""
    found = SCRIPT.match(text)
    if not found:
        return "/* this replay is not shown while stderr is hidden */\n"
    from arena.site.replay import pack, unpack

    try:
        stored = json.loads(found.group(2))
        data = unpack(stored)  # the decisions are in the packed part
    except ValueError:
        return "/* this replay is not shown while stderr is hidden */\n"
    for decision in data.get("decisions") or []:
        if isinstance(decision, list) and len(decision) > 2:
            decision[2] = None
    for fault in data.get("faults") or []:  # [step, seat, reason, detail, last stderr lines]
        if isinstance(fault, list) and len(fault) > 4:
            fault[4] = None
    # As the site writes them: no '<' in a script's strings (nothing can close a tag).
    out = pack(data) if "z" in stored else data
    return found.group(1) + json.dumps(out, separators=(",", ":")).replace("<", "\\u003c") + found.group(3)


class HideStderr:
    """ASGI middleware over the site's files: replays and bot pages without stderr. Each
    file is read and stripped once per version (its stat is checked on every request), in
    the event loop, as the site's other files are (arena.web.app._SiteFiles)."""

    CACHE_BYTES = 64 << 20

    def __init__(self, app, site: Path):  # noqa: ANN001
        self.app = app
        self.site = Path(site).resolve()
        self._cache: OrderedDict[Path, tuple[tuple[int, int, int], bytes]] = OrderedDict()
        self._cached_bytes = 0

    def _stripped(self, file: Path, kind: str) -> bytes | None:
        """The file without stderr, from the cache when the file has not changed."""
        try:
            before = file.stat()
        except OSError:
            return None
        stamp = (before.st_mtime_ns, before.st_size, before.st_ino)
        cached = self._cache.get(file)
        if cached is not None and cached[0] == stamp:
            self._cache.move_to_end(file)
            return cached[1]
        text = file.read_text(encoding="utf-8")
        body = (strip_replay(text) if kind == "replay" else LOG.sub(HIDDEN_NOTE, text)).encode()
        after = file.stat()
        if (after.st_mtime_ns, after.st_size, after.st_ino) == stamp:  # not changed while read: kept
            if cached is not None:
                self._cached_bytes -= len(self._cache.pop(file)[1])
            self._cache[file] = (stamp, body)
            self._cached_bytes += len(body)
            while self._cached_bytes > self.CACHE_BYTES:
                self._cached_bytes -= len(self._cache.popitem(last=False)[1][1])
        return body

    def served_file(self, scope) -> tuple[Path, str] | None:  # noqa: ANN001
        """The site's file a request gets and its kind ("replay" or "page"), when it is one
        that can carry stderr: decided on the normalised path and the real file, as
        StaticFiles decides which file to serve (never on the raw path)."""
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):]
        relative = os.path.normpath(os.path.join(*path.split("/")))  # StaticFiles.get_path's
        site = str(self.site)
        try:
            real = os.path.realpath(os.path.join(site, relative))
            if os.path.isdir(real):  # html mode: a folder's index.html
                real = os.path.realpath(os.path.join(real, "index.html"))
            if os.path.commonpath([real, site]) != site or not os.path.isfile(real):
                return None
        except (OSError, ValueError):  # a NUL, a name too long: the file server answers 404
            return None
        parts = Path(os.path.relpath(real, site)).parts
        if len(parts) < 2 or parts[0].lower() not in STRIPPED:
            return None
        suffix, kind = STRIPPED[parts[0].lower()]
        return (Path(real), kind) if parts[-1].lower().endswith(suffix) else None

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        found = self.served_file(scope) if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD") else None
        if found is None:
            await self.app(scope, receive, send)
            return
        file, kind = found
        body = self._stripped(file, kind)
        if body is None:
            await self.app(scope, receive, send)
            return
        media = "text/javascript; charset=utf-8" if kind == "replay" else "text/html; charset=utf-8"
        await Response(body, media_type=media, headers={"cache-control": "no-cache"})(scope, receive, send)


def stderr_router(door) -> APIRouter:  # noqa: ANN001
    """GET /api/games/{key}/stderr: the caller's bots' stderr in one game of the league."""
    from arena.web.submissions import _who

    from fastapi import Security

    from arena.web.api_models import BEARER, GameStderr, refusals

    router = APIRouter(prefix="/api", tags=["authors"])

    @router.get("/games/{key}/stderr", summary="Your bots' stderr lines in one game of the league",
                response_model=GameStderr, dependencies=[Security(BEARER)], responses=refusals(401, 404))
    def game_stderr(key: str, request: Request) -> JSONResponse:
        who = _who(door, request)
        if isinstance(who, JSONResponse):
            return who
        if door.league_dir is None or not KEY.match(key):
            return JSONResponse({"error": f"no game {key[:100]}"}, status_code=404)
        from arena.store.db import Store, StoreError

        try:
            with Store.open(door.league_dir) as store:
                game = store.game_row(key)  # one row, not the league's every game
                # A duplicate deal with a rotation still to play is withheld, as on the site:
                # its lines might tell the cards of the rotations to come.
                duplicate = bool((store.settings() or {}).get("duplicate"))
                if game is None or game.status != "done" or (duplicate and store.deal_open(game.deal)):
                    return JSONResponse({"error": f"no finished game {key} (or its deal is still being played)"},
                                        status_code=404)
                seats = [seat for seat in store.seats(key)]
                replay = store.replay(key)
                logs = store.logs(key)
        except StoreError:
            return JSONResponse({"error": f"no game {key}"}, status_code=404)
        author, organiser = who
        mine = {}
        for seat in seats:
            name = seat.bot.split("@")[0]
            if organiser or door.book.owner_of(name) == author:
                mine[seat.seat] = {
                    "bot": seat.bot,
                    "decisions": [
                        {"step": step, "stderr": action.stderr}
                        for step, action in enumerate(replay.actions) if action.seat == seat.seat and action.stderr
                    ],
                    "log_end": logs.get(seat.seat, ""),
                }
        if not mine:
            return JSONResponse({"error": f"no bot of yours played game {key}"}, status_code=404)
        return JSONResponse({"game": key, "seats": mine})

    return router
