"""The graded players the rating benches share: 3UP 3DOWN and Three Thirteen rules of
thumb that play a random legal action with probability p (p = 0 strongest, 1 random), and
how a scheduled game and a Swiss of them are played in process (no referee, no protocol:
what the rating benches measure is the schedule and rating pipeline, not the sandbox).

Used by bench/rating_accuracy.py, bench/runner_overhead.py, bench/league.py and
bench/confidence.py.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from arena.ratings.ledger import RatedGame, RatingLedger
from arena.schedule.formats import (
    ScheduledGame,
    swiss_round,
)
from engine.api import Action, Observation, State
from engine.registry import get_game
from engine.three_thirteen import best_arrangement, card_penalty

GAME = "3up3down"
# The duplicate question is also asked on Three Thirteen, where the cards decide more.
THREE_THIRTEEN = "three-thirteen"
SEATS = 4
ACCURACY_BOTS = 16
TOP = 3  # the top places a standings is judged by


# --------------------------------------------------------------- graded players

# How much a card is worth to keep: Clear cards beat every number, the bonus ones most.
KEEP_VALUE = {"clear": 11, "clear1": 12, "clear2": 13}


def card_value(card: dict[str, Any]) -> int:
    """A card's worth to its holder: its number, or more for a Clear card."""
    if card["kind"] == "number":
        return int(card["value"])
    return KEEP_VALUE.get(card["kind"], 11)


def heuristic_action(observation: Observation, legal: list[Action]) -> Action:
    """The rule-of-thumb move: strongest cards face up, lowest number first (all copies), Clears kept.

    The same rules of thumb as bots/threeup-heuristic (a copy, so the bench does not move
    when that bot is tuned): with default rules it won 130 of 200 four-seat games
    against three random players.
    """
    first = legal[0]["type"]
    if len(legal) == 1:
        return legal[0]
    if first == "choose_up":
        cards = {card["id"]: card for card in observation["setup_cards"]}
        return max(legal, key=lambda action: sum(card_value(cards[c]) for c in action["cards"]))
    if first != "play":
        return legal[0]  # refill (free), keep (no swap), play_down (blind), pickup (forced)
    cards = {card["id"]: card for card in observation["hand"]}
    for seat_up in observation["up"]:
        for card in seat_up:
            cards[card["id"]] = card
    best_number: Action | None = None
    best_key = (11, 0)
    clears: dict[str, Action] = {}
    draw: Action | None = None
    for action in legal:
        if action["type"] == "draw":
            draw = action
            continue
        if action["type"] != "play":
            continue
        card = cards[action["cards"][0]]
        if card["kind"] == "number":
            key = (card["value"], -len(action["cards"]))
            if key < best_key:
                best_number, best_key = action, key
        else:
            clears.setdefault(card["kind"], action)
    if best_number is not None:
        return best_number
    if draw is not None:
        return draw
    order = ("clear", "clear1", "clear2") if observation["draw_pile_size"] else ("clear2", "clear1", "clear")
    for kind in order:
        if kind in clears:
            return clears[kind]
    return legal[0]


def three_thirteen_action(state: Any, legal: list[Action]) -> Action:
    """Three Thirteen rules of thumb: go out when possible, take a discard that joins a
    combination, else discard the highest unmatched card.

    Reads only what the seat may know (its own hand, the discard pile's top card, the
    wild rank), from the state directly: building the full observation would cost more
    than the decision. It won 40 of 40 four-seat games against three random players.
    """
    if legal[0]["type"] == "draw":
        if len(legal) == 1:
            return legal[0]
        hand = state.hands[state.current]
        top = state.discard_pile[-1]
        before = best_arrangement(hand, state.wild_rank).deadwood
        after = best_arrangement([*hand, top], state.wild_rank).deadwood
        return legal[1] if top not in after and len(after) <= len(before) else legal[0]
    for action in legal:
        if action["type"] == "go_out":
            return action
    deadwood = best_arrangement(state.hands[state.current], state.wild_rank).deadwood
    allowed = {action["card"] for action in legal}
    pool = [card for card in deadwood if card in allowed] or sorted(allowed)
    return {"type": "discard", "card": max(pool, key=lambda card: (card_penalty(card), card))}


@dataclass(frozen=True)
class GradedPlayer:
    """The heuristic player, but a random legal action with probability `p` (p=1: random)."""

    name: str
    p: float
    game: str = GAME

    def act(self, state: State, rng: random.Random) -> Action:
        """This player's action in `state` (its seat's own information only)."""
        legal = state.legal_actions()
        if rng.random() < self.p:
            return legal[rng.randrange(len(legal))]
        if self.game == THREE_THIRTEEN:
            return three_thirteen_action(state, legal)
        return heuristic_action(state.observation(state.current_player), legal)


def graded_players(count: int, game: str = GAME, p_max: float = 1.0) -> list[GradedPlayer]:
    """`count` players with p spread evenly over [0, p_max], strongest (p=0) first."""
    return [GradedPlayer(f"p{index:02d}", p_max * index / (count - 1), game) for index in range(count)]


def play_scheduled(game: ScheduledGame, players: dict[str, GradedPlayer]) -> RatedGame:
    """Play one scheduled game in process; the players' randomness comes from its deal and seat."""
    game_name = next(iter(players.values())).game
    state = get_game(game_name).new_game(len(game.table), None, game.seed)
    rngs = [random.Random(f"bench/{game.seed}/{game.rotation}/{seat}") for seat in range(len(game.table))]
    seated = [players[bot] for bot in game.table]
    while not state.is_over:
        seat = state.current_player
        state.apply(seated[seat].act(state, rngs[seat]))
    return RatedGame(game.key, game.table, tuple(state.places()), deal=game.deal)


def kendall_tau(true_order: Sequence[str], rated_order: Sequence[str]) -> float:
    """Kendall tau (no ties) between two orders of the same bots: 1 same, -1 reversed."""
    position = {bot: at for at, bot in enumerate(rated_order)}
    concordant = discordant = 0
    for a, b in itertools.combinations(true_order, 2):  # a truly ahead of b
        if position[a] < position[b]:
            concordant += 1
        else:
            discordant += 1
    return (concordant - discordant) / (concordant + discordant)


def play_swiss(
    players: dict[str, GradedPlayer], ledger: RatingLedger, seed: int, rounds: int, duplicate: bool
) -> Iterator[tuple[int, list[RatedGame]]]:
    """Arena's Swiss, round by round: each round paired from `ledger`'s standings, played,
    and added to `ledger`; yields the round's number and results once it is rated."""
    history: list[ScheduledGame] = []
    for round_no in range(1, rounds + 1):
        games = swiss_round(
            ledger.table().standings, SEATS, round=round_no, seed=seed, history=history, duplicate=duplicate
        )
        history += games
        results = [play_scheduled(game, players) for game in games]
        for result in results:
            ledger.add(result)
        yield round_no, results


def map_jobs(function: Callable[[Any], Any], tasks: Sequence[Any], jobs: int) -> list[Any]:
    """`function` over `tasks`, in `jobs` processes when more than one; results in task order."""
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(function, tasks))
    return [function(task) for task in tasks]
