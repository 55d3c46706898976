"""Ratings: TrueSkill over places, a pure function of results taken in schedule order.

Each game is one `rate()` in which every bot is a one-player group, ranked by place
(place 1 -> rank 0; equal places are a tie). Results are sorted by their scheduled game
key (`arena.store.keys.key_order`), never by the order they finished in, so the same tournament
gives the same ratings whatever --jobs, a cluster or a resume did.

In duplicate mode the games of one deal (every seat rotation of one table) are rated
together, so the luck of the deal cancels out. By default (`duplicate_update="hand"`)
each hand of the deal is one update: the bots that held that seat's cards, ranked by
the place each got with them, so every comparison is between bots on the same cards.
"deal" is one update per deal by each bot's total of places; "rotation" rates every
rotation as its own game. docs/performance.md has the measurements behind the default.

The TrueSkill updates themselves (the settings, the package and its fallbacks, the
recorded updates and the posterior) are `arena.ratings.skills` (`RatingSettings` and
`Ratings`, imported here under the names callers have always used).
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.ratings.confidence import Confidence, RankInterval
from arena.ratings.skills import Ratings, RatingSettings
from arena.store.keys import key_order

# The two tallies of places, defined once and said in these words everywhere they are
# shown (the terminal's notes, the site's column headers, the docs).
WINS_MEANS = "games placed first, shared firsts counted"
SCORE_MEANS = "per game (seats - place) / (seats - 1), so 1 for first (shared or not), 0 for last, summed"

@dataclass(frozen=True)
class RatedGame:
    """One finished game as the rating needs it; the runner builds these from the store.

    key: the scheduled game key (`ScheduledGame.key`); bots and places are per seat, seat
    0 first; places start at 1 and equal places are a tie; forfeits marks the seats that
    forfeited (the referee already placed them last); deal groups the rotations of one
    duplicate deal (`ScheduledGame.deal`), None when the game is its own deal.
    """

    key: str
    bots: tuple[str, ...]
    places: tuple[int, ...]
    forfeits: tuple[bool, ...] = ()
    deal: str | None = None

    def __post_init__(self) -> None:
        key_order(self.key)  # raises on a malformed key
        object.__setattr__(self, "bots", tuple(self.bots))
        object.__setattr__(self, "places", tuple(self.places))
        object.__setattr__(self, "forfeits", tuple(self.forfeits) or (False,) * len(self.bots))
        seats = len(self.bots)
        if seats < 2:
            raise ValueError(f"game {self.key}: a rated game needs at least 2 seats, got {seats}")
        if len(set(self.bots)) != seats:
            raise ValueError(f"game {self.key}: a bot sits in two seats: {self.bots}")
        if len(self.places) != seats or len(self.forfeits) != seats:
            raise ValueError(
                f"game {self.key}: {seats} seats but {len(self.places)} places and {len(self.forfeits)} forfeit flags"
            )
        if any(isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= seats for p in self.places):
            raise ValueError(f"game {self.key}: places must be whole numbers from 1 to {seats}, got {self.places}")


@dataclass(frozen=True)
class BotStanding:
    """A bot's line in the standings: the one standings type.

    A ledger's `table()` fills the rating and the tallies; `arena.ratings.standings.ranked`
    adds, once, what the terminal, `--json`, the site and the web door show with them:
    the band, the group, settled, and in a league the bot's status (None before that).
    """

    bot: str
    mu: float
    sigma: float
    conservative: float  # mu - 3 sigma: the skill the bot has with about 99.9% confidence
    games: int
    wins: int  # WINS_MEANS: a shared first is a win (no "outright" count is kept)
    average_place: float  # 0.0 before the first game
    forfeits: int
    # SCORE_MEANS: 1 for first, 0 for last whatever the table size, so smaller Swiss
    # tables score on the same scale; a Swiss ranks by it.
    score: float
    # Swiss tie-break (a Swiss ledger only, else None): over the bot's games, the sum of
    # the mean final Swiss score of its table-mates in each (`RatingLedger`, swiss=True).
    buchholz: float | None = None
    # Made by `arena.ratings.standings.ranked` (None in a ledger's bare table, which the
    # Swiss pairing reads): the bot's LEVEL rank interval, its group of bots not separated
    # (0 first), whether it has played and its SETTLE_LEVEL interval is narrow enough
    # (`Confidence.settled`), and in a league its membership status and reason.
    band: RankInterval | None = None
    group: int | None = None
    settled: bool | None = None
    status: str | None = None
    reason: str = ""

    @property
    def mark(self) -> str | None:
        """A league's word for the bot (the site's tag): its status once it no longer plays
        (retired, suspended, removed), else settled or provisional once it has played;
        None before its first game, and in a tournament."""
        if self.status is None:
            return None
        if self.status != "active":
            return self.status
        if self.games and self.settled is not None:
            return "settled" if self.settled else "provisional"
        return None

    def to_json(self) -> dict[str, Any]:
        """`arena standings --json`'s object for the bot (a league's adds status, reason, settled)."""
        line = {name: getattr(self, name) for name in _RATED_FIELDS}
        if self.band is not None:
            line["rank_interval"] = [self.band.low, self.band.high]
        if self.group is not None:
            line["group"] = self.group + 1
        if self.status is not None:
            line.update(status=self.status, reason=self.reason, settled=bool(self.settled))
        return line


# What a ledger's table fills, in the order `--json` has always listed them.
_RATED_FIELDS = (
    "bot", "mu", "sigma", "conservative", "games", "wins", "average_place", "forfeits", "score", "buchholz",
)


@dataclass(frozen=True)
class RatingPoint:
    """A bot's rating right after one of its updates (a game, or a whole duplicate deal)."""

    key: str  # the game key after which the rating was taken (a deal's last rotation)
    games: int  # the bot's games so far
    mu: float
    sigma: float
    conservative: float


