"""The tournament store: one SQLite file (WAL mode), `arena.sqlite` in the output folder.

Each finished game is committed in one transaction, exactly once (on a full disk the
transaction is rolled back and written again once there is space: `arena.diskfull`): a second result for
the same game key is refused (`DuplicateResult`), so a resume, a retried worker or a
cluster can never count a game twice. Results are never edited; standings and ratings
are recomputed from them in schedule order (`arena.ratings.ledger`), never finishing order.

The tables, what each column holds, and what is added to an older store are
`arena.store.schema` (the file is mode 0600).

The run's secret key (`arena.store.seeds`) is never in the database: it is a file of its own,
mode 0600 (`Store.secret_path`): `DIR/secret.key`, or `$ARENA_SECRET_DIR/SECRET_ID.key`
when the organiser keeps secrets apart. A store from before (its secret in meta as
`deal_secret`) is moved on open: the file is written, the row deleted with secure_delete,
the database vacuumed and its write-ahead log checkpointed and truncated, so that neither
`arena.sqlite` nor `arena.sqlite-wal` holds the secret any more.

Read API for the report and the CLI: `Store.open(dir)`, then `settings()`, `bots()`,
`games()`, `seats(key)`, `incidents(key)`, `replay(key)`, `logs(key)`, `game_result(key)`.
A long store is read in parts (`arena.store.partial`, Store's base: a league's history
streamed from a cursor by the index `games_in_schedule`, the site's state's reads by key
range, the served league's pages a page at a time). The records (`BotRecord`, `GameRow`,
`MemberRow`, `SeatRow`) are in `arena.store.records`. The store only persists and returns
results: ratings and standings are computed from them by `arena.ratings.results`
(`stored_standings(store)`, `stored_history(store)`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from arena.botcopy import RECORD_FILE, content_hash, has_build_step, hashed_files  # noqa: F401 - read here too
from arena.diskfull import SpaceWaiter, waits_for_space
from arena.errors import ArenaError
from arena.game.record import GameResult, Incident, Replay
from arena.store.keys import ScheduledGame, key_order
from arena.store.partial import PartialReads
from arena.store.records import (
    GAME_COLUMNS,
    INCIDENT_COLUMNS,
    SEAT_COLUMNS,
    BotRecord,
    GameRow,
    MemberRow,
    SeatRow,
    incident_of_row,
)
from arena.store.schema import SCHEMA, SCHEMA_VERSION, migrate
from arena.store.seeds import RunKey, SeedError, read_secret_file, write_secret_file

STORE_FILE = "arena.sqlite"
SECRET_FILE = "secret.key"  # beside the store, unless $ARENA_SECRET_DIR says where
SECRET_DIR_ENV = "ARENA_SECRET_DIR"
# Kept of each bot's stderr per game: enough for its author to see why it lost.
LOG_KEEP_CHARS = 4000


class StoreError(ArenaError):
    """The store cannot do what was asked (missing, wrong schema, schedule conflict)."""


class DuplicateResult(StoreError):
    """A second result for a game that is already stored: refused, never counted twice."""


class StoreDamaged(StoreError):
    """The store's file is damaged (overwritten, truncated, not a database): one line that
    says so and what to do, instead of a traceback wherever a query first meets it."""

    def __init__(self, path: Path, what: str):
        super().__init__(f"{path} is damaged ({what}); put back a copy from your backup")


def is_damage(error: BaseException) -> bool:
    """True for SQLite's own word that a file is damaged or not a database at all (never
    for a lock, a full disk or a read-only file: those are OperationalErrors of their own)."""
    return isinstance(error, sqlite3.DatabaseError) and getattr(error, "sqlite_errorname", "") in (
        "SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_CORRUPT_INDEX", "SQLITE_CORRUPT_SEQUENCE", "SQLITE_CORRUPT_VTAB",
    )


_checked: dict[Path, tuple] = {}  # stores found sound in this process: their files' sizes and times


def _stamp(path: Path) -> tuple:
    """The sizes and modification times of a store's file and its write-ahead log."""
    stamp = []
    for place in (path, path.with_name(path.name + "-wal")):
        try:
            info = place.stat()
            stamp.append((info.st_size, info.st_mtime_ns))
        except OSError:
            stamp.append(None)
    return tuple(stamp)


