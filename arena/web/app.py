"""The served arena's app and the server that runs it.

`create_app(site_dir, routers=...)` is one FastAPI app: the routers given (the authors'
API and pages, the human seat) first, then the static site of `site_dir` (standings, bot
pages, replays; `live.json` makes its pages reload when a league re-renders it); for a
league, its game pages, game lists and replays from its store (`served`,
`arena.web.league_games`: the league's site holds no file per game). The
OpenAPI document is at `/api/openapi.json`, its description as one page of the server's
own at `/api/docs` (it fetches nothing: Swagger UI came from a CDN). A refusal (404, 405,
401) is a page to a browser, JSON to the API's clients.

`AppServer(app, host, port)` binds its socket at once (so a taken port is a clear error
and port 0 tells which port it got) and runs uvicorn on it, in the calling thread
(`serve_forever`, Ctrl-C stops) or a background one (`start`, `shutdown`). It listens on
127.0.0.1 unless told otherwise, and refuses any other address without TLS (its own
certificate, or a TLS reverse proxy in front, docs/server.md) unless `insecure_http` says
the organiser knows the traffic is plain HTTP.
"""

from __future__ import annotations

import html
import ipaddress
import os
import socket
import stat
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import APIRouter, FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse
from starlette.datastructures import URL
from starlette.exceptions import HTTPException
from starlette.responses import (
    FileResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Match, Mount
from starlette.staticfiles import StaticFiles

from arena.web.errors import WebError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
HEADER_BYTES = 64 * 1024  # a request's line and headers at most (docs/server.md)
METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")  # those a 405's Allow may name

# Headers on every answer: no page of the site or the door runs in a frame elsewhere, and
# a browser never guesses a type (an uploaded log shown as text stays text).
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]


def create_app(
    site_dir: str | Path,
    *,
    routers: Sequence[APIRouter] = (),
    title: str = "arena",
    middleware: Sequence[tuple[Callable[..., Any], dict[str, Any]]] = (),
    state: dict[str, Any] | None = None,
    served: Any = None,
    responses: dict[int | str, dict[str, Any]] | None = None,
) -> FastAPI:
    """The app: `routers` first, then the files of `site_dir` (which may appear later: a
    league renders its site after its first batch). `middleware` wraps the app, innermost
    first (each a (class, options) pair, as Starlette's add_middleware takes); `state` goes
    to `app.state`. `served` (an `arena.web.league_games.ServedGames`): a league's game pages,
    game lists and replays, answered from its store (the site holds no file per game).
    `responses`: answers any route may give, for the OpenAPI document (a middleware's)."""
    app = FastAPI(
        title=title,
        docs_url=None,  # Swagger UI comes from a CDN: blank without the internet; arena's own page instead
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    for name, value in (state or {}).items():
        setattr(app.state, name, value)

    @app.get("/api/docs", include_in_schema=False)
    def api_docs() -> HTMLResponse:
        return HTMLResponse(api_page(app.openapi()), headers={"cache-control": "no-cache"})

    app.add_exception_handler(HTTPException, _http_refusal)
    for router in routers:
        app.include_router(router, responses=responses)  # what every route may answer (a limit's 429)
    app.mount("/", _SiteFiles(directory=Path(site_dir), html=True, check_dir=False, served=served), name="site")
    for wrap, options in middleware:
        app.add_middleware(wrap, **options)
    app.add_middleware(_HeaderLimit)
    app.add_middleware(_SecurityHeaders)
    return app


async def _http_refusal(request: Request, refused: HTTPException) -> Response:
    """An HTTPException answered (`_answer_refusal`), a 405's Allow naming the methods the
    path takes. The site is mounted at '/', so a request with a method no route of its
    path takes reached the site's files, whose 405 said "GET, HEAD" for every path
    (`OPTIONS /api/submissions`: GET, HEAD; it takes GET and POST). Its body stays
    FastAPI's ({"detail": ...}): `arena submit` tells the door's own refusals ({"error": ...})
    from a server that has no door."""
    if refused.status_code == 405:
        allow = ", ".join(routed_methods(request.scope) or ["GET", "HEAD"])  # none: the site's file
        refused = HTTPException(405, refused.detail, headers={"Allow": allow})
    return await _answer_refusal(request, refused)


def routed_methods(scope) -> list[str]:  # noqa: ANN001
    """The methods the app's routes (not the site mounted at '/') take on the request's path."""
    app = scope.get("app")
    routes = [route for route in getattr(getattr(app, "router", None), "routes", ()) if not isinstance(route, Mount)]
    return [method for method in METHODS
            if any(route.matches({**scope, "method": method})[0] == Match.FULL for route in routes)]


class _HeaderLimit:
    """A request whose line and headers pass HEADER_BYTES is refused (431, one line).
    h11 refuses a head over the limit only while it is incomplete: one that arrives whole
    in a single read (asyncio reads up to 256 KB at once) reached the app; this is the
    limit on those."""

    def __init__(self, app: Callable[..., Awaitable[None]]):
        self.app = app

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] not in ("http", "websocket") or _head_bytes(scope) <= HEADER_BYTES:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":  # closed before it is accepted: the server answers 403
            await send({"type": "websocket.close", "code": 1008})
            return
        answer = JSONResponse(
            {"error": f"the request's headers are over {HEADER_BYTES // 1024} KB (the limit); send fewer or shorter ones"},
            status_code=431, headers={"connection": "close"},
        )
        await answer(scope, receive, send)


