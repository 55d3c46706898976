"""The least deadwood of a Three Thirteen hand: a small exact evaluator, standard library only.

A bot folder is its own program (in Docker only the folder is mounted), so this does not
use the referee's solver. Cards are (rank, suit) pairs: rank 1 (Ace) .. 13 (King), suit
0..3. `Hand(cards, wild_rank, ace_high)` answers `least()` (the least penalty of the whole
hand) and `least_without(i)` (the least penalty once card i is discarded), sharing one
memo, so evaluating every discard of a 14-card hand costs little more than one hand.

Why it is exact: a card of the wild rank only ever acts as a wild (it may stand for its
own rank, so nothing is lost). A combination is a group of naturals plus wilds: s
same-rank naturals need max(0, 3 - s) wilds; m same-suit naturals of distinct ranks
spanning `span` ranks need max(3, span) - m. A combination of six or more cards splits
into two of three or more at no extra cost, so groups of at most five naturals and runs
spanning at most five ranks are enough. Spare wilds join any combination, or form their
own with three or more (unless `all_wild` is off: then every combination needs a
natural); only when no combination exists do the wilds count as deadwood (at face value,
or `wild_penalty` each when that option is set). The search takes the first natural still
left and either leaves it as deadwood or puts it in one of the groups it can start.
"""

from __future__ import annotations

from itertools import combinations, product

MAX_GROUP = 5  # naturals in one group, and ranks one run may span


def penalty(rank: int, ace_high: bool = False) -> int:
    """Penalty of an unmatched card: Ace 1 (15 with ace_high), 2-10 face value, J/Q/K 10."""
    if rank == 1 and ace_high:
        return 15
    return min(rank, 10)


class Hand:
    """One hand's naturals, wilds and candidate groups, with a shared memo."""

    def __init__(
        self,
        cards: list[tuple[int, int]],
        wild_rank: int,
        ace_high: bool = False,
        wild_penalty: int = 0,
        all_wild: bool = True,
    ):
        self.cards = list(cards)
        self.ace_high = ace_high
        self.all_wild = all_wild
        self.wild_positions = [i for i, (rank, _) in enumerate(self.cards) if rank == wild_rank]
        self.natural_positions = [i for i, (rank, _) in enumerate(self.cards) if rank != wild_rank]
        # Naturals sorted by (suit, rank) so that the first one left tends to start its groups.
        self.natural_positions.sort(key=lambda i: (self.cards[i][1], self.cards[i][0]))
        self.bit_of = {position: 1 << n for n, position in enumerate(self.natural_positions)}
        naturals = [self.cards[i] for i in self.natural_positions]
        self.penalties = [penalty(rank, ace_high) for rank, _ in naturals]
        # The option wild_penalty = 0 means "face value" (the rules' default ruling).
        self.wild_penalty = {
            i: wild_penalty or penalty(self.cards[i][0], ace_high) for i in self.wild_positions
        }
        self.groups_from = self._groups(naturals)
        self.memo: dict[tuple[int, int], int] = {}

    def _groups(self, naturals: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
        """Per natural n: every (mask, wilds needed) group whose lowest natural is n."""
        groups: set[tuple[int, int]] = set()
        by_rank: dict[int, list[int]] = {}
        by_suit_rank: dict[tuple[int, int], list[int]] = {}
        for n, (rank, suit) in enumerate(naturals):
            by_rank.setdefault(rank, []).append(n)
            by_suit_rank.setdefault((suit, rank), []).append(n)
            if rank == 1 and self.ace_high:
                by_suit_rank.setdefault((suit, 14), []).append(n)
        for members in by_rank.values():
            for size in range(1, min(MAX_GROUP, len(members)) + 1):
                for chosen in combinations(members, size):
                    groups.add((_mask(chosen), max(0, 3 - size)))
        top = 14 if self.ace_high else 13
        for suit in range(4):
            for low in range(1, top + 1):
                if (suit, low) not in by_suit_rank:
                    continue
                for high in range(low, min(top, low + MAX_GROUP - 1) + 1):
                    if (suit, high) not in by_suit_rank:
                        continue
                    inner = [r for r in range(low + 1, high) if (suit, r) in by_suit_rank]
                    ends = [by_suit_rank[(suit, low)]] + ([by_suit_rank[(suit, high)]] if high > low else [])
                    for present in _subsets(inner):
                        choices = ends + [by_suit_rank[(suit, r)] for r in present]
                        for picked in product(*choices):
                            if len(set(picked)) < len(picked):
                                continue  # an Ace used as both 1 and 14
                            span = high - low + 1
                            groups.add((_mask(picked), max(3, span) - len(picked)))
        groups_from: list[list[tuple[int, int]]] = [[] for _ in naturals]
        for mask, need in groups:
            lowest = (mask & -mask).bit_length() - 1
            groups_from[lowest].append((mask, need))
        return groups_from

    def _least(self, mask: int, wilds: int) -> int:
        """The least deadwood of the naturals in mask with `wilds` wilds to spend."""
        if not mask:
            return 0
        key = (mask, wilds)
        known = self.memo.get(key)
        if known is not None:
            return known
        first = (mask & -mask).bit_length() - 1
        rest = mask & ~(1 << first)
        best = self.penalties[first] + self._least(rest, wilds)
        for group, need in self.groups_from[first]:
            if need <= wilds and group & mask == group:
                value = self._least(mask & ~group, wilds - need)
                if value < best:
                    best = value
                    if best == 0:
                        break
        self.memo[key] = best
        return best

    def _total(self, mask: int, wild_positions: list[int]) -> int:
        naturals_only = sum(self.penalties[n] for n in range(len(self.penalties)) if mask >> n & 1)
        least = self._least(mask, len(wild_positions))
        if least < naturals_only:
            return least  # some combination exists: every spare wild joins one
        if len(wild_positions) >= 3 and self.all_wild:
            return naturals_only  # the wilds make a set of their own
        return naturals_only + sum(self.wild_penalty[i] for i in wild_positions)

    def least(self) -> int:
        """The least penalty of the whole hand."""
        return self._total((1 << len(self.natural_positions)) - 1, self.wild_positions)

    def least_without(self, position: int) -> int:
        """The least penalty of the hand once the card at `position` is discarded."""
        full = (1 << len(self.natural_positions)) - 1
        if position in self.bit_of:
            return self._total(full & ~self.bit_of[position], self.wild_positions)
        return self._total(full, [i for i in self.wild_positions if i != position])


def least_deadwood(cards: list[tuple[int, int]], wild_rank: int, **options) -> int:
    """The least penalty of a hand of (rank, suit) cards (options as `Hand`)."""
    return Hand(cards, wild_rank, **options).least()


def _mask(members) -> int:
    mask = 0
    for n in members:
        mask |= 1 << n
    return mask


def _subsets(items: list[int]):
    for size in range(len(items) + 1):
        yield from combinations(items, size)
