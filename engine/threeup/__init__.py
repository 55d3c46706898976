"""3UP 3DOWN (`3up3down`): a shedding card game for 2-6 players, with Clear cards.

| | |
|---|---|
| seats | 2-6 |
| decks | `box` (84 cards, default), `classic` (74 cards) |
| actions | `choose_up`, `play`, `play_down`, `pickup`, `draw`, `refill`, `no_refill`, `swap`, `keep` |
| options | deck, colours, play_for_places, max_turns, refill, may_draw_instead, ones_reverse, points, swap_stacks, choose_for_others, colour_run_swap, first_player, clears_together, clear_drops_pending, points_count, secret_setup |
| places | order of running out of cards; at the turn cap, by cards held |
| scores | cards still held (or their points with `points`), lower is better |

Each seat is dealt three blind 3DOWN cards and six cards, of which it lays three face
up (3UP) and keeps three as its hand. Players take turns playing cards equal to or
higher than the top of the discard pile, from the hand, then (draw pile gone) the 3UP,
then one blind 3DOWN card at a time; who cannot play takes the pile. Clear cards and
three of a kind remove the pile. The first to run out of cards wins.

The rules as enforced, every ruling and option, and the shape of actions and
observations: docs/rules/3up3down.md. Modules: `cards` (decks and ids), `state` (the
rules), `view` (what each seat may see), `shapes` (the declared shapes of actions and
observations), `game` (options and factories), `replay` (the site's replay tables).

Version history: 1 (2026-11-29) — first version: both decks, every optional rule.
"""

from engine.registry import register
from engine.threeup.cards import Deck, build_deck
from engine.threeup.game import GAME, OPTIONS, ThreeUpGame
from engine.threeup.state import ThreeUpState

register(GAME)

__all__ = ["GAME", "OPTIONS", "Deck", "ThreeUpGame", "ThreeUpState", "build_deck"]
