"""The authors' pages: `/door/` (sign in with the token, submit a bot, "my bots" with each
submission's state and each bot's versions and standing, updated every few seconds) and
`door_app`, the served arena with the door.

The page is static HTML and a script (`templates/door/`); the script calls the JSON API
with the token kept in the tab's sessionStorage, so no cookie exists to be forged by
another site. Everything a bot or an author wrote (names, reasons, stderr) is put into the
page as text (`textContent`), never as HTML.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse

from arena.resources import templates_dir
from arena.web.api_models import refusals
from arena.web.app import create_app
from arena.web.stderr import HideStderr, stderr_router
from arena.web.submissions import AddressLimit, Door, door_router

PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'",
    "Cache-Control": "no-cache",
}


# What /door/ serves: its page and script, and the site's own stylesheet and icon (the
# door looks like the site, and needs no rendered site to: a league's appears after its
# first batch). Each: its path under /door/, its file and its media type.
_FILES = (
    ("", ("door", "index.html"), "text/html; charset=utf-8"),
    ("door.js", ("door", "door.js"), "text/javascript; charset=utf-8"),
    ("door.css", ("door", "door.css"), "text/css; charset=utf-8"),
    ("site.css", ("assets", "site.css"), "text/css; charset=utf-8"),
    ("favicon.svg", ("assets", "favicon.svg"), "image/svg+xml"),
)


def pages_router() -> APIRouter:
    """GET /door/, its script and style, and the site's stylesheet and icon."""
    router = APIRouter(include_in_schema=False)
    for name, (folder, file_name), media_type in _FILES:
        router.add_api_route(f"/door/{name}", _file_route(templates_dir() / folder / file_name, media_type))
    return router


def _file_route(path: Path, media_type: str):
    def serve() -> FileResponse:
        return FileResponse(path, media_type=media_type, headers=PAGE_HEADERS)

    return serve


class _SaysItsDoor:
    """Every answer says where the authors' door is (`x-arena-door: /door/`): the site's
    pages show their "Submit a bot" link when the server has one (templates/assets/site.js)."""

    def __init__(self, app):  # noqa: ANN001
        self.app = app

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_saying(message) -> None:  # noqa: ANN001
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-arena-door", b"/door/")]
            await send(message)

        await self.app(scope, receive, send_saying)


def door_app(site: str | Path, door: Door, routers=()) -> FastAPI:  # noqa: ANN001
    """The served arena with the authors' door: the API, the pages, the site, and the
    per-address request limit on all of it."""
    middleware = [(HideStderr, {"site": Path(site)})] if door.hide_stderr else []
    # A league's game pages and replays come from its store: stderr is left out there too.
    from arena.web.league_games import ServedGames, served_games_for

    served = (ServedGames(door.league_dir, hide_stderr=door.hide_stderr).warm() if door.league_dir is not None
              else served_games_for(site, hide_stderr=door.hide_stderr))
    return create_app(
        site,
        routers=[door_router(door), stderr_router(door), pages_router(), *routers],
        middleware=[*middleware, (AddressLimit, {"per_minute": door.limits.per_address}), (_SaysItsDoor, {})],
        state={"door": door},
        served=served,
        responses=refusals(429),  # AddressLimit's, on any route
    )
