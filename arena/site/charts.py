"""The rating charts and moves of the site's pages: a bot's rating over time as the geometry
of its chart (`rating_chart`), and each game's change of rating and rank for every seat
(`rating_moves`). Pure functions of the page model (`arena.site.model`). Docs: docs/report.md.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from arena.site.model import History, SiteGame

CHART_POINTS = 300  # a rating chart is thinned to at most this many points


def rating_chart(
    points: Sequence[tuple[int, float, float, float]], prior: tuple[float, float] = (25.0, 25.0 / 3)
) -> dict[str, Any]:
    """The geometry of a bot's rating chart, in percent of its plot area (x: games played,
    y: rating, top 0): the mu line, the mu ± 3 sigma band and the conservative line, from
    the prior (mu, sigma) at game 0, thinned to CHART_POINTS points; `points` are the
    drawn points after game 0 as (games, x, y of the conservative rating, mu, sigma). The page
    stretches the plot to its width (the lines keep their thickness) and writes the axis
    labels as text, so the chart reads the same on a phone as on a desktop."""
    if not points:
        return {}
    if points[0][0] != 0:  # a version that inherited its predecessor's mu has its own point at 0
        points = [prior_point(prior), *points]
    return chart_of([points[i] for i in drawn_positions(len(points))])


def prior_point(prior: tuple[float, float]) -> tuple[int, float, float, float]:
    """The point at game 0 of a bot that did not inherit a rating: the prior."""
    return (0, prior[0], prior[1], prior[0] - 3 * prior[1])


def drawn_positions(length: int) -> list[int]:
    """Which of a chart's `length` points (the prior at 0 first) it draws: all when they
    fit, else CHART_POINTS of them evenly spread and the last (so a chart of any bot reads
    at most CHART_POINTS + 1 points: `arena.site.state` reads only those)."""
    if length <= CHART_POINTS:
        return list(range(length))
    step = length / CHART_POINTS
    return [int(i * step) for i in range(CHART_POINTS)] + [length - 1]


def chart_of(points: Sequence[tuple[int, float, float, float]]) -> dict[str, Any]:
    """`rating_chart`'s geometry of the points it draws (`drawn_positions`, the first at 0)."""
    low = min(p[1] - 3 * p[2] for p in points)
    high = max(p[1] + 3 * p[2] for p in points)
    if high - low < 1:
        high, low = high + 0.5, low - 0.5
    last = max(p[0] for p in points) or 1

    def y(value: float) -> float:
        return round(100 * (high - value) / (high - low), 2)

    # Each coordinate once (x and y as above, inline: a league's batch draws 60 charts).
    span = high - low
    xs = [round(100 * g / last, 2) for g, _, _, _ in points]
    mus = [round(100 * (high - m) / span, 2) for _, m, _, _ in points]
    conservatives = [round(100 * (high - c) / span, 2) for _, _, _, c in points]
    tops = [round(100 * (high - (m + 3 * s)) / span, 2) for _, m, s, _ in points]
    bottoms = [round(100 * (high - (m - 3 * s)) / span, 2) for _, m, s, _ in points]
    mu = " ".join([f"{a},{b}" for a, b in zip(xs, mus)])
    conservative = " ".join([f"{a},{b}" for a, b in zip(xs, conservatives)])
    band = " ".join([f"{a},{b}" for a, b in zip(xs, tops)]) + " " + " ".join(
        [f"{a},{b}" for a, b in zip(reversed(xs), reversed(bottoms))]
    )
    ticks = [{"y": y(low + (high - low) * i / 4), "label": str(round(low + (high - low) * i / 4))} for i in range(5)]
    return {
        "mu": mu,
        "conservative": conservative,
        "band": band,
        "ticks": ticks,
        "games": last,
        "final": points[-1],
        "points": [(g, a, b, m, sd) for (g, m, sd, _), a, b in zip(points, xs, conservatives) if g > 0],
    }


Move = tuple[float, float, int, int]  # a seat's rating after a game, its change, its rank after, rank change (+: up)


def rating_moves(
    games: Sequence[SiteGame], history: History, bots: Sequence[str], prior: float, swiss: bool = False
) -> list[tuple[Move, ...]]:
    """For each game (schedule order) and each of its seats: the bot's conservative rating
    after the game, how much the game changed it, the bot's rank in the whole field after
    the game and how many places it rose (negative: fell) across the game.

    The ranks are by conservative rating (in a Swiss by Swiss score, then rating: the
    Buchholz tie-break is left out, since it moves with every table-mate's later games);
    a bot with no game yet holds the prior; tied bots share the better rank. In duplicate
    mode a deal moves ratings once, at its last rotation: its other games change nothing.
    """
    after_games = {bot: {point[0]: point[3] for point in line} for bot, line in history.items()}
    field = set(bots).union(*(game.seats for game in games)) if games else set(bots)
    rating = {bot: after_games.get(bot, {}).get(0, prior) for bot in field}  # 0: an inherited prior
    score = dict.fromkeys(field, 0.0)
    played: dict[str, int] = dict.fromkeys(field, 0)

    def standing(bot: str) -> tuple[float, float]:
        return (round(score[bot], 9), rating[bot]) if swiss else (0.0, rating[bot])

    order = sorted(standing(bot) for bot in field)  # ascending; a bot's rank: 1 + those above it
    size = len(order)

    def rank(key: tuple[float, float]) -> int:
        return size - bisect.bisect_right(order, key) + 1

    moves: list[tuple[Move, ...]] = []
    for game in games:
        seats = game.seats
        before = [rank(standing(bot)) for bot in seats]
        old = [rating[bot] for bot in seats]
        table = len(seats)
        for bot, place in zip(seats, game.places):
            key = standing(bot)
            played[bot] += 1
            rating[bot] = after_games.get(bot, {}).get(played[bot], rating[bot])
            if swiss and table > 1:
                score[bot] += (table - place) / (table - 1)
            moved = standing(bot)
            if moved != key:
                del order[bisect.bisect_left(order, key)]
                bisect.insort(order, moved)
        after = [rank(standing(bot)) for bot in seats]
        moves.append(
            tuple((rating[bot], rating[bot] - old[seat], after[seat], before[seat] - after[seat]) for seat, bot in enumerate(seats))
        )
    return moves