def check_store(out_dir: str | Path) -> None:
    """StoreDamaged when the folder's store is damaged (`Store.check`); nothing when the
    folder has no store (the command that needs one says so)."""
    path = Path(out_dir) / STORE_FILE
    if path.is_file():
        with Store(path, create=False) as store:
            store.check()


def _read_secret(place: Path) -> str | None:
    """The secret kept in `place` (None: no such file); StoreError, one line, when what is
    there is not a secret's file (a folder, a link, empty, not a key)."""
    try:
        secret = read_secret_file(place)
    except OSError as error:
        what = "a symbolic link" if place.is_symlink() else "a folder" if place.is_dir() else error.strerror
        raise StoreError(f"{place} is {what}, not the deal secret's file; put back a copy from your backup") from None
    if secret is None:
        return None
    try:
        RunKey.from_secret(secret)
    except SeedError:
        what = "empty" if not secret else "not a secret (64 hex digits)"
        raise StoreError(f"{place} is {what}; put back a copy of it from your backup") from None
    return secret


def _create_private(path: Path) -> None:
    """Create the store file readable by its owner only (it holds the bots' logs; it held
    the deal secret before that moved to a file of its own). SQLite gives its -wal and
    -shm files the same mode. (A bot run as another user, as the local sandbox does under
    root and Docker always does, cannot read it.)"""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store(PartialReads):
    """One tournament's SQLite store. Writes come from one thread; reads from any number."""

    def __init__(self, path: str | Path, *, create: bool = True):
        self.path = Path(path)
        self.space = SpaceWaiter(str(self.path.parent))  # a write on a full disk waits (arena.diskfull)
        self.secret_file: Path | None = None  # where `secret()` found the secret
        if not create and not self.path.is_file():
            raise StoreError(f"no tournament store at {self.path} (run `arena run` into that folder first)")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if create:
            _create_private(self.path)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            self._begin(create)
        except sqlite3.DatabaseError as error:
            self._db.close()
            if is_damage(error):
                raise StoreDamaged(self.path, str(error)) from None
            raise

    def _begin(self, create: bool) -> None:
        self._db.execute("PRAGMA busy_timeout=10000")
        self._use_wal()
        # WAL with synchronous=NORMAL: a committed game survives any crash or kill of arena;
        # only a power cut can lose the last few commits (never corrupt the file). FULL
        # would fsync every game: about 4 ms each on this machine, the runner's biggest cost.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        if create:
            self._db.executescript(SCHEMA)
            if self._meta("schema_version") is None:
                self._set_meta("schema_version", str(SCHEMA_VERSION))
                self._set_meta("created", _now())
        version = self._meta("schema_version")
        if version != str(SCHEMA_VERSION):
            raise StoreError(f"{self.path} has store schema {version!r}; this arena reads schema {SCHEMA_VERSION}")
        migrate(self._db)
        if self._meta("deal_secret") is not None:
            self._move_secret_out()

    def _use_wal(self) -> None:
        # Switching a new file to WAL needs it to itself, and SQLite does not wait on the busy
        # timeout for that: two runners opening a fresh store at once would see "database is
        # locked". Retry for as long as the busy timeout would have waited.
        deadline = time.monotonic() + 10.0
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @classmethod
    def open(cls, out_dir: str | Path, *, create: bool = False) -> Store:
        """The store in a tournament's output folder (created only when `create`)."""
        return cls(Path(out_dir) / STORE_FILE, create=create)

    def check(self) -> None:
        """StoreDamaged unless SQLite's quick check of every page passes (about 1 s a GB:
        what writes to a store, and the commands that read all of it, check it first;
        once per process while the files are unchanged)."""
        stamp = _stamp(self.path)
        if _checked.get(self.path) == stamp:
            return
        try:
            found = self._db.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as error:
            if is_damage(error):
                raise StoreDamaged(self.path, str(error)) from None
            raise
        if found != [("ok",)]:
            more = f" and {len(found) - 1} more" if len(found) > 1 else ""
            first = " ".join(str(found[0][0]).split())[:120]  # its first finding, on one line
            raise StoreDamaged(self.path, f"{first}{more}")
        _checked[self.path] = stamp

    def close(self) -> None:
        """Close the connection (everything is already committed)."""
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta and settings ----------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            raise StoreError(f"{self.path} is not an arena tournament store") from None
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def settings(self) -> dict[str, Any] | None:
        """The tournament settings stored by the first run (None in a new store)."""
        text = self._meta("settings")
        return json.loads(text) if text is not None else None

    def fingerprint(self) -> str | None:
        """The fingerprint of the stored settings (None in a new store)."""
        return self._meta("fingerprint")

    @waits_for_space
    def save_settings(self, settings: dict[str, Any], fingerprint: str) -> None:
        """Store (or replace) the tournament settings and their fingerprint."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._set_meta("settings", json.dumps(settings, sort_keys=True))
            self._set_meta("fingerprint", fingerprint)

    @waits_for_space
    def secret_path(self) -> Path:
        """Where the run's secret is kept: `$ARENA_SECRET_DIR/SECRET_ID.key` when that is set,
        else `secret.key` beside the store."""
        chosen = os.environ.get(SECRET_DIR_ENV, "").strip()
        if not chosen:
            return self.path.parent / SECRET_FILE
        secret_id = self._meta("secret_id")
        if secret_id is None:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('secret_id', ?)", (os.urandom(12).hex(),)
                )
            secret_id = self._meta("secret_id")
        return Path(chosen).expanduser().resolve() / f"{secret_id}.key"

    def secret(self) -> str | None:
        """The run's secret key (hex), from which every deal and bot seed is derived; None
        when the tournament uses a public seed or has not started. StoreError when a secret
        was kept and its file is not where it was put."""
        places = [self.path.parent / SECRET_FILE]
        if os.environ.get(SECRET_DIR_ENV, "").strip():
            places.insert(0, self.secret_path())
        for place in places:
            secret = _read_secret(place)
            if secret is not None:
                self.secret_file = place
                return secret
        if self._meta("secret_kept") is not None:
            secret_id = self._meta("secret_id")
            elsewhere = f", or set {SECRET_DIR_ENV} to the folder that holds {secret_id}.key" if secret_id else ""
            raise StoreError(
                f"the deal secret of {self.path} is missing: put its file back as {places[-1]}{elsewhere} "
                "(a new secret would deal other cards than the games stored)"
            )
        return None

    @waits_for_space
    def save_secret(self, secret: str) -> str:
        """Keep the run's secret (in its own file, `secret_path`) unless one is kept already;
        returns the kept one."""
        kept = self.secret()
        if kept is not None:
            return kept
        kept = write_secret_file(self.secret_path(), secret)
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._set_meta("secret_kept", "1")
        return kept

    def _move_secret_out(self) -> None:
        """A store from before secrets had their own file: write the file, then wipe the
        secret from the database and its log (see the module docstring)."""
        old = self._meta("deal_secret")
        assert old is not None
        path = self.secret_path()
        kept = write_secret_file(path, old)
        if kept != old:
            raise StoreError(
                f"{self.path} holds a deal secret and {path} another one; keep the right one in {path} and "
                "delete the other file's copy"
            )
        self._db.execute("PRAGMA secure_delete=ON")  # deleted rows are overwritten with zeros
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM meta WHERE key = 'deal_secret'")
            self._set_meta("secret_kept", "1")
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try:
            self._db.execute("VACUUM")  # old copies of the row in freed pages go too
        except sqlite3.OperationalError:
            pass  # another connection is busy: secure_delete has already zeroed the row
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- bots -----------------------------------------------------------------------------

    @waits_for_space
    def add_bots(self, bots: Iterable[BotRecord]) -> None:
        """Insert or update the tournament's bots."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for bot in bots:
                self._db.execute(
                    "INSERT OR REPLACE INTO bots (bot, name, version, content_hash, folder, kind) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (bot.bot, bot.name, bot.version, bot.content_hash, bot.folder, bot.kind),
                )

    def bots(self) -> list[BotRecord]:
        """Every bot, by id."""
        rows = self._db.execute(
            "SELECT bot, name, version, content_hash, folder, kind FROM bots ORDER BY bot"
        ).fetchall()
        return [BotRecord(*row) for row in rows]

    # -- a league's members ---------------------------------------------------------------

    @waits_for_space
    def add_member(self, bot: BotRecord, lineage: str, joined: int) -> None:
        """A bot joins the league from batch `joined` (its row in bots is added or updated)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT OR REPLACE INTO bots (bot, name, version, content_hash, folder, kind) VALUES (?, ?, ?, ?, ?, ?)",
                (bot.bot, bot.name, bot.version, bot.content_hash, bot.folder, bot.kind),
            )
            self._db.execute(
                "INSERT OR REPLACE INTO members (bot, lineage, joined, left_at, status, reason) "
                "VALUES (?, ?, ?, NULL, 'active', '')",
                (bot.bot, lineage, joined),
            )

    @waits_for_space
    def set_member(self, bot: str, status: str, at: int, reason: str = "") -> None:
        """A member stops playing from batch `at` ('retired', 'removed', 'suspended')."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            changed = self._db.execute(
                "UPDATE members SET status = ?, left_at = ?, reason = ? WHERE bot = ?", (status, at, reason, bot)
            ).rowcount
        if not changed:
            raise StoreError(f"{bot} is not a member of this league")

    def members(self) -> list[MemberRow]:
        """A league's bots in the order they joined (none in a tournament or an older store)."""
        try:
            rows = self._db.execute(
                "SELECT bot, lineage, joined, left_at, status, reason FROM members ORDER BY joined, bot"
            ).fetchall()
        except sqlite3.OperationalError:
            return []  # a store opened read-only from before leagues existed
        return [MemberRow(*row) for row in rows]

    # -- the schedule ---------------------------------------------------------------------

    @waits_for_space
    def schedule(self, games: Sequence[ScheduledGame], *, first_seq: int | None = None) -> None:
        """Add scheduled games; a key already stored must hold the same table and seed. A
        league numbers them from `first_seq` (its schedule sequence numbers)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for number, game in enumerate(games):
                bots = json.dumps(list(game.table))
                row = self._db.execute("SELECT bots, seed FROM games WHERE key = ?", (game.key,)).fetchone()
                if row is not None:
                    if row != (bots, game.seed):
                        raise StoreError(
                            f"game {game.key} is already scheduled with bots {row[0]} and seed {row[1]}, "
                            f"not {bots} and seed {game.seed}"
                        )
                    continue
                self._db.execute(
                    "INSERT INTO games (key, round, table_no, rotation, deal, seed, bots, status, seq) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, 'scheduled', ?)",
                    (
                        game.key, game.round, game.table_no, game.rotation, game.deal, game.seed, bots,
                        None if first_seq is None else first_seq + number,
                    ),
                )

    @waits_for_space
    def drop_unfinished(self) -> int:
        """Forget scheduled games that have no result (before rescheduling); returns how many."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            return self._db.execute("DELETE FROM games WHERE status = 'scheduled'").rowcount

    @waits_for_space
    def drop_scheduled(self, keys: Iterable[str]) -> int:
        """Forget these games unless they have a result (a league's games of a bot that
        left its registry); returns how many went."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            return sum(
                self._db.execute("DELETE FROM games WHERE key = ? AND status = 'scheduled'", (key,)).rowcount
                for key in keys
            )

    def games(self, status: str | None = None) -> list[GameRow]:
        """Scheduled games in schedule order (all, or only 'scheduled' / 'done')."""
        sql = f"SELECT {GAME_COLUMNS} FROM games"
        rows = self._db.execute(sql + (" WHERE status = ?" if status else ""), (status,) if status else ()).fetchall()
        out = [GameRow.of_row(row) for row in rows]
        out.sort(key=lambda game: key_order(game.key))
        return out

    def last_seq(self) -> int:
        """The highest schedule sequence number of a league (0 before its first game)."""
        return self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM games").fetchone()[0]

    def done_keys(self) -> set[str]:
        """Keys of every finished game."""
        return {row[0] for row in self._db.execute("SELECT key FROM games WHERE status = 'done'")}

    # -- results --------------------------------------------------------------------------

    @waits_for_space
    def record(
        self,
        key: str,
        result: GameResult,
        *,
        duration_s: float = 0.0,
        logs: Sequence[str] = (),
    ) -> None:
        """Commit one finished game, all of it or nothing; DuplicateResult if already stored."""
        db = self._db
        with db:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT status, bots, seed FROM games WHERE key = ?", (key,)).fetchone()
            if row is None:
                raise StoreError(f"game {key} is not in the schedule; a result needs a scheduled game")
            if row[0] == "done":
                raise DuplicateResult(f"game {key} already has a stored result; a game is stored once")
            if json.loads(row[1]) != result.seats:
                raise StoreError(f"game {key} was scheduled for {row[1]} but the result seats {result.seats}")
            if row[2] != result.seed:
                raise StoreError(f"game {key} was scheduled with deal seed {row[2]} but played seed {result.seed}")
            db.execute(
                "UPDATE games SET status = 'done', finished_at = ?, duration_s = ?, game = ?, rules = ?, rules_version = ? "
                "WHERE key = ?",
                (_now(), duration_s, result.game, json.dumps(result.rules, sort_keys=True), result.rules_version, key),
            )
            forfeits = set(result.forfeits)
            db.executemany(
                "INSERT INTO seats (game_key, seat, bot, place, score, engine_place, forfeit) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (key, seat, bot, result.places[seat], result.scores[seat], result.engine_places[seat], seat in forfeits)
                    for seat, bot in enumerate(result.seats)
                ],
            )
            db.executemany(
                "INSERT INTO incidents (game_key, seat, bot, reason, detail, decision, forfeit, log_tail, request) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (key, i.seat, i.bot, i.reason.value, i.detail, i.decision, i.forfeit, i.log_tail, i.request)
                    for i in result.incidents
                ],
            )
            db.execute(
                "INSERT INTO replays (game_key, encoding, data) VALUES (?, 'json+zlib', ?)",
                (key, zlib.compress(result.replay.model_dump_json().encode(), 1)),
            )
            db.executemany(
                "INSERT INTO logs (game_key, seat, bot, text) VALUES (?, ?, ?, ?)",
                [
                    (key, seat, result.seats[seat], text[-LOG_KEEP_CHARS:])
                    for seat, text in enumerate(logs)
                    if text
                ],
            )

    def seats(self, key: str | None = None) -> list[SeatRow]:
        """Seats of one finished game (or of all), in schedule and seat order."""
        sql = f"SELECT {SEAT_COLUMNS} FROM seats"
        rows = self._db.execute(sql + (" WHERE game_key = ?" if key else ""), (key,) if key else ()).fetchall()
        out = [SeatRow.of_row(row) for row in rows]
        out.sort(key=lambda seat: (key_order(seat.game_key), seat.seat))
        return out

    def incidents(self, key: str | None = None) -> list[tuple[str, Incident]]:
        """(game key, incident) pairs of one game or of all, in schedule order."""
        sql = f"SELECT {INCIDENT_COLUMNS} FROM incidents"
        rows = self._db.execute(sql + (" WHERE game_key = ?" if key else "") + " ORDER BY id", (key,) if key else ())
        out = [(row[0], incident_of_row(row)) for row in rows]
        out.sort(key=lambda pair: key_order(pair[0]))
        return out

    def replay(self, key: str) -> Replay:
        """The replay record of a finished game."""
        row = self._db.execute("SELECT encoding, data FROM replays WHERE game_key = ?", (key,)).fetchone()
        if row is None:
            raise StoreError(f"no stored replay for game {key}")
        if row[0] != "json+zlib":
            raise StoreError(f"game {key}: unknown replay encoding {row[0]!r}")
        return Replay.model_validate_json(zlib.decompress(row[1]))

    def logs(self, key: str) -> dict[int, str]:
        """Seat -> the end of that bot's stderr in the game (seats that wrote nothing are absent)."""
        rows = self._db.execute("SELECT seat, text FROM logs WHERE game_key = ?", (key,))
        return {seat: text for seat, text in rows}

    def game_result(self, key: str) -> GameResult:
        """A finished game rebuilt as the referee's record (replay included)."""
        row = self._db.execute(
            "SELECT status, seed, game, rules, rules_version FROM games WHERE key = ?", (key,)
        ).fetchone()
        if row is None or row[0] != "done":
            raise StoreError(f"game {key} has no stored result")
        seats = self.seats(key)
        return GameResult(
            game=row[2],
            seed=row[1],
            rules=json.loads(row[3]),
            rules_version=row[4],
            seats=[seat.bot for seat in seats],
            places=[seat.place for seat in seats],
            scores=[seat.score for seat in seats],
            engine_places=[seat.engine_place for seat in seats],
            forfeits=[seat.seat for seat in seats if seat.forfeit],
            incidents=[incident for _, incident in self.incidents(key)],
            replay=self.replay(key),
        )
