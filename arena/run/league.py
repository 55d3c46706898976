"""A league (`arena league`): a ladder that keeps playing, where a submitted bot joins,
is matched, rated and shown without anyone rerunning anything.

`run_league(config)` watches a registry (the folder `arena submit` writes to) and plays
batches of games picked by the matchmaker (`arena.run.matchmaker`) into a league folder, until
Ctrl-C, `games` or `until_stable`. Running it again on the same folder resumes (kill -9
safe: every finished game is stored once, as in `arena run`).

How it stays a pure function of what is stored:
- Games are scheduled in batches; a game's key is 'BATCH-TABLE-ROTATION' and its
  schedule sequence number (`games.seq`) follows the keys, so the ratings, which rate in
  key order (`arena.ratings.ledger`), rate in the order the games were scheduled.
- Batch b is matched from the ratings of batches 1 .. b-2 only (every one of them stored)
  and from the schedule itself: what finished first, and how many jobs or machines play,
  changes nothing. Two batches play at once, so the pool never waits for a batch's last
  game before the next starts.
- Who plays is recorded with the batch it changes from (`members`): a bot joins from the
  next batch to be scheduled, a new version retires the old from that batch, a bot gone
  from the registry is removed from it, a bot with `suspend_after` forfeits in a row
  (in batches 1 .. b-2) is suspended from batch b. A bot whose folder cannot be played
  from (`_League._unpreparable`: gone, refused by `arena.config.botcopy`, closed to nobody, or
  its image does not build) is suspended from the next batch to be scheduled when it
  joins, when a run starts, or when a game of it fails with arena's error. A league fed the same submissions at
  the same batches schedules the same games.
- Deal seeds and bots' hello seeds come from the league's run key (`arena.store.seeds`): a
  stored secret unless a public seed is given; the matchmaker's random draws too.

A bot is "settled" when its 95% rank interval spans at most `SETTLED_SPAN` places, and at
most a third of the field (`arena.ratings.confidence.settled_span`, `Confidence.settled`).
docs/league.md is the organiser's guide.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import stat
import threading
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from arena.config.botcopy import FolderLimits, FolderLimitsError, vet_bot_folder
from arena.config.botfolder import BotFolderError, load_bot
from arena.config.field import BotRef, SeatFactory
from arena.config.tournament import (
    LimitsConfig,
    RatingConfig,
    TournamentError,
    _Strict,
    cluster_setting,
    game_mistakes,
    known_game,
)
from arena.ratings.confidence import (
    LEVEL,
    SETTLE_LEVEL,
    SETTLED_SPAN,
    Confidence,
    settled_span,
)
from arena.ratings.ledger import (
    RatedGame,
    RatingLedger,
    RatingTable,
    inherited,
    rated_game,
    rated_games,
    store_ledger,
)
from arena.ratings.ledger import settings_of as rating_settings
from arena.run.matchmaker import RANDOM_SHARE, Candidate, make_tables
from arena.run.play import GameSpec, load_spec, play_scheduled_game, sandbox_named
from arena.run.schedule import ScheduledGame, key_order, rotate
from arena.sandbox import BotFault, Sandbox
from arena.sandbox.access import NOBODY, nobody_may
from arena.store.db import DuplicateResult, MemberRow, Store
from arena.store.registry import RegistryEntry, default_registry, list_registry
from arena.store.seeds import RunKey
from engine.api import GameError
from engine.registry import get_game

__all__ = [
    "SETTLED_SPAN", "LeagueConfig", "LeagueInterrupted", "LeagueOutcome", "LeagueProgress", "bot_standing",
    "check_league",
    "league_standings", "load_league", "run_league",
]

FORMAT = "league"  # the `format` stored with a league's settings
SUSPEND_AFTER = 5  # forfeits in a row that suspend a bot
POLL_S = 1.0  # how often the registry is looked at between batches
# Settings that do not change what is played: free to differ between runs of one league.
UNFINGERPRINTED = ("name", "jobs", "cluster", "output", "registry", "games", "until_stable")


class LeagueInterrupted(Exception):
    """The league was stopped (Ctrl-C); every finished game is stored."""

    def __init__(self, done: int, output: Path):
        self.done, self.output = done, output
        super().__init__(f"stopped with {done} games stored in {output}")


class LeagueConfig(_Strict):
    """A league's settings (the flags of `arena league`, or a `[league]` table)."""

    name: str = Field("league", min_length=1, max_length=200)
    game: str
    seats: int = Field(ge=2, le=6)
    registry: str | None = Field(None, description="The registry folder; none: `arena submit`'s default.")
    duplicate: bool = False
    seed: int | None = Field(None, ge=0, le=2**63 - 1)
    rules: dict[str, Any] = Field(default_factory=dict)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    rating: RatingConfig = Field(default_factory=RatingConfig)
    sandbox: Literal["local", "docker"] = "local"
    jobs: int = Field(1, ge=1, le=256)
    cluster: str | None = None
    output: str = "league"
    batch: int | None = Field(
        None, ge=1, le=10_000, description="Tables per batch; none: one per `seats` active bots (a game each)."
    )
    random_share: float = Field(RANDOM_SHARE, ge=0, le=1)
    suspend_after: int = Field(SUSPEND_AFTER, ge=1, le=1000)
    inherit_rating: bool = Field(
        False, description="A new version starts from its predecessor's mu (with the prior's wide sigma)."
    )
    games: int | None = Field(None, ge=1, description="Stop once the league holds this many games.")
    until_stable: bool = Field(False, description="Stop once every active bot is settled.")
    base_dir: str = Field(".", exclude=True)

    @field_validator("cluster")
    @classmethod
    def _cluster_address(cls, cluster: str | None) -> str | None:
        return cluster_setting(cluster)

    @field_validator("game")
    @classmethod
    def _known_game(cls, game: str) -> str:
        return known_game(game)

    @model_validator(mode="after")
    def _fits_together(self) -> LeagueConfig:
        mistakes, resolved = game_mistakes({"game": self.game, "seats": self.seats, "rules": self.rules})
        if mistakes:
            raise ValueError("\n".join(mistakes))
        object.__setattr__(self, "rules", resolved)
        return self

    def output_dir(self) -> Path:
        """The league's folder (store, site, logs)."""
        return Path(self.base_dir, self.output).resolve()

    def registry_dir(self) -> Path:
        """The registry the league watches."""
        return Path(self.base_dir, self.registry).resolve() if self.registry else default_registry()


