"""arena_bot: write an arena bot in Python as one function. Standard library only.

Copy this file next to your bot (the example bots in bots/ each carry a copy; the
Docker base image has python3 and nothing else) and write:

    import arena_bot

    def decide(observation, legal_actions, ctx):
        return ctx.rng.randrange(len(legal_actions))   # an index, or one of legal_actions

    arena_bot.run(decide, name="my-bot", version="1.0")

`decide` gets the seat's observation and its legal actions (plain dicts, exactly as in
docs/protocol.md) and returns an index into legal_actions or one of the actions itself.
It may take a third argument, `ctx` (a `Context`: the game, rules, seat, this game's
events so far, a `random.Random` seeded by the referee so a match replays exactly).
`run` does the protocol: the handshake, the events, game over, match over. Anything you
print to stderr is your bot's log (kept, capped); never print to stdout yourself.
"""

from __future__ import annotations

import inspect
import json
import random
import sys
from typing import Any, Callable

PROTOCOL_VERSION = 1


class Context:
    """What a bot knows besides the current request: the match, this game, its events."""

    def __init__(self, hello: dict[str, Any]):
        self.hello = hello
        self.game: str = hello["game"]
        self.players: int = hello["players"]
        self.rules: dict[str, Any] = hello["rules"]
        self.limits: dict[str, Any] = hello["limits"]
        self.rng = random.Random(hello["seed"])
        self.seat: int = -1
        self.game_number: int = 0
        self.events: list[dict[str, Any]] = []
        self.request: dict[str, Any] = {}
        self.results: list[dict[str, Any]] = []

    def start_game(self, start: dict[str, Any]) -> None:
        """A new game: new seat, empty event list; in a tournament, `rng` reseeded with the
        game's own seed (so a process that plays many games plays each as a fresh one)."""
        self.seat = start["seat"]
        self.game_number = start["game_number"]
        self.players = start.get("players", self.players)
        self.events = []
        if start.get("seed") is not None:
            self.rng = random.Random(start["seed"])


Decide = Callable[..., Any]


def run(
    decide: Decide,
    name: str,
    version: str = "1.0",
    on_event: Callable[[dict[str, Any], Context], None] | None = None,
    on_game_over: Callable[[dict[str, Any], Context], None] | None = None,
    stdin: Any = None,
    stdout: Any = None,
) -> Context | None:
    """Play a whole match over stdin/stdout with `decide`; returns when the match is over."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout
    wants_context = _arity(decide) >= 3
    ctx: Context | None = None

    def send(message: dict[str, Any]) -> None:
        sink.write(json.dumps(message, separators=(",", ":")) + "\n")
        sink.flush()

    while True:
        line = source.readline()
        if not line:
            return ctx
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            ctx = Context(message)
            send({"type": "ready", "name": name, "version": version, "protocol": PROTOCOL_VERSION})
        elif kind == "start":
            ctx.start_game(message)
        elif kind == "events":
            for event in message["events"]:
                ctx.events.append(event)
                if on_event is not None:
                    on_event(event, ctx)
        elif kind == "request":
            ctx.request = message
            legal = message["legal_actions"]
            if wants_context:
                choice = decide(message["observation"], legal, ctx)
            else:
                choice = decide(message["observation"], legal)
            answer: dict[str, Any] = {"type": "action", "id": message["id"]}
            if isinstance(choice, dict):
                answer["action"] = choice
            else:
                answer["index"] = int(choice)
            send(answer)
        elif kind == "game_over":
            ctx.results.append(message)
            if on_game_over is not None:
                on_game_over(message, ctx)
        elif kind == "match_over":
            return ctx
        # Unknown types are ignored: a newer referee may tell more than this helper knows.


def _arity(function: Decide) -> int:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 2
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return 3
    return len(positional)
