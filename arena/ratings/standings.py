"""The standings of a run as every reader shows them, made once here.

A ledger's table (`RatingLedger.table()`: one `BotStanding` per bot, in order) and how sure
it is (`RatingLedger.confidence()`) become `Standings` in `ranked`, the one place where a
bot's band (its 90% rank interval), its group (bots not separated from their neighbours),
whether it is settled, and in a league its status are worked out. The terminal (`arena
standings`, `arena run`'s table, a league's lines and notes), `arena standings --json`, the
site and the web door read them and compute none of it again.

Settled: the bot has played, and its SETTLE_LEVEL rank interval spans at most
`settled_span` places (`Confidence.settled`); whatever its status (a league's `--json` and
its site say a suspended bot's settled too; the league's runner and its marks count only
active bots).
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.ratings.confidence import LEVEL, SETTLE_LEVEL, Confidence, settled_span
from arena.ratings.ledger import BotStanding, RatingLedger
from arena.ratings.results import is_league, store_ledger


@dataclass(frozen=True)
class Standings:
    """A run's standings: its lines in order (each with band, group, settled and, in a
    league, status), how sure they are, and a league's membership rows by bot ({} else)."""

    lines: list[BotStanding]
    confidence: Confidence
    members: Mapping[str, Any] = field(default_factory=dict)  # arena.store.db.MemberRow by bot
    league: bool = False

    @property
    def settled_span(self) -> int:
        """The widest SETTLE_LEVEL interval that counts as settled in this field."""
        return settled_span(len(self.confidence.intervals))

    def find(self, bot: str) -> tuple[int, BotStanding] | None:
        """The bot's rank (1 first) and line, or None when it has none."""
        return next(((rank, line) for rank, line in enumerate(self.lines, 1) if line.bot == bot), None)

    def settled_bots(self, among: Collection[str]) -> list[str]:
        """The bots of `among` that are settled, in the order of `among`."""
        settled = {line.bot for line in self.lines if line.settled}
        return [bot for bot in among if bot in settled]

    def suspended(self) -> list[tuple[str, str]]:
        """A league's suspended bots and why, in the order they joined."""
        return [(bot, member.reason) for bot, member in self.members.items() if member.status == "suspended"]

    def without(self, hidden: Collection[str]) -> Standings:
        """The standings of the other bots, their bands and groups among themselves (a rank
        interval depends on the field); settled and status stay as the whole field has them."""
        if not hidden:
            return self
        shown = [line for line in self.lines if line.bot not in hidden]
        confidence = Confidence.of({line.bot: self.confidence.skills[line.bot] for line in shown}, self.confidence.beta)
        groups = confidence.groups([line.bot for line in shown])
        lines = [
            dataclasses.replace(line, band=confidence.intervals[line.bot], group=group) for line, group in zip(shown, groups)
        ]
        return Standings(lines, confidence, self.members, self.league)

    def to_json(self) -> list[dict[str, Any]]:
        """`arena standings --json`: one object per bot, in order."""
        return [line.to_json() for line in self.lines]

    # -- a league's words -------------------------------------------------------------------

    def describe(self, name: str) -> str:
        """One line on where a league's bot (by id, or by name: its newest version) stands."""
        members = self.members
        chosen = [m for m in members.values() if m.bot == name] or [m for m in members.values() if m.lineage == name]
        if not chosen:
            return f"{name} has not joined the league yet (it joins within seconds of being in its registry)"
        member = max(chosen, key=lambda m: (m.joined, m.bot))
        rank, line = self.find(member.bot)
        where = f"rank {rank} of {len(self.lines)}" + (f", 90% interval {line.band}" if line.band else "")
        if line.status != "active":
            state = f"{line.status} ({line.reason})"
        elif line.games == 0:
            state = "waiting for its first game"
        elif line.settled:
            state = f"settled (its {SETTLE_LEVEL:.0%} interval {self.confidence.settle_intervals[member.bot]})"
        else:
            state = (
                f"provisional (settled when its {SETTLE_LEVEL:.0%} interval spans at most "
                f"{settled_span(len(self.lines))} places)"
            )
        return f"{member.bot}: {line.games} games so far, {where}; {state}"

    def terminal_marks(self) -> dict[str, str]:
        """A league's mark after each bot's name in the terminal: ` (settled)`, or its status
        once it no longer plays; a provisional bot is unmarked."""
        return {
            line.bot: f" ({line.mark})" for line in self.lines if line.mark is not None and line.mark != "provisional"
        }

    def league_notes(self) -> list[str]:
        """What a league's marks mean, and why each suspended bot is."""
        count = len(self.confidence.intervals)
        notes = [
            f"(settled): its {SETTLE_LEVEL:.0%} rank interval spans at most {self.settled_span} places "
            f"(with {count} bots; the band shown is the {LEVEL:.0%} one); "
            "unmarked: provisional. (retired): replaced by a newer version (--hide-retired leaves them out)."
        ]
        notes += [f"{bot} is suspended: {reason} (a new version plays again)" for bot, reason in self.suspended()]
        return notes

    def retired(self) -> set[str]:
        """A league's versions replaced by a newer one (`--hide-retired` leaves them out)."""
        return {bot for bot, member in self.members.items() if member.status == "retired"}


