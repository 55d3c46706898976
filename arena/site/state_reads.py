"""What the site's pages and data scripts read from its state (`arena.site.state`),
apart from how the state is brought up to date: a bot's rating chart from the points it
draws, its data-script rows from a game on, its games, and the rounds' entries (a table
of the state, a row per round, written as the rounds' data scripts). Docs: docs/report.md.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from arena.ratings.skills import RatingSettings


class StateReads:
    """`SiteState`'s reads for the writer (a mixin: the state's connection and moves)."""

    db: sqlite3.Connection
    moves: dict[str, Any]
    charts: dict[str, Any]
    rating: RatingSettings
    played_saved: dict[str, int]

    def _points_of(self, bot: str) -> int:  # pragma: no cover (SiteState's)
        raise NotImplementedError

    def chart(self, bot: str) -> tuple[dict[str, Any], list[str | None]]:
        """A bot's rating chart (`arena.site.charts`) and the game each drawn point links to
        (the game after which it was taken: its games-th), from its saved points as they
        are now: only the CHART_POINTS + 1 drawn are read, however many games it played."""
        from arena.site.charts import chart_of, drawn_positions, prior_point

        if bot not in self.charts:
            count = self._points_of(bot)
            first = self.db.execute("SELECT games FROM points WHERE bot = ? AND i = 0", (bot,)).fetchone()
            if first is None:
                self.charts[bot] = ({}, [])
                return self.charts[bot]
            shift = 0 if first[0] == 0 else 1  # a bot that inherited no rating: the prior at 0 comes first
            positions = drawn_positions(count + shift)
            wanted = sorted({at - shift for at in positions if at >= shift})
            read = {
                i: point for i, *point in self.db.execute(
                    f"SELECT i, games, mu, sigma, cons FROM points WHERE bot = ? AND i IN ({','.join('?' * len(wanted))})",
                    (bot, *wanted),
                )
            }
            prior = prior_point((self.rating.mu, self.rating.sigma))
            chart = chart_of([prior if at < shift else tuple(read[at - shift]) for at in positions])
            drawn = [games for games, *_ in chart.get("points", [])]
            key_of = dict(self.db.execute(
                f"SELECT n, key FROM rows WHERE bot = ? AND n IN ({','.join('?' * len(drawn))})", (bot, *drawn)
            )) if drawn else {}
            self.charts[bot] = (chart, [key_of.get(games) for games in drawn])
        return self.charts[bot]

    def rows(self, bot: str, after: int = 0) -> list[str]:
        """A bot's data-script rows in order from its (after + 1)-th game, as JSON texts
        (bots by their number in `numbered`)."""
        return [row for (row,) in self.db.execute("SELECT row FROM rows WHERE bot = ? AND n > ? ORDER BY n", (bot, after))]

    def _save_rounds(self) -> None:
        """The rounds' entries made or extended since the last save, as rows of `rounds`
        (not one list of every round in the moves: a league's batch is a round)."""
        rounds = self.moves.get("rounds") or []
        self.db.executemany(
            "INSERT OR REPLACE INTO rounds VALUES (?, ?)",
            [(entry[0], json.dumps(entry, separators=(",", ":"))) for entry in rounds],
        )
        self.moves["rounds"] = rounds[-1:]

    def round_entries(self, first: int, last: int) -> list[list[int]]:
        """The entries [round, first list page, last list page, games] of the rounds from
        `first` to `last`, in order: the saved ones, and those this render made since."""
        entries = {
            number: json.loads(entry) for number, entry in self.db.execute(
                "SELECT round, entry FROM rounds WHERE round BETWEEN ? AND ? ORDER BY round", (first, last)
            )
        }
        entries.update({entry[0]: entry for entry in self.moves.get("rounds") or [] if first <= entry[0] <= last})
        return [entries[number] for number in sorted(entries)]

    def last_round(self) -> int | None:
        """The last round with a finished game (None: none yet)."""
        rounds = self.moves.get("rounds")
        return rounds[-1][0] if rounds else None

    def games_of(self, bot: str) -> int:
        """A bot's games (its data-script rows), as the pages show them."""
        return self.moves["played"].get(bot, 0)

    def games_saved(self, bot: str) -> int:
        """A bot's games as of the last render's cursor: its rows after them are new or
        were applied past the cursor (and rolled back) since."""
        return self.played_saved.get(bot, 0)
