"""The shapes of 3UP 3DOWN's actions and observations, declared (`arena schema --game 3up3down`).

Plain `typing.TypedDict`s (the engine stays standard-library only), told apart by their
`type`; at run time actions and observations are still plain dicts, built in `state.py`
(actions) and `view.py` (observations), so declaring them costs the hot path nothing.
What each field means: docs/rules/3up3down.md, "Actions" and "Observation". A test
(tests/game/test_game_shapes.py) checks every action and observation of real games against
these shapes.
"""

# No `from __future__ import annotations`: Python 3.11's TypedDict sees NotRequired only
# in evaluated annotations.
from typing import Any, Literal, NotRequired, TypedDict, Union

Colour = Literal["red", "blue", "green"]


class Card(TypedDict):
    """A card shown face up: its id (stable per deck and colours), kind, value (null for Clear cards), colour."""

    id: int
    kind: Literal["number", "clear", "clear1", "clear2"]
    value: int | None
    colour: Colour


class ChooseUp(TypedDict):
    """Setup: the three of your six cards to lay face up (with choose_for_others: for your left neighbour)."""

    type: Literal["choose_up"]
    cards: list[int]


class Play(TypedDict):
    """Play hand or 3UP cards of one value, or one Clear-type card."""

    type: Literal["play"]
    cards: list[int]


class PlayDown(TypedDict):
    """Turn over the blind 3DOWN card at a position (0-2) that still holds one."""

    type: Literal["play_down"]
    position: int


class Pickup(TypedDict):
    """Take the discard pile (only when there is no legal play)."""

    type: Literal["pickup"]


class Draw(TypedDict):
    """may_draw_instead: draw one card instead of playing, ending the turn."""

    type: Literal["draw"]


class Refill(TypedDict):
    """After a Clear +1/+2: draw before the next action."""

    type: Literal["refill"]


class NoRefill(TypedDict):
    """After a Clear +1/+2: do not draw before the next action."""

    type: Literal["no_refill"]


class Swap(TypedDict):
    """colour_run_swap: exchange a 3UP card for a hand card."""

    type: Literal["swap"]
    up: int
    hand: int


class Keep(TypedDict):
    """colour_run_swap: keep the 3UP cards as they are."""

    type: Literal["keep"]


Action = Union[ChooseUp, Play, PlayDown, Pickup, Draw, Refill, NoRefill, Swap, Keep]


class ColourRun(TypedDict):
    """colour_run_swap: the run of one colour on the discard pile."""

    colour: Colour | None
    length: int


class Observation(TypedDict):
    """What one seat may know now (`observation(seat)`); keys marked not required appear only when they apply."""

    game: Literal["3up3down"]
    players: int
    phase: Literal["setup", "play", "refill", "swap", "over"]
    current_player: int | None
    turn: int
    max_turns: int
    direction: Literal[1, -1]
    chosen_up: list[bool]
    up: list[list[Card]] | None
    down: list[list[bool]]
    hand_sizes: list[int]
    draw_pile_size: int
    discard_pile: list[Card]
    removed: list[Card]
    finished: list[int]
    rules: dict[str, Any]
    seat: int
    hand: list[Card]
    # After setup, while the game is on:
    source: NotRequired[Literal["hand", "up", "down", "none"]]
    actions_left: NotRequired[int]
    extra_action: NotRequired[bool]
    may_refill: NotRequired[bool]
    # With colour_run_swap:
    colour_run: NotRequired[ColourRun]
    # Once over:
    places: NotRequired[list[int]]
    scores: NotRequired[list[float]]
    end_reason: NotRequired[Literal["finished", "first_finisher", "max_turns"]]
    # During setup:
    setup_cards: NotRequired[list[Card]]
    own_up: NotRequired[list[Card]]
