"""Results into ratings, from wherever they come: a game the referee just played
(`rated_game`), games finishing in any order (`OrderedLedger`), a tournament's or a league's
store (`store_ledger`, `stored_standings`, `stored_history`), and the site's pass resumed
from its cache (`rate_cached`). The ledger itself, the one place results become ratings, is
`arena.ratings.ledger`; `arena.ratings.standings` makes what every reader shows of them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.game.record import GameResult
from arena.ratings.confidence import Confidence
from arena.ratings.ledger import (
    BotStanding,
    RatedGame,
    RatingLedger,
    RatingPoint,
    RatingSettings,
    RatingTable,
)
from arena.store.keys import key_order

# ----------------------------------------------------------- a tournament's stored results
# The store persists results; these turn them into ratings (the store imports nothing of
# this module). `store` is an `arena.store.db.Store`, or anything with its read API.


def settings_of(stored: Mapping[str, Any] | None) -> RatingSettings:
    """The rating settings stored with a tournament (its `rating` table; defaults when none)."""
    return RatingSettings(**((stored or {}).get("rating") or {}))


def is_swiss(stored: Mapping[str, Any] | None) -> bool:
    """Whether a tournament's stored settings are a Swiss's (ranked by score and tie-break)."""
    return (stored or {}).get("format") == "swiss"


def is_league(stored: Mapping[str, Any] | None) -> bool:
    """Whether a store's settings are a league's (its bots have a membership status)."""
    return (stored or {}).get("format") == "league"


def inherited(stored: Mapping[str, Any] | None, members: Iterable[Any]) -> dict[str, str]:
    """A league with `inherit_rating`: each member bot -> its lineage (the bot's name, every
    version of it sharing one), from the league's membership records (`Store.members()`);
    {} when the option is off (a tournament, or a league without it). A `Ratings` given it
    starts a version, at its first rated game, from the mu that the version of its lineage
    rated last (the one it replaced) has then, in schedule order, with the prior's wide
    sigma: a pure function of the results in schedule order and who is whose version."""
    if not (stored or {}).get("inherit_rating"):
        return {}
    return {member.bot: member.lineage for member in members}


def rated_game(key: str, deal: str | None, result: GameResult) -> RatedGame:
    """The rating's view of a game the referee just played (`deal` None unless the tournament is duplicate)."""
    return RatedGame(
        key=key,
        bots=tuple(result.seats),
        places=tuple(result.places),
        forfeits=tuple(seat in result.forfeits for seat in range(len(result.seats))),
        deal=deal,
    )


def rated_games(store: Any) -> list[RatedGame]:
    """Every finished game of a store as the rating takes it, in schedule order."""
    by_game: dict[str, list[Any]] = {}
    for seat in store.seats():
        by_game.setdefault(seat.game_key, []).append(seat)
    duplicate = bool((store.settings() or {}).get("duplicate", False))
    deals = {game.key: game.deal for game in store.games(status="done")} if duplicate else {}
    return [
        RatedGame(
            key=key,
            bots=tuple(seat.bot for seat in seats),
            places=tuple(seat.place for seat in seats),
            forfeits=tuple(seat.forfeit for seat in seats),
            deal=deals[key] if duplicate else None,
        )
        for key, seats in sorted(by_game.items(), key=lambda item: key_order(item[0]))
    ]


def store_ledger(
    store: Any, *, history: bool = False, results: bool = True, record: bool = False, swiss: bool = False
) -> RatingLedger:
    """A ledger with a store's settings and bots, fed every stored result (unless `results=False`).

    Standings in conservative-rating order, as the runner's Swiss pairing has always read
    them (its seeded tie-break depends on that order); with `swiss=True` a Swiss store's
    are by Swiss score and tie-break, as `arena.ratings.standings.of_store` and the site show them.
    """
    stored = store.settings() or {}
    ledger = RatingLedger(
        settings_of(stored),
        duplicate=bool(stored.get("duplicate", False)),
        bots=[bot.bot for bot in store.bots()],
        history=history,
        swiss=swiss and is_swiss(stored),
        record=record,
        inherit=inherited(stored, store.members()),
    )
    if results:
        for result in rated_games(store):
            ledger.add(result)
    return ledger


def stored_standings(store: Any) -> RatingTable:
    """Ratings and standings over every result in a store, in schedule order."""
    return store_ledger(store).table()


