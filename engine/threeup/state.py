"""3UP 3DOWN state and rules: setup, turns, sources, clears, extra actions, places.

Reads top to bottom like docs/rules/3up3down.md. Cards are int ids into a `Deck`'s
tables; piles are plain lists (the top of the draw and discard piles is the end).
What a seat may see is built in `view.py`, never here.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from typing import Any

from engine.api import Action, Event, Observation, State
from engine.threeup.cards import CLEAR, CLEAR1, NUMBER, Deck, build_deck
from engine.threeup.phases import OVER, PLAY, REFILL, SETUP, SWAP
from engine.threeup.view import full_events, observation, render_events, spectator_view

PICKUP: Action = {"type": "pickup"}
DRAW: Action = {"type": "draw"}
REFILL_YES: Action = {"type": "refill"}
REFILL_NO: Action = {"type": "no_refill"}
KEEP: Action = {"type": "keep"}


class ThreeUpState(State):
    """One game of 3UP 3DOWN in progress."""

    def __init__(self, players: int, options: dict[str, Any], seed: int, *, deal: bool = True):
        self.players = players
        self.options = options
        self.seed = seed
        self.history = []
        self.deck: Deck = build_deck(options["deck"], options["colours"])
        self.rng = random.Random(seed)
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.up: list[list[int]] = [[] for _ in range(players)]
        # Three fixed slots per seat; a played slot holds None so positions keep their meaning.
        self.down: list[list[int | None]] = [[None, None, None] for _ in range(players)]
        self.offer: list[list[int]] = [[] for _ in range(players)]  # the six dealt at setup
        self.chosen = [False] * players
        self.draw_pile: list[int] = []
        self.discard_pile: list[int] = []
        self.removed: list[int] = []  # cleared out of the game
        self.phase = SETUP
        self.current = 0
        self.direction = 1
        self.turn = 0  # completed turns (the max_turns cap counts these)
        self.actions_left = 0  # discard actions the current player still owes this turn
        self.actions_taken = 0  # discard actions made this turn (0: the normal one is next)
        self.may_refill = False  # a Clear +1/+2 was just played: draw allowed before the next
        self.took_pile = False
        self.drew_instead = False
        self.run_colour = -1  # colour_run_swap: colour and length of the run on the pile
        self.run_length = 0
        self.finished: list[int] = []
        self.end_reason: str | None = None
        self._places: list[int] | None = None
        # Event log: (owner, public event or None, owner's version or None). Ids inside are
        # turned into card faces only when a seat asks (view.render_events).
        self.log: list[tuple[int | None, Event | None, Event | None]] = []
        self._legal: list[Action] | None = None
        self._rendered: dict[int | None, tuple[list[Event], int]] = {}  # view.render_events' cache
        self._rendered_public: list[Event | None] = []  # ... and the public events it shares
        # Option flags read on the hot path.
        self._ones_reverse = options["ones_reverse"]
        self._colour_run = options["colour_run_swap"]
        self._may_draw_instead = options["may_draw_instead"]
        self._refill_mode = options["refill"]
        self._max_turns = options["max_turns"]
        self._clears_together = options["clears_together"]
        self._clear_drops_pending = options["clear_drops_pending"]
        self._points_hand_only = options["points_count"] == "hand"
        if deal:
            self._deal()

    # ------------------------------------------------------------------ setup
    def _deal(self) -> None:
        """Shuffle from the seed; three 3DOWN each, then six to choose from each."""
        pile = list(range(len(self.deck)))
        self.rng.shuffle(pile)
        self.draw_pile = pile
        for seat in range(self.players):
            self.down[seat] = [pile.pop(), pile.pop(), pile.pop()]
        for seat in range(self.players):
            self.offer[seat] = sorted(pile.pop() for _ in range(6))
            self.log.append((seat, None, {"type": "dealt", "seat": seat, "cards": list(self.offer[seat])}))
        self.log.append((None, {"type": "deal", "down": 3, "offer": 6, "draw_pile": len(pile)}, None))
        self.phase = SETUP
        self.current = 0

    def _choose_up(self, cards: list[int]) -> None:
        seat = self.current
        rest = [card for card in self.offer[seat] if card not in cards]
        # choose_for_others: the three go onto the left neighbour's stack (next seat in play order).
        target = (seat + 1) % self.players if self.options["choose_for_others"] else seat
        self.up[target] = sorted(cards)
        self.hands[seat] = rest
        self.offer[seat] = []
        self.chosen[seat] = True
        told = {"type": "choose_up", "seat": seat, "for_seat": target, "cards": sorted(cards)}
        if self.options["secret_setup"]:
            self.log.append((seat, {"type": "choose_up", "seat": seat}, told))
        else:
            self.log.append((None, told, None))  # secret_setup off: the choice is public at once
        if seat + 1 < self.players:
            self.current = seat + 1
            return
        if self.options["swap_stacks"]:
            # Seat i receives the stack (3UP and 3DOWN) that seat order[i] set up.
            order = list(range(self.players))
            self.rng.shuffle(order)
            self.up = [self.up[source] for source in order]
            self.down = [self.down[source] for source in order]
            self.log.append((None, {"type": "swap_stacks", "from_seat": order}, None))
        self.log.append((None, {"type": "reveal_up", "up": [list(cards) for cards in self.up]}, None))
        first = 0
        if self.options["first_player"] == "random":
            # Drawn after the setup choices (and any stack swap), so nobody chooses knowing it;
            # the default draws nothing, so default games use the seed exactly as before.
            first = self.rng.randrange(self.players)
            self.log.append((None, {"type": "first_player", "seat": first}, None))
        self._start_turn(first)

    # ------------------------------------------------------------------ turns
    def _start_turn(self, seat: int) -> None:
        self.phase = PLAY
        self.current = seat
        self.actions_left = 1
        self.actions_taken = 0
        self.may_refill = False
        self.took_pile = False
        self.drew_instead = False
        self._prepare_action()

    def _prepare_action(self) -> None:
        """Before a discard action: the optional refill (after Clear +1/+2), the forced one."""
        seat = self.current
        hand = self.hands[seat]
        if self.may_refill and self.draw_pile and self._refill_mode != "off" and hand:
            if self._refill_mode == "one_card" or len(hand) < 3:
                self.phase = REFILL
                return
        self.may_refill = False
        if not hand and self.draw_pile:
            # Ruling: an empty hand with cards left to draw would leave no source; refill.
            self._draw_to_three(seat, "refill")
        self.phase = PLAY

    def _draw_to_three(self, seat: int, why: str) -> None:
        hand = self.hands[seat]
        pile = self.draw_pile
        drawn = []
        while len(hand) < 3 and pile:
            card = pile.pop()
            hand.append(card)
            drawn.append(card)
        if drawn:
            self.log.append(
                (seat, {"type": why, "seat": seat, "count": len(drawn)}, {"type": why, "seat": seat, "count": len(drawn), "cards": drawn})
            )

    def _source(self, seat: int) -> str:
        """Where the seat's next discard action comes from: hand, up, down (or none)."""
        if self.hands[seat]:
            return "hand"
        if self.draw_pile:
            return "none"  # never at a decision: _prepare_action refills first
        if self.up[seat]:
            return "up"
        if any(card is not None for card in self.down[seat]):
            return "down"
        return "none"

    def _play(self, cards: list[int], source: str, position: int | None = None) -> None:
        seat = self.current
        deck = self.deck
        if source == "hand":
            held = self.hands[seat]
            for card in cards:
                held.remove(card)
        elif source == "up":
            held = self.up[seat]
            for card in cards:
                held.remove(card)
        pile = self.discard_pile
        pile.extend(cards)
        event = {"type": "play", "seat": seat, "source": source, "cards": cards}
        if position is not None:
            event["position"] = position
        self.log.append((None, event, None))
        self.actions_left -= 1
        self.actions_taken += 1
        kind = deck.kind[cards[0]]
        swap_due = False
        if kind == NUMBER:
            value = deck.value[cards[0]]
            if self._ones_reverse and value == 1:
                self.direction = -self.direction
                self.log.append((None, {"type": "reverse", "seat": seat, "direction": self.direction}, None))
            values = deck.value
            if len(pile) >= 3 and values[pile[-2]] == value and values[pile[-3]] == value:
                self._clear("three_of_a_kind")
                if self._clear_drops_pending:
                    self.actions_left = 0
            elif self._colour_run:
                swap_due = self._extend_run(cards)
        else:
            self._clear(("clear", "clear1", "clear2")[kind - 1])
            if kind == CLEAR:
                # Off: the Clear used up only its own action; what Clear +1/+2 left pending stays.
                if self._clear_drops_pending:
                    self.actions_left = 0
            else:
                # clears_together: each Clear +1 / +2 of the action adds its own extra actions.
                self.actions_left += len(cards) if kind == CLEAR1 else 2 * len(cards)
                self.may_refill = True
        self._after_action(swap_due)

    def _extend_run(self, cards: list[int]) -> bool:
        """colour_run_swap: update the run of one colour; True when it reaches four."""
        colours = self.deck.colour
        colour = colours[cards[0]]
        if any(colours[card] != colour for card in cards):
            # Ruling: a multiple of mixed colours breaks the run and starts none.
            self.run_colour, self.run_length = -1, 0
            return False
        if colour == self.run_colour:
            self.run_length += len(cards)
        else:
            self.run_colour, self.run_length = colour, len(cards)
        if self.run_length >= 4:
            # Ruling: the run counts afresh after a swap chance, so the next four give another.
            self.run_colour, self.run_length = -1, 0
            return True
        return False

    def _clear(self, reason: str) -> None:
        self.log.append((None, {"type": "clear", "seat": self.current, "reason": reason, "cards": list(self.discard_pile)}, None))
        self.removed.extend(self.discard_pile)
        self.discard_pile = []
        self.run_colour, self.run_length = -1, 0

    def _after_action(self, swap_due: bool) -> None:
        seat = self.current
        if not self.hands[seat] and not self.up[seat] and self.down[seat] == [None, None, None]:
            self._finish(seat)
            if self.phase == OVER:
                return
            self._end_turn()  # the turn stops there
            return
        if swap_due and self.up[seat] and self.hands[seat]:
            self.phase = SWAP
            return
        self._continue_turn()

    def _continue_turn(self) -> None:
        if self.actions_left > 0:
            self._prepare_action()
        else:
            self._end_turn()

    def _pickup(self, extra: Sequence[int] = ()) -> None:
        seat = self.current
        taken = self.discard_pile
        self.hands[seat].extend(taken)
        self.hands[seat].extend(extra)
        self.log.append((None, {"type": "pickup", "seat": seat, "cards": taken}, None))
        self.discard_pile = []
        self.run_colour, self.run_length = -1, 0
        self.took_pile = True
        self.actions_left = 0
        self._end_turn()

    def _play_down(self, position: int) -> None:
        seat = self.current
        card = self.down[seat][position]
        self.down[seat][position] = None
        deck = self.deck
        pile = self.discard_pile
        if deck.kind[card] != NUMBER or not pile or deck.value[card] >= deck.value[pile[-1]]:
            self._play([card], "down", position)
            return
        # Others are not shown the failed card [004]; the owner is.
        self.log.append(
            (
                seat,
                {"type": "down_failed", "seat": seat, "position": position},
                {"type": "down_failed", "seat": seat, "position": position, "card": card},
            )
        )
        self._pickup((card,))

    def _draw_instead(self) -> None:
        seat = self.current
        card = self.draw_pile.pop()
        self.hands[seat].append(card)
        self.log.append((seat, {"type": "draw_instead", "seat": seat, "count": 1}, {"type": "draw_instead", "seat": seat, "count": 1, "cards": [card]}))
        self.drew_instead = True
        self.actions_left = 0
        self._end_turn()

    def _end_turn(self) -> None:
        seat = self.current
        if not self.took_pile and not self.drew_instead and seat not in self.finished:
            self._draw_to_three(seat, "draw")
        self.turn += 1
        if self.turn >= self._max_turns:
            self._game_over("max_turns")
            return
        self._start_turn(self._next_seat(seat))

    def _next_seat(self, seat: int) -> int:
        finished = self.finished
        step = self.direction
        for _ in range(self.players):
            seat = (seat + step) % self.players
            if seat not in finished:
                return seat
        raise AssertionError("no player left to move")  # the game is over before this

    # ------------------------------------------------------------------ the end
    def cards_held(self, seat: int) -> int:
        """How many cards the seat still holds: hand, 3UP and 3DOWN."""
        return len(self.hands[seat]) + len(self.up[seat]) + sum(card is not None for card in self.down[seat])

    def points_held(self, seat: int) -> int:
        """Points of the cards the seat still holds: hand, 3UP and 3DOWN (ruling), or the hand only."""
        points = self.deck.points
        if self._points_hand_only:
            held = self.hands[seat]
        else:
            held = self.hands[seat] + self.up[seat] + [card for card in self.down[seat] if card is not None]
        return sum(points[card] for card in held)

    def _finish(self, seat: int) -> None:
        self.finished.append(seat)
        self.log.append((None, {"type": "finish", "seat": seat, "place": len(self.finished)}, None))
        remaining = self.players - len(self.finished)
        if not self.options["play_for_places"]:
            self._game_over("first_finisher")
        elif remaining <= 1:
            self._game_over("finished")

    def _game_over(self, reason: str) -> None:
        places = [0] * self.players
        for index, seat in enumerate(self.finished):
            places[seat] = index + 1
        still_in = [seat for seat in range(self.players) if seat not in self.finished]
        held = {seat: self.cards_held(seat) for seat in still_in}
        base = len(self.finished)
        for seat in still_in:
            # Fewer cards held is better; equal counts share a place.
            places[seat] = base + 1 + sum(held[other] < held[seat] for other in still_in)
        self._places = places
        self.end_reason = reason
        self.phase = OVER
        self.log.append((None, {"type": "game_over", "reason": reason, "places": places, "scores": self.scores()}, None))

    # ------------------------------------------------------------------ API
    @property
    def current_player(self) -> int | None:
        """The seat whose decision it is, or None when the game is over."""
        return None if self.phase == OVER else self.current

    @property
    def is_over(self) -> bool:
        """True once the game has ended."""
        return self.phase == OVER

    def places(self) -> list[int]:
        """Final place of each seat (1 = best, ties share); only when over."""
        if self._places is None:
            raise ValueError("the game is not over yet; places exist only at the end")
        return list(self._places)

    def scores(self) -> list[float]:
        """Cards still held by each seat, or their points with the `points` option (lower is better)."""
        if self.options["points"]:
            return [float(self.points_held(seat)) for seat in range(self.players)]
        return [float(self.cards_held(seat)) for seat in range(self.players)]

    def legal_actions(self) -> list[Action]:
        """The current player's legal actions in a stable order ([] when over)."""
        if self._legal is None:
            self._legal = self._generate_legal()
        return list(self._legal)

    def apply(self, action: Action) -> None:
        """Apply the current player's action; IllegalAction (state unchanged) if not legal now.

        Same contract as `State.apply`; checks against the cached legal list without
        copying it (the hot path of every game), and leaves refusals to the base class.
        """
        legal = self._legal
        if legal is None:
            legal = self._legal = self._generate_legal()
        if self.phase == OVER or action not in legal:
            super().apply(action)  # raises IllegalAction with the message that says what is allowed
            return
        seat = self.current
        self._apply(action)
        self.history.append((seat, action))

    def _apply(self, action: Action) -> None:
        self._legal = None
        kind = action["type"]
        if kind == "play":
            cards = list(action["cards"])
            self._play(cards, self._source(self.current))
        elif kind == "play_down":
            self._play_down(action["position"])
        elif kind == "pickup":
            self._pickup()
        elif kind == "choose_up":
            self._choose_up(list(action["cards"]))
        elif kind == "refill":
            self.may_refill = False
            if self._refill_mode == "one_card":
                card = self.draw_pile.pop()
                self.hands[self.current].append(card)
                self.log.append(
                    (self.current, {"type": "refill", "seat": self.current, "count": 1}, {"type": "refill", "seat": self.current, "count": 1, "cards": [card]})
                )
            else:
                self._draw_to_three(self.current, "refill")
            self.phase = PLAY
        elif kind == "no_refill":
            self.may_refill = False
            self.log.append((None, {"type": "no_refill", "seat": self.current}, None))
            self.phase = PLAY
        elif kind == "swap":
            seat = self.current
            up_card, hand_card = action["up"], action["hand"]
            self.up[seat].remove(up_card)
            self.hands[seat].remove(hand_card)
            self.up[seat].append(hand_card)
            self.up[seat].sort()
            self.hands[seat].append(up_card)
            self.log.append((None, {"type": "colour_run_swap", "seat": seat, "up_card": up_card, "hand_card": hand_card}, None))
            self._continue_turn()
        elif kind == "keep":
            self.log.append((None, {"type": "colour_run_keep", "seat": self.current}, None))
            self._continue_turn()
        elif kind == "draw":
            self._draw_instead()
        else:  # pragma: no cover - apply() only passes legal actions
            raise AssertionError(f"unhandled action {action!r}")

    def _generate_legal(self) -> list[Action]:
        phase = self.phase
        if phase == PLAY:
            return self._legal_plays()
        if phase == OVER:
            return []
        if phase == SETUP:
            return self._legal_setup()
        if phase == REFILL:
            return [REFILL_YES, REFILL_NO]
        return self._legal_swaps()

    def _legal_setup(self) -> list[Action]:
        face = self.deck.face
        seen = set()
        actions = []
        for trio in itertools.combinations(self.offer[self.current], 3):
            key = tuple(sorted(face[card] for card in trio))
            if key not in seen:  # identical copies make the same choice: list it once
                seen.add(key)
                actions.append({"type": "choose_up", "cards": list(trio)})
        return actions

    def _legal_swaps(self) -> list[Action]:
        seat = self.current
        face = self.deck.face
        actions = [KEEP]
        ups = _distinct(sorted(self.up[seat]), face)
        hands = _distinct(sorted(self.hands[seat]), face)
        for up_card in ups:
            for hand_card in hands:
                actions.append({"type": "swap", "up": up_card, "hand": hand_card})
        return actions

    def _legal_plays(self) -> list[Action]:
        seat = self.current
        source = self.hands[seat]
        if not source:
            if self.up[seat]:
                source = self.up[seat]
            else:
                return [{"type": "play_down", "position": index} for index, card in enumerate(self.down[seat]) if card is not None]
        deck = self.deck
        rank = deck.rank
        pile = self.discard_pile
        top = rank[pile[-1]] if pile else 0
        # Group the playable cards by rank; Clear cards rank above 10 (they play on anything).
        by_rank: dict[int, list[int]] = {}
        for card in source:
            value = rank[card]
            if value >= top:
                group = by_rank.get(value)
                if group is None:
                    by_rank[value] = [card]
                else:
                    group.append(card)
        if not by_rank:
            return [PICKUP]
        colours = deck.colour
        actions: list[Action] = []
        for value in sorted(by_rank):
            cards = by_rank[value]
            if len(cards) == 1:
                actions.append({"type": "play", "cards": cards})
                continue
            cards.sort()
            if value > 10 and not self._clears_together:
                # Ruling: Clear cards go one at a time: one action per colour, its lowest id.
                lowest: dict[int, int] = {}
                for card in cards:
                    lowest.setdefault(colours[card], card)
                actions.extend({"type": "play", "cards": [lowest[colour]]} for colour in sorted(lowest))
                continue
            by_colour: list[list[int]] = [[], [], []]
            for card in cards:
                by_colour[colours[card]].append(card)
            red, blue, green = by_colour
            if len(red) == len(cards) or len(blue) == len(cards) or len(green) == len(cards):
                # One colour: one play per count, lowest ids first.
                actions.extend({"type": "play", "cards": cards[:count]} for count in range(1, len(cards) + 1))
                continue
            combos = []
            for r in range(len(red) + 1):
                for b in range(len(blue) + 1):
                    for g in range(len(green) + 1):
                        if r or b or g:
                            combos.append((r + b + g, sorted(red[:r] + blue[:b] + green[:g])))
            combos.sort()
            actions.extend({"type": "play", "cards": chosen} for _, chosen in combos)
        if self._may_draw_instead and self.actions_taken == 0 and self.draw_pile:
            actions.append(DRAW)
        return actions

    # ------------------------------------------------------------------ views
    def observation(self, seat: int) -> Observation:
        """What `seat` may know now, and nothing more (built in view.py)."""
        return observation(self, seat)

    def spectator_view(self) -> Observation:
        """Everything, hidden cards included: for replays after the game, never for bots."""
        return spectator_view(self)

    def events(self, seat: int | None = None) -> list[Event]:
        """The event log as `seat` saw it (its private details included); None = public."""
        return render_events(self, seat)

    def events_since(self, seat: int | None, start: int) -> list[Event]:
        """`events(seat)[start:]`, without copying the events before `start`."""
        return render_events(self, seat, start)

    def full_events(self) -> list[Event]:
        """Every event with every private detail (spectators and replays, after the game)."""
        return full_events(self)

    # ------------------------------------------------------------------ tools
    def clone(self) -> ThreeUpState:
        """An independent copy (lists copied, the log shared by value) for tests and search."""
        twin = ThreeUpState.__new__(ThreeUpState)
        twin.__dict__.update(self.__dict__)
        twin.history = list(self.history)
        twin.rng = random.Random()
        twin.rng.setstate(self.rng.getstate())
        for name in ("hands", "up", "down", "offer"):
            setattr(twin, name, [list(cards) for cards in getattr(self, name)])
        for name in ("chosen", "draw_pile", "discard_pile", "removed", "finished", "log"):
            setattr(twin, name, list(getattr(self, name)))
        twin._places = None if self._places is None else list(self._places)
        twin._legal = None
        twin._rendered = {}
        twin._rendered_public = []
        return twin

    def all_card_locations(self) -> list[int]:
        """Every card id in every place (for the all-cards-accounted-for check)."""
        cards = list(self.draw_pile) + list(self.discard_pile) + list(self.removed)
        for seat in range(self.players):
            cards += self.hands[seat] + self.up[seat] + self.offer[seat]
            cards += [card for card in self.down[seat] if card is not None]
        return cards


def _distinct(cards: Iterable[int], face: Sequence[int]) -> list[int]:
    """The lowest id of each distinct face among sorted cards."""
    seen = set()
    out = []
    for card in cards:
        if face[card] not in seen:
            seen.add(face[card])
            out.append(card)
    return out
