"""A table where people play bots: its games run in a thread, each one stored.

`PlayTable` seats the people (`HumanSeat`s, one `Channel` and one secret token per person)
and the bots (each game a fresh process per bot, `arena.play.executor.remote_bot`, in the
table's sandbox); the executor plays one game after another (`arena.play.executor.play_seats`)
and stores each finished game (`store_game`) in the table's store (`arena.store.db.Store`,
e.g. ./arena-play), so the site's replay viewer shows it. The people's rows in the store's `bots` table have
`kind = 'human'`: that is what marks a human game (no other schema change). A new deal
starts once every person at the table has asked for one. `PlayHost` keeps the tables of
one server and finds a seat by its token.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.config.botfolder import BotFolderError, BotManifest, load_bot
from arena.config.field import unique_names
from arena.errors import ArenaError
from arena.faults import SandboxError
from arena.game.protocol import GameOver
from arena.game.seats import Seat
from arena.human.seat import Channel, GameStopped, HumanSeat
from arena.human.turn_help import hint_for
from arena.play.executor import play_seats, remote_bot, store_game
from arena.sandbox import Limits, Sandbox, get_sandbox
from arena.store.db import BotRecord, Store, StoreError, content_hash
from arena.store.keys import ScheduledGame, key_order
from arena.store.seeds import RunKey
from engine.api import GameError
from engine.registry import get_game

HUMAN_KIND = "human"  # the store's bots.kind of a person
DEFAULT_OUT = Path("arena-play")


class PlayError(ArenaError, ValueError):
    """A table cannot be set up as asked (the message says what to change)."""


@dataclass
class TableConfig:
    """What one table plays: the game, its seats (people and bots) and where games go."""

    game: str
    bots: Sequence[Path] = ()  # bot folders filling the seats that are not people's, in seat order (repeated)
    seats: int = 2
    first_seat: int = 0  # the first person's seat; more people sit at the next seats
    humans: int = 1
    rules: dict[str, Any] = field(default_factory=dict)
    sandbox: str = "local"
    out: Path = DEFAULT_OUT
    human_time_s: float | None = None
    limits: Limits = field(default_factory=Limits)
    human_name: str = "human"
    seed: int | None = None  # a public seed (tests): the deals are predictable by anyone
    render_site: bool = False  # render the store's site after each game (`arena play` serves it at /)


def _human_names(count: int, base: str, taken: set[str]) -> list[str]:
    names = []
    for number in range(count):
        name = base if count == 1 else f"{base}-{number + 1}"
        while name in taken:
            name += "_"
        names.append(name)
        taken.add(name)
    return names


def token_key(token: str) -> str:
    """What a table keeps of a seat's token: its hash (looked up, never compared by prefix)."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class PlayTable:
    """One table: people and bots, one game after another (see the module docstring)."""

    def __init__(self, config: TableConfig, *, sandbox: Sandbox | None = None, on_close: Callable[[], None] | None = None):
        self.config = config
        self.game = self._check(config)
        self.rules = self.game.resolve_options(config.rules)
        self.human_seats = [(config.first_seat + n) % config.seats for n in range(config.humans)]
        self.manifests = self._bots(config)
        bot_names = unique_names(self.manifests)
        humans = _human_names(config.humans, config.human_name, set(bot_names))
        names: list[str] = []
        bots = iter(zip(self.manifests, bot_names))
        self.bot_of_seat: dict[int, tuple[BotManifest, str]] = {}
        for seat in range(config.seats):
            if seat in self.human_seats:
                names.append(humans[self.human_seats.index(seat)])
            else:
                manifest, name = next(bots)
                self.bot_of_seat[seat] = (manifest, name)
                names.append(name)
        self.names = names
        self.tokens = {seat: secrets.token_urlsafe(24) for seat in self.human_seats}
        self.channels = {seat: Channel(seat) for seat in self.human_seats}
        self._stop = threading.Event()
        hint = hint_for(self.game.name, self.rules)
        self.people = {
            seat: HumanSeat(names[seat], self.channels[seat], self.game.name, time_s=config.human_time_s,
                            hint=hint, stop=self._stop)
            for seat in self.human_seats
        }
        for seat, channel in self.channels.items():
            channel.intro = {
                "seat": seat,
                "game": self.game.name,
                "title": self.game.title,
                "players": config.seats,
                "seats": list(names),
                "humans": list(self.human_seats),
                "rules": dict(self.rules),
                "time_s": config.human_time_s,
            }
        self._again: set[int] = set()
        self._again_ready = threading.Event()
        self._lock = threading.Lock()
        self._box = sandbox
        self._own_box = sandbox is None
        self._thread: threading.Thread | None = None
        self._on_close = on_close
        self.games_stored: list[str] = []
        self.failure: str | None = None

    # -- setting up -----------------------------------------------------------------------

    @staticmethod
    def _check(config: TableConfig):
        try:
            game = get_game(config.game)
            game.check_players(config.seats)
        except GameError as error:
            raise PlayError(str(error)) from None
        if not 1 <= config.humans <= config.seats:
            raise PlayError(f"--humans is {config.humans}; a table of {config.seats} seats takes 1 to {config.seats} people")
        if not 0 <= config.first_seat < config.seats:
            raise PlayError(f"--seat is {config.first_seat}; seats are numbered 0 to {config.seats - 1}")
        if config.human_time_s is not None and not config.human_time_s > 0:
            raise PlayError(f"--human-time-s is {config.human_time_s:g}; give a number of seconds above 0")
        return game

    def _bots(self, config: TableConfig) -> list[BotManifest]:
        from arena.resources import bots_dir

        wanted = config.seats - config.humans
        folders = list(config.bots) or ([bots_dir() / "random"] if wanted else [])
        if len(folders) > wanted:
            raise PlayError(
                f"{len(folders)} bot folders for {wanted} bot seat{'s' if wanted != 1 else ''} "
                f"({config.seats} seats, {config.humans} people): give at most {wanted}, or more --seats"
            )
        manifests = []
        for folder in folders:
            try:
                manifest = load_bot(folder)
            except BotFolderError as error:
                raise PlayError(str(error)) from None
            if not manifest.plays(self.game.name):
                raise PlayError(
                    f"bot {manifest.name!r} ({manifest.folder}) does not play {self.game.name!r}; "
                    f"its bot.toml lists: {', '.join(manifest.games)}"
                )
            manifests.append(manifest)
        # Fewer folders than bot seats: they take the seats in turn.
        return [manifests[n % len(manifests)] for n in range(wanted)] if manifests else []

    # -- running --------------------------------------------------------------------------

    def start(self) -> None:
        """Open the store and the sandbox, then play in a thread until closed."""
        try:
            self.store = Store.open(self.config.out, create=True)
        except (StoreError, OSError) as error:
            raise PlayError(f"cannot keep games in {self.config.out}: {error}") from None
        try:
            self.key = RunKey.of_store(self.config.seed, self.store)
            self._prepare_store()
            if self._box is None:
                self._box = get_sandbox(self.config.sandbox)
            self._box.hide_paths(manifest.folder for manifest in self.manifests)
            self._box.cleanup_leftovers()
        except (SandboxError, StoreError, ValueError) as error:
            self.store.close()
            raise PlayError(str(error)) from None
        self._thread = threading.Thread(target=self._run, name="arena-play-table", daemon=True)
        self._thread.start()

    def _prepare_store(self) -> None:
        if self.store.settings() is None:
            self.store.save_settings(
                {"name": "arena play", "game": self.game.name, "format": "play", "seats": self.config.seats,
                 "rules": dict(self.rules), "sandbox": self.config.sandbox, "human": True},
                "play",
            )
        records = [
            BotRecord(self.names[seat], self.names[seat], "-", "", "", HUMAN_KIND) for seat in self.human_seats
        ]
        seen: set[str] = set()
        for manifest, name in self.bot_of_seat.values():
            if name not in seen:
                seen.add(name)
                records.append(
                    BotRecord(name, manifest.name, manifest.version, content_hash(manifest.folder), str(manifest.folder))
                )
        # A name kept from an earlier table with other content keeps its first row; the
        # games record names only.
        known = {bot.bot for bot in self.store.bots()}
        self.store.add_bots([record for record in records if record.bot not in known])

    def close(self, wait: float = 10.0) -> None:
        """Stop the game in progress (not stored), end the bots, close the store."""
        self._stop.set()
        self._again_ready.set()
        for channel in self.channels.values():
            channel.publish(None)
        if self._thread is not None:
            self._thread.join(wait)
        if self._own_box and self._box is not None:
            self._box.close()
        store = getattr(self, "store", None)
        if store is not None:
            store.close()
        if self._on_close is not None:
            self._on_close()

    @property
    def closed(self) -> bool:
        """True once the table has stopped playing."""
        return self._stop.is_set() or (self._thread is not None and not self._thread.is_alive())

    def again(self, seat: int) -> None:
        """A person asks for a new deal; it starts once every person has asked."""
        with self._lock:
            self._again.add(seat)
            waiting = [s for s in self.human_seats if s not in self._again]
            if not waiting:
                self._again_ready.set()
        if waiting:
            names = ", ".join(f"seat {s} ({self.names[s]})" for s in waiting)
            for channel in self.channels.values():
                channel.publish({"type": "notice", "text": f"A new deal starts when {names} asks for one.",
                                 "asked": sorted(self._again)})

    def _run(self) -> None:
        try:
            if self.store.games():
                self._render(None)  # the games of earlier tables, on the site at once
            while not self._stop.is_set():
                if not self._play_one():
                    return
                self._again_ready.wait()
                with self._lock:
                    self._again.clear()
                    self._again_ready.clear()
        except Exception as error:  # noqa: BLE001 - said on the page and by the command
            self.failure = f"{type(error).__name__}: {error}"
            for channel in self.channels.values():
                channel.publish({"type": "notice", "text": f"The table stopped: {self.failure}", "failed": True})
            self._stop.set()

    def _next_number(self) -> int:
        games = self.store.games()
        return (key_order(games[-1].key)[0] if games else 0) + 1

    def _play_one(self) -> bool:
        number = self._next_number()
        scheduled = ScheduledGame(number, 1, 0, tuple(self.names), 0)
        seed = self.key.deal_seed(scheduled.deal)
        scheduled = ScheduledGame(number, 1, 0, tuple(self.names), seed)
        seats: list[Seat] = []
        for seat in range(self.config.seats):
            if seat in self.people:
                seats.append(self.people[seat])
                continue
            manifest, name = self.bot_of_seat[seat]
            seats.append(remote_bot(
                manifest.spec(name), self._box, self.config.limits, game=self.game.name, players=self.config.seats,
                rules=self.rules, games=1, seed=self.key.bot_seed(scheduled.key, name),
            ))

        def on_step(state, seat, action, chooser) -> None:
            for person in self.people.values():
                person.observe(state)

        try:
            played = play_seats(
                _Dealt(self.game, self.people.values()), seats, self.rules, seed=seed, key=scheduled.key,
                game_number=number, on_step=on_step,
            )
        except GameStopped:
            return False
        result = played.result
        for seat in result.forfeits:
            if seat in self.people:
                # The referee tells a forfeited seat nothing more; its page still gets the result.
                self.people[seat].game_over(
                    GameOver(game_number=number, seat=seat, places=result.places, scores=result.scores,
                             forfeits=result.forfeits)
                )
        store_game(self.store, played, scheduled)
        self.games_stored.append(scheduled.key)
        replay = self._render(scheduled.key)
        where = "" if replay else f" (`arena report {self.config.out}` draws its replay)"
        for channel in self.channels.values():
            channel.publish(
                {"type": "notice", "stored": scheduled.key, "replay": replay,
                 "text": f"Game {scheduled.key} is stored in {self.config.out}{where}. Play again for a new deal.",
                 "asked": []}
            )
        return True

    def _render(self, key: str | None) -> str | None:
        """The site's page of game `key` (a path from the site's root), once rendered; None
        when the table does not render its site or rendering failed (the game is stored)."""
        if not self.config.render_site:
            return None
        from arena.site import render_site

        try:
            render_site(self.config.out, jobs=1)
        except Exception:  # noqa: BLE001 - the game is stored; `arena report` can draw it later
            return None
        return f"games/{key}.html"