def stored_history(store: Any) -> dict[str, list[RatingPoint]]:
    """Per bot, its rating after each of its updates over a store's results (for charts)."""
    return store_ledger(store, history=True).points()


class OrderedLedger:
    """Ratings fed in schedule order while games finish in any order: a finished game waits
    until every game scheduled before it is in, so each game is rated once, in order."""

    def __init__(self, ledger: RatingLedger):
        self.ledger = ledger
        self.order: list[str] = []
        self.next = 0
        self.waiting: dict[str, RatedGame] = {}

    def schedule(self, keys: Sequence[str]) -> None:
        """The keys of every scheduled game so far (later rounds only add later keys)."""
        self.order = sorted(keys, key=key_order)
        self._advance()

    def add(self, rated: RatedGame) -> None:
        """A finished game, in any order."""
        self.waiting[rated.key] = rated
        self._advance()

    def _advance(self) -> None:
        while self.next < len(self.order) and self.order[self.next] in self.waiting:
            self.ledger.add(self.waiting.pop(self.order[self.next]))
            self.next += 1

    @property
    def complete(self) -> bool:
        """True when every scheduled game has been rated."""
        return self.next == len(self.order)


# ------------------------------------------------------ the site's pass, resumed from a cache

CACHE_VERSION = 4  # of the JSON cache file `rate_cached` reads and writes


def _digest(games: Sequence[RatedGame]) -> str:
    digest = hashlib.sha256()
    for game in games:
        record = [game.key, list(game.bots), list(game.places), [bool(f) for f in game.forfeits]]
        digest.update(json.dumps(record, separators=(",", ":")).encode())
    return digest.hexdigest()


def rate_cached(
    games: Sequence[RatedGame],
    bots: Sequence[str],
    stored: Mapping[str, Any],
    cache: Path | None = None,
    inherit: Mapping[str, str] | None = None,
) -> tuple[list[BotStanding], dict[str, list[RatingPoint]], Confidence]:
    """Standings, each bot's rating after each of its updates, and how sure the standings are
    (`RatingLedger.confidence`), from `games` in schedule order (`inherit`: a league's
    versions that start from their predecessor's mu, `inherited`). With `cache` (a JSON file),
    a plain tournament whose games only grew at the end of the schedule since the last pass
    is rated from where that pass stopped, and one whose games did not change at all keeps
    its confidence too."""
    settings = settings_of(stored)
    duplicate = bool(stored.get("duplicate", False))
    swiss = is_swiss(stored)
    ledger: RatingLedger | None = None
    confidence: Confidence | None = None
    if cache is not None and cache.is_file() and not duplicate:
        try:
            state = json.loads(cache.read_text(encoding="utf-8"))
            if (
                state.get("version") == CACHE_VERSION
                and state["settings"] == dataclasses.asdict(settings)
                and state["bots"] == sorted(bots)
                and state["swiss"] == swiss
                and state.get("inherit", {}) == dict(inherit or {})
                and 0 < state["fed"] <= len(games)
                and _digest(games[: state["fed"]]) == state["digest"]
            ):
                ledger = RatingLedger.restore(state)
                if state["fed"] == len(games):
                    confidence = Confidence.from_json(state["confidence"])
        except (ValueError, KeyError, TypeError):
            ledger = None  # an unreadable cache is only a slower pass
    unchanged = confidence is not None  # the cache holds exactly these games: nothing to save
    if ledger is None:
        ledger = RatingLedger(
            settings, duplicate=duplicate, bots=bots, history=True, swiss=swiss, record=True, inherit=inherit
        )
    for game in games[ledger.fed :]:
        ledger.add(game)
    if confidence is None:
        if ledger.ratings.updates is None:
            # Resumed: the confidence needs every update, the cache keeps only the ratings.
            recorded = RatingLedger(settings, duplicate=duplicate, bots=bots, record=True, inherit=inherit)
            for game in games:
                recorded.add(game)
            confidence = recorded.confidence()
        else:
            confidence = ledger.confidence()
    if cache is not None and not duplicate and not unchanged:  # an unchanged cache is left alone
        partial = cache.with_suffix(".part")
        # The ledger's own state, with what says which games it is valid for.
        state = {"version": CACHE_VERSION, "digest": _digest(games), "confidence": confidence.to_json(), **ledger.snapshot(window=False)}
        partial.write_text(json.dumps(state), encoding="utf-8")
        os.replace(partial, cache)
    return ledger.table().standings, ledger.points(), confidence