def _head_bytes(scope) -> int:  # noqa: ANN001
    """The size of a request's line and headers as they came (near enough: the names are
    lowercased, the whitespace around values gone)."""
    line = len(scope.get("method", "GET")) + len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") + 12
    return line + sum(len(name) + len(value) + 4 for name, value in scope.get("headers", ()))


def _wants_a_page(request: Request) -> bool:
    """A browser asking for a page (Accept: text/html), not a client of the API."""
    return "text/html" in request.headers.get("accept", "") and not request.url.path.startswith("/api/")


_REFUSALS = {404: "Not found", 405: "Not allowed", 401: "Not yours"}


async def _answer_refusal(request: Request, refusal: HTTPException) -> Response:
    """An HTTP refusal: a page to a browser (what it was, and where to go), JSON to the
    API's clients as FastAPI answers it."""
    if not _wants_a_page(request) or refusal.status_code not in _REFUSALS:
        return await http_exception_handler(request, refusal)
    what = _REFUSALS[refusal.status_code]
    detail = refusal.detail if isinstance(refusal.detail, str) and refusal.detail != what else ""
    page = _PAGE.format(
        title=html.escape(what), body=(
            f"<h1>{html.escape(what)}</h1><p>This arena has nothing at <code>{html.escape(request.url.path)}</code>"
            f"{': ' + html.escape(detail) if detail else '.'}</p>"
            '<p><a href="/">The standings</a> · <a href="/door/">Submit a bot</a> · <a href="/api/docs">The API</a></p>'
        ),
    )
    return HTMLResponse(page, refusal.status_code, headers=getattr(refusal, "headers", None))


# A page of the server's own (an HTTP refusal, the API's description): self-contained, as
# the site's look, no script, nothing fetched.
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · arena</title><style>
body {{ margin: 0; font: 15px/1.45 system-ui, sans-serif; color: #1d2330; background: #f5f6f8; }}
header {{ background: #1b2233; padding: .7rem 1.2rem; }} header a {{ color: #fff; font-weight: 700; text-decoration: none; }}
main {{ max-width: 960px; margin: 0 auto; padding: 1rem 1.2rem 2rem; overflow-wrap: anywhere; }}
a {{ color: #2a55c0; }} code {{ font-size: .9em; }} h2 {{ font-size: 1.1rem; margin: 1.4rem 0 .3rem; }}
section {{ background: #fff; border: 1px solid #e2e5eb; border-radius: 10px; padding: .2rem 1rem .8rem; margin: .8rem 0; }}
.method {{ font-weight: 700; color: #1a7340; }} .muted {{ color: #555d6e; }} ul {{ padding-left: 1.2rem; }}
</style></head>
<body><header><a href="/"><span aria-hidden="true">♠</span> arena</a></header><main>
{body}
</main></body></html>
"""


def api_page(openapi: dict[str, Any]) -> str:
    """The API described as one page, from its OpenAPI document: every route, its summary
    and description, parameters, body and answers (Swagger UI would need the internet)."""
    parts = [
        f"<h1>{html.escape(str(openapi.get('info', {}).get('title', 'arena')))}: the API</h1>",
        '<p>Every route of this server, from its OpenAPI document (<a href="/api/openapi.json">/api/openapi.json</a>, '
        "for tools). A route that needs a token takes <code>Authorization: Bearer TOKEN</code>.</p>",
    ]
    paths = openapi.get("paths", {})
    if not paths:
        parts.append("<p class=\"muted\">This server serves a site only: it has no API routes.</p>")
    for path, methods in paths.items():
        for method, spec in methods.items():
            lines = [f'<section><h2><span class="method">{html.escape(method.upper())}</span> '
                     f"<code>{html.escape(path)}</code></h2>"]
            if spec.get("summary"):
                lines.append(f"<p>{html.escape(spec['summary'])}</p>")
            if spec.get("description"):
                lines.append(f"<p class=\"muted\">{html.escape(spec['description'])}</p>")
            params = [
                f"<li><code>{html.escape(p['name'])}</code> ({html.escape(p.get('in', ''))}"
                f"{', required' if p.get('required') else ''})</li>" for p in spec.get("parameters", [])
            ]
            if params:
                lines.append("<p>Parameters:</p><ul>" + "".join(params) + "</ul>")
            body = spec.get("requestBody", {}).get("content", {})
            if body:
                lines.append("<p>Body: " + ", ".join(f"<code>{html.escape(kind)}</code>" for kind in body) + "</p>")
            answers = spec.get("responses", {})
            if answers:
                lines.append("<p>Answers: " + ", ".join(
                    f"{html.escape(code)} {html.escape(str(answer.get('description', '')))}" for code, answer in answers.items()
                ) + "</p>")
            parts.append("".join(lines) + "</section>")
    return _PAGE.format(title="the API", body="\n".join(parts))


class _SiteFiles(StaticFiles):
    """The site's files, read in the event loop itself: readers come first.

    Starlette's StaticFiles looks a file up, opens it and reads it in worker threads (four
    hops a page), in the pool the door's routes also use; under a burst of uploads a page
    waited for a thread. Here the lookup (a realpath and a stat) and the read of a file of
    at most FAST_BYTES run in the loop, from a cache checked against the file's stat on
    every request, so a re-rendered page is read again; a larger file, a range request
    and anything else take StaticFiles' own path. The answer's headers are FileResponse's
    (etag, last-modified: a browser's If-None-Match still gets 304). `live.json` is never
    cached by a browser (pages poll it to reload)."""

    FAST_BYTES = 1 << 20
    CACHE_BYTES = 64 << 20

    def __init__(self, *args: Any, served: Any = None, **options: Any):
        super().__init__(*args, **options)
        self.served = served  # a league's pages of games and replays (arena.web.league_games), before any file
        self._cache: OrderedDict[str, tuple[tuple[int, int, int], bytes]] = OrderedDict()
        self._cached_bytes = 0

    def _read(self, full_path: str, stat_result: os.stat_result) -> bytes | None:
        """The file's bytes as of `stat_result`, from the cache or read now; None when it
        changed while being read (StaticFiles then serves it)."""
        stamp = (stat_result.st_mtime_ns, stat_result.st_size, stat_result.st_ino)
        cached = self._cache.get(full_path)
        if cached is not None and cached[0] == stamp:
            self._cache.move_to_end(full_path)
            return cached[1]
        with open(full_path, "rb") as source:
            data = source.read(self.FAST_BYTES + 1)
            now = os.fstat(source.fileno())
        if (now.st_mtime_ns, now.st_size, now.st_ino) != stamp or len(data) != stat_result.st_size:
            return None
        if cached is not None:
            self._cached_bytes -= len(self._cache.pop(full_path)[1])
        self._cache[full_path] = (stamp, data)
        self._cached_bytes += len(data)
        while self._cached_bytes > self.CACHE_BYTES:
            self._cached_bytes -= len(self._cache.popitem(last=False)[1][1])
        return data

    def file_response(self, full_path, stat_result, scope, status_code=200):  # noqa: ANN001, ANN201
        response = super().file_response(full_path, stat_result, scope, status_code)
        if str(full_path).endswith("live.json"):
            response.headers["cache-control"] = "no-store"
        if not isinstance(response, FileResponse) or stat_result.st_size > self.FAST_BYTES:
            return response  # a 304, or a large file: streamed from worker threads
        if any(name == b"range" for name, _ in scope.get("headers", ())):
            return response
        data = self._read(str(full_path), stat_result)
        if data is None:
            return response
        return Response(data, status_code, headers=dict(response.headers))

    async def check_config(self) -> None:
        """StaticFiles' check of its folder at the first request, without a worker thread."""
        found = os.stat(self.directory) if self.directory is not None else None
        if found is not None and not stat.S_ISDIR(found.st_mode):
            raise RuntimeError(f"StaticFiles path '{self.directory}' is not a directory.")

    async def get_response(self, path: str, scope) -> Response:  # noqa: ANN001
        """The file, or a 404; a 405 instead when a route of the app takes the path with
        another method (`GET /play/tables` was a 404 from the site: the path is POST's)."""
        try:
            answer = await self._file_or_page(path, scope)
        except HTTPException as refused:
            if refused.status_code == 404 and routed_methods(scope):
                raise HTTPException(405) from None
            raise
        if answer.status_code == 404 and routed_methods(scope):  # the site's 404.html
            raise HTTPException(405)
        return answer

    async def _file_or_page(self, path: str, scope) -> Response:  # noqa: ANN001
        """StaticFiles' own, with its lookups (a realpath and a stat or two) done here in the
        loop rather than in worker threads."""
        if scope["method"] not in ("GET", "HEAD"):
            raise HTTPException(status_code=405, headers={"Allow": "GET, HEAD"})
        if self.served is not None:
            answer = await self.served.respond(path)
            if answer is not None:
                return answer
        try:
            full_path, stat_result = self.lookup_path(path)
        except PermissionError:
            raise HTTPException(status_code=401) from None
        except (OSError, ValueError):  # a name too long, a NUL: no such file
            raise HTTPException(status_code=404) from None
        if stat_result and stat.S_ISREG(stat_result.st_mode):
            return self.file_response(full_path, stat_result, scope)
        if stat_result and stat.S_ISDIR(stat_result.st_mode) and self.html:
            full_path, stat_result = self.lookup_path(os.path.join(path, "index.html"))
            if stat_result is not None and stat.S_ISREG(stat_result.st_mode):
                if not scope["path"].endswith("/"):  # a folder's URL ends in '/'
                    url = URL(scope=scope)
                    return RedirectResponse(url=url.replace(path=url.path + "/"))
                return self.file_response(full_path, stat_result, scope)
        return await super().get_response(path, scope)  # its 404 (or 404.html)

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if not os.path.isfile(os.path.join(self.directory, "index.html")):
            answer = PlainTextResponse("the site is not rendered yet: it appears after the first batch of games\n", 503)
            await answer(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


class _SecurityHeaders:
    """Adds SECURITY_HEADERS to every HTTP answer."""

    def __init__(self, app: Callable[..., Awaitable[None]]):
        self.app = app

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message) -> None:  # noqa: ANN001
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + SECURITY_HEADERS
            await send(message)

        await self.app(scope, receive, send_with_headers)


def is_loopback(host: str) -> bool:
    """True for an address only this machine reaches (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_address(host: str, *, tls: bool, insecure_http: bool) -> None:
    """Refuse a public address without TLS unless the organiser said --insecure-http."""
    if is_loopback(host) or tls or insecure_http:
        return
    raise WebError(
        f"--host {host} is reachable from other machines, and without TLS tokens and uploads would cross the "
        f"network in clear: keep 127.0.0.1 behind a TLS reverse proxy (docs/server.md), give --certfile and "
        f"--keyfile, or say --insecure-http if this network is trusted"
    )


class AppServer:
    """uvicorn serving `app` on a socket bound now (port 0: any free port)."""

    def __init__(
        self,
        app: Any,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        *,
        certfile: str | Path | None = None,
        keyfile: str | Path | None = None,
        insecure_http: bool = False,
        forwarded_allow_ips: str | None = None,
    ):
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise WebError(f"port {port!r} is not allowed; use 1 to 65535, or 0 for any free port")
        if (certfile is None) != (keyfile is None):
            raise WebError("TLS needs both --certfile and --keyfile")
        for path in (certfile, keyfile):
            if path is not None and not Path(path).is_file():
                raise WebError(f"no such file: {path}")
        check_address(host, tls=certfile is not None, insecure_http=insecure_http)
        self.scheme = "https" if certfile else "http"
        self.socket = _bind(host, port)
        self.host = host
        self.server_address = self.socket.getsockname()[:2]
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            timeout_keep_alive=5,
            ssl_certfile=str(certfile) if certfile else None,
            ssl_keyfile=str(keyfile) if keyfile else None,
            # Only a proxy on this machine may say who the client is (X-Forwarded-For).
            forwarded_allow_ips=forwarded_allow_ips or "127.0.0.1,::1",
            server_header=False,
            # Reasonable defaults for a small machine: a flood from one address is refused by
            # the app's own limits; this bounds what any number of addresses can hold open.
            limit_concurrency=1000,
            # h11 always: uvicorn would take httptools when installed (uvicorn[standard]), and
            # httptools has no limit on a request's headers; h11 refuses an incomplete head over
            # 64 KB, _HeaderLimit a complete one.
            http="h11",
            h11_max_incomplete_event_size=HEADER_BYTES,  # a complete head over it: _HeaderLimit
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The base URL, with a trailing slash."""
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"{self.scheme}://{host}:{self.port}/"

    def serve_forever(self) -> None:
        """Serve in this thread until Ctrl-C (in the main thread) or `shutdown()`."""
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self.socket.close()

    def start(self) -> AppServer:
        """Serve in a background thread; returns once it accepts connections."""
        self._thread = threading.Thread(target=self.serve_forever, name="arena-web", daemon=True)
        self._thread.start()
        for _ in range(500):
            if self._server.started or not self._thread.is_alive():
                break
            threading.Event().wait(0.01)
        if not self._server.started:
            raise WebError(f"the server on {self.url} did not start")
        return self

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop serving (from another thread) and wait for it."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)

    def server_close(self) -> None:
        """Close the socket (serve_forever does too)."""
        self.socket.close()


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or WebError saying what to change."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        raise WebError(f"cannot listen on {host}: {error.strerror or error}; give an address such as 127.0.0.1") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        sock.close()
        raise WebError(
            f"cannot listen on {host}:{port} ({error.strerror or error}); choose another --port, or 0 for any free port"
        ) from None
    sock.set_inheritable(True)
    return sock


def serve_site(site: str | Path, port: int = DEFAULT_PORT, host: str = DEFAULT_HOST, **options: Any) -> AppServer:
    """A server of a rendered site alone (call serve_forever() or start()); a league's
    games, game lists and replays come from the store beside it (`DIR/site`)."""
    site = Path(site)
    if not (site / "index.html").is_file():
        raise WebError(f"no rendered site in {site} (run `arena report` on the tournament folder first)")
    from arena.web.league_games import served_games_for

    return AppServer(create_app(site, served=served_games_for(site)), host, port, **options)

