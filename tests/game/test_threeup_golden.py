"""3UP 3DOWN golden replays: complete games written out as text and compared on every run.

Each game is fixed by players, options, deal seed and the random players' seed. A rule
change that alters any game shows up as a diff of the text in tests/golden/.
Regenerate after an intended change with:

    ARENA_UPDATE_GOLDEN=1 python -m pytest -q tests/game/test_threeup_golden.py

and review the diff before committing it.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from engine.threeup import GAME
from engine.threeup.view import full_events

GOLDEN = Path(__file__).parents[1] / "golden"

GAMES = {
    "3up3down_4p_default": (4, {}, 1, 1),
    "3up3down_2p_classic_two_colours_points_draw_instead": (
        2,
        {"deck": "classic", "colours": 2, "points": True, "may_draw_instead": True},
        2,
        2,
    ),
    "3up3down_6p_reverse_swap_stacks_colour_run_choose_for_others": (
        6,
        {"ones_reverse": True, "swap_stacks": True, "colour_run_swap": True, "choose_for_others": True},
        3,
        3,
    ),
    "3up3down_4p_random_start_clears_together_keep_pending_open_setup_hand_points": (
        4,
        {"first_player": "random", "clears_together": True, "clear_drops_pending": False, "secret_setup": False, "points": True, "points_count": "hand"},
        5,
        5,
    ),
    "3up3down_3p_first_finisher_one_card_refill_cap_40": (
        3,
        {"play_for_places": False, "refill": "one_card", "max_turns": 40},
        4,
        4,
    ),
}


def _card_text(deck, value):
    if isinstance(value, dict) and "id" in value and "kind" in value:
        return deck.describe(value["id"])
    if isinstance(value, list):
        return "[" + " ".join(_card_text(deck, item) for item in value) + "]"
    return json.dumps(value)


def _event_text(deck, event):
    fields = " ".join(f"{key}={_card_text(deck, value)}" for key, value in event.items() if key != "type")
    return f"{event['type']} {fields}".rstrip()


def _action_text(deck, action):
    parts = []
    for key, value in action.items():
        if key == "type":
            continue
        if key in ("cards",):
            value = "[" + " ".join(deck.describe(card) for card in value) + "]"
        elif key in ("up", "hand"):
            value = deck.describe(value)
        parts.append(f"{key}={value}")
    return " ".join([action["type"], *parts])


def transcript(players, options, seed, player_seed):
    """Play one fixed game with seeded random players and write it out as text."""
    state = GAME.new_game(players, options, seed)
    deck = state.deck
    rng = random.Random(player_seed)
    lines = [
        f"# 3up3down golden replay: players={players} seed={seed} player_seed={player_seed}",
        f"# rules: {json.dumps(state.options, sort_keys=True)}",
        "# regenerate: ARENA_UPDATE_GOLDEN=1 python -m pytest -q tests/game/test_threeup_golden.py",
        "deal draw_pile(top last)=" + _card_text(deck, deck.cards(state.draw_pile)),
    ]
    for seat in range(players):
        lines.append(f"deal seat {seat} down=" + _card_text(deck, deck.cards(state.down[seat])) + " six=" + _card_text(deck, deck.cards(state.offer[seat])))
    shown = len(state.log)
    step = 0
    while not state.is_over:
        legal = state.legal_actions()
        action = legal[rng.randrange(len(legal))]
        seat = state.current_player
        step += 1
        lines.append(f"{step:04d} seat {seat} [{len(legal)} legal] {_action_text(deck, action)}")
        state.apply(action)
        events = full_events(state)
        lines += ["     " + _event_text(deck, event) for event in events[shown:]]
        shown = len(events)
    lines.append(f"places={state.places()} scores={state.scores()} turns={state.turn} reason={state.end_reason}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(GAMES))
def test_golden_replay(name):
    text = transcript(*GAMES[name])
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ARENA_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"missing {path}; create it with ARENA_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{name} differs from {path}; if the change is intended, regenerate"
