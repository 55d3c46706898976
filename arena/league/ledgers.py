"""A league's two ledgers and the schedule's counts, kept by its runner
(`arena.league.ladder._League`, of which `LeagueLedgers` is a part, as `Membership` is):

- the matchmaker's ledger (`lag`): batches 1 .. b-2, which batch b is matched on, with
  each bot's forfeits in a row (suspension);
- the standings' ledger (`full`): every batch stored, in order, with the confidence's
  window of updates (who is settled);
- the schedule's counts: games and seats per bot, every batch (the matchmaker's balance).

When the league opens they are brought to what the store holds (`_resume`): from the
state it saved after a batch (`arena.league.saved_state`) when that is sound, else from the
start, then the games after it streamed in schedule order (never every game in memory).
`_save` keeps them in the store again; a resume rates only the games stored since.
The runner holds `store`, `config`, `rating`, `inherit`, `members`, `open`, `next_batch`,
the ledgers and counts it sets up, and `saved_at`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from arena.ratings.ledger import RatedGame, RatingLedger
from arena.league import saved_state
from arena.store.keys import key_order


class LeagueLedgers:
    """The league runner's ledgers and counts (see the module docstring)."""

    # -- from the store and back --------------------------------------------------------

    def _resume(self) -> int | None:
        """Bring the ledgers and the schedule's counts to what the store holds: from the
        saved state when it is sound (returns the batch its standings start after), else
        from the start (None); then the games after them, streamed in schedule order. The
        ledgers end where the league would have them had it never stopped: the standings'
        through the last batch stored with every one before it, the matchmaker's through
        the batch before the last scheduled (the next batch is matched on it)."""
        full_to = min(self.open, default=self.next_batch) - 1
        lag_to = max(0, min(full_to, self.next_batch - 2))
        restored = self._restore(lag_to, full_to)
        for _, table in self.store.tables_after(self.counted_through):
            self._count(table)
        # Without a saved state both ledgers start together: the history is rated once, and
        # the matchmaker's ledger is the standings' as of batch lag_to.
        share = self.lag_through == self.full_through
        for result in saved_state.rated_after(self.store, min(self.lag_through, self.full_through), self.config.duplicate):
            batch = key_order(result.key)[0]
            if share and batch > lag_to:
                self._share_lag(lag_to)
                share = False
            if share:
                self._streaks(result)
            elif batch > self.lag_through:
                if batch <= lag_to:
                    self._lag_add(result)
                else:
                    self.results[batch].append(result)
            if batch > self.full_through:
                if batch <= full_to:
                    self.full.add(result)
                else:
                    self.full_results[batch].append(result)
        if share:
            self._share_lag(lag_to)
        self.lag_through = max(self.lag_through, lag_to)
        self.full_through = max(self.full_through, full_to)
        return restored

    def _share_lag(self, through: int) -> None:
        """The matchmaker's ledger as the standings' is now (both fed batches 1 .. through)."""
        lag = RatingLedger.restore(self.full.snapshot())
        lag.ratings.updates = None
        lag.listed = set()
        self.lag, self.lag_through = lag, through

    def _restore(self, lag_to: int, full_to: int) -> int | None:
        """The saved state, when it is this league's as stored (see `saved_state`)."""
        duplicate = self.config.duplicate
        state = saved_state.decode(
            self.store.saved_state(saved_state.NAME), self.store.fingerprint(), self.rating, duplicate
        )
        if state is None:
            return None
        try:
            lag, full = RatingLedger.restore(state["lag"]), RatingLedger.restore(state["full"])
            lag_through, full_through = int(state["lag_through"]), int(state["full_through"])
            counted_through, counted = int(state["counted_through"]), int(state["counted"])
            sound = (
                0 <= lag_through <= full_through <= full_to
                and lag_through <= lag_to
                and lag.ratings.updates is None
                and full.ratings.updates is not None
                and (lag.ratings.settings, full.ratings.settings) == (self.rating, self.rating)
                and (lag.duplicate, full.duplicate) == (duplicate, duplicate)
                and self.store.games_through(lag_through) == (lag.fed, lag.last_key)
                and self.store.games_through(full_through) == (full.fed, full.last_key)
            )
            if not sound:
                return None
            streak = Counter({str(bot): int(n) for bot, n in state["streak"].items()})
            last_forfeit = {str(bot): str(key) for bot, key in state["last_forfeit"].items()}
            scheduled = Counter({str(bot): int(n) for bot, n in state["scheduled_games"].items()})
            seat_use = Counter({(str(bot), int(seat)): int(n) for bot, seat, n in state["seat_use"]})
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        for ledger in (lag, full):
            ledger.ratings.inherit = dict(self.inherit)
        lag.listed, full.listed = set(), set(self.members)
        self.lag, self.lag_through, self.full, self.full_through = lag, lag_through, full, full_through
        self.streak, self.last_forfeit = streak, last_forfeit
        # The counts hold when their batches still hold as many games (a game dropped after
        # the state was saved: they are counted again from the start).
        if 0 <= counted_through < self.next_batch and self.store.games_through(counted_through)[0] == counted:
            self.scheduled_games, self.seat_use = scheduled, seat_use
            self.counted, self.counted_through = counted, counted_through
        return full_through

    def _save(self) -> None:
        """Keep the ledgers and counts in the store (`saved_state`): a resume starts there."""
        state = {
            "lag_through": self.lag_through, "full_through": self.full_through,
            "lag": self.lag.snapshot(), "full": self.full.snapshot(),
            "streak": dict(self.streak), "last_forfeit": self.last_forfeit,
            "counted_through": self.next_batch - 1, "counted": self.counted,
            "scheduled_games": dict(self.scheduled_games),
            "seat_use": [[bot, seat, n] for (bot, seat), n in self.seat_use.items()],
        }
        blob = saved_state.encode(state, self.store.fingerprint(), self.rating, self.config.duplicate)
        self.store.save_state(saved_state.NAME, blob)
        self.saved_at = time.monotonic()

    def _count(self, table: Sequence[str], step: int = 1) -> None:
        self.counted += step
        for seat, bot in enumerate(table):
            self.scheduled_games[bot] += step
            self.seat_use[(bot, seat)] += step

    # -- ratings as of batch b-2 ---------------------------------------------------------------

    def _rate_through(self, batch: int) -> None:
        """Feed the matchmaker's ledger every batch up to `batch` (each one all stored)."""
        while self.lag_through < batch:
            self.lag_through += 1
            for result in sorted(self.results.pop(self.lag_through, []), key=lambda r: key_order(r.key)):
                self._lag_add(result)

    def _lag_add(self, result: RatedGame) -> None:
        self.lag.add(result)
        self._streaks(result)

    def _streaks(self, result: RatedGame) -> None:
        """Forfeits in a row, as the matchmaker's ledger takes each game."""
        for bot, forfeit in zip(result.bots, result.forfeits):
            if forfeit:
                self.streak[bot] += 1
                self.last_forfeit[bot] = result.key
            else:
                self.streak[bot] = 0

    def _advance_full(self) -> None:
        """Feed the standings' ledger every batch stored in full, in order."""
        while self.full_through + 1 < self.next_batch and not self.open[self.full_through + 1]:
            self.full_through += 1
            for result in sorted(self.full_results.pop(self.full_through, []), key=lambda r: key_order(r.key)):
                self.full.add(result)