def ranked(
    table: Sequence[BotStanding],
    confidence: Confidence,
    members: Mapping[str, Any] | None = None,
    *,
    league: bool = False,
) -> Standings:
    """The standings of a table in its order: each line given its band, its group, settled,
    and in a league (`league`) its status and reason from `members` (a bot without a
    membership row is active)."""
    members = dict(members or {})
    groups = confidence.groups([line.bot for line in table])
    lines = []
    for line, group in zip(table, groups):
        member = members.get(line.bot)
        lines.append(
            dataclasses.replace(
                line,
                band=confidence.intervals[line.bot],
                group=group,
                settled=bool(line.games) and confidence.settled(line.bot),
                status=(member.status if member is not None else "active") if league else None,
                reason=member.reason if league and member is not None else "",
            )
        )
    return Standings(lines, confidence, members, league)


def of_ledger(ledger: RatingLedger, members: Mapping[str, Any] | None = None, *, league: bool = False) -> Standings:
    """The standings of a ledger kept with `record=True` (a league's runner keeps one)."""
    return ranked(ledger.table().standings, confidence_of(ledger), members, league=league)


_CONFIDENCES: dict[str, Confidence] = {}  # the last few computed in this process, by what they are made of
_KEPT = 4


def confidence_key(ledger: RatingLedger) -> str:
    """What a ledger's confidence is a function of (the settings, each bot's rating and
    prior, the window of updates), as a digest: two ledgers share one only when it is the same."""
    ratings = ledger._now()
    bots = ledger.known_bots()
    updates = list(ratings.updates or ())
    made = (
        dataclasses.astuple(ratings.settings),
        [(bot, float(ratings.rating(bot).mu), float(ratings.rating(bot).sigma)) for bot in bots],
        sorted((bot, float(rating.mu), float(rating.sigma)) for bot, rating in ratings._ratings.items()),
    )
    digest = hashlib.blake2b(repr(made).encode(), digest_size=16)
    # The window's updates: each one's size, its bots, its ranks and its changes as the
    # doubles they are (the repr of 10,000 updates costs several times more).
    sizes = [len(seats) for seats, _, _ in updates]
    numbers = [*sizes, *(rank for _, ranks, _ in updates for rank in ranks)]
    numbers += [value for _, _, added in updates for pair in added for value in pair]
    digest.update(struct.pack(f"<{len(numbers)}d", *numbers))
    digest.update("\0".join(bot for seats, _, _ in updates for bot in seats).encode())
    return digest.hexdigest()


def confidence_of(ledger: RatingLedger, *, key: str | None = None, saved: Confidence | None = None) -> Confidence:
    """`ledger.confidence()`, computed once per state of the ratings in a process: a league's
    runner computes it after each batch, and its site (rendered in the same process, from
    its own ledger resumed from the site's state) asks again for the same ratings. `key`:
    `confidence_key(ledger)` if already made; `saved`: the confidence of that key as a
    caller kept it (the site's state keeps the last one: a new process reads it instead
    of computing it again)."""
    key = key or confidence_key(ledger)
    confidence = _CONFIDENCES.get(key) or saved
    if confidence is None:
        confidence = ledger.confidence()
    if key not in _CONFIDENCES:
        _CONFIDENCES[key] = confidence
        while len(_CONFIDENCES) > _KEPT:
            del _CONFIDENCES[next(iter(_CONFIDENCES))]
    return confidence


def of_store(store: Any) -> Standings:
    """The standings over a store's results as `arena standings` shows them (a Swiss's by
    score and tie-break; a league's with each bot's status): one rating pass that keeps
    every update, for how sure they are. `store` is an `arena.store.db.Store`."""
    stored = store.settings() or {}
    ledger = store_ledger(store, record=True, swiss=True)
    members = {member.bot: member for member in store.members()}
    return of_ledger(ledger, members, league=is_league(stored))
