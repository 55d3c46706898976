"""The site's persisted state (issue 27, part 2): everything the site's pages show that is
summed over the history, kept beside the store in `DIR/.site-state.sqlite` and brought up
to date from the games added since, so that a render after a batch reads and rates only
that batch, and never holds every game in memory.

It holds, as of its cursor (the last game of the schedule's finished prefix; a
duplicate deal is taken whole):
- the rating ledger (`arena.ratings.ledger.RatingLedger`, counts and ratings) with its last
  `confidence.WINDOW` updates, so the confidence is not re-rated over the history;
- per bot (table `bots`, JSON): results by seat, games with and times ahead of / behind
  each other bot, its last RECENT games and INCIDENTS_KEPT incidents, its rounds, its
  last move and stderr excerpts (remade when it plays);
- its rating points (table `points`: each one's place in the bot's order, games, mu,
  sigma, conservative: a chart reads only the points it draws), and per game-seat
  the row of its data script (table `rows`: the game, the rating after, its change,
  the rank after and its change, mu and sigma): a game's move never changes once made;
- what `rating_moves` (arena.site.charts) carries from game to game: each bot's rating
  and Swiss score in the field's order, and its games.

A bot enters the field (the ranks of the moves) at the first game of the batch it
joined (a league's member), or from the start (a tournament's bots).

The games after the cursor that are done but not contiguous with it (a game before them
still playing) are applied too, in a transaction rolled back when the render ends: they
are shown, and applied again (in schedule order with the one that was missing) next time.

The state is rebuilt from scratch when it is missing or unreadable, when the settings,
the arena's site or ratings code, or a bot's lineage changed, when the store's finished
games up to the cursor are not the ones it counted, and by `full=True` (`arena report --full`). Docs: docs/report.md.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.game.record import Incident
from arena.ratings.confidence import Confidence
from arena.ratings.ledger import RatedGame, RatingLedger, RatingPoint
from arena.ratings.results import inherited, is_swiss, settings_of
from arena.site.model import incident_view
from arena.site.replay import (
    _script_json as row_text,  # a value as a data script holds it
)
from arena.site.saved_ledger import SCHEMA, kept_confidence, load_ledger, save_ledger
from arena.site.state_reads import StateReads
from arena.store.db import GameRow, MemberRow, SeatRow, Store
from arena.store.keys import deal_of
from arena.store.records import incident_of_row

STATE_FILE = ".site-state.sqlite"  # beside arena.sqlite
STATE_VERSION = 6  # 6: the ledger saved as its snapshot
RECENT = 50  # games kept per bot (its page lists them; its data script has every game)
INCIDENTS_KEPT = 50  # incidents kept per bot (its page shows the last 50)
CHUNK = 2000  # games read from the store at a time
CHECKPOINT = 100_000  # a rebuild (or a long catch-up) is committed every this many games
GAMES_PER_PAGE = 100  # games per game-list page (data/site.js says which pages hold a round)
LOG_EXCERPTS = 3  # stderr excerpts on a bot's page
LOG_CHARS = 1500  # characters kept of each excerpt

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (bot TEXT PRIMARY KEY, blob TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS points (
    bot TEXT NOT NULL, i INTEGER NOT NULL, games INTEGER NOT NULL, mu REAL NOT NULL, sigma REAL NOT NULL,
    cons REAL NOT NULL, PRIMARY KEY (bot, i)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fragments (bot TEXT PRIMARY KEY, html TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rounds (round INTEGER PRIMARY KEY, entry TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rows (
    bot TEXT NOT NULL, n INTEGER NOT NULL, key TEXT NOT NULL, row TEXT NOT NULL,
    PRIMARY KEY (bot, n)) WITHOUT ROWID;
"""


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """What the state and the pages depend on besides the store: the site's and the
    ratings' code and the templates (a new arena rebuilds the state and every page)."""
    from arena.resources import templates_dir

    digest = hashlib.sha256(str(STATE_VERSION).encode())
    here = Path(__file__).parent
    sources = [
        *sorted(templates_dir().glob("*.html")), *sorted(here.glob("*.py")), *sorted((here.parent / "ratings").glob("*.py")),
    ]
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


