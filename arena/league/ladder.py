"""A league (`arena league`): a ladder that keeps playing, where a submitted bot joins,
is matched, rated and shown without anyone rerunning anything.

`run_league(config)` watches a registry (the folder `arena submit` writes to) and plays
batches of games picked by the matchmaker (`arena.schedule.matchmaker`) into a league folder, until
Ctrl-C, `games` or `until_stable`. Running it again on the same folder resumes (kill -9
safe: every finished game is stored once, as in `arena run`). It plays with a tournament's
loop (`arena.play.runner.Runner`; the batches are its source of games), so the sandbox,
the limits, `bot_process`, `warm_start`, jobs and a cluster work as in a tournament; who
plays is `arena.league.members`, the settings `arena.config.league_file`.

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
  from (`arena.league.members`: gone, refused by `arena.botcopy`, closed to nobody, or
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

import math
import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from arena.botcopy import FolderLimits, FolderLimitsError
from arena.config.botfolder import BotFolderError, broken_folders
from arena.config.field import BotRef, SeatFactory
from arena.diskfull import is_full
from arena.config.fingerprint import changed_keys, fingerprint_of, settings_of
from arena.config.league_file import FORMAT, LeagueConfig, load_league
from arena.config.tournament_file import TournamentError
from arena.ratings.confidence import SETTLED_SPAN
from arena.ratings.ledger import RatedGame, RatingLedger
from arena.ratings.results import inherited, rated_game
from arena.ratings.results import settings_of as rating_settings
from arena.ratings.standings import Standings, of_ledger, of_store
from arena.league.ledgers import LeagueLedgers
from arena.schedule.matchmaker import Candidate, make_tables
from arena.league.members import Membership, ref_of
from arena.play.executor import PlayedGame
from arena.play.runner import Runner, render_report
from arena.schedule.seating import rotate
from arena.sandbox import Sandbox
from arena.store.db import MemberRow, Store
from arena.store.keys import ScheduledGame, deal_key
from arena.store.lock import check_free, one_writer
from arena.store.seeds import RunKey

__all__ = [
    "SETTLED_SPAN", "LeagueConfig", "LeagueInterrupted", "LeagueOutcome", "LeagueProgress",
    "check_league", "load_league", "run_league", "where_it_stands",
]

POLL_S = 1.0  # how often the registry is looked at between batches
# How often, at most, the league saves its ledgers in the store after a batch (and when
# a run ends, and after a resume rated games): a save costs about 0.3 s with a full
# confidence window, and a resume rates only the games stored since (`arena.league.saved_state`).
SAVE_S = 60.0
# A per-slot bot's `hello.games` in a league without `games` (its sessions are replaced
# after as many games: the CPU budget of a session is per game times this).
SESSION_GAMES = 1000


class LeagueInterrupted(Exception):
    """The league was stopped (Ctrl-C); every finished game is stored."""

    def __init__(self, done: int, output: Path):
        self.done, self.output = done, output
        super().__init__(f"stopped with {done} games stored in {output}")


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


class _League(Membership, LeagueLedgers, Runner):
    """One run of a league: the registry and the matchmaker are the runner's source of games."""

    thread_name = "arena-league"
    config: LeagueConfig

    def __init__(self, config, store, key, in_process, progress, stop, sandbox, before_batch, report, poll_s):
        super().__init__(config, store, key, in_process=in_process, stop=stop, sandbox=sandbox)
        self.progress = progress
        self.before_batch = before_batch
        self.poll_s = poll_s
        self.idle_s = min(self.idle_s, poll_s)
        self.registry = config.registry_dir()
        # The league folder holds the store (with the deal secret) and every bot's logs; the
        # registry holds every bot: a bot sees only its own folder.
        self.hidden = [config.output_dir(), self.registry]
        self.rotations = config.seats if config.duplicate else 1
        self.events: list[str] = []
        self.notice: Callable[[str], None] | None = None  # says a broken bot folder at once
        self.broken_said: set[tuple[str, tuple[str, ...]]] = set()
        self.renderer = _SiteRenderer(config.output_dir(), config.registry_dir()) if report else None
        self.members: dict[str, MemberRow] = {m.bot: m for m in store.members()}
        self.refs = self.bots  # the members that may play, by id
        self.next_look = 0.0
        self.hooked: set[int] = set()  # batches `before_batch` was called for
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
                    self.refs[member.bot] = ref_of(member.bot, Path(record.folder), record.content_hash)
                except BotFolderError:
                    pass  # gone: the next look at the registry removes it
        # Read from the store, never all of it at once (a league may hold millions of games):
        # the unfinished games, then the ledgers as saved after a batch (`saved_state`), and
        # only the games after them, streamed.
        self.seq = store.last_seq()
        self.next_batch = store.last_round() + 1
        self.stored = store.done_count()  # games stored, counted on as they are (`done`)
        unfinished = store.games(status="scheduled")
        self.open: Counter[int] = Counter(row.round for row in unfinished)
        self.queue = [row.scheduled() for row in unfinished]
        self.queue.reverse()  # popped from the end: schedule order
        # A version replaced (or suspended) after its games were scheduled plays them, as
        # in the run that scheduled them: its ref too, whatever stopped that run.
        for bot in sorted({bot for game in self.queue for bot in game.table} - set(self.refs)):
            record = records.get(bot)
            if record is None or record.kind != "folder" or self.members.get(bot) is None:
                continue
            if self.members[bot].status != "removed":
                try:
                    self.refs[bot] = ref_of(bot, Path(record.folder), record.content_hash)
                except BotFolderError:
                    pass  # gone: its games are dropped when the run starts (`_unplayable`)
        # What the matchmaker knows of the schedule: games and seats per bot, every batch.
        self.scheduled_games: Counter[str] = Counter()
        self.seat_use: Counter[tuple[str, int]] = Counter()
        self.counted = 0  # games counted in them
        self.counted_through = 0  # the batches counted when the league resumed
        # Stored results by batch, waiting to be rated (batch b is matched on batches <= b-2).
        self.results: dict[int, list[RatedGame]] = defaultdict(list)
        stored = store.settings()
        self.rating = rating_settings(stored)
        self.inherit = inherited(stored, self.members.values())
        self.lag = RatingLedger(self.rating, duplicate=config.duplicate, inherit=self.inherit)
        self.lag_through = 0
        self.streak: Counter[str] = Counter()
        self.last_forfeit: dict[str, str] = {}
        # Every batch stored in order, for the standings and "settled".
        self.full = RatingLedger(
            self.rating, duplicate=config.duplicate, bots=list(self.members), record=True, inherit=self.inherit
        )
        self.full_through = 0
        self.full_results: dict[int, list[RatedGame]] = defaultdict(list)
        self.stable = False
        self.settled: set[str] = set()  # active bots settled as of the last batch shown
        self.resumed_from = self._resume()
        self._advance_full()
        self.saved_at = time.monotonic()
        if self.full_through > (self.resumed_from or 0):  # rated past the state: not again
            self._save()
        self.unprepared: set[str] = set()  # suspended because no game could start them
        try:
            self.folder_limits = FolderLimits.from_env()
        except FolderLimitsError as error:
            raise TournamentError([str(error)]) from None

    def _say(self, line: str) -> None:
        self.events.append(line)

    def active(self) -> list[str]:
        """Bots being matched now."""
        return [bot for bot, m in self.members.items() if m.status == "active" and bot in self.refs]

    def done(self) -> int:
        """Games stored in the league: counted when it opens, then one per game stored (a
        COUNT after every batch reads every game's row: 0.03 s at 100k games, growing)."""
        return self.stored

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
            seed = self.key.deal_seed(deal_key(b, table_no))
            for rotation in range(self.rotations):
                games.append(ScheduledGame(b, table_no, rotation, rotate(table, rotation), seed))
        self.store.schedule(games, first_seq=self.seq + 1)
        self.seq += len(games)
        for game in games:
            self._count(game.table)
        self.open[b] = len(games)
        self.next_batch += 1
        self.queue[:0] = list(reversed(games))
        return games

    def bot_games(self, bot: str) -> int:
        """A per-slot bot's `hello.games`: the league's `games` (an upper bound of any bot's
        games in the run), else `SESSION_GAMES`; a session that played as many is replaced."""
        return self.config.games or SESSION_GAMES

    def folders_only(self) -> bool:
        return not self.in_process

    def cluster_bots(self) -> list[BotRef]:
        return [ref for ref in self.refs.values() if ref.kind == "folder"]

    # -- the loop -------------------------------------------------------------------------

    def refill(self) -> None:
        """Look at the registry (every `poll_s`, and before each batch), then match every
        batch that may be matched now."""
        if time.monotonic() >= self.next_look:
            self.look()
            self.next_look = time.monotonic() + self.poll_s
        while self.can_schedule():
            if self.before_batch is not None and self.next_batch not in self.hooked:
                self.hooked.add(self.next_batch)
                self.before_batch(self.next_batch)
            self.look()
            self.next_look = time.monotonic() + self.poll_s
            if not self.schedule_batch():
                break

    def failed(self, game: ScheduledGame, error: Exception) -> bool:
        """A game that failed with arena's error goes (the league goes on) when a bot of it
        left the registry or cannot be prepared (it is suspended)."""
        if any(not Path(self.refs[bot].folder).is_dir() for bot in game.table if bot in self.refs
               and self.refs[bot].kind == "folder"):
            self.look()  # a bot left the registry as its game started
        if any(self.members[bot].status == "removed" for bot in game.table) or self._failed_for_a_bot(game):
            self.drop([game])
            return True
        return False

    def finished(self) -> bool:
        """Nothing more will be scheduled and everything scheduled is stored."""
        if self.queue or any(self.open.values()):
            return False
        if self.config.games is not None and self.seq >= self.config.games:
            return True
        return self.config.until_stable and self.stable

    def run(self) -> None:
        """Play until stopped, `games` or `until_stable` (the runner's loop)."""
        try:
            self.open_sandbox()
            self.executor()  # before the first join: a bot that joins is shipped to the cluster
            self.join_in_process()
            self._drop_unplayable()
            waiting = {bot for game in self.queue for bot in game.table}
            for bot in [*self.active(), *sorted(waiting - set(self.active()))]:
                # A resume: a folder may have changed since the last run.
                ref = self.refs[bot]
                problem = self._unpreparable(ref) if ref.kind == "folder" else None
                if problem is not None:
                    self._suspend_unprepared(bot, problem)
            if self.full_through:  # a resume: its first batch line names only who changes with it
                self.settled = set(self.standings().settled_bots(self.active()))
            self.play()
            try:
                self._save()  # stopped or done: the next run resumes from here
            except Exception as error:
                if not (self.stop.is_set() and is_full(error)):
                    raise  # stopped on a full disk: the next run rates from the store

        finally:
            try:
                self.close()
            finally:
                if self.renderer is not None:
                    self.renderer.close()

    def game_stored(self, game: ScheduledGame, played: PlayedGame, drained: bool) -> None:
        """When its batch is complete, the standings move on."""
        self.stored += 1
        deal = game.deal if self.config.duplicate else None
        result = rated_game(game.key, deal, played.result)
        self.results[game.round].append(result)
        self.full_results[game.round].append(result)
        self.open[game.round] -= 1
        if self.open[game.round] == 0:
            del self.open[game.round]
            self.batch_done(game.round)

    def standings(self) -> Standings:
        """The standings of the batches stored in order (`arena.ratings.standings`: who is settled)."""
        return of_ledger(self.full)

    def batch_done(self, batch: int) -> None:
        """A batch is stored: when it completes the stored batches in order, the standings
        and who is settled move on, the site is re-rendered and the display told."""
        before = self.full_through
        self._advance_full()
        if self.full_through == before:
            return
        active = self.active()
        standings = self.standings()
        table = standings.lines
        settled = standings.settled_bots(active)
        now_settled = [bot for bot in settled if bot not in self.settled]
        unsettled = [bot for bot in active if bot in self.settled and bot not in settled]
        self.settled = set(settled)
        self.stable = bool(active) and len(settled) == len(active)
        if time.monotonic() - self.saved_at >= SAVE_S:
            self._save()
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

    def __init__(self, out_dir: Path, registry: Path):
        self.out_dir, self.registry = out_dir, registry
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
            self.notes = render(self.out_dir, self.registry)

    def close(self) -> None:
        self.closing.set()
        self.thread.join()


