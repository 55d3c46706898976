"""Where every seed of a run comes from: one key per run, and what is derived from it.

A run (a tournament or a match) has one `RunKey`. By default it is a secret of 256 bits
drawn from the operating system (`RunKey.generate()`), kept with the results (a file
beside the tournament store, below; or the match result) so that resume, the cluster and re-simulation
reproduce every game exactly, and never sent to a bot. A seed given by the user
(`--seed 1`, `seed = 1`) becomes a *public* key (`RunKey.from_seed(1)`): the run is
reproducible from the seed alone, and so are its deals, by anyone (a bot included) who
guesses it. Use a public seed for tests and demos, the secret for competitions.

From the key, HMAC-SHA256 derives, each with its own label so that none can be computed
from another without the key:
- `deal_seed(deal)`: the engine's seed for a deal (63 bits), one per deal key, shared by
  the rotations of a duplicate deal;
- `bot_seed(scope, bot)`: the seed a bot gets in `hello` for its own randomness (48 bits);
  `scope` is the game key in a tournament and "match" in a match;
- `schedule_seed`: what the schedule's shuffles are seeded with (the schedule is not
  secret, but it is as reproducible as the deals).

After a tournament the organiser may publish the secret (`arena secret DIR`): anyone
can then recompute every deal seed with `deal_seed` and check the stored games.

Where a secret is kept: a file of its own, mode 0600, never inside the results' database
(`arena.store.db.Store.secret_path`: `DIR/secret.key` beside `arena.sqlite`, or a folder
of the organiser's kept apart, $ARENA_SECRET_DIR), so that a copy of the store carries no
secret. `write_secret_file` and `read_secret_file` do the file's part.

Only the standard library is imported here, so a tool (or a test's "seer" bot trying to
break it) can use this file alone, without arena's other dependencies; within arena its
`SeedError` is an `ArenaError` (arena/errors.py), and a ValueError either way.
"""

from __future__ import annotations

import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from arena.errors import ArenaError
except ImportError:  # this file alone (a tool, a test's seer bot): the standard library only

    class ArenaError(Exception):  # type: ignore[no-redef]
        """arena's errors' base, when this file runs without arena (SeedError is still a ValueError)."""

SECRET_BYTES = 32  # 256 bits (at least 128 are needed to be beyond guessing)
PUBLIC_SEED_WARNING = (
    "seed {seed} is public: any bot that guesses it can compute every deal (the other "
    "seats' cards, the face-down cards, the stock's order). Fine for tests and demos; for a "
    "competition leave the seed out, and arena draws a secret and stores it with the results."
)


class SeedError(ArenaError, ValueError):
    """A stored or given secret is not a valid key (the message says what is expected)."""


@dataclass(frozen=True)
class RunKey:
    """The key every seed of one run is derived from (see the module docstring)."""

    material: bytes
    public_seed: int | None = None  # the user's seed when the key is public; None for a secret

    @classmethod
    def generate(cls) -> RunKey:
        """A new secret key from the operating system's random source."""
        return cls(secrets.token_bytes(SECRET_BYTES))

    @classmethod
    def from_seed(cls, seed: int) -> RunKey:
        """The public key of a user's seed: reproducible, and predictable by anyone."""
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise SeedError(f"a seed is a whole number of at least 0, not {seed!r}")
        return cls(f"arena-public-seed:{seed}".encode(), public_seed=seed)

    @classmethod
    def from_secret(cls, secret: str) -> RunKey:
        """The key of a stored (or published) secret, written as hex."""
        try:
            material = bytes.fromhex(secret.strip())
        except (ValueError, AttributeError):
            raise SeedError(f"a secret is {SECRET_BYTES * 2} hex digits, not {secret!r}") from None
        if len(material) < 16:
            raise SeedError(f"a secret has at least 128 bits (32 hex digits); {secret!r} is too short")
        return cls(material)

    @classmethod
    def of_store(cls, seed: int | None, store: Any) -> RunKey:
        """A run's key (a tournament's or a league's): the public key of `seed`, else the
        secret stored in `store` (an `arena.store.db.Store`), drawn and stored on the first run
        so that a resume deals the same cards. Two runs starting one store at once keep the
        first secret stored."""
        if seed is not None:
            return cls.from_seed(seed)
        secret = store.secret()
        if secret is not None:
            return cls.from_secret(secret)
        return cls.from_secret(store.save_secret(cls.generate().secret))

    @classmethod
    def coerce(cls, seed: int | RunKey) -> RunKey:
        """A key as given, or the public key of an integer seed."""
        return seed if isinstance(seed, RunKey) else cls.from_seed(seed)

    @property
    def is_public(self) -> bool:
        """True when the key comes from a user's seed (anyone can guess it)."""
        return self.public_seed is not None

    @property
    def secret(self) -> str | None:
        """The secret as hex (what is stored and may be published); None for a public seed."""
        return None if self.is_public else self.material.hex()

    def _derive(self, label: str, bits: int) -> int:
        digest = hmac.digest(self.material, label.encode(), "sha256")
        return int.from_bytes(digest[:8], "big") >> (64 - bits)

    def deal_seed(self, deal: str) -> int:
        """The engine's seed for the deal with key `deal` (63 bits)."""
        return self._derive(f"deal/{deal}", 63)

    def bot_seed(self, scope: str, bot: str) -> int:
        """The seed `bot` gets in `hello` for `scope` (a game key, or "match"); 48 bits."""
        return self._derive(f"bot/{scope}/{bot}", 48)

    @property
    def schedule_seed(self) -> str:
        """What the schedule's shuffles are seeded with: the seed itself when public."""
        if self.public_seed is not None:
            return str(self.public_seed)
        return format(self._derive("schedule", 63), "x")

    def __repr__(self) -> str:
        # Never print the secret by accident (logs, tracebacks, pydantic errors).
        return f"RunKey(public_seed={self.public_seed})" if self.is_public else "RunKey(<secret>)"


def write_secret_file(path: Path, secret: str) -> str:
    """Keep `secret` in `path` (mode 0600, written whole before it gets its name) unless
    the file exists; returns the secret the file holds (the first one written wins)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (secret + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(partial, path)  # atomic: fails if another run kept its secret first
    except FileExistsError:
        pass
    finally:
        os.unlink(partial)
    kept = read_secret_file(path)
    if kept is None:
        raise SeedError(f"the secret file {path} vanished as it was written")
    return kept


def read_secret_file(path: Path) -> str | None:
    """The secret kept in `path` (hex), or None when there is no such file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, encoding="ascii", errors="replace") as file:
        return file.read(4096).strip()
