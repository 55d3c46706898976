"""A tiny test-only game, "nim-test", for the referee, match and sandbox tests.

A pile of stones; in turn each seat takes 1-3; whoever takes the last stone wins (place
1, score 1), everyone else shares place 2 (score 0). Registered only inside
`nim_registered()`, so other test files see just the real games. Every seat is dealt a private
`secret` number from the seed, shown only to that seat, so tests can check that nothing
of another seat reaches a bot.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import engine.registry
from engine.api import Action, Event, Game, Observation, OptionSpec, State


@dataclass
class NimState(State):
    stones: int = 0
    secrets: list[int] = field(default_factory=list)
    turn: int = 0
    winner: int | None = None
    log: list[tuple[int | None, Event]] = field(default_factory=list)

    @property
    def current_player(self) -> int | None:
        return None if self.winner is not None else self.turn

    def legal_actions(self) -> list[Action]:
        if self.winner is not None:
            return []
        return [{"take": n} for n in range(1, min(3, self.stones) + 1)]

    def observation(self, seat: int) -> Observation:
        return {"stones": self.stones, "seat": seat, "to_play": self.current_player, "secret": self.secrets[seat]}

    def spectator_view(self) -> Observation:
        return {"stones": self.stones, "secrets": list(self.secrets), "to_play": self.current_player}

    def events(self, seat: int | None = None) -> list[Event]:
        # (owner, event): owner None = public; else only that seat (and spectators) see it.
        return [dict(event) for owner, event in self.log if owner is None or owner == seat]

    def full_events(self) -> list[Event]:
        return [dict(event) for _, event in self.log]

    def _apply(self, action: Action) -> None:
        seat = self.turn
        self.stones -= action["take"]
        self.log.append((None, {"type": "take", "seat": seat, "take": action["take"], "left": self.stones}))
        if self.stones == 0:
            self.winner = seat
            self.log.append((None, {"type": "win", "seat": seat}))
        else:
            self.turn = (self.turn + 1) % self.players

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    def places(self) -> list[int]:
        return [1 if seat == self.winner else 2 for seat in range(self.players)]

    def scores(self) -> list[float]:
        return [1.0 if seat == self.winner else 0.0 for seat in range(self.players)]


class NimGame(Game):
    name = "nim-test"
    title = "Nim (test only)"
    min_players = 2
    max_players = 6
    options = (OptionSpec("stones", int, 10, "stones on the pile at the start", min=1, max=1000),)

    def _new_state(self, players: int, options: dict[str, Any], seed: int) -> State:
        rng = random.Random(seed)
        secrets = [rng.randrange(10**6) for _ in range(players)]
        state = NimState(players=players, options=options, seed=seed, stones=options["stones"], secrets=secrets)
        for seat, secret in enumerate(secrets):
            state.log.append((seat, {"type": "deal", "seat": seat, "secret": secret}))
        return state


NIM = NimGame()


@contextmanager
def nim_registered() -> Iterator[NimGame]:
    """Register "nim-test" for the duration (other test files must not see a third game)."""
    engine.registry.register(NIM)
    try:
        yield NIM
    finally:
        engine.registry._GAMES.pop(NIM.name, None)
