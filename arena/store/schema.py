"""The store's tables: what each holds (below), the schema a new store is created with
(`SCHEMA`), and what a store made by an older arena is given when it is opened
(`migrate`). `arena.store.db.Store` creates and opens them.

Tables (every JSON column is UTF-8 JSON text):

    meta       key TEXT PK, value TEXT           schema_version, settings (JSON of the
                                                 resolved tournament settings), fingerprint,
                                                 created (ISO time, UTC), secret_id (names the
                                                 secret's file in $ARENA_SECRET_DIR),
                                                 secret_kept ('1' once a secret is kept). The
                                                 file is mode 0600.
    bots       bot TEXT PK                       the bot's id in this tournament (its name,
                                                 or name#2 when two folders share a name)
               name, version, content_hash       from bot.toml; sha256 of the folder's files
               folder TEXT                       absolute folder ('' for an in-process bot)
               kind TEXT                         'folder', 'in-process', or 'human' (a person
                                                 at `arena play`: marks a human game)
    games      key TEXT PK                       'ROUND-TABLE-ROTATION' (schedule.ScheduledGame.key)
               round, table_no, rotation INT     position in the schedule
               deal TEXT, seed INT               deal key (shared by duplicate rotations), deal seed
               bots TEXT                         JSON list of bot ids in seat order
               status TEXT                       'scheduled' or 'done'
               finished_at TEXT, duration_s REAL when and how long (NULL until done)
               game TEXT, rules TEXT             game name and JSON of its resolved rules (when done)
               rules_version TEXT                the engine's rules version it was played under
                                                 (when done; NULL in stores older than it)
    seats      game_key, seat  PK                one row per seat of a finished game
               bot, place, score, engine_place, forfeit (0/1)
    incidents  id PK, game_key, seat, bot, reason, detail, decision, forfeit (0/1), log_tail,
               request INT                       the bot's request id it faulted at (NULL: none, or
                                                 a store older than it)
    replays    game_key PK, encoding TEXT ('json+zlib'), data BLOB: the referee's Replay record
    logs       game_key, seat PK, bot, text      the end of each bot's stderr in that game
    members    bot TEXT PK                       a league's bots (`arena.league.ladder`; empty for a
               lineage TEXT                      tournament): the bot's name, shared by its versions
               joined INTEGER                    the batch from which it was matched
               left_at INTEGER                   the batch from which it no longer is (NULL: active)
               status TEXT                       'active', 'retired' (a newer version came),
                                                 'removed' (gone from the registry) or 'suspended'
               reason TEXT                       why it stopped playing ('' while active)

    saved_state name TEXT PK, value BLOB         state kept to resume from: a league's ledgers
                                                 and counts after a batch (`arena.league.saved_state`,
                                                 which checks it before any use)

A league also numbers its games: `games.seq` is the schedule sequence number (1, 2, ...;
NULL in a tournament), in the same order as the keys, which a league writes as
'BATCH-TABLE-ROTATION'.
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    bot TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL,
    content_hash TEXT NOT NULL, folder TEXT NOT NULL, kind TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    key TEXT PRIMARY KEY, round INTEGER NOT NULL, table_no INTEGER NOT NULL,
    rotation INTEGER NOT NULL, deal TEXT NOT NULL, seed INTEGER NOT NULL, bots TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('scheduled', 'done')),
    finished_at TEXT, duration_s REAL, game TEXT, rules TEXT, rules_version TEXT
);
CREATE TABLE IF NOT EXISTS seats (
    game_key TEXT NOT NULL REFERENCES games(key), seat INTEGER NOT NULL,
    bot TEXT NOT NULL REFERENCES bots(bot), place INTEGER NOT NULL, score REAL NOT NULL,
    engine_place INTEGER NOT NULL, forfeit INTEGER NOT NULL,
    PRIMARY KEY (game_key, seat)
);
CREATE TABLE IF NOT EXISTS incidents (
    id INTEGER PRIMARY KEY, game_key TEXT NOT NULL REFERENCES games(key), seat INTEGER NOT NULL,
    bot TEXT NOT NULL, reason TEXT NOT NULL, detail TEXT NOT NULL, decision INTEGER NOT NULL,
    forfeit INTEGER NOT NULL, log_tail TEXT NOT NULL, request INTEGER
);
CREATE TABLE IF NOT EXISTS replays (
    game_key TEXT PRIMARY KEY REFERENCES games(key), encoding TEXT NOT NULL, data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS logs (
    game_key TEXT NOT NULL REFERENCES games(key), seat INTEGER NOT NULL, bot TEXT NOT NULL,
    text TEXT NOT NULL, PRIMARY KEY (game_key, seat)
);
CREATE TABLE IF NOT EXISTS members (
    bot TEXT PRIMARY KEY REFERENCES bots(bot), lineage TEXT NOT NULL, joined INTEGER NOT NULL,
    left_at INTEGER, status TEXT NOT NULL CHECK (status IN ('active', 'retired', 'removed', 'suspended')),
    reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS seats_by_bot ON seats (bot);
CREATE INDEX IF NOT EXISTS incidents_by_game ON incidents (game_key);
"""
# Added since schema 1 was set, each created once in an older store (`migrate`).
_ADDED = {
    # Games in schedule order from a round on, read without sorting the whole table.
    "games_in_schedule": "CREATE INDEX IF NOT EXISTS games_in_schedule ON games (round, table_no, rotation)",
    # State a league saves to resume from (`Store.saved_state`).
    "saved_state": "CREATE TABLE IF NOT EXISTS saved_state (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
}


def migrate(db: sqlite3.Connection) -> None:
    """Columns added since a store's schema version was set, each added once: two runners
    opening one old store at once take turns (BEGIN IMMEDIATE), the second sees the
    first's columns."""
    added = {
        # A store from before the rules version was kept: its games show it as unknown.
        ("games", "rules_version", "TEXT"),
        # A store from before incidents kept the bot's request id: shown without it.
        ("incidents", "request", "INTEGER"),
        # A store from before leagues numbered their games.
        ("games", "seq", "INTEGER"),
    }

    def missing() -> list[tuple[str, str, str]]:
        have = {table: {row[1] for row in db.execute(f"PRAGMA table_info({table})")} for table in ("games", "incidents")}
        return sorted(column for column in added if column[1] not in have[column[0]])

    def absent() -> list[str]:
        have = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        return sorted(name for name in _ADDED if name not in have)

    if not missing() and not absent():  # the common case writes nothing: a read-only store opens too
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for table, column, kind in missing():
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        for name in absent():
            db.execute(_ADDED[name])
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
