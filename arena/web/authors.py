"""The authors' door's book: accounts, tokens, who owns which bot name, and submissions.

One SQLite file in the registry, `REGISTRY/.door/door.sqlite` (a dot folder: never listed
as a bot, hidden from every bot the league starts). Standard library only.

- An author has a name and one live token at a time. A token looks like
  `arena_<id>_<secret>`: the id (public, 10 hex digits) finds its row without trying every
  hash; the secret (32 random bytes) is stored only as scrypt(secret, salt) with a salt of
  its own, and compared in constant time. `add` and `rotate` return the token once.
- An organiser account may act on every bot (as the organiser's shell does).
- An author owns the bot names they first got accepted (a name is claimed when its
  submission is accepted, never before); nobody else may submit versions of them or
  retire them. A name already in the registry, or that has played in the served league
  (`Book.played`), and that nobody owns (the organiser's own bots, the examples, a bot
  since removed from the registry) belongs to the organiser.
- Every upload an author starts counts against their hourly limit from its start,
  refused or not (`start_upload`): a refused one stays a row of `uploads` (its status
  and line); an accepted one becomes its submission's row.
- A submission is a row: its state (queued, checking, building, smoke match, accepted,
  refused), the reasons, the end of the bot's stderr, and when each changed. The
  validation queue (`arena.web.queue`) is these rows: a restart after kill -9 finds the
  ones it was working on and runs them again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

DOOR = ".door"
BOOK = "door.sqlite"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
TOKEN = re.compile(r"^arena_([0-9a-f]{10})_([A-Za-z0-9_-]{43})$")
# scrypt's cost: 16 MB and about 50 ms a check on one core; every token has its own salt.
SCRYPT = {"n": 1 << 14, "r": 8, "p": 1, "dklen": 32, "maxmem": 64 << 20}

STATES = ("queued", "checking", "building", "smoke match", "accepted", "refused")
RUNNING = ("checking", "building", "smoke match")
FINAL = ("accepted", "refused")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS authors (
    name TEXT PRIMARY KEY, organiser INTEGER NOT NULL, created REAL NOT NULL, revoked REAL
);
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY, author TEXT NOT NULL REFERENCES authors(name), salt BLOB NOT NULL,
    hash BLOB NOT NULL, created REAL NOT NULL, revoked REAL
);
CREATE TABLE IF NOT EXISTS owners (bot TEXT PRIMARY KEY, author TEXT NOT NULL, since REAL NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, author TEXT NOT NULL, name TEXT NOT NULL,
    version TEXT NOT NULL, state TEXT NOT NULL, reasons TEXT NOT NULL DEFAULT '[]',
    stderr TEXT NOT NULL DEFAULT '', content_hash TEXT, created REAL NOT NULL, updated REAL NOT NULL,
    address TEXT NOT NULL DEFAULT '', packed_bytes INTEGER NOT NULL DEFAULT 0, note TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS submissions_by_author ON submissions(author, created);
CREATE TABLE IF NOT EXISTS uploads (
    id TEXT PRIMARY KEY, author TEXT NOT NULL, created REAL NOT NULL, status INTEGER, line TEXT
);
CREATE INDEX IF NOT EXISTS uploads_by_author ON uploads(author, created);
CREATE INDEX IF NOT EXISTS submissions_by_state ON submissions(state, seq);
"""


class AuthorError(ArenaError, ValueError):
    """A mistake in an account command (unknown author, bad name); the message says what to do."""


@dataclass(frozen=True)
class Author:
    """An account as `arena authors list` shows it (never its token)."""

    name: str
    organiser: bool
    created: float
    revoked: float | None
    token_id: str | None
    bots: tuple[str, ...]


@dataclass(frozen=True)
class SubmissionRow:
    """A submission as stored."""

    id: str
    author: str
    name: str
    version: str
    state: str
    reasons: tuple[str, ...]
    stderr: str
    content_hash: str | None
    created: float
    updated: float
    note: str = ""  # said with the final state: e.g. that this version was already there

    def public(self) -> dict[str, Any]:
        """What the API says of it (to its author and the organiser)."""
        return {
            "id": self.id, "author": self.author, "name": self.name, "version": self.version, "state": self.state,
            "final": self.state in FINAL, "bot": f"{self.name}@{self.version}" if self.state == "accepted" else None,
            "content_hash": self.content_hash, "reasons": list(self.reasons), "stderr": self.stderr,
            "created": self.created, "updated": self.updated, "note": self.note,
        }


def book_path(registry: Path) -> Path:
    """Where a registry's door book lives."""
    return Path(registry) / DOOR / BOOK


def _hash(secret: str, salt: bytes) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, **SCRYPT)


