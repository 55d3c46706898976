"""Three Thirteen: the game state, its actions, what each seat may see, and its events.

The rules as enforced (with every ruling) are in docs/rules/three-thirteen.md. The meld
solver lives in `melds.py`; this module only asks it two questions: "which discards let
this hand go out" (every discard step) and "what is this hand's best arrangement" (when
a player goes out and when a round is scored).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Sequence
from typing import Any

from engine.api import (
    Action,
    BadOption,
    Event,
    Game,
    GameError,
    IllegalAction,
    Observation,
    OptionSpec,
    State,
)
from engine.replay_tables import ReplayTables
from engine.three_thirteen import shapes
from engine.three_thirteen.melds import (
    SUITS,
    Arrangement,
    Meld,
    best_arrangement,
    going_out_discards,
)
from engine.three_thirteen.replay import TABLES

ROUNDS = 11
DRAW, DISCARD, OVER = "draw", "discard", "over"

OPTIONS = (
    OptionSpec("ace_high", bool, False, "an Ace may also be high in a run (Q-K-A); an unmatched Ace scores 15"),
    OptionSpec(
        "max_turns_per_round", int, 200, "a round ends and is scored after this many turns (all players)", min=1
    ),
    OptionSpec(
        "discard_taken_card", bool, False,
        "allow discarding the card just taken from the discard pile in the same turn",
    ),
    OptionSpec("decks", int, 0, "52-card decks in play; 0 = ceil(players / 2)", min=0, max=4),
    OptionSpec(
        "empty_stock", str, "reshuffle",
        "when the stock is empty: reshuffle all but the top discard, or end the round",
        choices=("reshuffle", "end_round"),
    ),
    OptionSpec(
        "all_wild_combinations", bool, True, "a combination may consist of wild cards only"
    ),
    OptionSpec(
        "wild_penalty", int, 0, "penalty of an unmatched wild card; 0 = its face value", min=0, max=50
    ),
)


def card_view(card: int) -> dict[str, Any]:
    """How a visible card looks in observations and events."""
    return {"id": card, "rank": card % 13 + 1, "suit": SUITS[card % 52 // 13]}


def meld_view(meld: Meld) -> dict[str, Any]:
    """A laid-down or scored combination as JSON-able data."""
    return {"kind": meld.kind, "cards": [card_view(c) for c in meld.cards], "ranks": list(meld.ranks)}


def arrangement_view(arrangement: Arrangement) -> dict[str, Any]:
    """A scored hand as JSON-able data."""
    return {
        "melds": [meld_view(m) for m in arrangement.melds],
        "deadwood": [card_view(c) for c in arrangement.deadwood],
        "penalty": arrangement.penalty,
    }


def decks_for(players: int, options: dict[str, Any]) -> int:
    """How many decks a game of `players` uses under `options`."""
    return options["decks"] or -(-players // 2)


class ThreeThirteenState(State):
    """One game of Three Thirteen in progress."""

    def __init__(self, players: int, options: dict[str, Any], seed: int, deal: bool = True) -> None:
        super().__init__(players, options, seed)
        self._rng = random.Random(seed)
        self.decks = decks_for(players, options)
        self._ace_high: bool = options["ace_high"]
        self._cap: int = options["max_turns_per_round"]
        self._taken_is_discardable: bool = options["discard_taken_card"]
        self._reshuffle: bool = options["empty_stock"] == "reshuffle"
        self._all_wild: bool = options["all_wild_combinations"]
        self._wild_penalty: int | None = options["wild_penalty"] or None
        self.round = 1
        self.dealer = self._rng.randrange(players)
        self.wild_rank = 3
        self.current: int | None = None
        self.phase = DRAW
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.stock: list[int] = []  # the top card is the last one
        self.discard_pile: list[int] = []  # the top card is the last one
        self.taken: int | None = None  # the card just taken from the discard pile
        self.went_out: int | None = None
        self.laid_down: tuple[Meld, ...] = ()
        self.final_turns_left = 0
        self.turns = 0  # turns completed in this round, all players together
        self.totals = [0] * players
        self.round_results: list[dict[str, Any]] = []
        # Events are kept as compact tuples and turned into dicts only when asked for.
        self._log: list[tuple[Any, ...]] = []
        self._rendered: dict[int | None, list[Event]] = {}
        self._last_round_json = "null"  # the last round's result, copied out per observation
        self._legal: list[Action] | None = None
        self._legal_keys: set[tuple[str, Any]] = set()
        if deal:
            self._start_round()

    # -- the API ------------------------------------------------------------------------
    @property
    def current_player(self) -> int | None:
        return self.current

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    def legal_actions(self) -> list[Action]:
        if self._legal is None:
            self._build_legal()
        return list(self._legal)  # type: ignore[arg-type]

    def apply(self, action: Action) -> None:
        """Apply the current player's action; IllegalAction (state unchanged) if not legal now.

        Same contract as `State.apply`, with an O(1) lookup instead of a scan of the legal
        list, and stricter: a card id must be an int (not a bool or a float). Legal-action
        dicts are cached per position: read them, do not modify them.
        """
        if self.phase == OVER:
            raise IllegalAction("the game is over; no action is legal")
        if self._legal is None:
            self._build_legal()
        key = _action_key(action)
        if key not in self._legal_keys:
            raise IllegalAction(self._why_illegal(action))
        # A fresh dict built from the key: nothing the caller holds can alter what is applied
        # or recorded afterwards.
        kind, what = key  # type: ignore[misc]
        chosen: Action = {"type": kind, "source": what} if kind == "draw" else {"type": kind, "card": what}
        seat = self.current
        self._apply(chosen)
        self.history.append((seat, chosen))  # type: ignore[arg-type]

    def _apply(self, action: Action) -> None:
        kind = action["type"]
        seat = self.current
        assert seat is not None
        hand = self.hands[seat]
        self._legal = None
        if kind == "draw":
            if action["source"] == "stock":
                card = self.stock.pop()
                self.taken = None
            else:
                card = self.discard_pile.pop()
                self.taken = card
            hand.append(card)
            self._log.append(("draw", seat, action["source"], card))
            self.phase = DISCARD
            return
        card = action["card"]
        hand.remove(card)
        self.discard_pile.append(card)
        self.taken = None
        self.turns += 1
        if kind == "go_out":
            arrangement = self._arrange(hand)
            if arrangement.penalty:
                raise AssertionError("go_out was offered for a hand that cannot meld")  # a bug
            self.laid_down = arrangement.melds
            hand.clear()
            self.went_out = seat
            self.final_turns_left = self.players - 1
            self._log.append(("go_out", seat, card, arrangement.melds))
        else:
            self._log.append(("discard", seat, card))
            if self.went_out is not None:
                self.final_turns_left -= 1
        if self.went_out is not None and self.final_turns_left == 0:
            self._end_round("went_out")
        elif self.turns >= self._cap:
            self._end_round("turn_cap")
        else:
            self.current = (seat + 1) % self.players
            self.phase = DRAW
            if not self.stock:
                self._refill_stock()

    def observation(self, seat: int) -> Observation:
        self._check_seat(seat)
        return {
            "game": "three-thirteen",
            "seat": seat,
            "players": self.players,
            "round": self.round,
            "rounds": ROUNDS,
            "wild_rank": self.wild_rank,
            "dealer": self.dealer,
            "current_player": self.current,
            "phase": self.phase,
            "hand": [card_view(c) for c in sorted(self.hands[seat])],
            "hand_sizes": [len(h) for h in self.hands],
            "discard_pile": [card_view(c) for c in self.discard_pile],
            "stock_size": len(self.stock),
            "taken_from_discard": None if self.taken is None else card_view(self.taken),
            "went_out": self.went_out,
            "laid_down": [meld_view(m) for m in self.laid_down],
            "final_turns_left": self.final_turns_left,
            "turn": self.turns,
            "max_turns_per_round": self._cap,
            "totals": list(self.totals),
            "last_round": json.loads(self._last_round_json),
            "options": dict(self.options),
        }

    def spectator_view(self) -> Observation:
        return {
            "game": "three-thirteen",
            "players": self.players,
            "round": self.round,
            "wild_rank": self.wild_rank,
            "dealer": self.dealer,
            "current_player": self.current,
            "phase": self.phase,
            "hands": [[card_view(c) for c in sorted(h)] for h in self.hands],
            "stock": [card_view(c) for c in self.stock],
            "discard_pile": [card_view(c) for c in self.discard_pile],
            "taken_from_discard": None if self.taken is None else card_view(self.taken),
            "went_out": self.went_out,
            "laid_down": [meld_view(m) for m in self.laid_down],
            "final_turns_left": self.final_turns_left,
            "turn": self.turns,
            "totals": list(self.totals),
            "rounds_played": copy.deepcopy(self.round_results),
            "options": dict(self.options),
        }

    def events(self, seat: int | None = None) -> list[Event]:
        """The event log as `seat` saw it; None = public. Rendered incrementally: a referee
        that asks before every decision pays only for the events since its last call."""
        return self.events_since(seat, 0)

    def events_since(self, seat: int | None, start: int) -> list[Event]:
        """`events(seat)[start:]`, without copying the events before `start`."""
        if seat is not None:
            self._check_seat(seat)
        rendered = self._rendered.setdefault(seat, [])
        for entry in self._log[len(rendered):]:
            rendered.append(_event_view(entry, seat))
        return rendered[start:]

    def full_events(self) -> list[Event]:
        """The event log with every private detail (for replays after the game, never for bots)."""
        out = []
        for entry in self._log:
            if entry[0] == "draw":
                out.append(_event_view(entry, entry[1]))
            elif entry[0] == "round_start":
                event = _event_view(entry, None)
                event["hands"] = [[card_view(c) for c in hand] for hand in entry[5]]
                out.append(event)
            else:
                out.append(_event_view(entry, None))
        return out

    def places(self) -> list[int]:
        if self.phase != OVER:
            raise GameError("places are known only when the game is over")
        return [1 + sum(other < mine for other in self.totals) for mine in self.totals]

    def scores(self) -> list[float]:
        """Cumulative penalty totals (lower is better); final once the game is over."""
        return [float(t) for t in self.totals]

    # -- round mechanics ------------------------------------------------------------------
    def _start_round(self) -> None:
        self.wild_rank = self.round + 2
        deck = list(range(52 * self.decks))
        self._rng.shuffle(deck)
        self._deal(deck)

    def _deal(self, stock: list[int]) -> None:
        """Deal from `stock` (top = last) one card at a time from the dealer's left."""
        self.hands = [[] for _ in range(self.players)]
        for _ in range(self.round + 2):
            for step in range(1, self.players + 1):
                self.hands[(self.dealer + step) % self.players].append(stock.pop())
        self.discard_pile = [stock.pop()]
        self.stock = stock
        self.current = (self.dealer + 1) % self.players
        self.phase = DRAW
        self.turns = 0
        self.taken = None
        self.went_out = None
        self.laid_down = ()
        self.final_turns_left = 0
        self._legal = None
        self._log.append(
            ("round_start", self.round, self.wild_rank, self.dealer, self.current,
             tuple(tuple(sorted(h)) for h in self.hands), self.discard_pile[-1], len(self.stock))
        )

    def _arrange(self, hand: list[int]) -> Arrangement:
        """The best arrangement of `hand` under this game's rules."""
        return best_arrangement(
            hand, self.wild_rank, self._ace_high, wild_penalty=self._wild_penalty, all_wild=self._all_wild
        )

    def _refill_stock(self) -> None:
        if self._reshuffle and len(self.discard_pile) > 1:
            self.stock = self.discard_pile[:-1]
            self.discard_pile = self.discard_pile[-1:]
            self._rng.shuffle(self.stock)
            self._log.append(("reshuffle", len(self.stock)))
        else:
            self._end_round("stock_exhausted")

    def _end_round(self, reason: str) -> None:
        scored = []
        for seat, hand in enumerate(self.hands):
            if seat == self.went_out:
                scored.append(Arrangement(self.laid_down, (), 0))
            else:
                scored.append(self._arrange(hand))
        for seat, arrangement in enumerate(scored):
            self.totals[seat] += arrangement.penalty
        result = {
            "round": self.round,
            "wild_rank": self.wild_rank,
            "reason": reason,
            "went_out": self.went_out,
            "hands": [arrangement_view(a) for a in scored],
            "penalties": [a.penalty for a in scored],
            "totals": list(self.totals),
        }
        self.round_results.append(result)
        self._last_round_json = json.dumps(result)
        self._log.append(("round_end", result))
        self._legal = None
        if self.round == ROUNDS:
            self.phase = OVER
            self.current = None
            self._log.append(("game_over", tuple(self.totals), tuple(self.places())))
            return
        self.round += 1
        self.dealer = (self.dealer + 1) % self.players
        self._start_round()

    # -- legal actions ------------------------------------------------------------------
    def _build_legal(self) -> None:
        if self.phase == OVER:
            legal: list[Action] = []
        elif self.phase == DRAW:
            legal = [{"type": "draw", "source": "stock"}]
            if self.discard_pile:
                legal.append({"type": "draw", "source": "discard"})
        else:
            hand = self.hands[self.current]  # type: ignore[index]
            barred = None if self._taken_is_discardable else self.taken
            legal = [{"type": "discard", "card": c} for c in sorted(hand) if c != barred]
            if self.went_out is None:
                legal += [
                    {"type": "go_out", "card": c}
                    for c in going_out_discards(hand, self.wild_rank, self._ace_high, all_wild=self._all_wild)
                    if c != barred
                ]
        self._legal = legal
        self._legal_keys = {(a["type"], a.get("source", a.get("card"))) for a in legal}

    def _why_illegal(self, action: Any) -> str:
        """Say why `action` is refused, and list what is allowed."""
        try:
            shown = json.dumps(action, sort_keys=True)
        except (TypeError, ValueError):
            shown = repr(action)
        legal = self._legal or []
        listed = ", ".join(json.dumps(a, sort_keys=True) for a in legal[:16])
        more = f" (and {len(legal) - 16} more)" if len(legal) > 16 else ""
        reason = _reason(self, action)
        return f"{shown} is not legal for seat {self.current} now: {reason}; legal: {listed}{more}"

    def _check_seat(self, seat: Any) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
            raise GameError(f"seat must be an integer from 0 to {self.players - 1}, not {seat!r}")


