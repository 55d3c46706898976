"""Built-in in-process players: the seeded random legal player used by demos,
benchmarks, tests and the referee's fallback for a forfeited seat."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.api import Action, State
from engine.registry import get_game


def random_action(state: State, rng: random.Random) -> Action:
    """A uniformly random legal action for the current player."""
    legal = state.legal_actions()
    return legal[rng.randrange(len(legal))]


def play_random_game(
    game: str,
    players: int,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    player_seed: int | None = None,
) -> State:
    """Play a whole game with random legal players; returns the finished state."""
    state = get_game(game).new_game(players, options, seed)
    rng = random.Random(seed if player_seed is None else player_seed)
    while not state.is_over:
        state.apply(random_action(state, rng))
    return state