def _validate(data: Mapping[str, Any], source: str) -> LeagueConfig:
    try:
        return LeagueConfig.model_validate(dict(data))
    except ValidationError as invalid:
        lines = []
        for error in invalid.errors():
            key = ".".join(str(part) for part in error["loc"])
            message = error["msg"].removeprefix("Value error, ")
            if error["type"] == "extra_forbidden":
                allowed = ", ".join(name for name in LeagueConfig.model_fields if name != "base_dir")
                lines.append(f"unknown key {key!r}; allowed keys: {allowed}")
            elif error["type"] == "missing":
                flag = key.replace("_", "-")
                lines.append(f"{key} is missing: give --{flag}, or {key} = ... in a [league] table")
            elif not key:
                lines.extend(message.split("\n"))
            else:
                lines.append(f"{key} = {json.dumps(error.get('input'), default=str)}: {message}")
        raise TournamentError(lines, source) from None


def load_league(
    target: str | Path, overrides: Mapping[str, Any] | None = None, rule_args: Sequence[str] = ()
) -> LeagueConfig:
    """The league of `target`: a TOML file with a `[league]` table, or a league folder (its
    stored settings, when it has run before); `overrides` (the flags) go on top."""
    target = Path(target)
    data: dict[str, Any] = {}
    source = "league"
    if target.is_file():
        source = f"league file {target}"
        try:
            document = tomllib.loads(target.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise TournamentError([f"{target} is not valid TOML: {error}"], source) from None
        if not isinstance(document.get("league"), dict):
            raise TournamentError([f"{target} has no [league] table (a league file holds one)"], source)
        data = dict(document["league"])
        data["base_dir"] = str(target.resolve().parent)
    else:
        data["output"] = str(target.resolve())
        stored = _stored_settings(target)
        if stored is not None:
            data.update({key: value for key, value in stored.items() if key in LeagueConfig.model_fields})
            for key in ("games", "until_stable"):  # when to stop is this run's own choice
                data.pop(key, None)
    for key, value in (overrides or {}).items():
        if key in ("limits", "rating", "rules") and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    if rule_args:
        try:
            parsed = get_game(str(data.get("game"))).parse_options(rule_args)
        except GameError as error:
            raise TournamentError([f"--rule: {error}"], source) from None
        data["rules"] = {**(data.get("rules") or {}), **parsed}
    return _validate(data, source)


def _stored_settings(folder: Path) -> dict[str, Any] | None:
    from arena.store.db import STORE_FILE

    if not (folder / STORE_FILE).is_file():
        return None
    with Store.open(folder) as store:
        stored = store.settings()
    if stored is not None and stored.get("format") != FORMAT:
        raise TournamentError([f"{folder} holds a tournament, not a league; give the league another folder"])
    return stored


def settings_of(config: LeagueConfig) -> dict[str, Any]:
    """The settings stored with the league."""
    settings = config.model_dump(mode="json")
    if not config.inherit_rating:
        del settings["inherit_rating"]  # so that a league stored before the option resumes
    settings["format"] = FORMAT
    settings["registry"] = str(config.registry_dir())
    return settings


def fingerprint_of(settings: Mapping[str, Any]) -> str:
    """sha256 of the settings that decide what is played."""
    kept = {key: value for key, value in settings.items() if key not in UNFINGERPRINTED}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()


# ------------------------------------------------------------------------- the registry


def registry_field(
    registry: Path, game: str, broken: list[BotFolderError] | None = None
) -> dict[str, RegistryEntry]:
    """Per bot name, the version of it in the registry that the league plays: the newest
    submission (by date, then version) of each bot whose bot.toml lists `game`; folders
    whose bot.toml is wrong go to `broken`."""
    if not registry.is_dir():
        return {}
    current: dict[str, RegistryEntry] = {}
    for entry in list_registry(registry, broken):
        if game not in entry.games:
            continue
        best = current.get(entry.name)
        if best is None or (entry.date, entry.version) > (best.date, best.version):
            current[entry.name] = entry
    return current


def _ref_of(bot_id: str, entry_folder: Path, content: str) -> BotRef:
    manifest = load_bot(entry_folder)
    return BotRef(
        id=bot_id, name=manifest.name, version=manifest.version, folder=str(entry_folder),
        command=manifest.command, dockerfile=manifest.dockerfile, content_hash=content,
    )


# --------------------------------------------------------------------------- progress


@dataclass
class LeagueProgress:
    """What a display needs after each batch is stored."""

    batch: int
    done: int  # games stored in the league
    played: int  # of which by this run
    active: int  # bots being matched
    settled: int  # of which settled
    leader: str | None
    elapsed_s: float
    events: list[str] = field(default_factory=list)  # joins, retirements, suspensions since the last one
    now_settled: list[str] = field(default_factory=list)  # active bots settled with this batch, not before
    unsettled: list[str] = field(default_factory=list)  # active bots settled before this batch, not now


@dataclass
class LeagueOutcome:
    """How a run of the league ended."""

    output: Path
    done: int
    played: int
    batches: int
    stable: bool
    wall_s: float
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------- the league


class _League:
    """One run of a league: registry, matchmaker, pool, store."""

    def __init__(self, config, store, key, in_process, progress, stop, sandbox, before_batch, report, poll_s):
        self.config = config
        self.store = store
        self.key = key
        self.in_process = dict(in_process or {})
        self.progress = progress
        self.stop = stop or threading.Event()
        self.sandbox = sandbox
        self.before_batch = before_batch
        self.poll_s = poll_s
        self.registry = config.registry_dir()
        self.rotations = config.seats if config.duplicate else 1
        self.began = time.monotonic()
        self.played = 0
        self.events: list[str] = []
        self.notice: Callable[[str], None] | None = None  # says a broken bot folder at once
        self.broken_said: set[tuple[str, tuple[str, ...]]] = set()
        self.cluster = None
        self.workers = None
        self.box: Sandbox | None = None
        self.renderer = _SiteRenderer(config.output_dir()) if report else None
        self.members: dict[str, MemberRow] = {m.bot: m for m in store.members()}
        self.refs: dict[str, BotRef] = {}
        records = {bot.bot: bot for bot in store.bots()}
        self.hashes = {bot: record.content_hash for bot, record in records.items()}
        for member in self.members.values():
            record = records[member.bot]
            if record.kind == "in-process":
                self.refs[member.bot] = BotRef(
                    id=record.bot, name=record.name, version=record.version, folder="", content_hash="",
                    kind="in-process",
                )
            elif member.status == "active" or member.status == "suspended":
                try:
                    self.refs[member.bot] = _ref_of(member.bot, Path(record.folder), record.content_hash)
                except BotFolderError:
                    pass  # gone: the next look at the registry removes it
        rows = store.games()
        self.seq = store.last_seq()
        self.next_batch = max((row.round for row in rows), default=0) + 1
        # What the matchmaker knows of the schedule: games and seats per bot, every batch.
        self.scheduled_games: Counter[str] = Counter()
        self.seat_use: Counter[tuple[str, int]] = Counter()
        for row in rows:
            self._count(row.bots)
        self.open: Counter[int] = Counter(row.round for row in rows if row.status != "done")
        self.pending = [row.scheduled() for row in rows if row.status != "done"]
        self.pending.reverse()  # popped from the end: schedule order
        # Stored results by batch, waiting to be rated (batch b is matched on batches <= b-2).
        self.results: dict[int, list[RatedGame]] = defaultdict(list)
        for result in rated_games(store):
            self.results[key_order(result.key)[0]].append(result)
        stored = store.settings()
        rating = rating_settings(stored)
        inherit = inherited(stored, self.members.values())
        self.lag = RatingLedger(rating, duplicate=config.duplicate, inherit=inherit)
        self.lag_through = 0
        self.streak: Counter[str] = Counter()
        self.last_forfeit: dict[str, str] = {}
        # Every batch stored in order, for the standings and "settled".
        self.full = RatingLedger(
            rating, duplicate=config.duplicate, bots=list(self.members), record=True, inherit=inherit
        )
        self.full_through = 0
        self.full_results: dict[int, list[RatedGame]] = defaultdict(list)
        for batch, results in self.results.items():
            self.full_results[batch] = list(results)
        self.stable = False
        self.settled: set[str] = set()  # active bots settled as of the last batch shown
        self._advance_full()
        self.unprepared: set[str] = set()  # suspended because no game could start them
        try:
            self.folder_limits = FolderLimits.from_env()
        except FolderLimitsError as error:
            raise TournamentError([str(error)]) from None

    # -- bookkeeping ----------------------------------------------------------------------

    def _count(self, table: Sequence[str], step: int = 1) -> None:
        for seat, bot in enumerate(table):
            self.scheduled_games[bot] += step
            self.seat_use[(bot, seat)] += step

    def _say(self, line: str) -> None:
        self.events.append(line)

    def active(self) -> list[str]:
        """Bots being matched now."""
        return [bot for bot, m in self.members.items() if m.status == "active" and bot in self.refs]

    def done(self) -> int:
        """Games stored in the league."""
        return len(self.store.done_keys())

    # -- the registry ---------------------------------------------------------------------

    def look(self) -> None:
        """Take in what changed in the registry: from batch `next_batch`, new bots and
        versions play, replaced versions retire, vanished bots stop."""
        at = self.next_batch
        broken: list[BotFolderError] = []
        current = registry_field(self.registry, self.config.game, broken)
        self._say_broken(broken)
        by_lineage = {m.lineage: m for m in self.members.values() if m.status in ("active", "suspended")}
        for name, entry in sorted(current.items()):
            member = by_lineage.get(name)
            if member is not None and self.hashes.get(member.bot) == entry.content_hash:
                continue
            bot_id = f"{entry.name}@{entry.version}"
            if bot_id in self.hashes and self.hashes[bot_id] != entry.content_hash:
                bot_id = f"{bot_id}~{entry.content_hash[:8]}"  # the same version with other content
            try:
                ref = _ref_of(bot_id, entry.folder, entry.content_hash)
            except BotFolderError:
                continue  # half-written or broken: looked at again next time
            if member is not None:
                before = f"{member.reason}; " if member.status == "suspended" else ""
                self._leave(member.bot, "retired", at, f"{before}replaced by {bot_id}")
            self._join(ref, entry.name, at)
        for name, member in sorted(by_lineage.items()):
            ref = self.refs.get(member.bot)
            if name not in current and (ref is None or ref.kind == "folder"):
                self._leave(member.bot, "removed", at, "no longer in the registry")
                self.drop([game for game in self.pending if member.bot in game.table])

    def _say_broken(self, broken: list[BotFolderError]) -> None:
        """Say once each bot folder of the registry whose bot.toml is wrong (it cannot join)."""
        for error in broken:
            said = (str(error.folder), tuple(error.mistakes))
            if said in self.broken_said:
                continue
            self.broken_said.add(said)
            line = f"{error.folder} cannot join, its bot.toml is wrong: {'; '.join(error.mistakes)}"
            if self.notice is not None:
                self.notice(line)
            else:
                self._say(line)

    def drop(self, games: Sequence[ScheduledGame]) -> None:
        """Unschedule games that cannot be played (a bot of theirs left the registry)."""
        if not games:
            return
        self.store.drop_scheduled(game.key for game in games)
        keys = {game.key for game in games}
        self.pending = [game for game in self.pending if game.key not in keys]
        for game in games:
            self._count(game.table, -1)
            self.open[game.round] -= 1
            if self.open[game.round] == 0:
                del self.open[game.round]
                self.batch_done(game.round)
        self._say(f"{len(games)} scheduled games dropped: " + ", ".join(sorted(keys)))

    def _join(self, ref: BotRef, lineage: str, at: int) -> None:
        again = ref.id in self.members
        self.refs[ref.id] = ref
        self.hashes[ref.id] = ref.content_hash
        self.store.add_member(ref.record(), lineage, at)
        self.members[ref.id] = MemberRow(ref.id, lineage, at, None, "active")
        if self.config.inherit_rating:  # its first game starts from its predecessor's mu
            self.lag.ratings.inherit[ref.id] = self.full.ratings.inherit[ref.id] = lineage
        self._say(f"{ref.id} joins" + (" again" if again else ""))
        self._prepare(ref)

    def _leave(self, bot: str, status: str, at: int, reason: str) -> None:
        old = self.members[bot]
        at = old.left_at if old.left_at is not None else at  # a suspended bot stopped playing then
        self.store.set_member(bot, status, at, reason)
        self.members[bot] = MemberRow(bot, old.lineage, old.joined, at, status, reason)
        self._say(f"{bot} {status}: {reason}")

    def join_in_process(self) -> None:
        """In-process bots (tests, benchmarks) are members from the first batch on."""
        for name in self.in_process:
            if name not in self.members:
                ref = BotRef(id=name, name=name, version="in-process", folder="", content_hash="", kind="in-process")
                self._join(ref, name, self.next_batch)

    def _prepare(self, ref: BotRef) -> None:
        """Check that the bot's folder can be played from, build a Docker bot's image once,
        before its first game, and ship it to the cluster; a bot that cannot be prepared is
        suspended with the reason, and the league goes on without it."""
        if ref.kind != "folder":
            return
        problem = self._unpreparable(ref)
        if problem is None and self.cluster is not None:
            self.cluster.ship([ref])
        elif problem is None and self.config.sandbox == "docker" and ref.dockerfile and self.box is not None:
            try:
                self.box.image_for(load_spec(ref))
            except BotFault as fault:
                problem = f"its Docker image cannot be built: {fault.detail}"
        if problem is not None:
            self._suspend_unprepared(ref.id, problem)

    def _unpreparable(self, ref: BotRef) -> str | None:
        """Why no game can start the bot from its folder (None: nothing is wrong with it):
        gone, holding what no bot folder may hold (`arena.config.botcopy`: links, devices, files
        its owner cannot read, over the size limits), or closed to the user the bots run as."""
        folder = Path(ref.folder)
        if not folder.is_dir():
            return f"its folder {folder} is gone"
        problems = vet_bot_folder(folder, self.folder_limits)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            return f"its folder cannot be played from: {problems[0]}{more}"
        docker = self.config.sandbox == "docker"
        if (docker and not ref.dockerfile) or (not docker and os.geteuid() == 0):  # the folder is read by nobody
            for path in sorted([folder, *folder.rglob("*")]):
                info = path.lstat()
                want = 5 if stat.S_ISDIR(info.st_mode) else 4
                readable = info.st_mode & want == want if docker else nobody_may(info.st_mode, info.st_uid, info.st_gid, want)
                if not readable:
                    shown = path.relative_to(folder).as_posix() if path != folder else "."
                    return (
                        f"its folder cannot be played from: {shown} is not readable by user nobody (uid {NOBODY}), "
                        "who runs the bots; submit it again (arena submit copies it readable)"
                    )
        return None

    def _suspend_unprepared(self, bot: str, reason: str) -> None:
        """Suspend a bot that cannot be prepared (from the next batch) and drop its games
        not yet started."""
        self.unprepared.add(bot)
        if self.members[bot].status == "active":
            self._leave(bot, "suspended", self.next_batch, reason)
        self.drop([game for game in self.pending if bot in game.table])

    def _failed_for_a_bot(self, game: ScheduledGame) -> bool:
        """A game that failed with arena's error: True (and its bots that cannot be prepared
        suspended) when the failure was a bot folder's, not arena's own."""
        bad = False
        for bot in game.table:
            ref = self.refs.get(bot)
            if ref is None or ref.kind != "folder":
                continue
            if bot in self.unprepared:
                bad = True
                continue
            problem = self._unpreparable(ref)
            if problem is not None:
                self._suspend_unprepared(bot, problem)
                bad = True
        return bad

    # -- ratings as of batch b-2 ---------------------------------------------------------------

    def _rate_through(self, batch: int) -> None:
        """Feed the matchmaker's ledger every batch up to `batch` (each one all stored)."""
        while self.lag_through < batch:
            self.lag_through += 1
            for result in sorted(self.results.pop(self.lag_through, []), key=lambda r: key_order(r.key)):
                self.lag.add(result)
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

    def _suspend(self, at: int) -> None:
        for bot in self.active():
            if self.streak[bot] >= self.config.suspend_after:
                reason = f"{self.streak[bot]} forfeits in a row"
                last = self.last_forfeit.get(bot)
                for game_key, incident in self.store.incidents(last) if last else []:
                    if incident.bot == bot and incident.forfeit:
                        reason += f"; the last: {incident.reason.value}: {incident.detail}"[:300]
                        break
                self._leave(bot, "suspended", at, reason)

    # -- scheduling ---------------------------------------------------------------------

    def can_schedule(self) -> bool:
        """The next batch may be matched: every batch before the one playing is stored."""
        if self.config.games is not None and self.seq >= self.config.games:
            return False
        if self.config.until_stable and self.stable:
            return False
        return all(batch >= self.next_batch - 1 for batch, count in self.open.items() if count)

    def schedule_batch(self) -> list[ScheduledGame]:
        """Match and store batch `next_batch`; [] while fewer bots than seats are active."""
        b = self.next_batch
        self._rate_through(b - 2)
        self._suspend(b)
        active = self.active()
        seats = self.config.seats
        if len(active) < seats:
            return []
        tables = self.config.batch or max(1, math.ceil(len(active) / seats))
        if self.config.games is not None:
            tables = min(tables, math.ceil((self.config.games - self.seq) / self.rotations))
        candidates = []
        for bot in active:
            rating = self.lag.ratings.rating(bot)
            candidates.append(
                Candidate(
                    bot, float(rating.mu), float(rating.sigma), self.scheduled_games[bot],
                    tuple(self.seat_use[(bot, seat)] for seat in range(seats)),
                )
            )
        rng = random.Random(f"{self.key.schedule_seed}/league/{b}")
        seated = make_tables(candidates, seats, tables, rng, random_share=self.config.random_share)
        games = []
        for table_no, table in enumerate(seated, start=1):
            seed = self.key.deal_seed(f"{b:05d}-{table_no:05d}")
            for rotation in range(self.rotations):
                games.append(ScheduledGame(b, table_no, rotation, rotate(table, rotation), seed))
        self.store.schedule(games, first_seq=self.seq + 1)
        self.seq += len(games)
        for game in games:
            self._count(game.table)
        self.open[b] = len(games)
        self.next_batch += 1
        self.pending[:0] = list(reversed(games))
        return games

    def spec(self, game: ScheduledGame) -> GameSpec:
        """The GameSpec of a scheduled game."""
        c = self.config
        return GameSpec(
            key=game.key, deal=game.deal, seed=game.seed, game=c.game, rules=c.rules,
            bots=[self.refs[bot] for bot in game.table],
            bot_seeds=[self.key.bot_seed(game.key, bot) for bot in game.table],
            limits=c.limits, sandbox=c.sandbox,
        )

    # -- the loop -------------------------------------------------------------------------

    def _pool(self):
        """Worker processes (`arena.run.workers`: more than one job, every bot a program, the
        sandbox named by the settings), else threads, or the cluster."""
        if not self.config.cluster:
            if self.config.jobs > 1 and self.sandbox is None and not self.in_process:
                from arena.run.workers import WorkerPool

                self.workers = WorkerPool(self.config.jobs, self.config.sandbox, [self.config.output_dir(), self.registry])
                return self.workers
            return ThreadPoolExecutor(max_workers=self.config.jobs, thread_name_prefix="arena-league")
        from arena.run.cluster import ClusterPool

        self.cluster = ClusterPool(
            self.config.cluster, [ref for ref in self.refs.values() if ref.kind == "folder"], self.config.sandbox
        )
        return self.cluster

    def in_flight(self) -> int:
        return self.config.jobs if self.cluster is None else self.cluster.capacity()

    def finished(self) -> bool:
        """Nothing more will be scheduled and everything scheduled is stored."""
        if self.pending or any(self.open.values()):
            return False
        if self.config.games is not None and self.seq >= self.config.games:
            return True
        return self.config.until_stable and self.stable

    def run(self) -> None:
        if not self.config.cluster:
            self.box = self.sandbox or sandbox_named(self.config.sandbox)
            # The league folder holds the store (with the deal secret) and every bot's logs;
            # the registry holds every bot: a bot sees only its own folder.
            self.box.hide_paths([self.config.output_dir(), self.registry])
            self.box.cleanup_leftovers()
        pool = self._pool()
        self.join_in_process()
        for bot in self.active():  # a resume: a folder may have changed since the last run
            ref = self.refs[bot]
            problem = self._unpreparable(ref) if ref.kind == "folder" else None
            if problem is not None:
                self._suspend_unprepared(bot, problem)
        if self.full_through:  # a resume: its first batch line names only who changes with it
            self.settled = set(self._settled(self.active(), self.full.table().standings))
        running: dict[Future, ScheduledGame] = {}
        failure: BaseException | None = None
        next_look = 0.0
        hooked = set()
        try:
            while failure is None and not self.stop.is_set():
                if time.monotonic() >= next_look:
                    self.look()
                    next_look = time.monotonic() + self.poll_s
                while self.can_schedule():
                    if self.before_batch is not None and self.next_batch not in hooked:
                        hooked.add(self.next_batch)
                        self.before_batch(self.next_batch)
                    self.look()
                    next_look = time.monotonic() + self.poll_s
                    if not self.schedule_batch():
                        break
                while self.pending and len(running) < self.in_flight():
                    game = self.pending.pop()
                    running[pool.submit(play_scheduled_game, self.spec(game), self.in_process, self.sandbox)] = game
                if not running:
                    if self.finished():
                        break
                    self.stop.wait(min(0.2, self.poll_s))
                    continue
                finished, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in finished:
                    game = running.pop(future)
                    try:
                        played = future.result()
                    except Exception as error:  # noqa: BLE001 - arena's own failure: stop after the games in flight
                        if any(not Path(self.refs[bot].folder).is_dir() for bot in game.table if bot in self.refs
                               and self.refs[bot].kind == "folder"):
                            self.look()  # a bot left the registry as its game started
                        if any(self.members[bot].status == "removed" for bot in game.table):
                            self.drop([game])
                        elif self._failed_for_a_bot(game):
                            self.drop([game])  # its unpreparable bot is suspended; the league goes on
                        else:
                            failure = failure or error
                        continue
                    self.stored(game, played)
        except KeyboardInterrupt:
            self.stop.set()
        finally:
            # Start nothing new; store what finishes.
            for future, game in list(running.items()):
                try:
                    self.stored(game, future.result())
                except BaseException:  # noqa: BLE001, S112 - a game cut short is not stored
                    continue
            pool.shutdown(wait=True, cancel_futures=True)
            if self.cluster is not None:
                self.cluster.close()
            if self.workers is not None:
                self.workers.close()
            if self.renderer is not None:
                self.renderer.close()
        if failure is not None:
            from arena.run.tournament import stopped_by

            raise stopped_by(failure)

    def stored(self, game: ScheduledGame, played) -> None:
        """Commit a finished game; when its batch is complete, the standings move on."""
        try:
            self.store.record(played.key, played.result, duration_s=played.duration_s, logs=played.logs)
        except DuplicateResult:
            return
        self.played += 1
        deal = game.deal if self.config.duplicate else None
        result = rated_game(game.key, deal, played.result)
        self.results[game.round].append(result)
        self.full_results[game.round].append(result)
        self.open[game.round] -= 1
        if self.open[game.round] == 0:
            del self.open[game.round]
            self.batch_done(game.round)

    def _settled(self, active: list[str], table) -> list[str]:
        """The active bots settled in the standings of the batches stored in order."""
        confidence = self.full.confidence()
        games = {line.bot: line.games for line in table}
        return [bot for bot in active if games.get(bot) and confidence.settled(bot)]

    def batch_done(self, batch: int) -> None:
        """A batch is stored: when it completes the stored batches in order, the standings
        and who is settled move on, the site is re-rendered and the display told."""
        before = self.full_through
        self._advance_full()
        if self.full_through == before:
            return
        active = self.active()
        table = self.full.table().standings
        settled = self._settled(active, table)
        now_settled = [bot for bot in settled if bot not in self.settled]
        unsettled = [bot for bot in active if bot in self.settled and bot not in settled]
        self.settled = set(settled)
        self.stable = bool(active) and len(settled) == len(active)
        if self.renderer is not None:
            self.renderer.request()
        if self.progress is not None:
            events, self.events = self.events, []
            self.progress(
                LeagueProgress(
                    batch=self.full_through, done=self.done(), played=self.played, active=len(active),
                    settled=len(settled), leader=table[0].bot if table and table[0].games else None,
                    elapsed_s=time.monotonic() - self.began, events=events, now_settled=now_settled,
                    unsettled=unsettled,
                )
            )


class _SiteRenderer:
    """Re-renders the league's site in a thread after each batch; requests made while it
    renders are one more render, not a queue."""

    def __init__(self, out_dir: Path):
        self.out_dir = out_dir
        self.wanted = threading.Event()
        self.closing = threading.Event()
        self.notes: list[str] = []
        self.thread = threading.Thread(target=self._loop, name="arena-league-site", daemon=True)
        self.thread.start()

    def request(self) -> None:
        self.wanted.set()

    def _loop(self) -> None:
        while not self.closing.is_set():
            if not self.wanted.wait(0.2):
                continue
            self.wanted.clear()
            self.notes = render(self.out_dir)

    def close(self) -> None:
        self.closing.set()
        self.thread.join()


def check_league(config: LeagueConfig) -> None:
    """TournamentError if the league's folder holds a tournament, or a league with other
    settings: what `run_league` would refuse, said before anything is printed or played."""
    from arena.store.db import STORE_FILE

    if not (config.output_dir() / STORE_FILE).is_file():
        return
    with Store.open(config.output_dir()) as store:
        _refuse_other_settings(store, config)


def _refuse_other_settings(store: Store, config: LeagueConfig) -> None:
    settings = settings_of(config)
    before = store.settings()
    if before is None:
        return
    if before.get("format") != FORMAT:
        raise TournamentError([f"{config.output_dir()} holds a tournament, not a league"])
    if store.fingerprint() != fingerprint_of(settings):
        changed = sorted(
            key for key in set(before) | set(settings)
            if key not in UNFINGERPRINTED and before.get(key) != settings.get(key)
        )
        raise TournamentError(
            [
                f"{config.output_dir()} holds a league with other settings ({', '.join(changed)}); "
                "resume it with its own settings (`arena league DIR` alone), or use another folder"
            ]
        )


def run_league(
    config: LeagueConfig,
    *,
    progress: Callable[[LeagueProgress], None] | None = None,
    in_process: Mapping[str, SeatFactory] | None = None,
    stop: threading.Event | None = None,
    sandbox: Sandbox | None = None,
    before_batch: Callable[[int], None] | None = None,
    report: bool = True,
    poll_s: float = POLL_S,
    notice: Callable[[str], None] | None = None,
) -> LeagueOutcome:
    """Run (or resume) a league in its folder until `stop`, Ctrl-C, `games` or `until_stable`.

    `before_batch(b)` is called before batch b is matched (tests feed submissions at
    chosen points with it); `notice(line)` is told at once of what cannot wait for the
    next batch's `progress` (a bot folder in the registry with a wrong bot.toml). Raises TournamentError (bad settings), LeagueInterrupted
    (stopped: every finished game is stored) or arena's own SandboxError.
    """
    settings = settings_of(config)
    fingerprint = fingerprint_of(settings)
    store = Store.open(config.output_dir(), create=True)
    try:
        _refuse_other_settings(store, config)
        store.save_settings(settings, fingerprint)
        key = RunKey.of_store(config.seed, store)
        league = _League(config, store, key, in_process, progress, stop, sandbox, before_batch, report, poll_s)
        league.notice = notice
        league.run()
        outcome = LeagueOutcome(
            output=config.output_dir(), done=league.done(), played=league.played,
            batches=league.next_batch - 1, stable=league.stable, wall_s=time.monotonic() - league.began,
            notes=list(league.renderer.notes) if league.renderer is not None else [],
        )
        interrupted = league.stop.is_set() and not league.finished()
    finally:
        store.close()
    if interrupted:
        raise LeagueInterrupted(outcome.done, outcome.output)
    if report:
        outcome.notes = render(config.output_dir())
    return outcome


def render(out_dir: Path) -> list[str]:
    """Render the league's site (only the pages that changed are written): the runner's
    `render_report`, whose failure is a note, never a stopped league."""
    from arena.run.tournament import render_report

    return render_report(out_dir)


# ------------------------------------------------------------------- what the standings say


@dataclass(frozen=True)
class LeagueStanding:
    """A league's standings: the rating table, how sure it is, and each bot's membership."""

    table: RatingTable
    confidence: Confidence
    members: dict[str, MemberRow]
    settings: dict[str, Any]
    done: int


def league_standings(store: Store) -> LeagueStanding:
    """The standings of a league folder's store (every bot, retired ones included)."""
    ledger = store_ledger(store, record=True)
    return LeagueStanding(
        ledger.table(), ledger.confidence(), {m.bot: m for m in store.members()}, store.settings() or {},
        len(store.done_keys()),
    )


def bot_standing(standing: LeagueStanding, name: str) -> str:
    """One line on where a bot (by name, its newest version, or by id) stands in a league."""
    members = standing.members
    chosen = [m for m in members.values() if m.bot == name] or [m for m in members.values() if m.lineage == name]
    if not chosen:
        return f"{name} has not joined the league yet (it joins within seconds of being in its registry)"
    member = max(chosen, key=lambda m: (m.joined, m.bot))
    lines = {line.bot: (rank, line) for rank, line in enumerate(standing.table.standings, 1)}
    rank, line = lines[member.bot]
    interval = standing.confidence.intervals.get(member.bot)
    count = len(standing.table.standings)
    where = f"rank {rank} of {count}" + (f", 90% interval {interval}" if interval else "")
    if member.status != "active":
        state = f"{member.status} ({member.reason})"
    elif line.games == 0:
        state = "waiting for its first game"
    elif standing.confidence.settled(member.bot):
        state = f"settled (its {SETTLE_LEVEL:.0%} interval {standing.confidence.settle_intervals[member.bot]})"
    else:
        state = f"provisional (settled when its {SETTLE_LEVEL:.0%} interval spans at most {settled_span(count)} places)"
    return f"{member.bot}: {line.games} games so far, {where}; {state}"


def league_marks(out_dir: Path, hide_retired: bool = False) -> tuple[dict[str, str], list[str], set[str]]:
    """For `arena standings` of a league: a mark after each bot's name, notes saying what the
    marks mean (and why each suspended bot is), and the bots to leave out."""
    with Store.open(out_dir) as store:
        standing = league_standings(store)
    games = {line.bot: line.games for line in standing.table.standings}
    span = settled_span(len(standing.confidence.intervals))
    marks: dict[str, str] = {}
    notes = [
        f"(settled): its {SETTLE_LEVEL:.0%} rank interval spans at most {span} places "
        f"(with {len(standing.confidence.intervals)} bots; the band shown is the {LEVEL:.0%} one); "
        "unmarked: provisional. (retired): replaced by a newer version (--hide-retired leaves them out)."
    ]
    hidden = set()
    for bot, member in standing.members.items():
        if member.status == "active":
            if games.get(bot) and standing.confidence.settled(bot):
                marks[bot] = " (settled)"
        else:
            marks[bot] = f" ({member.status})"
            if member.status == "suspended":
                notes.append(f"{bot} is suspended: {member.reason} (a new version plays again)")
            if member.status == "retired" and hide_retired:
                hidden.add(bot)
    return marks, notes, hidden


def where_it_stands(out_dir: Path, name: str, version: str, wait_s: float = 30.0, poll_s: float = 0.5) -> str:
    """Where a just-submitted bot stands in a league: waits up to `wait_s` for the running
    league to take in this very version and play its first games, then one line
    (`bot_standing`); an older version of the bot, still playing until the new one joins,
    is never taken for it."""
    bot_id = f"{name}@{version}"
    deadline = time.monotonic() + wait_s
    while True:
        with Store.open(out_dir) as store:
            members = [m for m in store.members() if m.bot == bot_id or m.bot.startswith(bot_id + "~")]
            member = max(members, key=lambda m: (m.joined, m.bot), default=None)
            played = member is not None and any(seat.bot == member.bot for seat in store.seats())
            if played or time.monotonic() >= deadline:
                if member is None:
                    return (
                        f"{bot_id} has not joined {out_dir} yet: a running league takes it in within seconds "
                        f"(`arena standings {out_dir}` shows it)"
                    )
                return bot_standing(league_standings(store), member.bot)
        time.sleep(poll_s)
