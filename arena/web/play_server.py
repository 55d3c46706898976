"""`arena play`: one table of people and bots, served on this machine until Ctrl-C.

`run_play(config, port=..., open_browser=...)` opens the table (`PlayTable`), serves the
arena's app (`arena.web.app.create_app`: the human seat's router at /play/, the site of
the table's store at /, re-rendered after every game so each replay is there at once)
on 127.0.0.1, prints each person's link (the seat's token is in its #fragment), opens
the first in a browser, and on Ctrl-C closes the table: the game in progress is not
stored, every finished one is.
"""

from __future__ import annotations

import webbrowser
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from fastapi import FastAPI

from arena.web.play_routes import play_router
from arena.human.table import PlayHost, PlayTable, TableConfig
from arena.site.writer import SITE_DIR
from arena.terminal import wrapped
from arena.web.app import AppServer, create_app

HOST = "127.0.0.1"


def play_app(host: PlayHost, site_dir: str | Path) -> FastAPI:
    """The arena's app with the human seat's router: /play/ and the site of `site_dir` at /."""
    return create_app(site_dir, routers=[play_router(host)], title="arena play")


def seat_links(table: PlayTable, base: str) -> list[tuple[int, str]]:
    """(seat, link) for every person at the table; `base` ends with a slash."""
    return [(seat, f"{base}play/#t={token}") for seat, token in table.tokens.items()]


def run_play(
    config: TableConfig, *, port: int = 0, open_browser: bool = True, say: Callable[[str], None] = print,
) -> PlayTable:
    """Serve one table until Ctrl-C (see the module docstring); returns the closed table."""
    config = replace(config, render_site=True)
    host = PlayHost(max_tables=1)
    server = AppServer(play_app(host, Path(config.out) / SITE_DIR), HOST, port)
    try:
        table = host.open(config)
        links = seat_links(table, server.url)
        for seat, link in links:
            say(f"seat {seat} ({table.names[seat]}): {link}")
        # Each line within 80 columns (a path alone may be longer): the link ends its own.
        say(wrapped(f"games are stored in {config.out}; Ctrl-C stops"))
        say(f"their replays: {server.url}")
        if open_browser and links:
            webbrowser.open(links[0][1])
        server.serve_forever()
    finally:
        server.server_close()
        host.close()
    return table