class Book:
    """The door's SQLite book; thread-safe (one connection, one lock, short transactions)."""

    def __init__(self, registry: str | Path):
        self.registry = Path(registry).resolve()
        path = book_path(self.registry)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: a killed process loses nothing committed
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(submissions)")}
        if "note" not in columns:  # a book made before submissions had a note
            self._db.execute("ALTER TABLE submissions ADD COLUMN note TEXT NOT NULL DEFAULT ''")
        self._verified: dict[bytes, tuple[str, float]] = {}  # keyed digest of a token -> (token id, when)
        self._cache_key = secrets.token_bytes(32)
        self._checking: dict[str, threading.Lock] = {}  # token id -> held while its token is hashed
        self._checking_lock = threading.Lock()
        # Whether a bot name has played in the served league (the door sets it: its store).
        self.played: Callable[[str], bool] = lambda bot: False

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _run(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def _transaction(self, steps: list[tuple[str, tuple]]) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for sql, args in steps:
                    self._db.execute(sql, args)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- accounts ------------------------------------------------------------------------

    def _new_token(self, author: str) -> tuple[str, tuple[str, tuple]]:
        token_id = secrets.token_hex(5)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        row = ("INSERT INTO tokens VALUES (?, ?, ?, ?, ?, NULL)", (token_id, author, salt, _hash(secret, salt), time.time()))
        return f"arena_{token_id}_{secret}", row

    def add(self, name: str, organiser: bool = False) -> str:
        """A new account; returns its token (shown once, stored only hashed)."""
        if not NAME.match(name):
            raise AuthorError(
                f"author name {name!r} is not allowed: 1-40 letters, digits, '_' or '-', starting with a letter or digit"
            )
        if self._run("SELECT 1 FROM authors WHERE name = ?", (name,)):
            raise AuthorError(f"author {name} exists; `arena authors rotate {name}` gives them a new token")
        token, row = self._new_token(name)
        self._transaction([("INSERT INTO authors VALUES (?, ?, ?, NULL)", (name, int(organiser), time.time())), row])
        return token

    def _known(self, name: str) -> tuple:
        found = self._run("SELECT name, organiser, revoked FROM authors WHERE name = ?", (name,))
        if not found:
            raise AuthorError(f"no author {name}; `arena authors list` shows them, `arena authors add {name}` makes one")
        return found[0]

    def rotate(self, name: str) -> str:
        """A new token for `name` (its old one stops working at once); un-revokes the account."""
        self._known(name)
        token, row = self._new_token(name)
        now = time.time()
        self._transaction([
            ("UPDATE tokens SET revoked = ? WHERE author = ? AND revoked IS NULL", (now, name)),
            ("UPDATE authors SET revoked = NULL WHERE name = ?", (name,)),
            row,
        ])
        self._verified.clear()
        return token

    def revoke(self, name: str) -> None:
        """The account's token stops working; its bots stay (and stay theirs)."""
        self._known(name)
        now = time.time()
        self._transaction([
            ("UPDATE tokens SET revoked = ? WHERE author = ? AND revoked IS NULL", (now, name)),
            ("UPDATE authors SET revoked = ? WHERE name = ?", (now, name)),
        ])
        self._verified.clear()

    def authors(self) -> list[Author]:
        """Every account, oldest first."""
        rows = self._run(
            "SELECT a.name, a.organiser, a.created, a.revoked, "
            "(SELECT id FROM tokens t WHERE t.author = a.name AND t.revoked IS NULL) FROM authors a ORDER BY a.created"
        )
        owned: dict[str, list[str]] = {}
        for bot, author in self._run("SELECT bot, author FROM owners ORDER BY bot"):
            owned.setdefault(author, []).append(bot)
        return [Author(n, bool(o), c, r, t, tuple(owned.get(n, ()))) for n, o, c, r, t in rows]

    def authenticate(self, token: str) -> tuple[str, bool] | None:
        """(author, organiser) for a live token, else None."""
        match = TOKEN.fullmatch(token or "")
        if not match:
            return None
        token_id, secret = match.groups()
        found = self._run(
            "SELECT t.salt, t.hash, a.name, a.organiser FROM tokens t JOIN authors a ON a.name = t.author "
            "WHERE t.id = ? AND t.revoked IS NULL AND a.revoked IS NULL",
            (token_id,),
        )
        if not found:
            return None
        salt, stored, author, organiser = found[0]
        # A token checked lately is not hashed again (scrypt is slow by design); the cache
        # is keyed by a digest under a key of this process and emptied by rotate and revoke.
        key = hmac.new(self._cache_key, token.encode(), hashlib.sha256).digest()
        if not self._seen_lately(key, token_id):
            # One hash of a token id at a time: a burst of requests with one token (an
            # author's uploads, a page polling) hashes it once, the others then find it here.
            with self._checking_lock:
                checking = self._checking.setdefault(token_id, threading.Lock())
            with checking:
                if not self._seen_lately(key, token_id):
                    if not hmac.compare_digest(_hash(secret, salt), stored):
                        return None
                    if len(self._verified) > 10_000:
                        self._verified.clear()
                    self._verified[key] = (token_id, time.monotonic())
        return author, bool(organiser)

    def _seen_lately(self, key: bytes, token_id: str) -> bool:
        seen = self._verified.get(key)
        return seen is not None and seen[0] == token_id and time.monotonic() - seen[1] <= 300

    # -- names ---------------------------------------------------------------------------

    def owner_of(self, bot: str) -> str | None:
        """The author who owns a bot name; '' for a name in the registry or the league's
        store that nobody owns (the organiser's); None for a free name."""
        found = self._run("SELECT author FROM owners WHERE bot = ?", (bot,))
        if found:
            return found[0][0]
        return "" if (self.registry / bot).exists() or self.played(bot) else None

    def may_use(self, author: str, organiser: bool, bot: str) -> str | None:
        """None when `author` may submit or retire `bot`, else the one-line reason."""
        if organiser:
            return None
        owner = self.owner_of(bot)
        if owner is None or owner == author:
            return None
        if owner == "" and not (self.registry / bot).exists():
            return f"the bot name {bot} has played in this league and is not yours; choose another name in bot.toml"
        if owner == "":
            return f"the bot name {bot} belongs to the organiser's registry; choose another name in bot.toml"
        return f"the bot name {bot} belongs to another author; choose another name in bot.toml"

    def claim(self, author: str, bot: str) -> None:
        """`author` owns `bot` from now (when nobody did)."""
        self._run("INSERT OR IGNORE INTO owners VALUES (?, ?, ?)", (bot, author, time.time()))

    # -- submissions ---------------------------------------------------------------------

    def new_submission(
        self, author: str, name: str, version: str, address: str, packed: int, upload: str | None = None
    ) -> str:
        """A queued submission (of the upload `upload`, whose row it replaces); its id."""
        sub_id = secrets.token_hex(8)
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            (seq,) = self._db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM submissions").fetchone()
            self._db.execute(
                "INSERT INTO submissions (id, seq, author, name, version, state, created, updated, address, "
                "packed_bytes) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)",
                (sub_id, seq, author, name, version, now, now, address, packed),
            )
            if upload is not None:
                self._db.execute("DELETE FROM uploads WHERE id = ?", (upload,))
            self._db.execute("COMMIT")
        return sub_id

    def recent_uploads(self, author: str, since: float) -> int:
        """How many uploads `author` started since `since`: their submissions, and their
        uploads refused (or still coming) before they became one."""
        return self._run(
            "SELECT (SELECT COUNT(*) FROM submissions WHERE author = ?1 AND created >= ?2) + "
            "(SELECT COUNT(*) FROM uploads WHERE author = ?1 AND created >= ?2)", (author, since)
        )[0][0]

    def start_upload(self, author: str, since: float, most: int) -> str | None:
        """An upload of `author` begins: its id, counted from now; None (and nothing
        counted) when `most` uploads since `since` are counted already. The count and the
        row are one transaction, so uploads started at once cannot all pass the limit."""
        upload = secrets.token_hex(8)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                (count,) = self._db.execute(
                    "SELECT (SELECT COUNT(*) FROM submissions WHERE author = ?1 AND created >= ?2) + "
                    "(SELECT COUNT(*) FROM uploads WHERE author = ?1 AND created >= ?2)", (author, since)
                ).fetchone()
                if count >= most:
                    return None
                self._db.execute("INSERT INTO uploads (id, author, created) VALUES (?, ?, ?)",
                                 (upload, author, time.time()))
            finally:
                self._db.execute("COMMIT")
        return upload

    def refuse_upload(self, upload: str, status: int, line: str) -> None:
        """An upload refused before it became a submission: it stays counted, with why."""
        self._run("UPDATE uploads SET status = ?, line = ? WHERE id = ?", (status, line, upload))

    def set_state(
        self, sub_id: str, state: str, *, reasons: list[str] | None = None, stderr: str | None = None,
        content_hash: str | None = None, note: str | None = None,
    ) -> None:
        """Move a submission on."""
        assert state in STATES, state
        self._run(
            "UPDATE submissions SET state = ?, updated = ?, reasons = COALESCE(?, reasons), "
            "stderr = COALESCE(?, stderr), content_hash = COALESCE(?, content_hash), note = COALESCE(?, note) "
            "WHERE id = ?",
            (state, time.time(), json.dumps(reasons) if reasons is not None else None, stderr, content_hash, note,
             sub_id),
        )

    def _rows(self, where: str, args: tuple) -> list[SubmissionRow]:
        rows = self._run(
            "SELECT id, author, name, version, state, reasons, stderr, content_hash, created, updated, note "
            f"FROM submissions WHERE {where}",
            args,
        )
        return [SubmissionRow(i, a, n, v, s, tuple(json.loads(r)), e, h, c, u, t)
                for i, a, n, v, s, r, e, h, c, u, t in rows]

    def submission(self, sub_id: str) -> SubmissionRow | None:
        found = self._rows("id = ?", (sub_id,))
        return found[0] if found else None

    def submissions_of(self, author: str | None, limit: int = 50) -> list[SubmissionRow]:
        """An author's submissions (everyone's for None), newest first."""
        if author is None:
            return self._rows("1 ORDER BY seq DESC LIMIT ?", (limit,))
        return self._rows("author = ? ORDER BY seq DESC LIMIT ?", (author, limit))

    def waiting(self) -> list[SubmissionRow]:
        """Submissions not finished, in the order they came (a restart runs them again)."""
        return self._rows(f"state NOT IN ({', '.join('?' * len(FINAL))}) ORDER BY seq", FINAL)