class _Dealt:
    """The game, handing its first state (which the referee makes) to the people's seats,
    which show it when the game starts."""

    def __init__(self, game: Any, people: Any):
        self._game, self._people = game, list(people)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)

    def new_game(self, *args: Any, **kwargs: Any) -> Any:
        state = self._game.new_game(*args, **kwargs)
        for person in self._people:
            person.first_state = state
        return state


class PlayHost:
    """The tables of one server, and the way from a token to a seat. Thread-safe."""

    def __init__(self, *, max_tables: int = 16):
        self.max_tables = max_tables
        self._lock = threading.Lock()
        self._tables: list[PlayTable] = []
        self._seats: dict[str, tuple[PlayTable, int]] = {}

    def open(self, config: TableConfig, *, owner: str | None = None, sandbox: Sandbox | None = None) -> PlayTable:
        """Set up and start a table; its tokens are in `table.tokens` (seat -> token)."""
        with self._lock:
            self._tables = [table for table in self._tables if not table.closed]
            if owner is not None:
                for table in [t for t in self._tables if getattr(t, "owner", None) == owner]:
                    self._forget(table)
                    threading.Thread(target=table.close, daemon=True).start()
            if len(self._tables) >= self.max_tables:
                # A table nobody has open (its people closed their tabs) gives way, oldest first.
                left = [table for table in self._tables if not any(c.pages for c in table.channels.values())]
                if not left:
                    raise PlayError(f"{self.max_tables} tables are playing already; try again when one has ended")
                self._forget(left[0])
                threading.Thread(target=left[0].close, daemon=True).start()
        table = PlayTable(config, sandbox=sandbox)
        table.owner = owner  # type: ignore[attr-defined]
        table.start()
        with self._lock:
            self._tables.append(table)
            for seat, token in table.tokens.items():
                self._seats[token_key(token)] = (table, seat)
        return table

    def _forget(self, table: PlayTable) -> None:
        self._tables = [t for t in self._tables if t is not table]
        for key in [key for key, (t, _) in self._seats.items() if t is table]:
            del self._seats[key]

    def seat(self, token: str) -> tuple[PlayTable, int] | None:
        """The table and seat of a token (None: no such seat)."""
        if not isinstance(token, str) or not 16 <= len(token) <= 128:
            return None
        with self._lock:
            found = self._seats.get(token_key(token))
        return found

    def tables(self) -> list[PlayTable]:
        """Every table this host opened that is still playing."""
        with self._lock:
            return [table for table in self._tables if not table.closed]

    def close(self) -> None:
        """Close every table (the server is stopping)."""
        with self._lock:
            tables, self._tables = list(self._tables), []
        for table in tables:
            table.close()
