"""Every message between the referee and a bot, as pydantic models (the JSON Schema
printed by `arena schema` comes from here; docs/protocol.md shows each with an example),
and the JSON Schema of a game's observation and actions (`arena schema --game G`), read
from the shapes the game declares (`Game.observation_type`, `Game.action_type`).

JSON Lines over the bot's stdin/stdout, UTF-8, one object per line, each with a "type".
A match is: `hello` -> bot answers `ready`; then per game `start`, and until the game
ends `events` (what this seat saw happen) and `request` -> bot answers `action`; then
`game_over`; after the last game `match_over`. One bot process plays the whole match.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any, Literal, Union

import orjson
import typing_extensions
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from arena.faults import BotFault, Reason
from arena.limits import LimitsInfo  # made from the one definition of the limits
from engine.api import Game, GameError

PROTOCOL_VERSION = 1


class _RefereeMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Hello(_RefereeMessage):
    """Referee -> bot, once per match, first: the handshake. Answer with `ready`."""

    type: Literal["hello"] = "hello"
    protocol: int = Field(PROTOCOL_VERSION, description="Protocol version the referee speaks.")
    game: str = Field(description="Game name, e.g. '3up3down' or 'three-thirteen'.")
    players: int = Field(description="Seats at the table in every game of this match.")
    rules: dict[str, Any] = Field(description="Every rule option of the game, defaults filled in.")
    games: int = Field(description="How many games the match has.")
    seed: int = Field(description="Seed for the bot's own randomness (not the games' deal seeds).")
    limits: LimitsInfo


class Start(_RefereeMessage):
    """Referee -> bot, at the start of each game: which seat the bot has (seats rotate)."""

    type: Literal["start"] = "start"
    game_number: int = Field(description="1-based number of this game in the match.")
    seat: int = Field(description="The bot's seat in this game, 0-based.")
    players: int
    rules: dict[str, Any]
    seed: int | None = Field(
        None,
        description="In a tournament: the seed for the bot's own randomness in this game (reseed with it, and a "
        "process that plays many games plays each as a fresh one would). Absent in a match.",
    )


class Events(_RefereeMessage):
    """Referee -> bot: what happened since the last `events`, as this seat saw it. No answer."""

    type: Literal["events"] = "events"
    events: list[dict[str, Any]]


class Request(_RefereeMessage):
    """Referee -> bot: a decision is due. Answer with `action` carrying the same `id`."""

    type: Literal["request"] = "request"
    id: int = Field(description="Echo it in the answer.")
    observation: dict[str, Any] = Field(description="What this seat may know now (game-specific).")
    legal_actions: list[dict[str, Any]] = Field(description="Choose one of these, by index or as is.")
    time_s: float = Field(description="Time for this decision, time bank included.")
    bank_s: float = Field(description="What is left of the time bank.")


class GameOver(_RefereeMessage):
    """Referee -> bot: the game has ended. No answer."""

    type: Literal["game_over"] = "game_over"
    game_number: int
    seat: int
    places: list[int] = Field(description="Place of each seat, 1 = best; forfeited seats share last.")
    scores: list[float] = Field(description="Score of each seat, as the game counts it.")
    forfeits: list[int] = Field(description="Seats that forfeited this game.")


class MatchOver(_RefereeMessage):
    """Referee -> bot: the match has ended; the bot should exit (it is killed soon after)."""

    type: Literal["match_over"] = "match_over"
    games: int


RefereeMessage = Annotated[
    Union[Hello, Start, Events, Request, GameOver, MatchOver], Field(discriminator="type")
]


class Ready(BaseModel):
    """Bot -> referee: the answer to `hello`."""

    model_config = ConfigDict(extra="ignore")
    type: Literal["ready"]
    name: str = Field(min_length=1, max_length=100)
    version: str = Field("", max_length=100)
    protocol: StrictInt = Field(PROTOCOL_VERSION, description="Protocol version the bot speaks.")


class ActionAnswer(BaseModel):
    """Bot -> referee: the answer to `request`: an index into legal_actions, or the action itself."""

    model_config = ConfigDict(extra="ignore")
    type: Literal["action"]
    id: StrictInt
    index: StrictInt | None = Field(None, description="0-based index into legal_actions.")
    action: dict[str, Any] | None = Field(None, description="One of legal_actions, verbatim.")

    @model_validator(mode="after")
    def _exactly_one(self) -> ActionAnswer:
        if (self.index is None) == (self.action is None):
            raise ValueError("give exactly one of 'index' and 'action'")
        return self


BotMessage = Annotated[Union[Ready, ActionAnswer], Field(discriminator="type")]

_REFEREE = TypeAdapter(RefereeMessage)
_BOT = TypeAdapter(BotMessage)


def encode(message: BaseModel) -> bytes:
    """One message as a JSON line's bytes (without the newline); an optional field that is
    not set (None) is left out."""
    return message.model_dump_json(exclude_none=True).encode()


def encode_request(
    request_id: int, observation: dict[str, Any], legal_actions: list[dict[str, Any]], time_s: float, bank_s: float
) -> bytes:
    """`encode(Request(...))` without building the model: the same bytes, for the hot path.

    orjson writes the fields in the model's order with the same separators, string escapes
    and shortest float form as the models' serializer, so the bytes are identical
    (tests/game/test_referee_bytes.py compares them on whole games), at a third of the cost.
    """
    return orjson.dumps(
        {
            "type": "request",
            "id": request_id,
            "observation": observation,
            "legal_actions": legal_actions,
            "time_s": float(time_s),
            "bank_s": float(bank_s),
        }
    )


def encode_events(events: list[dict[str, Any]]) -> bytes:
    """`encode(Events(events=...))` without building the model: the same bytes."""
    return orjson.dumps({"type": "events", "events": events})


def decode_referee(line: bytes | str) -> BaseModel:
    """Parse a referee message (for bots written in Python and for tests)."""
    return _REFEREE.validate_json(line)


def decode_bot(line: bytes) -> Ready | ActionAnswer:
    """Parse a line a bot wrote; BotFault INVALID_JSON or BAD_MESSAGE saying what is wrong."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BotFault(Reason.INVALID_JSON, f"wrote a line that is not UTF-8 ({error.reason} at byte {error.start})") from None
    try:
        return _BOT.validate_json(line)
    except ValidationError as error:
        problems = error.errors(include_url=False, include_input=False)
        if any(problem["type"] == "json_invalid" for problem in problems):
            raise BotFault(
                Reason.INVALID_JSON, f"wrote a line that is not JSON: {_show(line)}"
            ) from None
        said = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc']) or 'message'}: {problem['msg']}"
            for problem in problems[:3]
        )
        raise BotFault(
            Reason.BAD_MESSAGE,
            f"wrote a message that is not a valid 'ready' or 'action' ({said}): {_show(line)}",
        ) from None
    except RecursionError:
        raise BotFault(Reason.INVALID_JSON, "wrote JSON nested too deeply") from None


