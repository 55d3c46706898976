"""A ledger saved and resumed bit for bit, whatever it is: duplicate (a deal may be open)
and recorded (the last `confidence.WINDOW` updates its confidence re-rates) ones too.

`RatingLedger.to_json` keeps a plain ledger's ratings as mu and sigma; the package keeps a
rating as its natural parameters (precision and precision-adjusted mean), and a rating
rebuilt from mu and sigma may differ from it in the last bit, so a snapshot keeps those.
A duplicate ledger's deals already rated are kept too (`rated_deals`, sorted), so a
resumed one refuses a late rotation of one, as the ledger that never stopped does (a
league's deal keys are its games' key prefixes, refused by their order anyway; the ledger
takes any deal label); about 15 bytes a deal before compression (a league of 1M games in
4 rotations: 250,000 deals, 3.75 MB of JSON, 0.6 MB in the league's zlib blob). Not for
a ledger with a history (`to_json` keeps that). Plain JSON, never pickle. A league keeps
its ledgers so (`arena.league.saved_state`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from typing import Any

import trueskill

from arena.ratings.ledger import RatedGame, RatingLedger, RatingSettings


def snapshot(ledger: RatingLedger) -> dict[str, Any]:
    """Everything `ledger` needs to go on exactly as if it had never stopped."""
    if ledger.history is not None:
        raise ValueError("a ledger with a history is saved with to_json")
    state = ledger._state()
    state["ratings"] = {bot: [rating.pi, rating.tau] for bot, rating in ledger.ratings._ratings.items()}
    state["duplicate"] = ledger.duplicate
    state["deal"] = [[game.key, list(game.bots), list(game.places), list(game.forfeits), game.deal] for game in ledger._deal]
    if ledger.duplicate:
        state["rated_deals"] = sorted(ledger._rated_deals)
    updates = ledger.ratings.updates
    state["window"] = None if updates is None else updates.maxlen
    state["updates"] = None if updates is None else [
        [list(bots), list(ranks), [list(pair) for pair in added]] for bots, ranks, added in updates
    ]
    return state


def from_snapshot(state: Mapping[str, Any]) -> RatingLedger:
    """A ledger back from `snapshot`. ValueError, KeyError or TypeError when `state` is not
    one (the caller rates from the start instead); the recorded updates keep the window
    they were saved with."""
    if state.get("history") is not None:
        raise ValueError("not a ledger snapshot: it has a history")
    settings = RatingSettings(**state["settings"])
    ledger = RatingLedger(settings, duplicate=bool(state["duplicate"]), bots=state["bots"], swiss=bool(state["swiss"]))
    ledger._restore(state)
    ratings = ledger.ratings
    for bot, (pi, tau) in state["ratings"].items():
        if not (isinstance(pi, float) and isinstance(tau, float) and pi > 0 and math.isfinite(pi) and math.isfinite(tau)):
            raise ValueError(f"not a ledger snapshot: the rating of {bot!r} is {pi!r}, {tau!r}")
        rating = trueskill.Rating(0.0, 1.0)
        rating.pi, rating.tau = pi, tau
        ratings._ratings[bot] = rating
    ledger._deal = [
        RatedGame(key, tuple(bots), tuple(places), tuple(forfeits), deal) for key, bots, places, forfeits, deal in state["deal"]
    ]
    if ledger.duplicate:  # a snapshot of an older arena has none: KeyError (the caller rates again)
        rated = state["rated_deals"]
        if not isinstance(rated, list) or not all(isinstance(deal, str) for deal in rated):
            raise ValueError("not a ledger snapshot: its rated deals are not a list of deal keys")
        ledger._rated_deals = set(rated)
    if state["updates"] is not None:
        ratings.updates = deque(
            (
                (tuple(bots), tuple(ranks), tuple((float(pi), float(tau)) for pi, tau in added))
                for bots, ranks, added in state["updates"]
            ),
            maxlen=int(state["window"]),
        )
    return ledger
