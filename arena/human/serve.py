"""`arena play`: one table of people and bots, served on this machine until Ctrl-C.

`run_play(config, port=..., open_browser=...)` opens the table (`PlayTable`), serves the
human seat's router (`play_router`) with uvicorn on 127.0.0.1, prints each person's link
(the seat's token is in its #fragment), opens the first in a browser, and on Ctrl-C
closes the table: the game in progress is not stored, every finished one is.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable

from fastapi import FastAPI
from fastapi.responses import RedirectResponse

from arena.human.router import play_router
from arena.human.table import PlayHost, PlayTable, TableConfig

HOST = "127.0.0.1"


def play_app(host: PlayHost) -> FastAPI:
    """An app with the human seat's router alone (/ leads to /play/)."""
    app = FastAPI(title="arena play", docs_url=None, redoc_url=None, openapi_url=None)
    app.include_router(play_router(host))

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/play/", status_code=307)

    return app


def seat_links(table: PlayTable, port: int) -> list[tuple[int, str]]:
    """(seat, link) for every person at the table."""
    return [(seat, f"http://{HOST}:{port}/play/#t={token}") for seat, token in table.tokens.items()]


def run_play(
    config: TableConfig, *, port: int = 0, open_browser: bool = True, say: Callable[[str], None] = print,
) -> PlayTable:
    """Serve one table until Ctrl-C (see the module docstring); returns the closed table."""
    import uvicorn

    host = PlayHost(max_tables=1)
    table = host.open(config)
    server = uvicorn.Server(
        uvicorn.Config(play_app(host), host=HOST, port=port, log_level="warning", ws="auto",
                       timeout_graceful_shutdown=2, lifespan="off")
    )

    def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            threading.Event().wait(0.05)
        bound = server.servers[0].sockets[0].getsockname()[1]
        links = seat_links(table, bound)
        for seat, link in links:
            say(f"seat {seat} ({table.names[seat]}): {link}")
        say(f"games are stored in {config.out}; Ctrl-C stops")
        if open_browser and links:
            webbrowser.open(links[0][1])

    threading.Thread(target=announce, daemon=True).start()
    try:
        server.run()
    finally:
        host.close()
    return table