def check_league(config: LeagueConfig) -> None:
    """TournamentError if the league's folder holds a tournament, or a league with other
    settings, FolderBusy if another arena plays into it: what `run_league` would refuse,
    said before anything is printed or played."""
    from arena.store.db import STORE_FILE

    check_free(config.output_dir())
    if not (config.output_dir() / STORE_FILE).is_file():
        return
    with Store.open(config.output_dir()) as store:
        store.check()
        _refuse_other_settings(store, config)


def _refuse_other_settings(store: Store, config: LeagueConfig) -> None:
    settings = settings_of(config)
    before = store.settings()
    if before is None:
        return
    if before.get("format") != FORMAT:
        raise TournamentError([f"{config.output_dir()} holds a tournament, not a league"])
    if store.fingerprint() != fingerprint_of(settings):
        changed = changed_keys(before, settings)
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
    next batch's `progress` (a bot folder in the registry with a wrong bot.toml). Raises
    TournamentError (bad settings), FolderBusy (another arena plays into the folder: one
    writer per folder, `arena.store.lock`), LeagueInterrupted (stopped: every finished
    game is stored) or arena's own SandboxError.
    """
    with one_writer(config.output_dir(), "arena league"):
        return _run_league(config, progress, in_process, stop, sandbox, before_batch, report, poll_s, notice)


def _run_league(config, progress, in_process, stop, sandbox, before_batch, report, poll_s, notice) -> LeagueOutcome:  # noqa: ANN001
    """`run_league` with the folder's writer lock held."""
    settings = settings_of(config)
    fingerprint = fingerprint_of(settings)
    store = Store.open(config.output_dir(), create=True)
    try:
        store.check()  # never write into a damaged file
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
        outcome.notes = render(config.output_dir(), config.registry_dir())
    return outcome


def render(out_dir: Path, registry: Path) -> list[str]:
    """Render the league's site (only the pages that changed are written): the runner's
    `render_report`, whose failure is a note, never a stopped league, handed the registry's
    folders that cannot join (the site reads no bot folder)."""
    return render_report(out_dir, broken_folders(registry))


# ------------------------------------------------------------------- what the standings say


def where_it_stands(out_dir: Path, name: str, version: str, wait_s: float = 30.0, poll_s: float = 0.5) -> str:
    """Where a just-submitted bot stands in a league: waits up to `wait_s` for the running
    league to take in this very version and play its first games, then one line
    (`Standings.describe`); an older version of the bot, still playing until the new one joins,
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
                return of_store(store).describe(member.bot)
        time.sleep(poll_s)
