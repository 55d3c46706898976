"""Progress as games finish: a tournament's progress bar, and `arena match --sprt`'s
pairs with the test after each."""

from __future__ import annotations

import json

from arena.cli.console import console, say
from arena.ratings.ledger import WINS_MEANS


def progress_bar(quiet: bool):
    """The run's progress display: name, bar, games done, games/s, elapsed, eta, and (in a
    terminal of 110 columns or more) the leader. Every figure is whole at 80 columns: the
    bar takes what is left, the name is cut first."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Column

    def whole() -> Column:
        return Column(no_wrap=True)

    columns = [
        TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis", max_width=24)),
        BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=10)),
        MofNCompleteColumn(table_column=whole()),
        TextColumn("{task.fields[rate]}", table_column=whole()),
        TimeElapsedColumn(table_column=whole()),
        TextColumn("eta", table_column=whole()),
        TimeRemainingColumn(table_column=whole()),
    ]
    if console.width >= 110:
        columns.append(TextColumn("leader: {task.fields[leader]}", table_column=Column(no_wrap=True, overflow="ellipsis")))
    return Progress(*columns, console=console, disable=quiet)


def stop_bar(bar) -> None:
    """Stop a progress display that was started (stopping one that never was prints a blank line)."""
    if bar.live.is_started:
        bar.stop()


class SprtProgress:
    """`arena match --sprt`: the first bot's pairs as pentanomial counts, the test after each
    pair (arena.ratings.sprt.SprtTally), then its result."""

    def __init__(self, settings, quiet: bool):
        from arena.ratings.sprt import SprtTally

        self.tally = SprtTally(settings)
        self.quiet = quiet

    def add(self, result) -> None:
        """Score a finished game; after the second game of a pair, maybe print where the test stands."""
        tally = self.tally
        if tally.first is None and not self.quiet:
            settings, status = tally.settings, tally.status
            say(f"SPRT [{settings.elo0:.2f}, {settings.elo1:.2f}], alpha {settings.alpha:g}, beta "
                f"{settings.beta:g}: H0 accepted at LLR {status.lower:.2f}, H1 at {status.upper:.2f}")
        if not tally.add(result.seats, result.places):
            return
        pairs = tally.status.pairs
        every = 1 if pairs <= 10 else 10 if pairs <= 100 else 100
        if not self.quiet and (pairs % every == 0 or tally.status.decision is not None):
            say(f"pair {pairs}: LLR {tally.status.llr:.2f} ({tally.status.fraction:.1%}), Ptnml(0-2): {tally.counts}")

    def decided(self, _games) -> bool:
        """True once a complete pair has taken the LLR to a bound (the match stops there)."""
        return self.tally.decided

    def _llr_text(self) -> str:
        status, settings = self.tally.status, self.tally.settings
        return (f"LLR {status.llr:.2f} ({status.fraction:.1%}) ({status.lower:.2f}, {status.upper:.2f}) "
                f"[{settings.elo0:.2f}, {settings.elo1:.2f}]")

    def finish(self, result, as_json: bool) -> None:
        """The decision, the Elo difference with its 95% interval and the LOS: as lines, or one JSON object."""
        from arena.ratings.sprt import elo_estimate
        from arena.play.match import standings

        first, second = result.bots[0].name, result.bots[1].name
        tally = self.tally
        status, settings, estimate = tally.status, tally.settings, elo_estimate(tally.counts)
        games = len(result.games)
        outcomes, wins, points = tally.outcomes, tally.wins, tally.points
        if as_json:
            print(json.dumps({
                "game": result.game, "first": first, "second": second, "seed": result.seed,
                "elo0": settings.elo0, "elo1": settings.elo1, "alpha": settings.alpha, "beta": settings.beta,
                "decision": status.decision, "games": games, "pairs": status.pairs, "pentanomial": tally.counts,
                "llr": status.llr, "lower_bound": status.lower, "upper_bound": status.upper,
                "wins": wins, "shared_wins": outcomes["shared first"], "losses": outcomes["behind"],
                "shared_last": outcomes["shared last"], "points": points, "points_share": estimate.score,
                "elo": estimate.elo, "elo_lower": estimate.lower,
                "elo_upper": estimate.upper, "elo_error": estimate.error, "los": estimate.los, "note": estimate.note,
                "incidents": {row.bot: row.incidents for row in standings(result)},
            }, indent=2))
            return
        tested = f"SPRT [{settings.elo0:.2f}, {settings.elo1:.2f}]"
        played = f"{games} games ({status.pairs} pairs)"
        if status.decision == "H1":
            say(f"{tested}: H1 accepted after {played}: {first} is more than {settings.elo0:g} Elo stronger "
                f"than {second} (alpha {settings.alpha:g})")
        elif status.decision == "H0":
            say(f"{tested}: H0 accepted after {played}: {first} is less than {settings.elo1:g} Elo stronger "
                f"than {second} (beta {settings.beta:g})")
        else:
            say(f"{tested}: no decision at {played}")
        if estimate.elo is None:
            elo_text = f"Elo: not estimated ({estimate.note})"
        else:
            low = "unbounded" if estimate.lower is None else f"{estimate.lower:.2f}"
            high = "unbounded" if estimate.upper is None else f"{estimate.upper:.2f}"
            error = "" if estimate.error is None else f" +/- {estimate.error:.2f}"
            elo_text = f"Elo: {estimate.elo:.2f}{error} (95% interval {low} to {high})"
            if estimate.los is not None:
                elo_text += f", LOS: {estimate.los:.2%}"
            if estimate.note is not None:
                elo_text += f" ({estimate.note})"
        say(f"Results of {first} vs {second}: {elo_text}")
        say(f"{self._llr_text()}, Ptnml(0-2): {tally.counts}")
        share = f" ({points / games:.2%})" if games else ""
        last = f", Shared last: {outcomes['shared last']}" if outcomes["shared last"] else ""
        say(f"Games: {games}, Wins: {wins} ({outcomes['shared first']} shared), Losses: {outcomes['behind']}{last}, "
            f"Points: {points:g}{share}")
        say(f"Wins: {WINS_MEANS}. Points: 1 a game placed ahead, 1/2 a shared place.")
