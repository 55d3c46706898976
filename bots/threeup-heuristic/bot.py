"""threeup-heuristic: a solid rule-of-thumb 3UP 3DOWN bot (standard library only).

What it does, in order of importance:
- setup: lays its strongest cards face up (Clears, then high values, pairs a bonus), since
  the 3UP is played at the very end with no hand to fall back on; with
  `choose_for_others` it gives its neighbour the weakest three instead;
- plays the lowest number value it can, all copies of it at once (sheds cards and keeps
  the high ones for when they are needed);
- keeps Clear cards for when it would otherwise pick up the pile; then spends a plain
  Clear while the draw pile lasts and a Clear +2 / +1 (more actions = more cards shed)
  once it is empty;
- when the next player must play from its face-up 3UP, plays the lowest value that beats
  all of those cards, so that it has to pick up;
- refills before an extra action when that is free (it would draw those cards anyway);
- with `colour_run_swap`, moves a stronger hand card up in place of a weaker 3UP card;
- with `may_draw_instead`, draws rather than spend a Clear.

Anything it does not understand falls back to a random legal action: it never crashes.
"""

from __future__ import annotations

import sys

import arena_bot

# How much a card is worth to keep: Clear cards beat every number, the bonus ones most.
SPECIAL_STRENGTH = {"clear": 11, "clear1": 12, "clear2": 13}
PAIR_BONUS = 2  # two equal 3UP numbers go out in one action


def strength(card: dict) -> int:
    """How good a card is to hold for later: its value, or more for a Clear card."""
    if card.get("kind") == "number":
        return int(card["value"])
    return SPECIAL_STRENGTH.get(card.get("kind"), 11)


def decide(observation, legal_actions, ctx):
    """One of legal_actions (an index), by the rules of thumb above."""
    try:
        choice = choose(observation, legal_actions)
    except Exception as error:  # noqa: BLE001 - an odd observation must not forfeit the game
        print(f"threeup-heuristic: fell back to a random action: {error!r}", file=sys.stderr)
        choice = None
    if not isinstance(choice, int) or not 0 <= choice < len(legal_actions):
        choice = ctx.rng.randrange(len(legal_actions))
    return choice


def choose(observation: dict, legal: list[dict]) -> int | None:
    """The index of the chosen action, or None to let the caller pick at random."""
    by_type: dict[str, list[int]] = {}
    for index, action in enumerate(legal):
        by_type.setdefault(action.get("type"), []).append(index)
    if len(legal) == 1:
        return 0
    if "choose_up" in by_type:
        return choose_up(observation, legal, by_type["choose_up"])
    if "refill" in by_type:
        return choose_refill(observation, by_type)
    if "swap" in by_type or "keep" in by_type:
        return choose_swap(observation, legal, by_type)
    if "play" in by_type:
        return choose_play(observation, legal, by_type)
    if "play_down" in by_type:
        return by_type["play_down"][0]  # blind: any position is as good as another
    return None


def choose_up(observation: dict, legal: list[dict], options: list[int]) -> int:
    """The strongest trio for ourselves, the weakest for a neighbour."""
    cards = {card["id"]: card for card in observation.get("setup_cards") or []}
    for_others = bool((observation.get("rules") or {}).get("choose_for_others"))

    def trio_value(index: int) -> int:
        trio = [cards[card_id] for card_id in legal[index]["cards"]]
        value = sum(strength(card) for card in trio)
        numbers = [card["value"] for card in trio if card["kind"] == "number"]
        if len(numbers) != len(set(numbers)):
            value += PAIR_BONUS
        return value

    if for_others:
        return min(options, key=trio_value)
    return max(options, key=trio_value)


def choose_refill(observation: dict, by_type: dict[str, list[int]]) -> int:
    """Refill when the cards would come at the end of the turn anyway."""
    refill_rule = (observation.get("rules") or {}).get("refill", "up_to_three")
    hand_size = len(observation.get("hand") or [])
    if refill_rule == "one_card" and hand_size >= 3:
        return by_type.get("no_refill", by_type["refill"])[0]  # a card we would not draw otherwise
    return by_type["refill"][0]


def choose_swap(observation: dict, legal: list[dict], by_type: dict[str, list[int]]) -> int:
    """Put a stronger hand card face up in place of a weaker 3UP card, if one is."""
    seat = observation.get("seat")
    cards = {card["id"]: card for card in observation.get("hand") or []}
    for card in (observation.get("up") or [[]] * (seat + 1))[seat] or []:
        cards[card["id"]] = card
    best, best_gain = by_type.get("keep", [None])[0], 0
    for index in by_type.get("swap", []):
        action = legal[index]
        gain = strength(cards[action["hand"]]) - strength(cards[action["up"]])
        if gain > best_gain:
            best, best_gain = index, gain
    return best


def choose_play(observation: dict, legal: list[dict], by_type: dict[str, list[int]]) -> int:
    """The play (or draw, or pickup) to make from the current source."""
    cards = {card["id"]: card for card in observation.get("hand") or []}
    for seat_up in observation.get("up") or []:
        for card in seat_up or []:
            cards[card["id"]] = card
    numbers: dict[int, list[int]] = {}  # value -> play indices
    specials: dict[str, list[int]] = {}  # kind -> play indices
    for index in by_type["play"]:
        played = [cards[card_id] for card_id in legal[index]["cards"]]
        if played[0]["kind"] == "number":
            numbers.setdefault(played[0]["value"], []).append(index)
        else:
            specials.setdefault(played[0]["kind"], []).append(index)

    def most_cards(indices: list[int]) -> int:
        return max(indices, key=lambda index: len(legal[index]["cards"]))

    if numbers:
        forcing = [value for value in numbers if value > next_player_can_beat(observation)]
        if forcing:
            return most_cards(numbers[min(forcing)])
        return most_cards(numbers[min(numbers)])
    if "draw" in by_type:
        return by_type["draw"][0]  # drawing one card is cheaper than spending a Clear
    draw_pile_left = observation.get("draw_pile_size", 0) > 0
    order = ("clear", "clear1", "clear2") if draw_pile_left else ("clear2", "clear1", "clear")
    for kind in order:
        if kind in specials:
            return specials[kind][0]
    return by_type["play"][0]


def next_player(observation: dict) -> int | None:
    """The seat that plays after us (finished seats are skipped)."""
    players = observation["players"]
    finished = set(observation.get("finished") or [])
    step = observation.get("direction") or 1
    for offset in range(1, players):
        seat = (observation["seat"] + step * offset) % players
        if seat not in finished:
            return seat
    return None


def next_player_can_beat(observation: dict) -> int:
    """The highest value the next player can surely answer with (11 = anything).

    Only known when that player must play from its 3UP (no hand, nothing left to draw):
    then its cards are face up, and a higher value than all of them makes it pick up.
    """
    following = next_player(observation)
    if following is None or observation.get("draw_pile_size", 0) > 0:
        return 11
    if observation["hand_sizes"][following] > 0:
        return 11
    up = (observation.get("up") or [])[following] if observation.get("up") else []
    if not up or any(card["kind"] != "number" for card in up):
        return 11
    return max(card["value"] for card in up)


if __name__ == "__main__":
    arena_bot.run(decide, name="threeup-heuristic", version="1.0")