def _action_key(action: Any) -> tuple[str, Any] | None:
    """The lookup key of a well-formed action, or None if its shape is wrong."""
    if not isinstance(action, dict) or len(action) != 2:
        return None
    kind = action.get("type")
    if kind == "draw":
        source = action.get("source")
        return ("draw", source) if isinstance(source, str) else None
    if kind in ("discard", "go_out"):
        card = action.get("card")
        if isinstance(card, int) and not isinstance(card, bool):
            return (kind, card)
    return None


def _reason(state: ThreeThirteenState, action: Any) -> str:
    """A short explanation of why a refused action is not allowed."""
    shapes = (
        'actions are {"type": "draw", "source": "stock"|"discard"}, '
        '{"type": "discard", "card": ID} or {"type": "go_out", "card": ID}'
    )
    if not isinstance(action, dict) or action.get("type") not in ("draw", "discard", "go_out"):
        return shapes
    kind = action["type"]
    if kind == "draw" and state.phase != DRAW:
        return "this seat has drawn already and must now discard or go out"
    if kind != "draw" and state.phase != DISCARD:
        return "this seat must draw first, from the stock or the discard pile"
    if _action_key(action) is None:
        return shapes
    if kind == "draw":
        return 'the source must be "stock" or "discard"'
    card = action["card"]
    hand = state.hands[state.current]  # type: ignore[index]
    if card not in hand:
        return f"card {card} is not in this seat's hand"
    if card == state.taken and not state._taken_is_discardable:
        return f"card {card} was just taken from the discard pile and cannot be discarded this turn"
    if kind == "go_out" and state.went_out is not None:
        return f"seat {state.went_out} has gone out; the other seats only draw and discard once more"
    return f"discarding card {card} does not leave all other cards in combinations"


