"""A slow, obviously-correct Three Thirteen meld solver, kept in the tests as the oracle.

It tries every way to cut a hand into combinations straight from the definitions in the
rules (no five-card limit, no wild bookkeeping): a set is three or more cards whose
naturals share a rank; a run is three or more cards whose naturals share a suit and fit,
at distinct ranks, in a window as long as the run inside A..K (or 2..A-high).
"""

from __future__ import annotations

from functools import lru_cache


def _rank(card):
    """Rank 1..13 of a card id."""
    return card % 13 + 1


def _suit(card):
    """Suit 0..3 of a card id."""
    return card % 52 // 13


def brute_penalty_of(card, ace_high, wild_rank=None, wild_penalty=None):
    """What an unmatched card scores."""
    rank = _rank(card)
    if wild_penalty is not None and rank == wild_rank:
        return wild_penalty
    if rank == 1:
        return 15 if ace_high else 1
    return min(rank, 10)


def brute_is_combination(cards, wild_rank, ace_high=False, all_wild=True):
    """True if `cards` (ids) form one valid set or run."""
    if len(cards) < 3:
        return False
    naturals = [c for c in cards if _rank(c) != wild_rank]
    if not naturals:
        return all_wild
    if len({_rank(c) for c in naturals}) == 1:
        return True
    if len({_suit(c) for c in naturals}) != 1:
        return False
    length = len(cards)
    choices = [[1, 14] if (ace_high and _rank(c) == 1) else [_rank(c)] for c in naturals]

    def assignments(i, chosen):
        if i == len(choices):
            yield chosen
            return
        for position in choices[i]:
            yield from assignments(i + 1, chosen + [position])

    windows = [(1, 13)] + ([(2, 14)] if ace_high else [])
    for positions in assignments(0, []):
        if len(set(positions)) != len(positions):
            continue
        for bottom, top in windows:
            for start in range(bottom, top - length + 2):
                if all(start <= p < start + length for p in positions):
                    return True
    return False


def brute_min_penalty(hand, wild_rank, ace_high=False, wild_penalty=None, all_wild=True):
    """Least penalty over every partition of `hand` into combinations and deadwood."""
    hand = list(hand)
    n = len(hand)
    combos_by_low = [[] for _ in range(n)]
    for mask in range(1, 1 << n):
        if bin(mask).count("1") >= 3:
            cards = [hand[i] for i in range(n) if mask >> i & 1]
            if brute_is_combination(cards, wild_rank, ace_high, all_wild):
                combos_by_low[(mask & -mask).bit_length() - 1].append(mask)

    @lru_cache(maxsize=None)
    def best(mask):
        if not mask:
            return 0
        low_bit = mask & -mask
        low = low_bit.bit_length() - 1
        result = brute_penalty_of(hand[low], ace_high, wild_rank, wild_penalty) + best(mask ^ low_bit)
        for combo in combos_by_low[low]:
            if combo & mask == combo:
                result = min(result, best(mask ^ combo))
        return result

    return best((1 << n) - 1)
