"""The served arena's commands: `arena authors add|list|rotate|revoke` (a Typer sub-app
that arena/cli/app.py adds) and the wiring `arena serve --submissions` and `arena league --serve`
share (`serve_door`). Light at import: FastAPI is imported when a server starts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from arena.web.errors import WebError

console = Console(highlight=False, soft_wrap=True)

authors_app = typer.Typer(
    help="Bot authors' accounts for a served arena (arena serve --submissions): each has a token, shown once "
    "and stored only as a slow hash in REGISTRY/.door/. An author owns the bot names they first submit.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

RegistryFlag = Annotated[
    Optional[Path],
    typer.Option(help="The registry whose door this is (default: $ARENA_REGISTRY, else ./bots)."),
]


def _book(registry: Path | None):  # noqa: ANN202
    from arena.registry.submit import default_registry
    from arena.web.authors import Book

    return Book(registry.expanduser().resolve() if registry else default_registry())


def _show_token(name: str, token: str, what: str) -> None:
    console.print(f"{what} {name}; their token (shown once, give it to them privately):")
    console.print(token, markup=False)
    console.print("They submit with: ARENA_TOKEN=... arena submit BOT_DIR --to URL")


@authors_app.command("add")
def add_command(
    name: Annotated[str, typer.Argument(help="The author's name (letters, digits, '_', '-').")],
    registry: RegistryFlag = None,
    organiser: Annotated[
        bool, typer.Option("--organiser", help="May submit and retire any bot, and see every submission.")
    ] = False,
) -> None:
    """Make an account and print its token once."""
    _show_token(name, _book(registry).add(name, organiser), "added")


@authors_app.command("rotate")
def rotate_command(name: Annotated[str, typer.Argument(help="The author.")], registry: RegistryFlag = None) -> None:
    """Give NAME a new token (the old one stops working at once); also re-opens a revoked account."""
    _show_token(name, _book(registry).rotate(name), "new token for")


@authors_app.command("revoke")
def revoke_command(name: Annotated[str, typer.Argument(help="The author.")], registry: RegistryFlag = None) -> None:
    """Stop NAME's token; their bots stay in the registry and stay theirs (rotate re-opens)."""
    _book(registry).revoke(name)
    console.print(f"revoked {name}: their token no longer works (arena authors rotate {name} gives a new one)")


@authors_app.command("list")
def list_command(registry: RegistryFlag = None) -> None:
    """Every account: name, role, since, token id (never the token), state, bots owned."""
    authors = _book(registry).authors()
    if not authors:
        console.print("no authors yet: arena authors add NAME")
        return
    for author in authors:
        since = datetime.fromtimestamp(author.created, UTC).strftime("%Y-%m-%d")
        state = "revoked" if author.revoked else f"token {author.token_id}"
        role = " (organiser)" if author.organiser else ""
        bots = ", ".join(author.bots) or "no bots"
        console.print(f"{author.name}{role}: since {since}, {state}; {bots}", markup=False)


def serve_door(
    site: Path,
    *,
    registry: Path | None,
    host: str,
    port: int,
    league_dir: Path | None = None,
    validate_jobs: int = 1,
    validate_sandbox: str = "docker",
    validate_runtime: str | None = None,
    limits: Any = None,
    upload_limits: dict[str, Any] | None = None,
    show_stderr: bool = False,
    tls: dict[str, Any] | None = None,
    submissions: bool = True,
):  # noqa: ANN201
    """An AppServer of the site with the authors' door, and the door (start and stop it);
    with `submissions` False, the site alone (and a door that does nothing)."""
    from arena.botcopy import FolderLimits
    from arena.registry.submit import default_registry
    from arena.sandbox import Limits
    from arena.web.app import AppServer, check_address, create_app
    from arena.web.league_games import ServedGames, served_games_for
    from arena.web.door_pages import door_app
    from arena.web.queue import QueueSettings
    from arena.web.submissions import Door
    from arena.web.unpack import UploadLimits

    if not submissions:
        served = ServedGames(league_dir).warm() if league_dir is not None else served_games_for(site)
        return AppServer(create_app(site, served=served), host, port, **(tls or {})), _NoDoor()
    if validate_sandbox not in ("docker", "local"):
        raise WebError(f"--validate-sandbox {validate_sandbox!r}: use docker, or local for authors you trust")
    # A refused address is refused before the door's book is opened (and made) anywhere.
    check_address(host, tls=(tls or {}).get("certfile") is not None, insecure_http=bool((tls or {}).get("insecure_http")))
    uploads = UploadLimits(**(upload_limits or {}))
    door = Door(
        registry=registry.expanduser().resolve() if registry else default_registry(),
        limits=uploads,
        queue_settings=QueueSettings(
            jobs=validate_jobs, sandbox=validate_sandbox, runtime=validate_runtime, limits=limits or Limits(),
            folder_limits=FolderLimits(total_mb=uploads.unpacked_mb, files=uploads.files, file_mb=uploads.file_mb),
        ),
        league_dir=league_dir,
        hide_stderr=not show_stderr,
    )
    from arena.web.door_play import door_play_router

    # A signed-in author may play any ladder bot at /play/ (games stored apart, never rated).
    server = AppServer(door_app(site, door, routers=[door_play_router(door)]), host, port, **(tls or {}))
    return server, door


class _NoDoor:
    """A served league without submissions: nothing to start or stop."""

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass
