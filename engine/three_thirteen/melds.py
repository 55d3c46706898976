"""The Three Thirteen meld solver: pure functions over small tuples of card ids.

A card id is any non-negative integer; only `id % 52` matters here: suit = id % 52 // 13
(0..3 = C, D, H, S) and rank = id % 13 + 1 (1 = Ace .. 13 = King), so identical cards of
different decks (ids 52 apart) are distinct cards with the same face.

`best_arrangement` finds the exact minimum penalty of a hand (up to 14 cards, any number
of wilds, duplicates from several decks) and the arrangement that reaches it;
`going_out_discards` answers which discards leave a hand with no deadwood.

How it works (why it is exact): a card of the wild rank is treated as a wild only (a wild
may stand for its own rank, so nothing is lost). A combination is then a group of
*naturals* plus wilds: a set of s same-rank naturals needs max(0, 3 - s) wilds; a run of
m same-suit naturals at distinct positions spanning `span` ranks needs
max(3, span) - m wilds. Spare wilds can always join some combination (or form their own
when there are three or more), so the search only chooses natural groups within the wild
budget. Any combination of six or more cards splits into two valid ones of three or more
at no cost, so groups of at most five naturals and runs spanning at most five ranks are
enough. Groups that can share a natural form components; the naturals are numbered
component by component so that a memoised depth-first search over (remaining naturals,
wilds left) stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, product

SUITS = "CDHS"
RANK_NAMES = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
#: The largest hand the solver is specified for (13 dealt + 1 drawn); larger still works.
MAX_HAND = 14

_SCALE = 60  # lcm(1..5): run/set "shares" of wilds per natural become integers


def rank_of(card: int) -> int:
    """Rank 1 (Ace) .. 13 (King) of a card id."""
    return card % 13 + 1


def suit_of(card: int) -> int:
    """Suit index 0..3 (C, D, H, S) of a card id."""
    return card % 52 // 13


def card_id(rank: int, suit: str | int, deck: int = 0) -> int:
    """The id of a card: rank 1..13, suit letter or index, deck 0.. (ids 52 apart per deck)."""
    suit_index = SUITS.index(suit) if isinstance(suit, str) else suit
    if not 1 <= rank <= 13 or not 0 <= suit_index <= 3 or deck < 0:
        raise ValueError(f"no card with rank {rank!r}, suit {suit!r}, deck {deck!r}")
    return deck * 52 + suit_index * 13 + rank - 1


def card_name(card: int) -> str:
    """Short human name such as '10H' or 'AS' (the deck is not shown)."""
    return RANK_NAMES[rank_of(card)] + SUITS[suit_of(card)]


def parse_cards(text: str) -> tuple[int, ...]:
    """Turn '7H 7H 8S' into card ids; repeats of a face get successive decks (for tests)."""
    seen: dict[int, int] = {}
    out = []
    for word in text.split():
        rank_text, suit = word[:-1].upper(), word[-1].upper()
        rank = RANK_NAMES.index(rank_text) if rank_text in RANK_NAMES[1:] else -1
        if rank < 1 or suit not in SUITS:
            raise ValueError(f"cannot read card {word!r}; write e.g. AS, 10H, QD")
        face = card_id(rank, suit)
        out.append(face + 52 * seen.get(face, 0))
        seen[face] = seen.get(face, 0) + 1
    return tuple(out)


def card_penalty(card: int, ace_high: bool = False) -> int:
    """Penalty of an unmatched card: Ace 1 (15 when ace_high), 2-10 face value, J/Q/K 10."""
    rank = card % 13 + 1
    if rank == 1:
        return 15 if ace_high else 1
    return rank if rank <= 10 else 10


@dataclass(frozen=True)
class Meld:
    """One combination: 'set' or 'run'; `ranks[i]` is the rank `cards[i]` stands for.

    Runs list their cards from low to high; with ace_high an Ace above a King has rank 14.
    An all-wild set has rank 0 for each card (it stands for no particular rank).
    """

    kind: str
    cards: tuple[int, ...]
    ranks: tuple[int, ...]


@dataclass(frozen=True)
class Arrangement:
    """A hand arranged: the combinations, the unmatched cards, and their total penalty."""

    melds: tuple[Meld, ...]
    deadwood: tuple[int, ...]
    penalty: int


@dataclass(slots=True)
class _Group:
    mask: int  # bits over the naturals, in the solver's order
    demand: int  # wilds needed
    value: int  # penalty the group's naturals would otherwise score
    kind: str
    slots: tuple[tuple[int, int], ...]  # (natural index, position in a run or rank of a set)


class _Problem:
    """The naturals and wilds of one hand, with every useful group of naturals."""

    def __init__(
        self,
        hand: Sequence[int],
        wild_rank: int,
        ace_high: bool,
        wild_penalty: int | None = None,
        all_wild: bool = True,
    ) -> None:
        self.ace_high = ace_high
        self.wild_rank = wild_rank
        self.wild_penalty = wild_penalty
        self.all_wild = all_wild
        self.wilds = tuple(sorted(c for c in hand if c % 13 + 1 == wild_rank))
        # Sorted first, so the arrangement does not depend on the order the hand was given in.
        self.naturals = _component_order(sorted(c for c in hand if c % 13 + 1 != wild_rank), ace_high)
        self.values = tuple(card_penalty(c, ace_high) for c in self.naturals)
        self.groups_by_low: list[list[_Group]] = [[] for _ in self.naturals]
        for group in _enumerate_groups(self.naturals, self.values, len(self.wilds), ace_high):
            mask = group.mask
            self.groups_by_low[(mask & -mask).bit_length() - 1].append(group)
        self._best: dict[int, int] = {}
        self._need: dict[int, int] = {}

    # -- the two searches ---------------------------------------------------------------
    def best(self, mask: int, budget: int) -> int:
        """Largest natural penalty that groups inside `mask` can cover with `budget` wilds."""
        if not mask:
            return 0
        key = mask << 5 | budget
        cached = self._best.get(key)
        if cached is not None:
            return cached
        low_bit = mask & -mask
        low = low_bit.bit_length() - 1
        result = self.best(mask ^ low_bit, budget)
        for group in self.groups_by_low[low]:
            if group.demand <= budget and group.mask & mask == group.mask:
                value = group.value + self.best(mask ^ group.mask, budget - group.demand)
                if value > result:
                    result = value
        self._best[key] = result
        return result

    def need(self, mask: int) -> int:
        """Fewest wilds that let groups cover every natural in `mask` (a big number if none)."""
        if not mask:
            return 0
        cached = self._need.get(mask)
        if cached is not None:
            return cached
        low_bit = mask & -mask
        result = _IMPOSSIBLE
        for group in self.groups_by_low[low_bit.bit_length() - 1]:
            if group.mask & mask == group.mask:
                total = group.demand + self.need(mask ^ group.mask)
                if total < result:
                    result = total
        self._need[mask] = result
        return result

    def full_mask(self) -> int:
        return (1 << len(self.naturals)) - 1

    # -- turning the search result into combinations ----------------------------------
    def arrangement(self) -> Arrangement:
        mask, budget = self.full_mask(), len(self.wilds)
        chosen: list[_Group] = []
        deadwood: list[int] = []
        while mask:
            target = self.best(mask, budget)
            low_bit = mask & -mask
            low = low_bit.bit_length() - 1
            for group in self.groups_by_low[low]:
                if (
                    group.demand <= budget
                    and group.mask & mask == group.mask
                    and group.value + self.best(mask ^ group.mask, budget - group.demand) == target
                ):
                    chosen.append(group)
                    mask ^= group.mask
                    budget -= group.demand
                    break
            else:
                deadwood.append(self.naturals[low])
                mask ^= low_bit
        return self._lay_out(chosen, deadwood)

    def _lay_out(self, chosen: list[_Group], deadwood: list[int]) -> Arrangement:
        wilds = list(self.wilds)
        spare = len(wilds) - sum(g.demand for g in chosen)
        melds: list[list[tuple[int, int]]] = []  # per meld: (card, rank it stands for)
        kinds: list[str] = []
        max_position = 14 if self.ace_high else 13
        for group in chosen:
            if group.kind == "set":
                rank = group.slots[0][1]
                cards = [(self.naturals[i], rank) for i, _ in group.slots]
                cards += [(wilds.pop(), rank) for _ in range(group.demand)]
            else:
                at = {p: self.naturals[i] for i, p in group.slots}
                low, high = min(at), max(at)
                while high - low + 1 < 3:  # stretch a short run upward, or down at the top
                    if high < max_position:
                        high += 1
                    else:
                        low -= 1
                cards = [(at[p], p) if p in at else (wilds.pop(), p) for p in range(low, high + 1)]
            melds.append(cards)
            kinds.append(group.kind)
        if spare >= 3 and self.all_wild:
            melds.append([(wilds.pop(), 0) for _ in range(spare)])
            kinds.append("set")
        elif spare and melds:
            self._absorb(wilds, melds, kinds, max_position)
        deadwood.extend(wilds)
        penalty = sum(self.penalty_of(c) for c in deadwood)
        built = tuple(
            Meld(kind, tuple(c for c, _ in cards), tuple(r for _, r in cards))
            for kind, cards in zip(kinds, melds)
        )
        return Arrangement(built, tuple(sorted(deadwood)), penalty)


    def _absorb(
        self, wilds: list[int], melds: list[list[tuple[int, int]]], kinds: list[str], max_position: int
    ) -> None:
        """Put every spare wild into the combinations already built (in place).

        A set takes any number. Runs grow up to thirteen cards; with all-wild combinations
        barred, a lone run that grew to thirteen cards with one wild still over is cut in
        two (the wild joins one half), or, when its only two naturals sit at one end, laid
        out as two sets instead. Those are the only cases a hand of 14 cards can reach.
        """
        if "set" in kinds:
            cards = melds[kinds.index("set")]
            while wilds:
                cards.append((wilds.pop(), cards[0][1]))
            return
        for cards in melds:
            while wilds and len(cards) < 13:
                if cards[-1][1] < max_position:
                    cards.append((wilds.pop(), cards[-1][1] + 1))
                else:
                    cards.insert(0, (wilds.pop(), cards[0][1] - 1))
        if not wilds:
            return
        cards = melds[0]
        natural_at = [i for i, (card, _) in enumerate(cards) if card % 13 + 1 != self.wild_rank]
        first, last = natural_at[0], natural_at[-1]
        for cut in range(max(2, first + 1), min(11, last) + 1):
            left, right = cards[:cut], cards[cut:]
            if cut == 2:
                left.append((wilds.pop(), right[0][1]))
            else:
                right.insert(0, (wilds.pop(), left[-1][1]))
            melds[0] = left
            melds.append(right)
            kinds.append("run")
            return
        spare_wilds = [card for card, _ in cards if card % 13 + 1 == self.wild_rank] + wilds
        wilds.clear()
        one, two = (cards[i][0] for i in natural_at)
        half = len(spare_wilds) // 2
        melds[0] = [(one, one % 13 + 1)] + [(w, one % 13 + 1) for w in spare_wilds[:half]]
        melds.append([(two, two % 13 + 1)] + [(w, two % 13 + 1) for w in spare_wilds[half:]])
        kinds[0] = "set"
        kinds.append("set")

    def penalty_of(self, card: int) -> int:
        """What `card` scores when unmatched, under this problem's rules."""
        if self.wild_penalty is not None and card % 13 + 1 == self.wild_rank:
            return self.wild_penalty
        return card_penalty(card, self.ace_high)


_IMPOSSIBLE = 1 << 20


def _enumerate_groups(
    naturals: Sequence[int], values: Sequence[int], budget: int, ace_high: bool
) -> list[_Group]:
    """Every set and run of at most five naturals (spanning at most five ranks) within budget.

    Each natural set of cards appears once: a lone natural (two wilds) is listed as a set,
    sets hold two or more naturals of one rank, runs two or more of one suit.
    """
    groups: list[_Group] = []
    by_rank: dict[int, list[int]] = {}
    by_suit: dict[int, dict[int, list[int]]] = {}
    for index, card in enumerate(naturals):
        rank = card % 13 + 1
        by_rank.setdefault(rank, []).append(index)
        positions = by_suit.setdefault(card % 52 // 13, {})
        positions.setdefault(rank, []).append(index)
        if ace_high and rank == 1:
            positions.setdefault(14, []).append(index)
        if budget >= 2:
            groups.append(_Group(1 << index, 2, values[index], "set", ((index, rank),)))

    for rank, members in by_rank.items():
        for size in range(2 if budget >= 1 else 3, min(5, len(members)) + 1):
            for subset in combinations(members, size):
                groups.append(_Group(
                    sum(1 << i for i in subset), max(0, 3 - size), sum(values[i] for i in subset),
                    "set", tuple((i, rank) for i in subset),
                ))

    for positions in by_suit.values():
        if len(positions) < 2:
            continue
        ordered = sorted(positions)
        for at, low in enumerate(ordered):
            for high in ordered[at + 1:]:
                if high - low > 4:
                    break
                interior = [p for p in ordered if low < p < high]
                most = max(3, high - low + 1) - 2  # wilds needed with no interior natural
                for size in range(len(interior), -1, -1):
                    demand = most - size
                    if demand > budget:
                        break
                    for inner in combinations(interior, size):
                        chosen = (low, *inner, high)
                        # Only an Ace has two positions (1 and 14), never both within five ranks.
                        for picks in product(*(positions[p] for p in chosen)):
                            groups.append(_Group(
                                sum(1 << i for i in picks), demand, sum(values[i] for i in picks),
                                "run", tuple(zip(picks, chosen)),
                            ))
    return groups


def _component_order(naturals: list[int], ace_high: bool) -> tuple[int, ...]:
    """The naturals ordered so that any two that could share a group are in one block.

    "Could share" is over-approximated (same rank, or same suit within four ranks, chained),
    which only makes blocks bigger; the search stays exact whatever the order.
    """
    parent = list(range(len(naturals)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(a: int, b: int) -> None:
        a, b = find(a), find(b)
        if a != b:
            parent[b] = a

    first_of_rank: dict[int, int] = {}
    by_suit: dict[int, list[tuple[int, int]]] = {}
    for index, card in enumerate(naturals):
        rank = card % 13 + 1
        if rank in first_of_rank:
            join(first_of_rank[rank], index)
        else:
            first_of_rank[rank] = index
        entries = by_suit.setdefault(card % 52 // 13, [])
        entries.append((rank, index))
        if ace_high and rank == 1:
            entries.append((14, index))
    for entries in by_suit.values():
        entries.sort()
        for (rank_a, a), (rank_b, b) in zip(entries, entries[1:]):
            if rank_b - rank_a <= 4:
                join(a, b)
    order = sorted(range(len(naturals)), key=lambda i: (find(i), naturals[i]))
    return tuple(naturals[i] for i in order)


def best_arrangement(
    hand: Sequence[int],
    wild_rank: int,
    ace_high: bool = False,
    *,
    wild_penalty: int | None = None,
    all_wild: bool = True,
) -> Arrangement:
    """The arrangement of `hand` with the least penalty (exact), wilds of `wild_rank`.

    `wild_penalty` is what an unmatched wild scores (None = its face value); `all_wild`
    says whether a combination may consist of wilds only.
    """
    return _Problem(hand, wild_rank, ace_high, wild_penalty, all_wild).arrangement()


def min_penalty(
    hand: Sequence[int],
    wild_rank: int,
    ace_high: bool = False,
    *,
    wild_penalty: int | None = None,
    all_wild: bool = True,
) -> int:
    """The least penalty `hand` can score, wilds of `wild_rank` (options as best_arrangement)."""
    problem = _Problem(hand, wild_rank, ace_high, wild_penalty, all_wild)
    wilds = len(problem.wilds)
    covered = problem.best(problem.full_mask(), wilds)
    # Spare wilds always fit into some combination once there is one (see _absorb).
    if covered or (all_wild and wilds >= 3):
        wild_total = 0
    else:
        wild_total = sum(problem.penalty_of(c) for c in problem.wilds)
    return sum(problem.values) - covered + wild_total


def can_meld_all(
    hand: Sequence[int], wild_rank: int, ace_high: bool = False, *, all_wild: bool = True
) -> bool:
    """True if every card of `hand` fits into combinations (no deadwood at all)."""
    problem = _Problem(hand, wild_rank, ace_high, all_wild=all_wild)
    return _covers(problem, problem.full_mask(), len(problem.wilds))


def _covers(problem: _Problem, mask: int, wilds: int) -> bool:
    if not mask:
        return wilds == 0 or (problem.all_wild and wilds >= 3)
    return problem.need(mask) <= wilds


def going_out_discards(
    hand: Sequence[int], wild_rank: int, ace_high: bool = False, *, all_wild: bool = True
) -> tuple[int, ...]:
    """The cards of `hand` whose discard leaves every other card in combinations (sorted)."""
    candidates = _going_out_candidates(hand, wild_rank, ace_high)
    if not candidates:
        return ()
    problem = _Problem(hand, wild_rank, ace_high, all_wild=all_wild)
    full, wilds = problem.full_mask(), len(problem.wilds)
    bit_of = {}
    for bit, card in enumerate(problem.naturals):
        bit_of.setdefault(card, bit)
    out = []
    for card in candidates:
        if card % 13 + 1 == wild_rank:
            ok = _covers(problem, full, wilds - 1)
        else:
            ok = _covers(problem, full ^ (1 << bit_of[card]), wilds)
        if ok:
            out.append(card)
    return tuple(sorted(out))


# -- the fast necessary condition -------------------------------------------------------
# Every natural must sit in some group; charge each natural the smallest share d/|G| of
# wilds over the groups G it could be in. The shares of one arrangement sum to at most its
# wilds, so a hand whose shares (less the discarded card's) exceed its wilds cannot go
# out. Random hands fail this at once, which keeps the per-turn check cheap.

_SET_SHARE = (0, 2 * _SCALE, _SCALE // 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)


@lru_cache(maxsize=None)
def _run_shares(suit_mask: int) -> tuple[int, ...]:
    """For each position 0..15, the least share of a run holding that position (scaled)."""
    shares = [2 * _SCALE] * 16
    for start in range(1, 15):
        for length in (3, 4, 5):
            end = start + length - 1
            if end > 14:
                break
            window = ((1 << length) - 1) << start
            present = bin(suit_mask & window).count("1")
            if not present:
                continue
            share = (length - present) * _SCALE // present
            for position in range(start, end + 1):
                if suit_mask >> position & 1 and share < shares[position]:
                    shares[position] = share
    return tuple(shares)


def _going_out_candidates(hand: Sequence[int], wild_rank: int, ace_high: bool) -> list[int]:
    """Cards whose discard passes the two bounds below; a superset of the real answer."""
    wilds = seen = repeated = 0
    suit_masks = [0, 0, 0, 0]
    rank_counts = [0] * 14
    naturals = []
    for card in hand:
        face = card % 52
        rank = face % 13 + 1
        if rank == wild_rank:
            wilds += 1
            continue
        bit = 1 << rank
        repeated |= seen & bit
        seen |= bit
        suit_masks[face // 13] |= bit
        rank_counts[rank] += 1
        naturals.append(card)
    if not ace_high and _too_many_loners(suit_masks, repeated, wilds):
        return []
    if ace_high:  # a high Ace also sits at position 14 of its suit
        suit_masks = [m | (m & 2) << 13 for m in suit_masks]
    suit_shares = [_run_shares(m) for m in suit_masks]
    shares = []
    total = 0
    for card in naturals:
        rank = card % 13 + 1
        share = _SET_SHARE[rank_counts[rank]]
        if share:
            run_shares = suit_shares[card % 52 // 13]
            if run_shares[rank] < share:
                share = run_shares[rank]
            if ace_high and rank == 1 and run_shares[14] < share:
                share = run_shares[14]
        shares.append(share)
        total += share
    budget = wilds * _SCALE
    out = [card for card, share in zip(naturals, shares) if total - share <= budget]
    if wilds and total <= budget - _SCALE:
        out.extend(card for card in hand if card % 13 + 1 == wild_rank)
    return out


def _too_many_loners(suit_masks: list[int], repeated: int, wilds: int) -> bool:
    """A quicker form of the share bound, with bit masks (Aces low only).

    A *loner* is a natural with no other natural of its rank and none of its suit within
    two ranks. Its share is at least 2/3 (at best it opens a five-rank window holding two
    more naturals, x _ _ x+3 x+4), so with more than 3/2 × wilds loners besides the one
    discarded, nothing can go out.
    """
    loners = 0
    for mask in suit_masks:
        near = mask << 1 | mask << 2 | mask >> 1 | mask >> 2
        loners += (mask & ~near & ~repeated).bit_count()
    return 2 * (loners - 1) > 3 * wilds