@dataclass
class NewGame:
    """A finished game read from the store for the state: its row, seats and incidents."""

    row: GameRow
    seats: list[SeatRow]
    incidents: list[dict[str, Any]]


def game_rows(rows: Iterable[Sequence[Any]]) -> list[GameRow]:
    """The store's game records of rows read by key (`Store.game_rows_after`, `done_game_rows`)."""
    return [GameRow.of_row(row) for row in rows]


def read_games(store: Store, rows: Sequence[GameRow]) -> list[NewGame]:
    """The finished games among `rows` with their seats and incidents (a game without seats is left out)."""
    done = [row for row in rows if row.status == "done"]
    seat_rows, incident_rows = store.result_rows([row.key for row in done])
    seats: dict[str, list[SeatRow]] = {}
    for seat in seat_rows:
        seats.setdefault(seat[0], []).append(SeatRow.of_row(seat))
    incidents: dict[str, list[Incident]] = {}
    for row in incident_rows:
        incidents.setdefault(row[0], []).append(incident_of_row(row))
    return [
        NewGame(row, seats[row.key], [incident_view(incident) for incident in incidents.get(row.key, [])])
        for row in done if seats.get(row.key)
    ]


class SiteState(StateReads):
    """The state of one store's site, opened for one render (`refresh`, then `close`)."""

    def __init__(self, tournament_dir: Path, store: Store, *, full: bool = False, path: Path | None = None):
        self.store = store
        self.settings: dict[str, Any] = store.settings() or {}
        self.rating = settings_of(self.settings)
        self.duplicate = bool(self.settings.get("duplicate", False))
        self.swiss = is_swiss(self.settings)
        self.members: list[MemberRow] = store.members()
        self.inherit = inherited(self.settings, self.members)
        self.bot_ids = [bot.bot for bot in store.bots()]
        self.path = path or tournament_dir / STATE_FILE
        self.head = json.dumps([STATE_VERSION, code_version(), self.settings], sort_keys=True, default=str)
        self.prior = self.rating.mu - 3 * self.rating.sigma
        self.rebuilt = False
        self.db = self._open(full)
        self.touched: set[str] = set()  # bots whose games changed in this render (committed or not)
        self.blobs: dict[str, dict[str, Any]] = {}
        self.point_count: dict[str, int] = {}  # each bot's saved rating points, once read
        self.charts: dict[str, Any] = {}  # each bot's chart as this render drew it
        self.points_made: dict[str, dict[int, RatingPoint]] = {}  # this render's rating points by bot and games
        # Rows of `points` and `rows` made but not yet written: written a chunk of games at
        # a time (`_write_pending`), not one statement per game.
        self._new_points: list[tuple[str, int, int, float, float, float]] = []
        self._new_rows: list[tuple[str, int, str, str]] = []
        self.last_rendered: dict[str, Any] | None = None
        self._rendered: str | None = None
        self._fragments: dict[str, str] = {}
        self._confidence: str | None = None  # the confidence this render computed, saved by close()

    # -- the file ---------------------------------------------------------------------------

    def _open(self, full: bool) -> sqlite3.Connection:
        db = None
        try:
            db = sqlite3.connect(self.path, isolation_level=None)
            db.execute("PRAGMA busy_timeout=10000")
            db.execute("PRAGMA synchronous=NORMAL")  # see _start
            if not full:
                db.executescript(_SCHEMA + SCHEMA)
                row = db.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
                inherit = db.execute("SELECT value FROM meta WHERE key = 'inherit'").fetchone()
                if row is not None and row[0] == self.head and inherit is not None:
                    kept = json.loads(inherit[0])
                    # A bot's lineage never changes; if it did, the ratings are not what they were.
                    if all(self.inherit.get(bot) == lineage for bot, lineage in kept.items()):
                        return db
            # Emptied where it is, never deleted: another process (an older arena, a copy
            # being made) may have the file open, and a file deleted under an open
            # connection makes its next write "attempt to write a readonly database".
            self._start(db)
            return db
        except (sqlite3.DatabaseError, ValueError):
            if db is not None:
                db.close()
        # Not a database at all (damaged): nobody can be using it; made again.
        self.path.unlink(missing_ok=True)
        for suffix in ("-wal", "-shm", "-journal"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        db = sqlite3.connect(self.path, isolation_level=None)
        self._start(db)
        return db

    def _start(self, db: sqlite3.Connection) -> None:
        """Make the state empty (its tables dropped in one transaction) and start it again."""
        self.rebuilt = True
        db.execute("PRAGMA journal_mode=WAL")
        # No sync at each commit (two a render): a commit lost to a power cut leaves the
        # state as of an earlier render, which the next one brings up to date (WAL never
        # leaves it torn).
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("BEGIN IMMEDIATE")
        tables = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        for (name,) in tables.fetchall():
            db.execute(f'DROP TABLE "{name}"')
        db.execute("COMMIT")
        db.executescript(_SCHEMA + SCHEMA)
        db.execute("INSERT INTO meta VALUES ('head', ?)", (self.head,))

    def _meta(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def _set_meta(self, key: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, separators=(",", ":"))))

    def close(self) -> None:
        """Forget the games applied past the cursor (rolled back) and close the file."""
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        if self._rendered is not None or self._confidence is not None:
            self.db.execute("BEGIN")
            if self._rendered is not None:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('rendered', ?)", (self._rendered,))
                self.db.executemany("INSERT OR REPLACE INTO fragments VALUES (?, ?)", sorted(self._fragments.items()))
            if self._confidence is not None:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('confidence', ?)", (self._confidence,))
            self.db.execute("COMMIT")
        self.db.close()

    # -- the ledger, saved with its window of updates (arena.site.saved_ledger) ---------------

    def _load_ledger(self) -> RatingLedger:
        return load_ledger(
            self.db, self._meta("ledger"), self.rating, duplicate=self.duplicate, bots=self.bot_ids, swiss=self.swiss,
            inherit=self.inherit,
        )

    def _save_ledger(self, ledger: RatingLedger) -> None:
        state, made = save_ledger(self.db, ledger, self._meta("updates_made") or 0)
        self._set_meta("updates_made", made)
        self._set_meta("ledger", state)

    def confidence(self) -> Confidence:
        """How sure the standings are: computed once per state of the ratings in a process,
        else the one the last render saved of these same ratings, else computed and saved
        (by `close`) for the next render, in this process or another (`kept_confidence`)."""
        confidence, self._confidence = kept_confidence(self.ledger, self._meta("confidence"))
        return confidence

    # -- per bot -----------------------------------------------------------------------------

    def blob(self, bot: str) -> dict[str, Any]:
        """A bot's aggregates (loaded once per render; changes are saved by `_flush`)."""
        if bot not in self.blobs:
            row = self.db.execute("SELECT blob FROM bots WHERE bot = ?", (bot,)).fetchone()
            self.blobs[bot] = json.loads(row[0]) if row else {
                "by_seat": {}, "together": {}, "ahead": {}, "behind": {}, "recent": [], "incidents": [],
                "rounds": None, "played": 0, "last_move": None, "excerpts": [],
            }
        return self.blobs[bot]

    def _flush(self, bots: Iterable[str]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO bots VALUES (?, ?)",
            [(bot, json.dumps(self.blobs[bot], separators=(",", ":"))) for bot in sorted(bots)],
        )

    # -- bringing it up to date ---------------------------------------------------------------

    def refresh(self) -> None:
        """Apply the games finished since the cursor: the schedule's finished prefix is
        saved (committed), the finished games past a game still playing are applied in
        a transaction that `close` rolls back."""
        cursor = self._meta("cursor") or ""
        if cursor and self.store.done_through(cursor) != (self._meta("count") or 0):
            # A game before the cursor is no longer finished (a store put back, a copy edited):
            # the state is not this store's history any more.
            self.db.close()
            self.db = self._open(True)
            cursor = ""
        self.open_deals: set[str] = set()
        self.previous_count = self._meta("count") or 0
        self.ledger = self._load_ledger()
        self.moves = self._meta("moves") or {
            "rating": {}, "score": {}, "played": {}, "carry": {}, "field": [], "joined": [],
        }
        self.played_saved = dict(self.moves["played"])  # each bot's rows as of the cursor
        # The rounds' list is a table (`_save_rounds`); the moves hold its last entry, which
        # the next game may extend.
        self.round_saved = self.moves["rounds"][-1][0] if self.moves.get("rounds") else None
        self._order_from_moves()
        self.last_moves = self.moves.setdefault("last_move", {})
        self.last_rendered = self._meta("rendered")
        self.db.execute("BEGIN")
        self.db.execute("DELETE FROM meta WHERE key = 'rendered'")
        # Every bot the standings will list: the store's and those rated (a seat's bot is
        # one of the store's; one that is not is numbered when it comes, `_moves_of`).
        self._number(self.ledger.known_bots())
        count = self.previous_count
        # The games after the cursor, CHUNK at a time (a rebuild never holds every game):
        # the finished ones before the first still playing (a duplicate deal only whole)
        # are applied and saved; the finished ones after it are the tail.
        cut: str | None = None
        committed_last: str | None = None
        checkpoint = count
        tail: list[GameRow] = []
        after = cursor
        while True:
            chunk = game_rows(self.store.game_rows_after(after, CHUNK))
            if not chunk:
                break
            if self.duplicate and len(chunk) == CHUNK:
                whole = [row for row in chunk if row.deal != chunk[-1].deal]  # the last deal comes whole next time
                chunk = whole or chunk
            after = chunk[-1].key
            if self.duplicate:
                self.open_deals.update(row.deal for row in chunk if row.status != "done")
            if cut is None:
                first_open = next((row for row in chunk if row.status != "done"), None)
                if first_open is not None:
                    cut = deal_of(first_open.key) if self.duplicate else first_open.key
            committed = [row for row in chunk if cut is None or row.key < cut]
            tail += [row for row in chunk if cut is not None and row.key >= cut and row.status == "done"]
            if committed:
                games = read_games(self.store, committed)
                self._apply(games)
                count += len(games)
                committed_last = committed[-1].key
                # A long rebuild is committed every CHECKPOINT games: one stopped resumes
                # from there, and SQLite's log of the transaction stays that size. (Not
                # while a duplicate deal is open and a bot waits to enter the field: the
                # deal's moves are made after it enters, as an uninterrupted pass makes them.)
                if cut is None and count - checkpoint >= CHECKPOINT and not (self.duplicate and self.waiting):
                    self._commit(count, committed_last)
                    self.db.execute("BEGIN")
                    checkpoint = count
        self._commit(count, committed_last)
        self.committed_count = count
        self.db.execute("BEGIN")  # the tail: rolled back by close()
        games = read_games(self.store, tail)
        before, self.touched = self.touched, set()
        self._apply(games)
        self._open_deal_points()
        self._finish(self.touched)  # only the bots of the tail: the others' are done
        self._flush(self.touched)
        self.touched |= before
        self.count = count + len(games)

    def _commit(self, count: int, last: str | None) -> None:
        """Save what the games applied so far made (cursor, count, ledger, moves, the
        touched bots' aggregates) and commit."""
        self._close_deal()
        self._write_pending()
        if last is not None:
            self._set_meta("cursor", last)
        self._set_meta("count", count)
        self._save_ledger(self.ledger)
        self._save_rounds()
        self._set_meta("moves", self.moves)
        self._set_meta("inherit", self.inherit)
        self._finish(self.touched)
        self._flush(self.touched)
        self.db.execute("COMMIT")

    def _order_from_moves(self) -> None:
        import bisect

        self._bisect = bisect
        moves = self.moves
        self.field = set(moves["field"])
        self.order = sorted(self._standing(bot) for bot in self.field)
        joined = {member.bot: member.joined for member in self.members}
        # Who enters the field when: a tournament's bots at once, a league's at its batch.
        waiting = [(joined.get(bot, 0), bot) for bot in self.bot_ids if bot not in self.field]
        self.waiting = sorted(waiting)
        self._pending: list[NewGame] = []  # an open duplicate deal's games (moves wait for its points)
        self._deal: str | None = None

    def _standing(self, bot: str) -> tuple[float, float]:
        rating = self.moves["rating"].get(bot, self.prior)
        return (round(self.moves["score"].get(bot, 0.0), 9), rating) if self.swiss else (0.0, rating)

    def _enter(self, bot: str) -> None:
        if bot not in self.field:
            self.field.add(bot)
            self.moves["field"].append(bot)
            self._bisect.insort(self.order, self._standing(bot))

    def _move(self, bot: str, rating: float | None, score: float | None) -> None:
        key = self._standing(bot)
        if rating is not None:
            self.moves["rating"][bot] = rating
        if score is not None:
            self.moves["score"][bot] = score
        moved = self._standing(bot)
        if moved != key:
            del self.order[self._bisect.bisect_left(self.order, key)]
            self._bisect.insort(self.order, moved)

    def _rank(self, bot: str) -> int:
        return len(self.order) - self._bisect.bisect_right(self.order, self._standing(bot)) + 1

    def _apply(self, games: Sequence[NewGame]) -> None:
        ledger = self.ledger
        for game in games:
            while self.waiting and self.waiting[0][0] <= game.row.round:
                self._enter(self.waiting.pop(0)[1])
            if self.duplicate and self._deal is not None and self._deal != game.row.deal:
                self._close_deal()
            seats = game.seats
            rated = RatedGame(
                key=game.row.key, bots=tuple(s.bot for s in seats), places=tuple(s.place for s in seats),
                forfeits=tuple(s.forfeit for s in seats), deal=game.row.deal if self.duplicate else None,
            )
            ledger.add(rated)
            self._take_points(rated.bots)
            self.touched.update(rated.bots)
            if self.duplicate:
                self._deal = game.row.deal
                self._pending.append(game)
            else:
                self._moves_of(game)
        self._write_pending()

    def _write_pending(self) -> None:
        """Write the rating points and data-script rows made since the last call."""
        if self._new_points:
            self.db.executemany("INSERT OR REPLACE INTO points VALUES (?, ?, ?, ?, ?, ?)", self._new_points)
            self._new_points = []
        if self._new_rows:
            self.db.executemany("INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?)", self._new_rows)
            self._new_rows = []

    def _take_points(self, bots: Iterable[str] | None = None, extra: Mapping[str, list[RatingPoint]] | None = None) -> None:
        """Save the rating points the ledger just made for `bots` (None: any bot), keeping
        none of them in the ledger's history (only a bot's mark that it has points)."""
        history = extra if extra is not None else self.ledger.history
        assert history is not None
        rows = self._new_points
        for bot in history if bots is None else bots:
            points = history.get(bot)
            if not points:
                continue
            fresh = [point for point in points if point is not None]
            if not fresh:
                continue
            first = self._points_of(bot)
            self.point_count[bot] = first + len(fresh)
            rows.extend((bot, first + i, p.games, p.mu, p.sigma, p.conservative) for i, p in enumerate(fresh))
            carry = self.moves["carry"]
            for point in fresh:
                if point.games == 0:  # an inherited prior: the bot's rating until its first game
                    carry[bot] = [point.mu, point.sigma]
                    self.moves.setdefault("zero", {})[bot] = point.conservative
            if extra is None:
                points[:] = [None]  # type: ignore[list-item]
            self.points_made.setdefault(bot, {}).update({p.games: p for p in fresh})

    def _points_of(self, bot: str) -> int:
        """How many rating points of `bot` are saved (each one's place `i` in its order)."""
        if bot not in self.point_count:
            row = self.db.execute("SELECT max(i) FROM points WHERE bot = ?", (bot,)).fetchone()
            self.point_count[bot] = 0 if row[0] is None else row[0] + 1
        return self.point_count[bot]

    def _close_deal(self) -> None:
        """A duplicate deal complete: rated now (as the ledger does when the next deal comes)."""
        if self.duplicate:
            self._take_points(self.ledger.close_deal())
        for game in self._pending:
            self._moves_of(game)
        self._pending = []
        self._deal = None

    def _open_deal_points(self) -> None:
        """A duplicate deal still open at the end: its points as it stands (as `points()` has them)."""
        if self.duplicate and self.ledger.deal_open:
            extra = self.ledger.points()
            self._take_points(extra={bot: [p for p in points if p is not None] for bot, points in extra.items()})
        for game in self._pending:
            self._moves_of(game)
        self._pending = []
        self._write_pending()

    def _moves_of(self, game: NewGame) -> None:
        """`rating_moves` for one game, and everything the game adds to its bots' aggregates."""
        moves = self.moves
        seats = [s.bot for s in game.seats]
        places = [s.place for s in game.seats]
        played_of, rating_of = moves["played"], moves["rating"]
        zero = moves.get("zero", {})
        for bot in seats:
            if bot not in self.field:
                self._enter(bot)
            if bot in zero and played_of.get(bot, 0) == 0:
                self._move(bot, zero[bot], None)  # its inherited prior, before its first game
        before = [self._rank(bot) for bot in seats]
        old = [rating_of.get(bot, self.prior) for bot in seats]
        table = len(seats)
        made = self.points_made
        for bot, place in zip(seats, places):
            played = played_of[bot] = played_of.get(bot, 0) + 1
            point = made[bot].pop(played, None) if bot in made else None  # used once: a rebuild never holds every point
            score = None
            if self.swiss and table > 1:
                score = moves["score"].get(bot, 0.0) + (table - place) / (table - 1)
            if point is not None or score is not None:
                self._move(bot, point.conservative if point is not None else None, score)
            if point is not None:
                moves["carry"][bot] = [point.mu, point.sigma]
        after = [self._rank(bot) for bot in seats]
        row = game.row
        page = moves.get("n", 0) // GAMES_PER_PAGE + 1
        moves["n"] = moves.get("n", 0) + 1
        rounds = moves.setdefault("rounds", [])  # [round, first page, last page, games]
        if rounds and rounds[-1][0] == row.round:
            rounds[-1][2] = page
            rounds[-1][3] += 1
        else:
            rounds.append([row.round, page, page, 1])
        forfeits = sum(1 << seat for seat, s in enumerate(game.seats) if s.forfeit)
        scores = [_compact(s.score) for s in game.seats]
        incidents = [[incident["seat"], incident["reason"]] for incident in game.incidents] or 0
        record = {
            "key": row.key, "round": row.round, "seats": seats, "places": places, "scores": [s.score for s in game.seats],
            "forfeits": [s.forfeit for s in game.seats],
        }
        if any(other not in self.number for other in seats):  # a seat's bot the store does not list
            self._write_pending()
            self._number(sorted(set(self.numbered) | set(seats)))
        # Each seat's data-script row (`row_text` of [key, round, table, rotation, seat,
        # [bot numbers], [places], [scores], forfeits, rating after, change, rank after,
        # rank change, incidents, mu, sigma]): the game's parts encoded once.
        head = row_text([row.key, row.round, row.table_no, row.rotation])[:-1]
        middle = row_text([[self.number[other] for other in seats], places, scores, forfeits])[1:-1]
        noted = row_text(incidents)
        out = []
        for seat, bot in enumerate(seats):
            rating = moves["rating"].get(bot, self.prior)
            move = [rating, rating - old[seat], after[seat], before[seat] - after[seat]]
            mu, sigma = moves["carry"].get(bot, [self.rating.mu, self.rating.sigma])
            text = (
                f"{head},{seat},{middle},{_number_text(round(move[0], 2))},{_number_text(round(move[1], 2))},"
                f"{move[2]},{move[3]},{noted},{_number_text(round(mu, 2))},{_number_text(round(sigma, 2))}]"
            )
            out.append((bot, moves["played"][bot], row.key, text))
            self._aggregate(bot, seat, record, move)
        for incident in game.incidents:  # filed under the bot it names
            blob = self.blob(incident["bot"])
            blob["incidents"] = [*blob["incidents"], [{"key": row.key}, incident]][-INCIDENTS_KEPT:]
            self.touched.add(incident["bot"])
        self._new_rows.extend(out)

    def _aggregate(self, bot: str, seat: int, record: dict[str, Any], move: list[Any]) -> None:
        blob = self.blobs.get(bot) or self.blob(bot)
        seats, places = record["seats"], record["places"]
        mine = places[seat]
        cell = blob["by_seat"].setdefault(str(seat), [0, 0, 0])
        cell[0] += 1
        cell[1] += mine == 1
        cell[2] += mine
        together, ahead, behind = blob["together"], blob["ahead"], blob["behind"]
        for other, mate in enumerate(seats):
            if other != seat:
                together[mate] = together.get(mate, 0) + 1
                if mine < places[other]:
                    ahead[mate] = ahead.get(mate, 0) + 1
                elif places[other] < mine:
                    behind[mate] = behind.get(mate, 0) + 1
        recent = blob["recent"]
        recent.insert(0, {"g": record, "seat": seat, "move": move})
        del recent[RECENT:]
        played = blob["played"] = blob["played"] + 1
        round_no = record["round"]
        rounds = blob["rounds"]
        blob["rounds"] = [min(rounds[0], round_no), max(rounds[1], round_no), played] if rounds else [round_no, round_no, played]
        blob["last_move"] = move
        self.last_moves[bot] = move  # the index reads every bot's

    def _finish(self, bots: Iterable[str]) -> None:
        """The stderr excerpts of bots that played (their pages read them)."""
        from arena.site.pages import log_excerpt

        for bot in bots:
            blob = self.blob(bot)
            excerpts = []
            for recent in blob["recent"]:
                if len(excerpts) >= LOG_EXCERPTS:
                    break
                game = recent["g"]
                for seat, text in self.store.logs(game["key"]).items():
                    if seat < len(game["seats"]) and game["seats"][seat] == bot and text.strip():
                        excerpt, cut = log_excerpt(text, LOG_CHARS)
                        excerpts.append({"key": game["key"], "text": excerpt, "cut": cut})
            blob["excerpts"] = excerpts

    # -- what the pages read ------------------------------------------------------------------

    def _number(self, named: list[str]) -> None:
        """The bots' numbers in the data scripts (their place in `named`, by name): the rows
        are kept numbered; a new bot renumbers every row once (it shifts the names after it)."""
        old = self._meta("numbered") or []
        self.numbered = named
        self.number = {bot: index for index, bot in enumerate(named)}
        if old == named:
            return
        renumbered = []
        for bot, n, text in self.db.execute("SELECT bot, n, row FROM rows").fetchall():
            row = json.loads(text)
            row[5] = [self.number[old[other]] for other in row[5]]
            renumbered.append((row_text(row), bot, n))
        self.db.executemany("UPDATE rows SET row = ? WHERE bot = ? AND n = ?", renumbered)
        self._set_meta("numbered", named)

    def save_rendered(
        self, numbered: list[str], site: str, pages: int, bot_pages: Mapping[str, str],
        folders: Mapping[str, int] | None = None,
    ) -> None:
        """What this render wrote (the data scripts' numbering, the site's folder, the games
        whose pages are final, the list pages, each bot page's signature, the game folders'
        times once written), recorded by `close` once the tail is rolled back: a stopped
        render records nothing, and the next one writes every page."""
        self._rendered = json.dumps(
            {"numbered": numbered, "site": site, "count": self.committed_count, "pages": pages, "bot_pages": bot_pages,
             "folders": folders},
            separators=(",", ":"),
        )

    def fragment(self, bot: str) -> str | None:
        """A bot page's sections that change only when it plays, as the last render made them."""
        row = self.db.execute("SELECT html FROM fragments WHERE bot = ?", (bot,)).fetchone()
        return None if row is None else row[0]

    def keep_fragment(self, bot: str, html: str) -> None:
        """Kept for the next render, with what the render wrote (`save_rendered`): a bot that
        played since is rendered again (it is in `touched`), and only it reads a stale one."""
        self._fragments[bot] = html


def _number_text(value: float) -> str:
    """A number as `row_text` writes it (a finite float is its repr; JSON's encoder for the rest)."""
    return float.__repr__(value) if type(value) is float and math.isfinite(value) else json.dumps(value)


def _compact(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
