"""What a bot receives is byte for byte what it received before the referee's hot path was
made cheaper: the requests and events encoded without pydantic models, the observations
and events the engines build faster.

A recording sandbox stands in for a bot process: it keeps every line the referee writes
and answers each request with a seeded random index. The digests below were taken at the
commit before those changes, from the same seeded games of both games.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pydantic_core
import pytest

from arena.game.protocol import (
    PROTOCOL_VERSION,
    Events,
    Hello,
    LimitsInfo,
    Request,
    decode_referee,
    encode,
    encode_events,
    encode_request,
)
from arena.faults import Reason
from arena.game.referee import play_game
from arena.game.seats import RemoteBot
from arena.sandbox.base import BotProcess, BotSpec, Limits, Sandbox
from engine import get_game

READY = json.dumps({"type": "ready", "name": "recorder", "version": "1", "protocol": PROTOCOL_VERSION}).encode()


class RecordingProcess(BotProcess):
    """Keeps every line it is sent; answers `hello` and each request (a seeded random index)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.sent: list[bytes] = []
        self.answer: bytes | None = None

    def send_line(self, line: bytes) -> None:
        # An `events` line is written together with the message after it: one write, two lines.
        for one in line.split(b"\n"):
            self.receive(one)

    def receive(self, line: bytes) -> None:
        self.sent.append(line)
        if line.startswith(b'{"type":"hello"'):
            self.answer = READY
        elif line.startswith(b'{"type":"request"'):
            request = json.loads(line)
            index = self.rng.randrange(len(request["legal_actions"]))
            self.answer = json.dumps({"type": "action", "id": request["id"], "index": index}).encode()

    def receive_line(self, timeout_s: float) -> bytes:
        answer, self.answer = self.answer, None
        assert answer is not None
        return answer

    def poll_line(self) -> bytes | None:
        return None

    def stderr_text(self) -> str:
        return ""

    def close(self) -> Reason | None:
        return None


class RecordingSandbox(Sandbox):
    name = "recording"

    def __init__(self, seed: int):
        self.seed = seed
        self.processes: list[RecordingProcess] = []

    def start(self, bot: BotSpec, limits: Limits) -> BotProcess:
        process = RecordingProcess(random.Random(f"{self.seed}:{bot.name}"))
        self.processes.append(process)
        return process


def bot_lines(game: str, players: int, seed: int, options: dict) -> list[list[bytes]]:
    """Every line each seat's bot was sent in one seeded game."""
    limits = Limits()
    sandbox = RecordingSandbox(seed)
    rules = get_game(game).resolve_options(options)
    told = LimitsInfo(
        startup_s=limits.startup_s, decision_s=limits.decision_s, time_bank_s=limits.time_bank_s,
        max_line_bytes=limits.max_line_bytes, memory_mb=limits.memory_mb,
    )
    seats = [
        RemoteBot(
            BotSpec(name=f"seat{seat}", folder=Path("."), command=("true",)), sandbox, limits,
            Hello(game=game, players=players, rules=rules, games=1, seed=seat, limits=told),
        )
        for seat in range(players)
    ]
    result = play_game(game, seats, options, seed=seed)
    assert not result.incidents, result.incidents
    return [process.sent for process in sandbox.processes]


CASES = [
    ("3up3down", 4, 11, {}),
    ("3up3down", 2, 12, {"deck": "classic", "colours": 2, "points": True, "may_draw_instead": True}),
    ("3up3down", 3, 13, {"secret_setup": False, "play_for_places": False, "refill": "one_card", "max_turns": 40}),
    (
        "3up3down", 6, 14,
        {"ones_reverse": True, "swap_stacks": True, "colour_run_swap": True, "choose_for_others": True},
    ),
    ("three-thirteen", 2, 21, {}),
    ("three-thirteen", 4, 22, {}),
]

# sha256 of all lines of all seats, joined by newlines, taken before the hot path changed.
BEFORE = {
    ('3up3down', 4, 11): '09ac0ac036a132ad8d74bf61f2bdd7715a053f2b96bed64310aaa777273fda72',
    ('3up3down', 2, 12): '97d8211b3b189c312a9d4b5a849a991ab8cda7f23717db37d859b91d25e4a356',
    ('3up3down', 3, 13): '8c0d5487d89b8033cb4ea853a57cccc2cd84c30a05036fe5b03a1177f506d5ae',
    ('3up3down', 6, 14): '2d52d7519f30b0cd6bad8b53a5c9dc5776533331e2862c3703d12b7f69323199',
    ('three-thirteen', 2, 21): '487982caa7aed9b3909af556f2a409fa8fc5f4d96a772180093293d21ce212a7',
    ('three-thirteen', 4, 22): 'd33896ea00269317cb54e82c2050c6dbb7721cf28668544360b9438c8af61977',
}


def digest(lines: list[list[bytes]]) -> str:
    return hashlib.sha256(b"\n".join(line for seat in lines for line in seat)).hexdigest()


@pytest.mark.parametrize(("game", "players", "seed", "options"), CASES)
def test_bots_receive_the_same_bytes_as_before(game, players, seed, options):
    assert digest(bot_lines(game, players, seed, options)) == BEFORE[(game, players, seed)]


@pytest.mark.parametrize(("game", "players", "seed", "options"), CASES)
def test_the_fast_encoders_write_what_the_models_write(game, players, seed, options):
    for lines in bot_lines(game, players, seed, options):
        for line in lines:
            message = decode_referee(line)  # validated: the model as pydantic reads it
            if isinstance(message, Request):
                fast = encode_request(
                    message.id, message.observation, message.legal_actions, message.time_s, message.bank_s
                )
                assert fast == line == encode(message)
                assert pydantic_core.from_json(line) == json.loads(line)
            elif isinstance(message, Events):
                assert encode_events(message.events) == line == encode(message)


def test_the_request_encoder_writes_floats_and_text_as_the_model_does():
    # Every time a request can carry (limits allow at most 600 s a decision and a 3,600 s
    # bank, rounded to the millisecond), and floats and text of every other kind.
    for time_s, bank_s in [(1.0, 0.0), (0.001, 1e-7), (2, 4200.0), (0.1 + 0.2, 123456.789), (1e15, 5e-324)]:
        observation = {"name": "é ☃ \"quoted\"\n", "nothing": None, "flags": [True, False], "score": -12.5}
        model = Request(id=7, observation=observation, legal_actions=[{"type": "x"}], time_s=time_s, bank_s=bank_s)
        assert encode_request(7, observation, [{"type": "x"}], time_s, bank_s) == encode(model)


def test_a_float_too_big_for_any_limit_is_written_as_the_same_number():
    # From 1e16 up the writers may differ in the exponent's form ("1e20", "1e+20"; orjson
    # itself changed between versions), all valid JSON for the same number; no limit or
    # game value comes near. What arena guarantees is the number and the field order.
    fast = encode_request(7, {}, [], 1e20, 1.5e300)
    reference = json.loads(encode(Request(id=7, observation={}, legal_actions=[], time_s=1e20, bank_s=1.5e300)))
    parsed = json.loads(fast)
    assert parsed == {"type": "request", "id": 7, "observation": {}, "legal_actions": [],
                      "time_s": 1e20, "bank_s": 1.5e300}
    assert parsed == reference and list(parsed) == list(reference)
    assert fast.startswith(b'{"type":"request","id":7,"observation":{},"legal_actions":[],"time_s":1')


if __name__ == "__main__":  # prints the digests (run at the commit before a change)
    for game, players, seed, options in CASES:
        print(f"    ({game!r}, {players}, {seed}): {digest(bot_lines(game, players, seed, options))!r},")
