"""The referee plays ONE game of any registered game between 2-6 seats; the only place
where engine states and bots meet.

Each seat's bot gets only its own view: `state.events(seat)` and `state.observation(seat)`.
A bot that faults (BotFault) forfeits: an incident is recorded, its process is stopped,
and its seat is finished by a fallback player (a seeded random legal action) so the
other seats' game completes. Forfeited seats share the last place (the table's size);
the others are ranked among themselves by the game's own places. The record it returns
(`GameResult`, in `arena.game.record`) is what later layers store; `verify_replay`
re-simulates it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arena.errors import ArenaError
from arena.faults import BotFault, Reason
from arena.game.protocol import GameOver, Start
from arena.game.record import GameResult, Incident, Replay
from arena.game.seats import Seat
from engine.api import Action, Game, GameError, State
from engine.players import random_action
from engine.registry import get_game


class ReplayMismatch(ArenaError):
    """A stored result does not re-simulate to the same game."""


Step = Callable[[State, int, Action, str], None]


def places_with_forfeits(engine_places: Sequence[int], forfeits: Sequence[int]) -> list[int]:
    """Forfeited seats share the last place, the table's size; the others keep their order.

    A forfeit is never a win, and never earns a Swiss point: when every seat forfeits,
    all are last (two seats: 2 and 2), not all first.
    """
    out = set(forfeits)
    keep = [seat for seat in range(len(engine_places)) if seat not in out]
    places = [0] * len(engine_places)
    for seat in keep:
        places[seat] = 1 + sum(1 for other in keep if engine_places[other] < engine_places[seat])
    for seat in out:
        places[seat] = len(engine_places)
    return places


def fallback_rng(seed: int, seat: int) -> random.Random:
    """The random source of the fallback player of `seat` in the game dealt from `seed`."""
    return random.Random(f"arena-fallback:{seed}:{seat}")


def play_game(
    game: str | Game,
    seats: Sequence[Seat],
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    game_number: int = 1,
    on_step: Step | None = None,
) -> GameResult:
    """Play one game, seat i being `seats[i]`; faults become forfeits, never exceptions."""
    chosen = get_game(game) if isinstance(game, str) else game
    state = chosen.new_game(len(seats), options, seed)
    players = state.players
    incidents: list[Incident] = []
    fallback: dict[int, random.Random] = {}
    by: list[str] = []
    decisions: list[tuple[float | None, int, list[str] | None] | None] = []  # per action: the bot's decision
    sent = [0] * players

    def forfeit(seat: int, fault: BotFault, request: int | None = None) -> None:
        reason = fault.reason
        # Stopped first, then read: the log is complete only once the process has ended and
        # its stderr is drained (read before, its last lines could still be in the pipe).
        if seats[seat].abandon() is Reason.OUT_OF_MEMORY:
            reason = Reason.OUT_OF_MEMORY
        log = seats[seat].log_tail()
        incidents.append(
            Incident(
                game_number=game_number,
                seat=seat,
                bot=seats[seat].name,
                reason=reason,
                detail=fault.detail,
                decision=len(state.history),
                request=request,
                log_tail=log,
            )
        )
        fallback[seat] = fallback_rng(seed, seat)

    def new_events(seat: int) -> list[dict[str, Any]]:
        fresh = state.events_since(seat, sent[seat])
        sent[seat] += len(fresh)
        return fresh

    for seat in range(players):
        try:
            seats[seat].start_game(
                Start(game_number=game_number, seat=seat, players=players, rules=state.options)
            )
        except BotFault as fault:
            forfeit(seat, fault)

    while not state.is_over:
        seat = state.current_player
        assert seat is not None
        action: Action | None = None
        decision = None
        if seat not in fallback:
            asked_before = seats[seat].last_request
            try:
                player = seats[seat]
                player.send_events(new_events(seat))
                observation = state.observation(seat)
                legal = state.legal_actions()
                action = player.decide(observation, legal)
                decision = (player.last_think_s, len(legal), player.last_stderr)
            except BotFault as fault:
                asked = seats[seat].last_request
                forfeit(seat, fault, asked if asked != asked_before else None)
        chooser = "fallback" if action is None else "bot"
        if action is None:
            action = random_action(state, fallback[seat])
        state.apply(action)
        by.append(chooser)
        decisions.append(decision)
        if on_step is not None:
            on_step(state, seat, action, chooser)

    engine_places = state.places()
    forfeits = sorted(fallback)
    places = places_with_forfeits(engine_places, forfeits)
    scores = [float(score) for score in state.scores()]
    for seat in range(players):
        if seat in fallback:
            continue
        try:
            seats[seat].send_events(new_events(seat))
            seats[seat].game_over(
                GameOver(
                    game_number=game_number,
                    seat=seat,
                    places=places,
                    scores=scores,
                    forfeits=forfeits,
                )
            )
        except BotFault as fault:
            # The game was complete: the fault is recorded, the result stands.
            seats[seat].abandon()
            log = seats[seat].log_tail()  # after the stop: complete (see forfeit)
            incidents.append(
                Incident(
                    game_number=game_number,
                    seat=seat,
                    bot=seats[seat].name,
                    reason=fault.reason,
                    detail=fault.detail + " (after the game ended; the result stands)",
                    decision=len(state.history),
                    forfeit=False,
                    log_tail=log,
                )
            )

    return GameResult(
        game=chosen.name,
        seed=seed,
        rules=dict(state.options),
        rules_version=chosen.rules_version,
        game_number=game_number,
        seats=[seat.name for seat in seats],
        places=places,
        scores=scores,
        engine_places=list(engine_places),
        forfeits=forfeits,
        incidents=incidents,
        # Validated in one call from plain dicts: the same models, without a call per action.
        replay=Replay.model_validate(
            {
                "actions": [
                    {"seat": seat, "action": action, "by": chooser}
                    if decision is None
                    else {"seat": seat, "action": action, "by": chooser, "think_s": decision[0],
                          "legal": decision[1], "stderr": decision[2] or None}
                    for (seat, action), chooser, decision in zip(state.history, by, decisions)
                ],
                "events": state.events(None),
            }
        ),
    )


def verify_replay(result: GameResult) -> State:
    """Re-simulate a stored result; ReplayMismatch says what differs. Returns the final state."""
    game = get_game(result.game)
    if result.rules_version is not None and result.rules_version != game.rules_version:
        raise ReplayMismatch(
            f"the game was played under {result.game} rules version {result.rules_version}; this arena plays "
            f"version {game.rules_version}, so it cannot re-simulate it"
        )
    actions = [step.action for step in result.replay.actions]
    try:
        state = game.replay(result.players, result.rules, result.seed, actions)
    except GameError as error:
        raise ReplayMismatch(f"the stored actions do not replay: {error}") from None
    checks = {
        "seats of the actions": ([seat for seat, _ in state.history], [step.seat for step in result.replay.actions]),
        "game over": (state.is_over, True),
        "engine places": (state.places() if state.is_over else None, result.engine_places),
        "scores": ([float(s) for s in state.scores()] if state.is_over else None, result.scores),
        "public events": (state.events(None), result.replay.events),
        "places": (
            places_with_forfeits(state.places(), result.forfeits) if state.is_over else None,
            result.places,
        ),
    }
    for what, (replayed, stored) in checks.items():
        if replayed != stored:
            raise ReplayMismatch(f"{what} differ: re-simulated {replayed!r}, stored {stored!r}")
    return state
