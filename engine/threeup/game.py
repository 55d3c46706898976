"""The 3UP 3DOWN `Game`: its rule options (defaults are our rulings) and its state factories.

`new_game` deals from a seed; `from_position` builds any position directly (tests, tools,
puzzles): every card not placed somewhere is treated as removed from the game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.api import BadOption, Game, GameError, OptionSpec
from engine.replay_tables import ReplayTables
from engine.threeup import shapes
from engine.threeup.cards import build_deck
from engine.threeup.replay import TABLES
from engine.threeup.state import ThreeUpState

OPTIONS = (
    OptionSpec("deck", str, "box", "which deck: box (84 cards of the boxed game) or classic (74 cards, three colours)", choices=("box", "classic")),
    OptionSpec("colours", int, 3, "how many colours of the deck to use (red, blue, green); fewer only for 2-4 players", min=1, max=3),
    OptionSpec("play_for_places", bool, True, "after the winner, play on for every place (off: the game ends at the first finisher)"),
    OptionSpec("max_turns", int, 1000, "turn cap; at the cap players still in are placed by cards held, fewer is better", min=1),
    OptionSpec("refill", str, "up_to_three", "the optional draw before an extra action: refill up to three, draw one card, or none", choices=("up_to_three", "one_card", "off")),
    OptionSpec("may_draw_instead", bool, False, "a player who could play may draw one card from the draw pile instead, ending the turn"),
    OptionSpec("ones_reverse", bool, False, "playing a 1 reverses the direction of play"),
    OptionSpec("points", bool, False, "scores are points of the cards still held: numbers face value, Clear 15, Clear +1 20, Clear +2 25"),
    OptionSpec("swap_stacks", bool, False, "after setup the 3UP/3DOWN stacks are randomly exchanged between players"),
    OptionSpec("choose_for_others", bool, False, "each player chooses the 3UP of the left neighbour (next seat) from its own six"),
    OptionSpec("colour_run_swap", bool, False, "who completes four cards of one colour in a row may swap one 3UP card for a hand card"),
    OptionSpec("clears_together", bool, False, "several Clear cards of one kind may be played in one action (each Clear +1 / +2 adds its extra actions)"),
    OptionSpec("clear_drops_pending", bool, True, "a plain Clear or three of a kind ends the turn, dropping pending extra actions (off: they survive)"),
    OptionSpec("points_count", str, "all", "with points: which cards still held score, all (hand, 3UP and 3DOWN) or only the hand", choices=("all", "hand")),
    OptionSpec("secret_setup", bool, True, "no seat sees another seat's 3UP choice until all have chosen (off: each choice is shown as it is made)"),
    OptionSpec("first_player", str, "seat0", "who makes the first play: seat 0, or a seat drawn from the game's seed once setup is done", choices=("seat0", "random")),
)


class ThreeUpGame(Game):
    """3UP 3DOWN for 2-6 players."""

    name = "3up3down"
    title = "3UP 3DOWN"
    game_score = "the cards a player still holds at the end (their points with the points rule): lower is better"
    rules_version = "1"  # bump when a rule fix changes how a stored game replays (docs/rules/3up3down.md)
    min_players = 2
    max_players = 6
    options = OPTIONS
    action_type = shapes.Action
    observation_type = shapes.Observation

    def _check_table(self, players: int, options: Mapping[str, Any]) -> None:
        """Options that depend on the number of players: the smaller deck and its size."""
        colours = options["colours"]
        if colours < 3 and players > 4:
            raise BadOption(
                f"rule option 'colours' = {colours} is for 2 to 4 players only, not {players}; "
                "allowed with 5 or 6 players: colours = 3"
            )
        deck = build_deck(options["deck"], colours)
        if len(deck) < 9 * players:
            most = len(deck) // 9
            raise BadOption(
                f"the {options['deck']} deck with colours = {colours} has {len(deck)} cards, too few to deal "
                f"9 to each of {players} players; allowed: at most {most} players with it, or more colours"
            )

    def _new_state(self, players: int, options: dict[str, Any], seed: int) -> ThreeUpState:
        self._check_table(players, options)
        return ThreeUpState(players, options, seed)

    def replay_tables(self) -> ReplayTables:
        """The site's replay tables of 3UP 3DOWN (engine/threeup/replay.py)."""
        return TABLES

    def from_position(
        self,
        players: int,
        options: Mapping[str, Any] | None = None,
        *,
        hands: Sequence[Sequence[int]],
        up: Sequence[Sequence[int]],
        down: Sequence[Sequence[int | None]],
        draw_pile: Sequence[int] = (),
        discard_pile: Sequence[int] = (),
        current: int = 0,
        direction: int = 1,
        turn: int = 0,
        finished: Sequence[int] = (),
        seed: int = 0,
    ) -> ThreeUpState:
        """A game in the play phase at the start of `current`'s turn, cards placed as given.

        Card ids are the deck's (see `deck.ids(...)`); a 3DOWN list may hold None for an
        empty position; the draw pile's top is its last card; every card not placed is
        removed from the game. Raises GameError for a card placed twice or out of range.
        """
        self.check_players(players)
        resolved = self.resolve_options(options)
        self._check_table(players, resolved)
        state = ThreeUpState(players, resolved, seed, deal=False)
        size = len(state.deck)
        for name, value in (("hands", hands), ("up", up), ("down", down)):
            if len(value) != players:
                raise GameError(f"{name} must have one list per seat ({players}), got {len(value)}")
        placed: list[int] = []
        for seat in range(players):
            slots = list(down[seat])
            if len(slots) > 3:
                raise GameError(f"seat {seat} has {len(slots)} 3DOWN cards; at most 3 positions")
            state.down[seat] = slots + [None] * (3 - len(slots))
            state.hands[seat] = list(hands[seat])
            state.up[seat] = sorted(up[seat])
            placed += state.hands[seat] + state.up[seat] + [card for card in slots if card is not None]
        state.draw_pile = list(draw_pile)
        state.discard_pile = list(discard_pile)
        placed += state.draw_pile + state.discard_pile
        if len(set(placed)) != len(placed) or any(not 0 <= card < size for card in placed):
            raise GameError(f"every card must be placed at most once and be an id 0..{size - 1}")
        if any(state.deck.kind[card] != 0 for card in state.discard_pile):
            raise GameError("the discard pile holds only number cards (a Clear removes the pile)")
        taken = set(placed)
        state.removed = [card for card in range(size) if card not in taken]
        state.chosen = [True] * players
        state.direction = 1 if direction >= 0 else -1
        state.turn = turn
        state.finished = list(finished)
        if current in state.finished or not 0 <= current < players:
            raise GameError(f"current must be a seat still in the game, not {current!r}")
        for seat in range(players):
            if seat not in state.finished and state.cards_held(seat) == 0:
                raise GameError(f"seat {seat} holds no cards but has not finished; give it cards or list it in finished")
        state.log.append((None, {"type": "position", "note": "built by from_position"}, None))
        state._start_turn(current)
        return state


GAME = ThreeUpGame()

__all__ = ["GAME", "OPTIONS", "ThreeUpGame"]
