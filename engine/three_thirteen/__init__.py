"""Three Thirteen (`three-thirteen`, 2–6 seats): eleven rounds of rummy, wilds 3 … K.

The public face of the game: `GAME` (registered as "three-thirteen") and the meld solver's
pure functions. Rules as enforced, every ruling and option, and the shape of actions and
observations: docs/rules/three-thirteen.md. Modules: `game` (state, rules, views, events),
`melds` (the meld solver), `shapes` (the declared shapes of actions and observations),
`replay` (the site's replay tables).

    from engine import get_game
    state = get_game("three-thirteen").new_game(players=4, seed=7)
    state.legal_actions()  # [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}]
"""

from engine.registry import register
from engine.three_thirteen.game import GAME, OPTIONS, ThreeThirteen, ThreeThirteenState
from engine.three_thirteen.melds import (
    Arrangement,
    Meld,
    best_arrangement,
    can_meld_all,
    card_id,
    card_name,
    card_penalty,
    going_out_discards,
    min_penalty,
    parse_cards,
)

register(GAME)

__all__ = [
    "GAME",
    "OPTIONS",
    "Arrangement",
    "Meld",
    "ThreeThirteen",
    "ThreeThirteenState",
    "best_arrangement",
    "can_meld_all",
    "card_id",
    "card_name",
    "card_penalty",
    "going_out_discards",
    "min_penalty",
    "parse_cards",
]