def _event_view(entry: tuple[Any, ...], seat: int | None) -> Event:
    """Turn one log entry into the dict `seat` may see (None = the public view)."""
    kind = entry[0]
    if kind == "draw":
        _, who, source, card = entry
        event: Event = {"type": "draw", "seat": who, "source": source}
        if source == "discard" or who == seat:
            event["card"] = card_view(card)
        return event
    if kind == "discard":
        return {"type": "discard", "seat": entry[1], "card": card_view(entry[2])}
    if kind == "go_out":
        _, who, card, melds = entry
        return {"type": "go_out", "seat": who, "card": card_view(card), "melds": [meld_view(m) for m in melds]}
    if kind == "round_start":
        _, number, wild, dealer, first, hands, up_card, stock_size = entry
        event = {
            "type": "round_start", "round": number, "wild_rank": wild, "dealer": dealer,
            "first_player": first, "discard_top": card_view(up_card), "stock_size": stock_size,
        }
        if seat is not None:
            event["hand"] = [card_view(c) for c in hands[seat]]
        return event
    if kind == "reshuffle":
        return {"type": "reshuffle", "stock_size": entry[1]}
    if kind == "round_end":
        return {"type": "round_end", **copy.deepcopy(entry[1])}
    _, totals, places = entry
    return {"type": "game_over", "totals": list(totals), "places": list(places)}


