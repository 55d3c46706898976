"""Helpers of the human seat's tests: a table served by uvicorn on a loopback port, the
authors' door with `arena play`'s router on it, and what a seat may know at each step of a
stored game (to compare what a page received)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from arena.human.table import PlayHost, PlayTable, TableConfig
from arena.web.app import AppServer
from arena.web.play_server import play_app
from engine.registry import get_game

ROOT = Path(__file__).resolve().parent.parent
RANDOM = ROOT / "bots" / "random"


class Served:
    """One table behind a real uvicorn server in a thread (stopped by `close`)."""

    def __init__(self, config: TableConfig):
        self.host = PlayHost()
        self.table: PlayTable = self.host.open(config)
        self.server = AppServer(play_app(self.host, Path(config.out) / "site"), "127.0.0.1", 0).start()
        self.port = self.server.port

    def link(self, seat: int) -> str:
        return f"http://127.0.0.1:{self.port}/play/#t={self.table.tokens[seat]}"

    def close(self) -> None:
        self.host.close()
        self.server.shutdown()


def ladder_door(tmp_path: Path):  # noqa: ANN201
    """A registry holding the random bot as random/1.0, its door with the author alice, and
    `arena play`'s router on it (local sandbox, games in tmp_path/human-games): (door,
    alice's token, the tables' host, the app of site, door and router)."""
    from arena.web.door_pages import door_app
    from arena.web.door_play import door_play_router
    from arena.web.submissions import Door

    registry = tmp_path / "registry"
    shutil.copytree(RANDOM, registry / "random" / "1.0")
    door = Door(registry=registry)
    token = door.book.add("alice")
    host = PlayHost()
    router = door_play_router(door, sandbox="local", host=host, out=tmp_path / "human-games")
    return door, token, host, door_app(tmp_path / "site", door, routers=[router])


def card_ids(value: Any, game: str) -> set[int]:
    """The ids of every card object in a value (observation, events, message)."""
    face = get_game(game).replay_tables().card_face
    found: set[int] = set()

    def walk(item: Any) -> None:
        if isinstance(item, dict):
            if face(item) is not None:
                found.add(item["id"])
                return
            for sub in item.values():
                walk(sub)
        elif isinstance(item, list):
            for sub in item:
                walk(sub)

    walk(value)
    return found


def seat_knowledge(result, seat: int) -> list[dict[str, Any]]:
    """Per step of a stored game (0 = the deal): the seat's observation, its legal actions
    when it is to move, its events so far, the ids it may know, and the ids nobody showed it."""
    game = get_game(result.game)
    state = game.new_game(result.players, result.rules, result.seed)
    out = []
    for step in range(len(result.replay.actions) + 1):
        observation = state.observation(seat)
        events = state.events(seat)
        known = card_ids(observation, result.game) | card_ids(events, result.game)
        everything = card_ids(state.spectator_view(), result.game) | card_ids(state.full_events(), result.game)
        out.append(
            {
                "observation": observation,
                "legal": state.legal_actions() if state.current_player == seat else None,
                "events": events,
                "known": known,
                "hidden": everything - known,
            }
        )
        if step < len(result.replay.actions):
            state.apply(result.replay.actions[step].action)
    return out
