"""three-thirteen-heuristic: a solid Three Thirteen bot (standard library only).

- Draw: take the top of the discard pile when keeping it (and discarding the best other
  card) leaves less deadwood than the hand has now; else draw from the stock.
- Go out whenever a `go_out` action is offered (it scores 0 for the round).
- Discard: the card whose removal leaves the least deadwood; ties go to a card that is
  not wild, then to one with fewer partners in the hand (same rank, or same suit within
  two ranks: the makings of a future combination), then to the highest penalty.

Deadwood comes from `deadwood.py`, an exact evaluator of its own (the bot may not use the
referee's code). Anything it does not understand falls back to a random legal action.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import arena_bot
from deadwood import Hand, penalty

SUITS = "CDHS"


def decide(observation, legal_actions, ctx):
    """One of legal_actions (an index)."""
    try:
        choice = choose(observation, legal_actions)
    except Exception as error:  # noqa: BLE001 - an odd observation must not forfeit the game
        print(f"three-thirteen-heuristic: fell back to a random action: {error!r}", file=sys.stderr)
        choice = None
    if not isinstance(choice, int) or not 0 <= choice < len(legal_actions):
        choice = ctx.rng.randrange(len(legal_actions))
    return choice


def as_pair(card: dict) -> tuple[int, int]:
    """A protocol card as (rank, suit index)."""
    return int(card["rank"]), SUITS.index(card["suit"])


@dataclass(frozen=True)
class Rules:
    """What the evaluator needs to know of this round and the options."""

    wild_rank: int
    ace_high: bool = False
    wild_penalty: int = 0
    all_wild: bool = True

    def hand(self, cards: list[tuple[int, int]]) -> Hand:
        """An evaluator of these cards under these rules."""
        return Hand(cards, self.wild_rank, self.ace_high, self.wild_penalty, self.all_wild)

    def penalty(self, card: tuple[int, int]) -> int:
        """What the card costs if it stays unmatched."""
        if card[0] == self.wild_rank and self.wild_penalty:
            return self.wild_penalty
        return penalty(card[0], self.ace_high)


def choose(observation: dict, legal: list[dict]) -> int | None:
    """The index of the chosen action, or None to let the caller pick at random."""
    if len(legal) == 1:
        return 0
    options = observation.get("options") or {}
    rules = Rules(
        wild_rank=int(observation["wild_rank"]),
        ace_high=bool(options.get("ace_high")),
        wild_penalty=int(options.get("wild_penalty") or 0),
        all_wild=bool(options.get("all_wild_combinations", True)),
    )
    hand = observation.get("hand") or []
    kinds = {action.get("type") for action in legal}
    if "go_out" in kinds:
        cards = {card["id"]: as_pair(card) for card in hand}
        going_out = [i for i, action in enumerate(legal) if action["type"] == "go_out"]
        # The discard may help the next player: never a wild, else the highest card.
        return min(going_out, key=lambda i: throw_away_cost(cards[legal[i]["card"]], rules))
    if kinds == {"draw"}:
        return choose_draw(observation, legal, hand, rules)
    if "discard" in kinds:
        return choose_discard(legal, hand, rules)
    return None


def choose_draw(observation: dict, legal: list[dict], hand: list[dict], rules: Rules) -> int:
    """Take the discard if it lowers the hand's least deadwood, else draw from the stock."""
    stock = next(i for i, action in enumerate(legal) if action.get("source") == "stock")
    pile = observation.get("discard_pile") or []
    discard = next((i for i, action in enumerate(legal) if action.get("source") == "discard"), None)
    if discard is None or not pile:
        return stock
    cards = [as_pair(card) for card in hand]
    now = rules.hand(cards).least()
    taken = rules.hand(cards + [as_pair(pile[-1])])
    may_discard_taken = bool((observation.get("options") or {}).get("discard_taken_card"))
    positions = range(len(cards) + 1) if may_discard_taken else range(len(cards))
    after = min(taken.least_without(position) for position in positions)
    return discard if after < now else stock


def choose_discard(legal: list[dict], hand: list[dict], rules: Rules) -> int:
    """The discard that leaves the least deadwood (ties as the module docstring says)."""
    cards = [as_pair(card) for card in hand]
    evaluator = rules.hand(cards)
    position_of = {card["id"]: position for position, card in enumerate(hand)}

    def cost(index: int) -> tuple:
        position = position_of[legal[index]["card"]]
        return (
            evaluator.least_without(position),
            cards[position][0] == rules.wild_rank,
            partners(cards, position, rules.wild_rank),
            -penalty(cards[position][0], rules.ace_high),
        )

    discards = [i for i, action in enumerate(legal) if action["type"] == "discard"]
    return min(discards, key=cost)


def throw_away_cost(card: tuple[int, int], rules: Rules) -> tuple:
    """Order of cards to give away when it does not change our deadwood: wilds last."""
    return (card[0] == rules.wild_rank, -rules.penalty(card))


def partners(cards: list[tuple[int, int]], position: int, wild_rank: int) -> int:
    """How many other natural cards could join this one in a combination soon."""
    rank, suit = cards[position]
    count = 0
    for other, (other_rank, other_suit) in enumerate(cards):
        if other == position or other_rank == wild_rank:
            continue
        if other_rank == rank or (other_suit == suit and abs(other_rank - rank) <= 2):
            count += 1
    return count


if __name__ == "__main__":
    arena_bot.run(decide, name="three-thirteen-heuristic", version="1.0")
