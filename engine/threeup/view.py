"""What each seat may see in 3UP 3DOWN: the one place observations and events are built.

Everyone: all 3UP cards (once setup is complete, or each as it is chosen with
`secret_setup` off), the discard pile, the cards removed from the game, the draw pile's
size, every hand's size, which 3DOWN positions each seat still has, every public event.
The owner only: its own hand (a failed 3DOWN card included) and the six cards it was
dealt at setup. Nobody: 3DOWN cards before they are turned, the order of the draw pile.
Hidden cards are never named, not even by id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.api import Event, GameError, Observation
from engine.threeup.cards import COLOURS
from engine.threeup.phases import OVER, SETUP

if TYPE_CHECKING:  # the state calls these functions; they only read it
    from engine.threeup.state import ThreeUpState

# Event fields that hold card ids, turned into card faces when rendered.
_CARD_FIELDS = ("card", "up_card", "hand_card")
_CARD_LIST_FIELDS = ("cards",)


def _public(state: ThreeUpState) -> dict[str, Any]:
    """The part of every observation that is the same for all seats."""
    deck = state.deck
    # With secret_setup off every choice is public as soon as it is made (unchosen: []).
    up_public = state.phase != SETUP or not state.options["secret_setup"]
    current = state.current_player
    view: dict[str, Any] = {
        "game": "3up3down",
        "players": state.players,
        "phase": state.phase,
        "current_player": current,
        "turn": state.turn,
        "max_turns": state.options["max_turns"],
        "direction": state.direction,
        "chosen_up": list(state.chosen),
        # Before every seat has chosen, no seat may learn another's 3UP (ruling, secret_setup).
        "up": [deck.shared_cards(cards) for cards in state.up] if up_public else None,
        "down": [[card is not None for card in slots] for slots in state.down],
        "hand_sizes": [len(hand) for hand in state.hands],
        "draw_pile_size": len(state.draw_pile),
        "discard_pile": deck.shared_cards(state.discard_pile),
        "removed": deck.shared_cards(state.removed),
        "finished": list(state.finished),
        "rules": dict(state.options),
    }
    if current is not None and state.phase != SETUP:
        view["source"] = state._source(current)
        view["actions_left"] = state.actions_left
        view["extra_action"] = state.actions_taken > 0
        view["may_refill"] = state.phase == "refill"
    if state.options["colour_run_swap"]:
        view["colour_run"] = {
            "colour": COLOURS[state.run_colour] if state.run_colour >= 0 else None,
            "length": state.run_length,
        }
    if state.phase == OVER:
        view["places"] = state.places()
        view["scores"] = state.scores()
        view["end_reason"] = state.end_reason
    return view


def observation(state: ThreeUpState, seat: int) -> Observation:
    """What `seat` may know now, and nothing more.

    The lists are the caller's; the card faces in them are the deck's own: read-only.
    """
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.players:
        raise GameError(f"seat must be an integer 0..{state.players - 1}, not {seat!r}")
    deck = state.deck
    view = _public(state)
    view["seat"] = seat
    view["hand"] = deck.shared_cards(sorted(state.hands[seat]))
    if state.phase == SETUP:
        view["setup_cards"] = deck.shared_cards(state.offer[seat])
        # Without choose_for_others a seat has chosen its own 3UP and may see them.
        if not state.options["choose_for_others"] and state.chosen[seat]:
            view["own_up"] = deck.shared_cards(state.up[seat])
    return view


def spectator_view(state: ThreeUpState) -> Observation:
    """Everything, hidden cards included (for replays after the game, never for bots)."""
    deck = state.deck
    view = _public(state)
    view["up"] = [deck.cards(cards) for cards in state.up]
    view["hands"] = [deck.cards(sorted(hand)) for hand in state.hands]
    view["down_cards"] = [[None if card is None else deck.card(card) for card in slots] for slots in state.down]
    view["setup_cards"] = [deck.cards(cards) for cards in state.offer]
    view["draw_pile"] = deck.cards(state.draw_pile)  # the top card is last
    view["seed"] = state.seed
    return view


def _render(deck, event: Event) -> Event:
    out = dict(event)
    for field in _CARD_FIELDS:
        if field in out:
            out[field] = deck.card(out[field])
    for field in _CARD_LIST_FIELDS:
        if field in out:
            out[field] = deck.cards(out[field])
    if "up" in out:  # reveal_up: one list per seat
        out["up"] = [deck.cards(cards) for cards in out["up"]]
    return out


def render_events(state: ThreeUpState, seat: int | None, start: int = 0) -> list[Event]:
    """The log as `seat` saw it (from its `start`-th event): public events plus its own
    private details; None = public.

    The log only grows, so each seat's rendering is kept and extended: a referee asking
    for the events before every decision pays for the new ones only. A public event is
    rendered once and the same dict shared by every seat that sees it: treat the returned
    events as read-only.
    """
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.players):
        raise GameError(f"seat must be None or an integer 0..{state.players - 1}, not {seat!r}")
    deck = state.deck
    log = state.log
    rendered_public = state._rendered_public  # one per log entry: its public event rendered, or None
    for _, public, _ in log[len(rendered_public):]:
        rendered_public.append(None if public is None else _render(deck, public))
    shown, done = state._rendered.get(seat, ([], 0))
    for index in range(done, len(log)):
        owner, _, private = log[index]
        if seat is not None and owner == seat and private is not None:
            shown.append(_render(deck, private))
        else:
            event = rendered_public[index]
            if event is not None:
                shown.append(event)
    state._rendered[seat] = (shown, len(log))
    return shown[start:]


def full_events(state: ThreeUpState) -> list[Event]:
    """Every event with every private detail (spectators, after the game)."""
    deck = state.deck
    return [_render(deck, private if private is not None else public) for _, public, private in state.log]