@dataclass(frozen=True)
class RatingTable:
    """Standings, best first, and which updates needed the fallback or were skipped."""

    standings: list[BotStanding]
    # First game key of each update (of a duplicate deal: of the deal) rated with mpmath,
    # and of each update no backend could rate.
    mpmath_updates: tuple[str, ...] = ()
    skipped_updates: tuple[str, ...] = ()


def competition_ranks(totals: Sequence[float]) -> list[int]:
    """Rank 0 for the lowest total; equal totals share a rank (1, 1, 3 style, from 0)."""
    return [sum(other < total for other in totals) for total in totals]


# Swiss scores and tie-breaks are compared rounded to this many decimals: sums of thirds
# taken in another order may differ in the last bit, and must still tie.
SCORE_DIGITS = 9


class RatingLedger:
    """Ratings, counts and (optionally) each bot's rating history, kept up to date as results
    arrive in schedule order: the one place where results become ratings and standings.

    The standings are best conservative rating first; with `swiss=True` (a Swiss
    tournament) they are by Swiss score, then the Buchholz tie-break (the sum over the
    bot's games of its table-mates' mean final Swiss score), then the conservative rating.

    Feeding results one by one in schedule order gives exactly what `rate_results` gives
    for the same results, so a Swiss runner can read the standings between rounds without
    re-rating the whole tournament each time. With `history=True` it also records a
    `RatingPoint` per bot after each of its rated updates: after each game, or in
    duplicate mode once per deal when the deal is rated (an unfinished deal's bots get a
    point as the deal stands, in `points()`). With `record=True` it keeps every update, so
    `confidence()` can say how sure the standings are. Any ledger is saved and resumed bit
    for bit (`snapshot`, `restore`), so a later pass only rates the games added since.
    """

    def __init__(
        self,
        settings: RatingSettings | None = None,
        *,
        duplicate: bool = False,
        bots: Iterable[str] = (),
        history: bool = False,
        swiss: bool = False,
        record: bool = False,
        inherit: Mapping[str, str] | None = None,
    ):
        self.ratings = Ratings(settings, record=record, inherit=inherit)
        self.duplicate = duplicate
        self.swiss = swiss
        # Swiss only: bot -> table-mate -> weight, 1 / (table size - 1) per game shared, so
        # a bot's Buchholz is the sum of weight x the table-mate's final score.
        self._mates: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.listed = set(bots)  # bots in the standings even before their first game
        self._last_key: str | None = None
        self._deal: list[RatedGame] = []  # rotations of the current duplicate deal
        self._rated_deals: set[str] = set()
        self._games: dict[str, int] = defaultdict(int)
        self._wins: dict[str, int] = defaultdict(int)
        self._place_sum: dict[str, int] = defaultdict(int)
        self._forfeits: dict[str, int] = defaultdict(int)
        self._score: dict[str, float] = defaultdict(float)
        self.history: dict[str, list[RatingPoint]] | None = {bot: [] for bot in bots} if history else None
        self.fed = 0  # results taken so far

    def add(self, result: RatedGame) -> None:
        """Take the next result in schedule order (a repeated or earlier key is refused)."""
        if self._last_key is not None:
            before, now = key_order(self._last_key), key_order(result.key)
            if now == before:
                raise ValueError(f"a game is stored once; game key {result.key} appears more than once")
            if now < before:
                raise ValueError(f"results must come in schedule order: {result.key} came after {self._last_key}")
        if self.duplicate:
            deal = result.deal or result.key
            if self._deal and (self._deal[0].deal or self._deal[0].key) != deal:
                self.close_deal()  # before this game counts: the deal's points are as of its end
            if deal in self._rated_deals:
                raise ValueError(f"the rotations of deal {deal!r} must come one after another; {result.key} came late")
        self._last_key = result.key
        self.fed += 1
        size = len(result.bots)
        for bot, place, forfeited in zip(result.bots, result.places, result.forfeits):
            self._games[bot] += 1
            self._wins[bot] += place == 1
            self._place_sum[bot] += place
            self._forfeits[bot] += forfeited
            self._score[bot] += (size - place) / (size - 1)
        if self.swiss:
            for bot in result.bots:
                mates = self._mates[bot]
                for other in result.bots:
                    if other != bot:
                        mates[other] += 1 / (size - 1)
        if not self.duplicate:
            self._inherited_points(self.ratings, result.bots, result.key, self.history)
            self.ratings.update(result.bots, [place - 1 for place in result.places], label=result.key)
            self._points(self.ratings, result.bots, result.key, self.history)
            return
        self._deal.append(result)

    @property
    def last_key(self) -> str | None:
        """The key of the last result taken (None before the first)."""
        return self._last_key

    @property
    def deal_open(self) -> bool:
        """True while a duplicate deal has rotations taken but is not rated yet."""
        return bool(self._deal)

    def close_deal(self) -> list[str]:
        """Rate the open duplicate deal now, as the next deal's first result would (no more
        of its rotations may come); returns its bots, in order of first seat ([]: none open)."""
        if not self._deal:
            return []
        bots = _deal_bots(self._deal)
        self._inherited_points(self.ratings, bots, self._deal[0].key, self.history)
        _rate_deal(self.ratings, self._deal)
        self._rated_deals.add(self._deal[0].deal or self._deal[0].key)
        self._points(self.ratings, bots, self._deal[-1].key, self.history)
        self._deal = []
        return bots

    def known_bots(self) -> list[str]:
        """Every bot of the standings, sorted: those listed and those that played."""
        return sorted(set(self._games) | self.listed)

    def _points(
        self, ratings: Ratings, bots: Iterable[str], key: str, history: dict[str, list[RatingPoint]] | None
    ) -> None:
        if history is None:
            return
        for bot in bots:
            rating = ratings.rating(bot)
            history.setdefault(bot, []).append(
                RatingPoint(key, self._games[bot], rating.mu, rating.sigma, rating.mu - 3 * rating.sigma)
            )

    def _inherited_points(
        self, ratings: Ratings, bots: Iterable[str], key: str, history: dict[str, list[RatingPoint]] | None
    ) -> None:
        """Before a bot's first update: when it starts from its predecessor's mu (`inherit`),
        a point at game 0 with that prior, so that its chart and its first game's change
        start there."""
        if history is None:
            return
        for bot in bots:
            if bot in ratings.inherit and bot not in ratings._ratings and not history.get(bot):
                prior = ratings.rating(bot)
                if prior.mu != ratings.settings.mu:
                    history.setdefault(bot, []).append(
                        RatingPoint(key, 0, prior.mu, prior.sigma, prior.mu - 3 * prior.sigma)
                    )

    def _now(self) -> Ratings:
        """The ratings with the open duplicate deal rated as it stands (on a copy: more
        rotations may still come)."""
        if not self._deal:
            return self.ratings
        ratings = self.ratings.copy()
        _rate_deal(ratings, self._deal)
        return ratings

    def points(self) -> dict[str, list[RatingPoint]]:
        """Each bot's rating after each of its updates (needs `history=True`)."""
        if self.history is None:
            raise ValueError("this ledger keeps no history (RatingLedger(history=True) does)")
        history = {bot: list(points) for bot, points in self.history.items()}
        if self._deal:
            self._inherited_points(self.ratings, _deal_bots(self._deal), self._deal[0].key, history)
            self._points(self._now(), _deal_bots(self._deal), self._deal[-1].key, history)
        return history

    def table(self) -> RatingTable:
        """The standings now, best conservative rating first (a deal in progress counts as played so far)."""
        ratings = self._now()
        lines = []
        for bot in self.known_bots():
            rating = ratings.rating(bot)
            games = self._games[bot]
            lines.append(
                BotStanding(
                    bot=bot,
                    mu=rating.mu,
                    sigma=rating.sigma,
                    conservative=rating.mu - 3 * rating.sigma,
                    games=games,
                    wins=self._wins[bot],
                    average_place=self._place_sum[bot] / games if games else 0.0,
                    forfeits=self._forfeits[bot],
                    score=self._score[bot],
                    buchholz=self._buchholz(bot) if self.swiss else None,
                )
            )
        if self.swiss:
            lines.sort(
                key=lambda line: (
                    -round(line.score, SCORE_DIGITS), -round(line.buchholz, SCORE_DIGITS),
                    -line.conservative, -line.mu, line.bot,
                )
            )
        else:
            lines.sort(key=lambda line: (-line.conservative, -line.mu, line.bot))
        return RatingTable(lines, tuple(ratings.mpmath_updates), tuple(ratings.skipped_updates))

    def _buchholz(self, bot: str) -> float:
        """The sum over the bot's games of its table-mates' mean Swiss score (final as of now)."""
        return sum(weight * self._score[other] for other, weight in sorted(self._mates.get(bot, {}).items()))

    def confidence(self) -> Confidence:
        """How sure the standings are now: every bot's skill given all the games
        (`Ratings.posterior`), its rank interval, and who is separated (arena.ratings.confidence).
        Needs `record=True`."""
        ratings = self._now()
        skills = ratings.posterior()
        for bot in self.known_bots():
            if bot not in skills:
                prior = ratings.rating(bot)
                skills[bot] = (float(prior.mu), float(prior.sigma))
        return Confidence.of(skills, self.ratings.settings.beta)

    # -- saved and resumed (plain JSON: never pickle, a folder may come from elsewhere) ------

    def snapshot(self, *, history: bool = True, window: bool = True) -> dict[str, Any]:
        """Everything the ledger needs to go on exactly as if it had never stopped, as JSON
        values (`restore` takes it back); a caller that keeps the history or the window of
        recorded updates itself leaves them out (`history=False`, `window=False`).

        Each rating is kept in natural parameters, as held (rebuilt from mu and sigma, a
        rating may differ in the last bit); an open duplicate deal's rotations, and the deals
        already rated (so a resumed ledger refuses a late rotation of one, as the ledger that
        never stopped does: about 15 bytes a deal before compression); the window of recorded
        updates (the last `confidence.WINDOW`, which the confidence re-rates)."""
        ratings = self.ratings
        state: dict[str, Any] = {
            "settings": dataclasses.asdict(ratings.settings),
            "bots": sorted(self.listed),
            "swiss": self.swiss,
            "mates": {bot: dict(mates) for bot, mates in self._mates.items()} if self.swiss else {},
            "last": self._last_key,
            "fed": self.fed,
            "ratings": ratings.natural(),
            "inherit": dict(sorted(ratings.inherit.items())),
            "last_rated": dict(sorted(ratings.last_rated.items())),
            "mpmath_updates": list(ratings.mpmath_updates),
            "skipped_updates": list(ratings.skipped_updates),
            "counts": {
                bot: [self._games[bot], self._wins[bot], self._place_sum[bot], self._forfeits[bot], self._score[bot]]
                for bot in self._games
            },
            "history": None
            if self.history is None or not history
            else {bot: [dataclasses.astuple(point) for point in points] for bot, points in self.history.items()},
            "duplicate": self.duplicate,
            "deal": [[game.key, list(game.bots), list(game.places), list(game.forfeits), game.deal] for game in self._deal],
        }
        if self.duplicate:
            state["rated_deals"] = sorted(self._rated_deals)
        updates = ratings.updates if window else None
        state["window"] = None if updates is None else updates.maxlen
        state["updates"] = None if updates is None else [
            [list(bots), list(ranks), [list(pair) for pair in added]] for bots, ranks, added in updates
        ]
        return state

    @classmethod
    def restore(cls, state: Mapping[str, Any]) -> RatingLedger:
        """A ledger back from `snapshot`. ValueError, KeyError or TypeError when `state` is
        not one (the caller rates from the start instead); the recorded updates keep the
        window they were saved with (none when it was left out, nor a history)."""
        settings = RatingSettings(**state["settings"])
        ledger = cls(
            settings, duplicate=bool(state["duplicate"]), bots=state["bots"], swiss=bool(state["swiss"]),
            history=state["history"] is not None,
        )
        ratings = ledger.ratings
        for bot, mates in state["mates"].items():
            ledger._mates[bot].update(mates)
        ratings.inherit = dict(state.get("inherit") or {})
        ratings.last_rated = dict(state.get("last_rated") or {})
        ratings.mpmath_updates = list(state["mpmath_updates"])
        ratings.skipped_updates = list(state["skipped_updates"])
        for bot, (games, wins, place_sum, forfeits, score) in state["counts"].items():
            ledger._games[bot], ledger._wins[bot], ledger._place_sum[bot] = games, wins, place_sum
            ledger._forfeits[bot], ledger._score[bot] = forfeits, score
        ledger._last_key = state["last"]
        ledger.fed = state["fed"]
        for bot, (pi, tau) in state["ratings"].items():
            if not (isinstance(pi, float) and isinstance(tau, float) and pi > 0 and math.isfinite(pi) and math.isfinite(tau)):
                raise ValueError(f"not a ledger snapshot: the rating of {bot!r} is {pi!r}, {tau!r}")
            ratings.set_natural(bot, pi, tau)
        if state["history"] is not None:
            ledger.history = {bot: [RatingPoint(*point) for point in points] for bot, points in state["history"].items()}
        ledger._deal = [
            RatedGame(key, tuple(bots), tuple(places), tuple(forfeits), deal)
            for key, bots, places, forfeits, deal in state["deal"]
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


def _deal_bots(games: Sequence[RatedGame]) -> list[str]:
    """The bots of a deal's rotations, in order of first appearance."""
    return list(dict.fromkeys(bot for game in games for bot in game.bots))


def rate_results(
    results: Iterable[RatedGame],
    settings: RatingSettings | None = None,
    *,
    duplicate: bool = False,
    bots: Iterable[str] = (),
    swiss: bool = False,
) -> RatingTable:
    """Rate results in schedule order and build the standings (best conservative rating
    first; by Swiss score and tie-break with `swiss`).

    `bots` lists bots to show even before their first game (a Swiss round 1 needs them).
    """
    ledger = RatingLedger(settings, duplicate=duplicate, bots=bots, swiss=swiss)
    for result in sorted(results, key=lambda result: key_order(result.key)):
        ledger.add(result)
    return ledger.table()


def standings(
    results: Iterable[RatedGame],
    settings: RatingSettings | None = None,
    *,
    duplicate: bool = False,
    bots: Iterable[str] = (),
    swiss: bool = False,
) -> list[BotStanding]:
    """The standings alone (see `rate_results`)."""
    return rate_results(results, settings, duplicate=duplicate, bots=bots, swiss=swiss).standings


def _rate_deal(ratings: Ratings, games: list[RatedGame]) -> None:
    """Rate the rotations of one duplicate deal as `ratings.settings.duplicate_update` says."""
    table = sorted(games[0].bots)
    for game in games[1:]:
        if sorted(game.bots) != table:
            raise ValueError(
                f"games {games[0].key} and {game.key} share deal {game.deal!r} but not the same bots: "
                f"{sorted(games[0].bots)} vs {sorted(game.bots)}"
            )
    how = ratings.settings.duplicate_update
    label = games[0].key
    if how == "rotation":
        for game in games:
            ratings.update(game.bots, [place - 1 for place in game.places], label=game.key)
        return
    if how == "hand":
        # Seat s holds the same cards in every rotation: rank its holders by their places.
        # A hand held by one bot so far (an unfinished deal) compares nobody yet.
        for seat in range(len(games[0].bots)):
            holders = [game.bots[seat] for game in games]
            if len(holders) >= 2:
                places = [game.places[seat] for game in games]
                ratings.update(holders, competition_ranks(places), label=label)
        return
    totals: dict[str, int] = defaultdict(int)
    for game in games:
        for bot, place in zip(game.bots, game.places):
            totals[bot] += place
    bots = list(games[0].bots)
    ratings.update(bots, competition_ranks([totals[bot] for bot in bots]), label=label)