def _show(line: bytes, limit: int = 120) -> str:
    text = line[:limit].decode("utf-8", errors="replace")
    return repr(text) + (f" ... ({len(line)} bytes)" if len(line) > limit else "")


def json_schema() -> dict[str, Any]:
    """The JSON Schema of both directions: referee -> bot and bot -> referee."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"arena bot protocol, version {PROTOCOL_VERSION}",
        "description": "JSON Lines over the bot's stdin (referee_to_bot) and stdout (bot_to_referee).",
        "referee_to_bot": _REFEREE.json_schema(),
        "bot_to_referee": _BOT.json_schema(),
    }


# --- a game's own shapes: what `observation` and each action look like ---------------------


def _pydantic_type(shape: Any) -> Any:
    """`shape` with every `typing.TypedDict` in it rebuilt as a `typing_extensions.TypedDict`
    (pydantic reads only those on Python < 3.12; the engine declares stdlib ones)."""
    if typing.is_typeddict(shape):
        return _typed_dict(shape)
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin is None or origin is Literal or not args:
        return shape
    converted = tuple(_pydantic_type(arg) for arg in args)
    if origin in (Union, types.UnionType):
        return Union[converted]
    return origin[converted]


@functools.cache
def _typed_dict(shape: type) -> Any:
    hints = typing.get_type_hints(shape)
    fields = {
        name: _pydantic_type(hint) if name in shape.__required_keys__ else typing_extensions.NotRequired[_pydantic_type(hint)]
        for name, hint in hints.items()
    }
    rebuilt = typing_extensions.TypedDict(shape.__name__, fields)  # type: ignore[operator]
    rebuilt.__doc__ = shape.__doc__
    rebuilt.__module__ = shape.__module__
    # Exactly the declared keys: a key the engine adds without declaring it fails the shape test.
    rebuilt.__pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[attr-defined]
    return rebuilt


def game_adapters(game: Game) -> tuple[TypeAdapter[Any], TypeAdapter[Any]]:
    """Validators of the game's declared observation and action; GameError if it declares none."""
    if game.observation_type is None or game.action_type is None:
        raise GameError(f"game {game.name!r} does not declare the shapes of its observations and actions")
    action = _pydantic_type(game.action_type)
    if typing.get_origin(action) is Union:
        action = Annotated[action, Field(discriminator="type")]
    return TypeAdapter(_pydantic_type(game.observation_type)), TypeAdapter(action)


def game_json_schema(game: Game) -> dict[str, Any]:
    """The JSON Schema of what a bot playing `game` is sent and answers: `observation` (in
    `request`) and `action` (each of `request.legal_actions`, and `action.action`)."""
    observation, action = game_adapters(game)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{game.title} ({game.name}): observation and action, bot protocol version {PROTOCOL_VERSION}",
        "description": (
            f"`observation` is request.observation; `action` is each item of request.legal_actions "
            f"(answer with one of them). Meanings: docs/rules/{game.name}.md."
        ),
        "game": game.name,
        "observation": observation.json_schema(),
        "action": action.json_schema(),
    }