class ThreeThirteen(Game):
    """Three Thirteen: eleven rounds of rummy with a wild rank that climbs from 3 to King."""

    name = "three-thirteen"
    title = "Three Thirteen"
    game_score = "penalty points over the eleven rounds: lower is better"
    rules_version = "1"  # bump when a rule fix changes how a stored game replays (docs/rules/three-thirteen.md)
    min_players = 2
    max_players = 6
    options = OPTIONS
    action_type = shapes.Action
    observation_type = shapes.Observation

    def _new_state(self, players: int, options: dict[str, Any], seed: int) -> ThreeThirteenState:
        decks = decks_for(players, options)
        if 52 * decks < 13 * players + 1:
            raise BadOption(
                f"rule option 'decks' got {options['decks']}; {players} players need at least "
                f"{-(-(13 * players + 1) // 52)} decks for the last round (or 0 = automatic)"
            )
        return ThreeThirteenState(players, options, seed)

    def replay_tables(self) -> ReplayTables:
        """The site's replay tables of Three Thirteen (engine/three_thirteen/replay.py)."""
        return TABLES

    def position(
        self,
        hands: Sequence[Sequence[int]],
        stock: Sequence[int],
        discard_pile: Sequence[int],
        *,
        round: int = 1,
        dealer: int | None = None,
        current: int | None = None,
        totals: Sequence[int] | None = None,
        options: dict[str, Any] | None = None,
        seed: int = 0,
    ) -> ThreeThirteenState:
        """An exact position at the start of a turn (for tests and analysis): explicit hands,
        stock (top card last) and discard pile (top card last). Later rounds are dealt from
        `seed`. Such a state cannot be replayed from its seed and actions alone."""
        players = len(hands)
        self.check_players(players)
        resolved = self.resolve_options(options)
        if not 1 <= round <= ROUNDS:
            raise GameError(f"round must be from 1 to {ROUNDS}, not {round!r}")
        state = ThreeThirteenState(players, resolved, seed, deal=False)
        cards = [c for h in hands for c in h] + list(stock) + list(discard_pile)
        if len(set(cards)) != len(cards) or not all(0 <= c < 52 * state.decks for c in cards):
            raise GameError(f"cards must be distinct ids from 0 to {52 * state.decks - 1}")
        if not discard_pile:
            raise GameError("the discard pile needs at least its top card")
        state.round = round
        state.wild_rank = round + 2
        state.dealer = (players - 1) if dealer is None else dealer
        state.hands = [list(h) for h in hands]
        state.stock = list(stock)
        state.discard_pile = list(discard_pile)
        state.current = (state.dealer + 1) % players if current is None else current
        state.totals = list(totals) if totals is not None else [0] * players
        state._log.append(
            ("round_start", state.round, state.wild_rank, state.dealer, state.current,
             tuple(tuple(sorted(h)) for h in state.hands), state.discard_pile[-1], len(state.stock))
        )
        if not state.stock:  # the position obeys the empty-stock ruling at once
            state._refill_stock()
        return state


GAME = ThreeThirteen()
