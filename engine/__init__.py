"""Pure game rules for arena: deterministic, no I/O, no clocks, no bots.

Use `get_game(name).new_game(players, options, seed)` and the `State` API in
`engine.api`; `all_games()` lists what is registered.
"""

from engine.api import (
    Action,
    BadOption,
    BadPlayerCount,
    Event,
    Game,
    GameError,
    IllegalAction,
    Observation,
    OptionSpec,
    State,
    UnknownGame,
)
from engine.registry import all_games, get_game, register
from engine.replay_tables import ReplayTables

__all__ = [
    "Action",
    "BadOption",
    "BadPlayerCount",
    "Event",
    "Game",
    "GameError",
    "IllegalAction",
    "Observation",
    "OptionSpec",
    "ReplayTables",
    "State",
    "UnknownGame",
    "all_games",
    "get_game",
    "register",
]
