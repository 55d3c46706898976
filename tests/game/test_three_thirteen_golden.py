"""Three Thirteen golden replays: complete games written out as text, compared on every run.

Each game is fixed by players, options, deal seed and the random players' seed; the text
holds every event with its private details (the spectator's log). A rule change that
alters any game shows up as a diff in tests/golden/three_thirteen_*.txt. Regenerate after
an intended change with

    ARENA_UPDATE_GOLDEN=1 python -m pytest -q tests/game/test_three_thirteen_golden.py

and review the diff before committing it.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from engine.players import random_action
from engine.three_thirteen import GAME, card_name

GOLDEN = Path(__file__).parents[1] / "golden"

GAMES = {
    "three_thirteen_2p_default": (2, {}, 1, 1),
    "three_thirteen_3p_ace_high_cap_20": (3, {"ace_high": True, "max_turns_per_round": 20}, 2, 2),
    "three_thirteen_4p_discard_taken_end_round_cap_40": (
        4,
        {"discard_taken_card": True, "empty_stock": "end_round", "max_turns_per_round": 40},
        3,
        3,
    ),
    "three_thirteen_6p_cap_12": (6, {"max_turns_per_round": 12}, 4, 4),
    "three_thirteen_3p_no_all_wild_wild_penalty_20_cap_16": (
        3,
        {"all_wild_combinations": False, "wild_penalty": 20, "max_turns_per_round": 16},
        5,
        5,
    ),
}


def _text(value):
    """Cards as NAME#ID (the id tells apart identical cards of different decks)."""
    if isinstance(value, dict) and set(value) == {"id", "rank", "suit"}:
        return f"{card_name(value['id'])}#{value['id']}"
    if isinstance(value, dict):
        return "{" + " ".join(f"{k}={_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + " ".join(_text(item) for item in value) + "]"
    return json.dumps(value)


def playthrough(players, options, seed, player_seed):
    """The whole game as text: a header, then one line per event."""
    state = GAME.new_game(players, options, seed)
    rng = random.Random(player_seed)
    while not state.is_over:
        state.apply(random_action(state, rng))
    lines = [
        f"# three-thirteen players={players} options={json.dumps(state.options, sort_keys=True)} "
        f"seed={seed} player_seed={player_seed}"
    ]
    for event in state.full_events():
        fields = " ".join(f"{k}={_text(v)}" for k, v in event.items() if k != "type")
        lines.append(f"{event['type']} {fields}")
    lines.append(f"# places={state.places()} scores={state.scores()} actions={len(state.actions)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(GAMES))
def test_golden_replay(name):
    path = GOLDEN / f"{name}.txt"
    text = playthrough(*GAMES[name])
    if os.environ.get("ARENA_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing {path}; create it with ARENA_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")
