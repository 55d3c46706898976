"""An arena bot in Python: the protocol loop, a legal random move, and for Three Thirteen
the hand's least deadwood. Your strategy goes in choose(), near the end of this file."""

import json
import random
import sys
from functools import lru_cache

NAME, VERSION = "python-kit", "1.0"
rng = random.Random(1)  # seeded by the referee (hello, each start): a match replays exactly


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()  # arena waits for the line: never leave it in the buffer


# ---- Three Thirteen: the least deadwood of a hand ---------------------------------------
# A card of the wild rank is a wild. A combination is a set (3+ of one rank) or a run (3+
# of one suit in sequence); wilds fill its gaps. Spare wilds join any combination, or make
# their own with three or more (when all_wild_combinations); else they count.
def penalty(rank, ace_high):
    return 15 if rank == 1 and ace_high else min(rank, 10)


def deadwood(cards, observation):
    """The least deadwood of `cards` (dicts with rank and suit)."""
    options = observation.get("options") or {}
    wild_rank = observation.get("wild_rank")
    ace_high = bool(options.get("ace_high"))
    all_wild = options.get("all_wild_combinations", True)
    wild_cost = options.get("wild_penalty") or penalty(wild_rank or 0, ace_high)
    naturals = [c for c in cards if c["rank"] != wild_rank]
    wilds = len(cards) - len(naturals)
    run_rank = [14 if c["rank"] == 1 and ace_high else c["rank"] for c in naturals]

    @lru_cache(maxsize=None)
    def least(mask, wilds, formed):
        if mask == 0:
            return 0 if wilds == 0 or formed or (all_wild and wilds >= 3) else wilds * wild_cost
        first = (mask & -mask).bit_length() - 1
        best = penalty(naturals[first]["rank"], ace_high) + least(mask & ~(1 << first), wilds, formed)
        partners = [j for j in range(len(naturals)) if j != first and mask >> j & 1 and (
            naturals[j]["rank"] == naturals[first]["rank"] or naturals[j]["suit"] == naturals[first]["suit"])]
        for pick in range(1 << len(partners)):
            chosen = [first] + [j for b, j in enumerate(partners) if pick >> b & 1]
            if len(chosen) > 5:  # a longer combination splits into two at no cost
                continue
            ranks = [run_rank[j] for j in chosen]
            if all(naturals[j]["rank"] == naturals[first]["rank"] for j in chosen):
                need = max(0, 3 - len(chosen))
            elif all(naturals[j]["suit"] == naturals[first]["suit"] for j in chosen) and \
                    len(set(ranks)) == len(ranks) and max(ranks) - min(ranks) < 5:
                need = max(3, max(ranks) - min(ranks) + 1) - len(chosen)
            else:
                continue
            if need <= wilds:
                used = sum(1 << j for j in chosen)
                best = min(best, least(mask & ~used, wilds - need, True))
        return best

    return least((1 << len(naturals)) - 1, wilds, False)


def three_thirteen(observation, legal):
    hand = observation.get("hand") or []
    kinds = [action["type"] for action in legal]
    if "go_out" in kinds:
        return kinds.index("go_out")  # a round won
    if "draw" in kinds:  # the discard only when it lowers the deadwood
        pile = observation.get("discard_pile") or []
        sources = [action.get("source") for action in legal]
        if "discard" not in sources or not pile:
            return sources.index("stock") if "stock" in sources else 0
        now = deadwood(hand, observation)
        taken = hand + [pile[-1]]
        after = min(deadwood(taken[:i] + taken[i + 1:], observation) for i in range(len(hand)))
        return sources.index("discard") if after < now or "stock" not in sources else sources.index("stock")
    by_id = {card["id"]: card for card in hand}
    best, best_value = None, None
    for index, action in enumerate(legal):  # discard: the card that leaves the least deadwood
        if action["type"] != "discard" or action.get("card") not in by_id:
            continue
        card = by_id[action["card"]]
        rest = [other for other in hand if other["id"] != card["id"]]
        value = (deadwood(rest, observation), -penalty(card["rank"], False))  # ties: the highest
        if best_value is None or value < best_value:
            best, best_value = index, value
    return best if best is not None else rng.randrange(len(legal))


# ---- YOUR STRATEGY: return an index into `legal` ----------------------------------------
def choose(game, observation, legal):
    if game == "three-thirteen":
        return three_thirteen(observation, legal)
    return rng.randrange(len(legal))  # 3up3down and any other: random


# ---- the protocol loop ------------------------------------------------------------------
def main():
    game = ""
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            game = message["game"]
            rng.seed(message.get("seed"))
            send({"type": "ready", "name": NAME, "version": VERSION, "protocol": 1})
        elif kind == "start" and message.get("seed") is not None:
            rng.seed(message["seed"])
        elif kind == "request":
            legal = message["legal_actions"]
            index = choose(game, message["observation"], legal)
            if not isinstance(index, int) or not 0 <= index < len(legal):
                index = 0
            send({"type": "action", "id": message["id"], "index": index})
        elif kind == "match_over":
            return


if __name__ == "__main__":
    main()
