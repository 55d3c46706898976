"""The shapes of Three Thirteen's actions and observations, declared (`arena schema --game three-thirteen`).

Plain `typing.TypedDict`s (the engine stays standard-library only), told apart by their
`type`; at run time actions and observations are still plain dicts built in `game.py`,
so declaring them costs the hot path nothing. What each field means:
docs/rules/three-thirteen.md, "Legal actions" and "What you see". A test
(tests/game/test_game_shapes.py) checks every action and observation of real games against
these shapes.
"""

from typing import Any, Literal, TypedDict, Union


class Card(TypedDict):
    """A card shown face up: its id (the same card in every game with as many decks), rank (1 = Ace ... 13 = King), suit."""

    id: int
    rank: int
    suit: Literal["C", "D", "H", "S"]


class Draw(TypedDict):
    """The draw step: take the top card of the stock or of the discard pile."""

    type: Literal["draw"]
    source: Literal["stock", "discard"]


class Discard(TypedDict):
    """The discard step: discard a card from your hand."""

    type: Literal["discard"]
    card: int


class GoOut(TypedDict):
    """The discard step: discard a card and go out, every other card in combinations."""

    type: Literal["go_out"]
    card: int


Action = Union[Draw, Discard, GoOut]


class Meld(TypedDict):
    """A combination: ranks[i] is the rank cards[i] stands for (a high Ace is 14; an all-wild set has ranks 0)."""

    kind: Literal["set", "run"]
    cards: list[Card]
    ranks: list[int]


class ScoredHand(TypedDict):
    """A hand as scored at the end of a round: its combinations, the cards left over, its penalty."""

    melds: list[Meld]
    deadwood: list[Card]
    penalty: int


class RoundResult(TypedDict):
    """The result of a round: every hand as scored, the penalties and the totals after it."""

    round: int
    wild_rank: int
    reason: Literal["went_out", "turn_cap", "stock_exhausted"]
    went_out: int | None
    hands: list[ScoredHand]
    penalties: list[int]
    totals: list[int]


class Observation(TypedDict):
    """What one seat may know now (`observation(seat)`)."""

    game: Literal["three-thirteen"]
    seat: int
    players: int
    round: int
    rounds: int
    wild_rank: int
    dealer: int
    current_player: int | None
    phase: Literal["draw", "discard", "over"]
    hand: list[Card]
    hand_sizes: list[int]
    discard_pile: list[Card]
    stock_size: int
    taken_from_discard: Card | None
    went_out: int | None
    laid_down: list[Meld]
    final_turns_left: int
    turn: int
    max_turns_per_round: int
    totals: list[int]
    last_round: RoundResult | None
    options: dict[str, Any]
