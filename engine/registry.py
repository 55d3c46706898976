"""The registry: game names to `Game` objects. Games register themselves on import."""

from __future__ import annotations

from engine.api import Game, UnknownGame

_GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Add a game under its name (once)."""
    if game.name in _GAMES and _GAMES[game.name] is not game:
        raise ValueError(f"a game named {game.name!r} is already registered")
    _GAMES[game.name] = game
    return game


def get_game(name: str) -> Game:
    """The game registered as `name`, or UnknownGame listing the known names."""
    _load_builtin_games()
    try:
        return _GAMES[name]
    except KeyError:
        known = ", ".join(sorted(_GAMES)) or "(none)"
        raise UnknownGame(f"unknown game {name!r}; known games: {known}") from None


def all_games() -> list[Game]:
    """Every registered game, by name."""
    _load_builtin_games()
    return [_GAMES[name] for name in sorted(_GAMES)]


def _load_builtin_games() -> None:
    # Imported here, not at module top, so `engine.api` stays importable on its own
    # and a game package may import the registry without a cycle.
    import importlib

    for module in ("engine.threeup", "engine.three_thirteen"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as missing:
            if missing.name != module:
                raise
