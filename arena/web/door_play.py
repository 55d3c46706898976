"""The human seat on the submission server: a signed-in author plays any ladder bot.

`door_play_router(door)` is `play_router` with the door's sign-in (the author's bearer
token, checked by the door's book) and a table per author against the current version of
the ladder bot they name (the registry's newest version that plays the game, as the
league plays it: `arena.league.members.registry_field`). The games are stored in their own store
(default: `human-games/` beside the league's folder, or the registry's), never in the
league's, so they are never rated in the league. The bot runs in the Docker sandbox, as
every uploaded bot does; a person has `HUMAN_TIME_S` per move there, so a table left
alone ends its game (a TIMEOUT, as for a bot) instead of holding the bot for ever.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Security
from fastapi.security import HTTPAuthorizationCredentials

from arena.web.api_models import BEARER

from arena.web.play_routes import play_router
from arena.human.table import PlayError, PlayHost, TableConfig

HUMAN_TIME_S = 300.0
MAX_TABLES = 8


def _games_of(door: Any) -> tuple[str, ...]:
    """The league's game when a league runs, else every game."""
    from engine import all_games

    league = getattr(door, "league_dir", None)
    if league is not None:
        from arena.store.db import Store, StoreError

        try:
            with Store.open(league) as store:
                game = (store.settings() or {}).get("game")
        except StoreError:
            game = None
        if game:
            return (game,)
    return tuple(game.name for game in all_games())


def ladder_bots(door: Any) -> list[dict[str, Any]]:
    """Every bot an author may play: each name's current version, per game."""
    from arena.league.members import registry_field

    out = []
    for game in _games_of(door):
        for name, entry in sorted(registry_field(Path(door.registry), game).items()):
            out.append({"bot": name, "version": entry.version, "game": game, "folder": entry.folder})
    return out


def door_play_router(
    door: Any, *, out: Path | None = None, sandbox: str = "docker", host: PlayHost | None = None,
    human_time_s: float = HUMAN_TIME_S,
) -> APIRouter:
    """The human seat's router behind the door's sign-in (see the module docstring)."""
    league = getattr(door, "league_dir", None)
    store = Path(out) if out is not None else Path(league or door.registry).resolve().parent / "human-games"

    def signed_in(credentials: HTTPAuthorizationCredentials | None = Security(BEARER)) -> str:
        who = door.book.authenticate(credentials.credentials.strip()) if credentials is not None else None
        if who is None:
            raise HTTPException(401, "sign in first: send 'Authorization: Bearer TOKEN' (your author token)",
                                headers={"WWW-Authenticate": "Bearer"})
        return who[0]

    def open_table(author: str, body: dict[str, Any]) -> TableConfig:
        wanted, game = body.get("bot"), body.get("game")
        choices = [b for b in ladder_bots(door) if b["bot"] == wanted and (game is None or b["game"] == game)]
        if not isinstance(wanted, str) or (game is not None and not isinstance(game, str)):
            raise PlayError('send {"bot": NAME} (and "game": NAME when the bot plays more than one): strings')
        if not choices:
            raise HTTPException(404, f"no ladder bot {wanted[:64]!r} plays here"
                                + (f" {game[:64]!r}" if game is not None else "") + "; GET /play/bots lists them")
        chosen = choices[0]
        return TableConfig(
            game=chosen["game"], bots=[chosen["folder"]], sandbox=sandbox, out=store, human_time_s=human_time_s,
            human_name=f"human:{author}",
        )

    def bots() -> list[dict[str, Any]]:
        return [{key: value for key, value in bot.items() if key != "folder"} for bot in ladder_bots(door)]

    return play_router(host or PlayHost(max_tables=MAX_TABLES), auth=signed_in, open_table=open_table, bots=bots)
