"""Tournaments: the tournament file, and running its scheduled games into the store.

`load_tournament(path, overrides)` reads a TOML tournament file (or none: flags alone),
applies overrides (the `arena run` flags) and validates it with pydantic; every mistake
is one line naming the key, the bad value and what is allowed (`TournamentError`).

`run_tournament(config)` resolves the bots, schedules the games (`arena.schedule`), plays
the games not yet stored with `jobs` at once, and commits each finished game to the store
(`arena.store`) as soon as it finishes. Running it again on the same output folder
resumes: finished games are never played again; a changed file is refused, naming what
changed. Swiss rounds are scheduled only once the previous round is all stored.

The unit of work is `play_scheduled_game(spec)`: a pure function of a small picklable
`GameSpec` (game, rules, seats with their bots by folder and content hash, deal seed,
limits, sandbox) returning a `PlayedGame`. The local pool runs exactly that, in threads
(the bots themselves are separate processes); a cluster can run it on workers. Every bot
gets a fresh process for each game. For benchmarks and tests, bots can also be Python
`Seat` factories (`in_process=`), which only a local run can use.
"""

from __future__ import annotations

import glob
import hashlib
import json
import threading
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from arena.botfolder import BotFolderError, load_bot
from arena.match import limits_info, unique_names
from arena.protocol import Hello, MatchOver
from arena.rating import (
    OrderedLedger,
    RatedGame,
    RatingSettings,
    RatingSettingsError,
    RatingTable,
    rated_games,
    store_ledger,
    stored_standings,
)
from arena.referee import GameResult, play_game
from arena.sandbox import BotFault, Limits, Sandbox, get_sandbox
from arena.seeds import RunKey
from arena.schedule import (
    ScheduledGame,
    ScheduleError,
    gauntlet,
    key_order,
    round_robin,
    swiss_round,
)
from arena.seats import RemoteBot, Seat
from arena.store import BotRecord, DuplicateResult, Store, content_hash
from engine.api import GameError
from engine.registry import get_game

FORMATS = ("round-robin", "swiss", "gauntlet")
SANDBOXES = ("local", "docker")
# Settings that do not change what is played: free to differ between runs of one tournament.
UNFINGERPRINTED = ("name", "jobs", "output", "cluster")


class TournamentError(ValueError):
    """A tournament cannot run as given; `mistakes` has one line per mistake."""

    def __init__(self, mistakes: Sequence[str], source: str = "tournament"):
        self.mistakes = list(mistakes)
        self.source = source
        super().__init__(
            mistakes[0] if len(mistakes) == 1 else f"{len(mistakes)} mistakes in the {source}:\n"
            + "\n".join(f"  - {line}" for line in mistakes)
        )


class SettingsChanged(TournamentError):
    """The output folder holds a tournament with other settings."""


class TournamentInterrupted(Exception):
    """The run was stopped (Ctrl-C); every finished game is stored."""

    def __init__(self, done: int, total: int, output: Path):
        self.done, self.total, self.output = done, total, output
        super().__init__(f"stopped with {done} of {total} games stored in {output}")


# ----------------------------------------------------------------- the tournament file


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LimitsConfig(_Strict):
    """Per bot per game: start-up, per decision, time bank, memory, CPU."""

    startup_s: float = Field(10.0, gt=0, le=600, description="Seconds from start to the bot's `ready`.")
    decision_s: float = Field(1.0, gt=0, le=600, description="Seconds per decision before the time bank.")
    time_bank_s: float = Field(10.0, ge=0, le=3600, description="Extra seconds per game, spent on overruns.")
    memory_mb: int = Field(512, ge=16, le=65536, description="Memory per bot, MB.")
    cpu_s: int = Field(600, ge=1, le=86400, description="CPU seconds per bot per game.")
    cpus: float = Field(1.0, gt=0, le=64, description="CPU share in the docker sandbox.")

    def limits(self) -> Limits:
        """The sandbox's Limits."""
        return Limits(
            startup_s=self.startup_s,
            decision_s=self.decision_s,
            time_bank_s=self.time_bank_s,
            memory_mb=self.memory_mb,
            cpu_s=self.cpu_s,
            cpus=self.cpus,
        )


class RatingConfig(_Strict):
    """TrueSkill settings (see docs/tournaments.md)."""

    mu: float = 25.0
    sigma: float = Field(25.0 / 3, gt=0)
    beta: float = Field(25.0 / 6, gt=0)
    tau: float = Field(0.0, ge=0)
    draw_probability: float = Field(0.001, gt=0, lt=1)
    duplicate_update: Literal["hand", "deal", "rotation"] = "hand"

    def settings(self) -> RatingSettings:
        """arena.rating's settings."""
        return RatingSettings(**self.model_dump())


class TournamentConfig(_Strict):
    """A validated tournament file (after the flags' overrides)."""

    name: str = Field("tournament", min_length=1, max_length=200)
    game: str
    seats: int = Field(ge=2, le=6)
    format: Literal["round-robin", "swiss", "gauntlet"] = "round-robin"
    rounds: int | None = Field(None, ge=1, le=100_000)
    cycles: int = Field(1, ge=1, le=10_000)
    challengers: list[str] = Field(default_factory=list)
    duplicate: bool = False
    bots: list[str] = Field(default_factory=list)
    seed: int | None = Field(
        None, ge=0, le=2**63 - 1,
        description="A public seed (reproducible, and predictable by bots); none: a secret key is drawn and stored.",
    )
    rules: dict[str, Any] = Field(default_factory=dict)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    rating: RatingConfig = Field(default_factory=RatingConfig)
    sandbox: Literal["local", "docker"] = "local"
    jobs: int = Field(1, ge=1, le=256)
    cluster: str | None = Field(None, description="Dask scheduler tcp://HOST:PORT; none: the local pool.")
    output: str = "arena-results"
    base_dir: str = Field(".", exclude=True, description="Folder that relative paths start from.")

    @field_validator("cluster")
    @classmethod
    def _cluster_address(cls, cluster: str | None) -> str | None:
        if cluster is None or not cluster.strip():
            return None  # cluster = "" (or --cluster '') means the local pool
        from arena.cluster import check_address

        return check_address(cluster)

    @field_validator("game")
    @classmethod
    def _known_game(cls, game: str) -> str:
        try:
            return get_game(game).name
        except GameError as error:
            raise ValueError(str(error)) from None

    @model_validator(mode="after")
    def _fits_together(self) -> TournamentConfig:
        chosen = get_game(self.game)
        mistakes = []
        try:
            chosen.check_players(self.seats)
        except GameError as error:
            mistakes.append(f"seats = {self.seats}: {error}")
        try:
            resolved = chosen.resolve_options(self.rules)
        except GameError as error:
            mistakes.append(f"rules = {json.dumps(self.rules)}: {error}")
        else:
            object.__setattr__(self, "rules", resolved)
        if self.format == "swiss" and self.rounds is None:
            mistakes.append("rounds is missing: a Swiss tournament needs a number of rounds (e.g. rounds = 5)")
        if self.format == "gauntlet" and not self.challengers:
            mistakes.append("challengers is missing: a gauntlet needs challenger bot folders (e.g. challengers = [\"my-bot\"])")
        if self.format != "gauntlet" and self.challengers:
            mistakes.append(f"challengers is only for format = \"gauntlet\", not {self.format!r}")
        if self.format != "round-robin" and self.cycles != 1:
            mistakes.append(f"cycles is only for format = \"round-robin\", not {self.format!r}")
        if self.rounds is not None and self.cycles != 1:
            mistakes.append("give either rounds (design rounds) or cycles (whole round-robins), not both")
        if mistakes:
            raise ValueError("\n".join(mistakes))
        return self

    def output_dir(self) -> Path:
        """The output folder (relative to the tournament file's folder)."""
        return Path(self.base_dir, self.output).resolve()


def _describe_error(error: dict[str, Any]) -> str:
    """One readable line for one pydantic error: key, bad value, what is allowed."""
    key = ".".join(str(part) for part in error["loc"]) or "(file)"
    kind = error["type"]
    if kind == "extra_forbidden":
        parent = error["loc"][:-1]
        model = TournamentConfig
        for part in parent:
            model = {"limits": LimitsConfig, "rating": RatingConfig}.get(str(part), model)
        allowed = ", ".join(name for name in model.model_fields if name != "base_dir")
        return f"unknown key {key!r}; allowed keys: {allowed}"
    if kind == "missing":
        return f"{key} is missing"
    message = error["msg"].removeprefix("Value error, ")
    if kind == "value_error" and not error["loc"]:
        return message  # a check across keys: its message names them
    return f"{key} = {json.dumps(error.get('input'), default=str)}: {message}"


def validate_config(data: Mapping[str, Any], source: str = "tournament") -> TournamentConfig:
    """A TournamentConfig from plain data; TournamentError lists every mistake, one per line."""
    try:
        return TournamentConfig.model_validate(dict(data))
    except ValidationError as invalid:
        lines = []
        for error in invalid.errors():
            line = _describe_error(error)
            lines.extend(line.split("\n") if not error["loc"] else [line])
        raise TournamentError(lines, source) from None


def load_tournament(
    path: str | Path | None,
    overrides: Mapping[str, Any] | None = None,
    rule_args: Sequence[str] = (),
) -> TournamentConfig:
    """Read a tournament file (or none), apply `overrides` (the flags) and validate it.

    `overrides` holds top-level keys; a `limits` or `rating` dict is merged key by key
    into the file's. `rule_args` are `key=value` rule strings (the `--rule` flag), parsed
    by the game's own option types and merged over the file's rules.
    """
    data: dict[str, Any] = {}
    source = "command-line tournament"
    if path is not None:
        path = Path(path)
        source = f"tournament file {path}"
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TournamentError([f"tournament file {path} does not exist"], source) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise TournamentError([f"{path} is not valid TOML: {error}"], source) from None
        data["base_dir"] = str(path.resolve().parent)
    for key, value in (overrides or {}).items():
        if key in ("limits", "rating", "rules") and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    rule_mistakes = []
    if rule_args:
        try:
            parsed = get_game(str(data.get("game"))).parse_options(rule_args)
        except GameError as error:
            rule_mistakes.append(f"--rule: {error}")
        else:
            data["rules"] = {**(data.get("rules") or {}), **parsed}
    try:
        config = validate_config(data, source)
    except TournamentError as invalid:
        raise TournamentError(rule_mistakes + invalid.mistakes, source) from None
    if rule_mistakes:
        raise TournamentError(rule_mistakes, source)
    return config


# -------------------------------------------------------------------------- bots


class BotRef(_Strict):
    """A bot as a game needs it: id in the tournament, and where its program is."""

    id: str
    name: str
    version: str
    folder: str
    command: tuple[str, ...] = ()
    dockerfile: str | None = None
    content_hash: str
    kind: Literal["folder", "in-process"] = "folder"

    def record(self) -> BotRecord:
        """The store's row for this bot."""
        return BotRecord(self.id, self.name, self.version, self.content_hash, self.folder, self.kind)


SeatFactory = Callable[[], Seat]

_GLOB = set("*?[")


def _expand(entries: Sequence[str], base: Path, key: str, game: str, mistakes: list[str]) -> list:
    """Bot folders named by `entries` (folders or globs), each checked; mistakes collected."""
    manifests = []
    for entry in entries:
        pattern = Path(entry).expanduser()
        pattern = pattern if pattern.is_absolute() else base / pattern
        if _GLOB & set(entry):
            folders = sorted(Path(p) for p in glob.glob(str(pattern)) if (Path(p) / "bot.toml").is_file())
            if not folders:
                mistakes.append(f"{key}: {entry!r} matches no bot folder (a folder with a bot.toml)")
                continue
        else:
            if not pattern.is_dir():
                mistakes.append(f"{key}: bot folder {entry!r} does not exist ({pattern})")
                continue
            folders = [pattern]
        globbed = bool(_GLOB & set(entry))
        mistakes_before = len(mistakes)
        playing = 0
        for folder in folders:
            try:
                manifest = load_bot(folder)
            except BotFolderError as error:
                mistakes.append(f"{key}: {folder}: " + "; ".join(error.mistakes))
                continue
            if globbed and not manifest.plays(game):
                continue  # a glob takes the bots that play this game
            if not manifest.plays(game):
                mistakes.append(
                    f"{key}: bot {manifest.name!r} ({folder}) does not play {game!r}; "
                    f"its bot.toml lists: {', '.join(manifest.games)}"
                )
                continue
            manifests.append(manifest)
            playing += 1
        if globbed and not playing and len(mistakes) == mistakes_before:
            mistakes.append(f"{key}: {entry!r} matches no bot folder whose bot.toml lists {game!r}")
    return manifests


def resolve_bots(
    config: TournamentConfig, in_process: Mapping[str, SeatFactory] | None = None
) -> tuple[list[BotRef], list[BotRef]]:
    """The field and the challengers as BotRefs, ids unique; TournamentError lists every mistake."""
    base = Path(config.base_dir)
    mistakes: list[str] = []
    field = _expand(config.bots, base, "bots", config.game, mistakes)
    challengers = _expand(config.challengers, base, "challengers", config.game, mistakes)
    folders = [m.folder for m in field + challengers]
    repeated = sorted({str(f) for f in folders if folders.count(f) > 1})
    if repeated:
        mistakes.append(f"bots: a folder is listed more than once: {', '.join(repeated)}")
    if mistakes:
        raise TournamentError(mistakes)
    ids = unique_names(field + challengers)
    refs = [
        BotRef(
            id=bot_id,
            name=m.name,
            version=m.version,
            folder=str(m.folder),
            command=m.command,
            dockerfile=m.dockerfile,
            content_hash=content_hash(m.folder),
        )
        for bot_id, m in zip(ids, field + challengers)
    ]
    for name in in_process or {}:
        if name in ids:
            raise TournamentError([f"in-process bot {name!r} has the id of a bot folder; ids must differ"])
    field_refs = refs[: len(field)] + [
        BotRef(id=name, name=name, version="in-process", folder="", content_hash="", kind="in-process")
        for name in in_process or {}
    ]
    return field_refs, refs[len(field) :]


# ---------------------------------------------------------------- one scheduled game


class GameSpec(_Strict):
    """Everything needed to play one scheduled game: small, picklable, no live objects."""

    key: str
    deal: str
    seed: int
    game: str
    rules: dict[str, Any]
    bots: list[BotRef]  # seat order
    bot_seeds: list[int]  # what each seat's bot gets in `hello` (`RunKey.bot_seed`), seat order
    limits: LimitsConfig
    sandbox: Literal["local", "docker"] = "local"


class PlayedGame(BaseModel):
    """The output of one game: the referee's record plus what the store keeps beside it."""

    key: str
    result: GameResult
    logs: list[str] = Field(description="The end of each seat's stderr in this game ('' if none).")
    duration_s: float
    startup_s: float = Field(description="Seconds the game waited for its bot processes to start.")


_sandboxes: dict[str, Sandbox] = {}
_sandbox_lock = threading.Lock()


def _sandbox(name: str) -> Sandbox:
    """One sandbox object per kind per process (a cluster worker reuses it between games)."""
    with _sandbox_lock:
        if name not in _sandboxes:
            _sandboxes[name] = get_sandbox(name)
        return _sandboxes[name]


def play_scheduled_game(
    spec: GameSpec,
    in_process: Mapping[str, SeatFactory] | None = None,
    sandbox: Sandbox | None = None,
) -> PlayedGame:
    """Play one scheduled game, a fresh process per bot; faults are forfeits inside the result."""
    began = time.monotonic()
    box = sandbox or _sandbox(spec.sandbox)
    limits = spec.limits.limits()
    players = len(spec.bots)
    seats: list[Seat] = []
    for bot, bot_seed in zip(spec.bots, spec.bot_seeds, strict=True):
        if bot.kind == "in-process":
            if not in_process or bot.id not in in_process:
                raise TournamentError([f"in-process bot {bot.id!r} is not available here"])
            seat = in_process[bot.id]()
            seat.name = bot.id
        else:
            seat = RemoteBot(
                load_spec(bot),
                box,
                limits,
                Hello(
                    game=spec.game,
                    players=players,
                    rules=spec.rules,
                    games=1,
                    seed=bot_seed,
                    limits=limits_info(limits),
                ),
            )
        seats.append(seat)
    try:
        seats = _start_together(seats)
        result = play_game(spec.game, seats, spec.rules, seed=spec.seed)
    finally:
        for seat in seats:
            seat.finish(MatchOver(games=1))
    remote = [seat.bot if isinstance(seat, _FaultAtStart) else seat for seat in seats]
    logs = [(seat.logs() or [""])[-1] if isinstance(seat, RemoteBot) else "" for seat in remote]
    # The bots start side by side: the game waits for the slowest one.
    startup = max((sum(seat.startup_s) for seat in remote if isinstance(seat, RemoteBot)), default=0.0)
    return PlayedGame(
        key=spec.key, result=result, logs=logs, duration_s=time.monotonic() - began, startup_s=startup
    )


class _FaultAtStart(Seat):
    """A bot whose start (done early, beside the others) faulted: the fault is raised when
    the referee starts the game, so it is charged exactly as a sequential start would be."""

    def __init__(self, bot: RemoteBot, fault: BotFault):
        self.bot, self.fault, self.name = bot, fault, bot.name

    def start_game(self, start) -> None:
        """Raise the start-up fault."""
        raise self.fault

    def send_events(self, events) -> None:
        """Never reached: the seat forfeited at the start."""

    def decide(self, observation, legal_actions):
        """Never reached: the seat forfeited at the start."""
        raise self.fault

    def game_over(self, message) -> None:
        """Never reached: the seat forfeited at the start."""

    def abandon(self):
        """Stop the bot's process."""
        return self.bot.abandon()

    def finish(self, message) -> None:
        """Free everything."""
        self.bot.finish(message)

    def log_tail(self, limit: int = 2000) -> str:
        """The end of the bot's log."""
        return self.bot.log_tail(limit)


def _start_together(seats: list[Seat]) -> list[Seat]:
    """Start every bot process (handshake included) at once rather than one after another.

    A bot's start-up (an interpreter starting) is most of a short game's time; started side
    by side, a game waits for the slowest bot instead of the sum of them.
    """
    remote = [seat for seat in seats if isinstance(seat, RemoteBot)]
    if len(remote) < 2:
        return seats
    faults: dict[int, BotFault] = {}

    def start(seat: RemoteBot) -> None:
        try:
            seat._ensure_started()
        except BotFault as fault:
            faults[id(seat)] = fault
        except Exception:  # noqa: BLE001, S110 - arena's own failure:
            pass  # the referee's own start of this seat meets it again and raises it

    threads = [threading.Thread(target=start, args=(seat,), daemon=True) for seat in remote]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [_FaultAtStart(seat, faults[id(seat)]) if id(seat) in faults else seat for seat in seats]


def load_spec(bot: BotRef):
    """The sandbox's BotSpec of a folder bot."""
    from arena.sandbox import BotSpec

    return BotSpec(name=bot.id, folder=Path(bot.folder), command=tuple(bot.command), dockerfile=bot.dockerfile)


# --------------------------------------------------------------------- the runner


@dataclass
class Progress:
    """What a progress display needs after each stored game."""

    done: int
    total: int
    played: int  # games played by this run (the rest were stored before)
    key: str | None
    leader: str | None
    elapsed_s: float


@dataclass
class TournamentOutcome:
    """How a run ended: standings over everything stored, and what this run did."""

    output: Path
    total: int
    done: int
    played: int
    resumed: int  # games already stored when the run began
    standings: RatingTable
    wall_s: float
    game_s: float  # sum of game durations played by this run
    startup_s: float  # of which starting bot processes
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when every scheduled game is stored."""
        return self.done == self.total


def settings_of(config: TournamentConfig, field_bots: Sequence[BotRef], challengers: Sequence[BotRef]) -> dict[str, Any]:
    """The settings stored with the tournament (what the fingerprint covers, plus name)."""
    settings = config.model_dump(mode="json")
    settings["bots"] = [bot.model_dump(include={"id", "name", "version", "content_hash", "kind"}) for bot in field_bots]
    settings["challengers"] = [
        bot.model_dump(include={"id", "name", "version", "content_hash", "kind"}) for bot in challengers
    ]
    return settings


def fingerprint_of(settings: Mapping[str, Any]) -> str:
    """sha256 of the settings that decide what is played (name, jobs, output excluded)."""
    kept = {key: value for key, value in settings.items() if key not in UNFINGERPRINTED}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()


def changed_settings(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """One line per setting that differs (fingerprinted settings only)."""
    lines = []
    for key in sorted(set(before) | set(now)):
        if key in UNFINGERPRINTED or before.get(key) == now.get(key):
            continue
        if key in ("bots", "challengers"):
            old = {bot["id"]: bot for bot in before.get(key) or []}
            new = {bot["id"]: bot for bot in now.get(key) or []}
            for bot_id in sorted(set(old) | set(new)):
                if bot_id not in new:
                    lines.append(f"{key}: {bot_id} was in the tournament and is not now")
                elif bot_id not in old:
                    lines.append(f"{key}: {bot_id} is new")
                elif old[bot_id] != new[bot_id]:
                    what = [k for k in new[bot_id] if old[bot_id].get(k) != new[bot_id][k]]
                    lines.append(f"{key}: {bot_id} changed its {', '.join(what)}")
            continue
        lines.append(f"{key}: was {json.dumps(before.get(key))}, now {json.dumps(now.get(key))}")
    return lines


def rated(key: str, deal: str | None, result: GameResult) -> RatedGame:
    """The rating's view of a finished game (`deal` None unless the tournament is duplicate)."""
    return RatedGame(
        key=key,
        bots=tuple(result.seats),
        places=tuple(result.places),
        forfeits=tuple(seat in result.forfeits for seat in range(len(result.seats))),
        deal=deal,
    )


class _Runner:
    """One run of a tournament: schedule, pool, store."""

    def __init__(self, config, store, key, field_bots, challengers, in_process, progress, stop, sandbox):
        self.config = config
        self.key = key  # the run's RunKey: deal and bot seeds come from it, and nothing else
        self.store = store
        self.bots = {bot.id: bot for bot in [*field_bots, *challengers]}
        self.field = [bot.id for bot in field_bots]
        self.challengers = [bot.id for bot in challengers]
        self.in_process = in_process
        self.progress = progress
        self.stop = stop or threading.Event()
        self.sandbox = sandbox
        self.cluster = None  # arena.cluster.ClusterPool: connected on first use, once per run
        self.began = time.monotonic()
        self.played = 0
        self.game_s = 0.0
        self.startup_s = 0.0
        self._leader: str | None = None
        self._leader_at = 0.0
        self.ratings = OrderedLedger(store_ledger(store, results=False))
        for result in rated_games(store):
            self.ratings.add(result)
        self.deals: dict[str, str] = {}

    def scheduled(self, games: Sequence[ScheduledGame]) -> None:
        """Store newly scheduled games and tell the ratings the schedule's order."""
        self.store.schedule(games)
        stored = self.store.games()
        self.deals = {game.key: game.deal for game in stored}
        self.ratings.schedule([game.key for game in stored])

    def total(self) -> int:
        """How many games the whole tournament has (Swiss: rounds times one round's games)."""
        if self.config.format != "swiss":
            return len(self.store.games())
        first = swiss_round(
            [_Entry(bot) for bot in self.field], self.config.seats, round=1, seed=self.key,
            duplicate=self.config.duplicate,
        )
        return len(first) * self.config.rounds

    def full_schedule(self) -> list[ScheduledGame]:
        """The whole schedule of a round-robin or gauntlet."""
        c = self.config
        if c.format == "round-robin":
            return round_robin(self.field, c.seats, seed=self.key, rounds=c.rounds, cycles=c.cycles, duplicate=c.duplicate)
        return gauntlet(self.challengers, self.field, c.seats, seed=self.key, rounds=c.rounds or 1, duplicate=c.duplicate)

    def swiss_schedule(self, round_no: int) -> list[ScheduledGame]:
        """Swiss round `round_no` from the stored standings (every earlier round is stored)."""
        stored = [game for game in self.store.games() if game.round == round_no]
        if stored:
            return [game.scheduled() for game in stored]
        # Every earlier round is stored and rated by now: the ledger holds the standings.
        standings = self.ratings.ledger.table().standings
        history = [game.scheduled() for game in self.store.games()]
        return swiss_round(
            standings, self.config.seats, round=round_no, seed=self.key, history=history,
            duplicate=self.config.duplicate,
        )

    def spec(self, game: ScheduledGame) -> GameSpec:
        """The GameSpec of a scheduled game."""
        return GameSpec(
            key=game.key,
            deal=game.deal,
            seed=game.seed,
            game=self.config.game,
            rules=self.config.rules,
            bots=[self.bots[bot_id] for bot_id in game.table],
            bot_seeds=[self.key.bot_seed(game.key, bot_id) for bot_id in game.table],
            limits=self.config.limits,
            sandbox=self.config.sandbox,
        )

    def leader(self) -> str | None:
        """The current leader, recomputed at most once a second (display only)."""
        now = time.monotonic()
        if self._leader is None or now - self._leader_at >= 1.0:
            table = self.ratings.ledger.table().standings
            self._leader = table[0].bot if table and table[0].games else None
            self._leader_at = now
        return self._leader

    def _pool(self):
        """A local thread pool for this batch, or the run's cluster when `cluster` is set."""
        if not self.config.cluster:
            return ThreadPoolExecutor(max_workers=self.config.jobs, thread_name_prefix="arena-game")
        if self.cluster is None:
            from arena.cluster import ClusterPool

            self.cluster = ClusterPool(self.config.cluster, list(self.bots.values()), self.config.sandbox)
        return self.cluster

    def in_flight(self) -> int:
        """Games to keep running: `jobs` locally; on a cluster, enough for its worker threads."""
        return self.config.jobs if self.cluster is None else self.cluster.capacity()

    def close(self) -> None:
        """Disconnect from the cluster, if any."""
        if self.cluster is not None:
            self.cluster.close()

    def play(self, games: Sequence[ScheduledGame], total: int) -> None:
        """Play `games` with `jobs` at once, storing each as it finishes."""
        done = self.store.done_keys()
        pending = [game for game in games if game.key not in done]
        self.done = len(self.store.done_keys())
        queue = list(reversed(pending))
        running: dict[Future, str] = {}
        failure: BaseException | None = None
        pool = self._pool()
        try:
            while queue or running:
                while queue and len(running) < self.in_flight() and not self.stop.is_set() and failure is None:
                    game = queue.pop()
                    future = pool.submit(play_scheduled_game, self.spec(game), self.in_process, self.sandbox)
                    running[future] = game.key
                if not running:
                    break
                finished, _ = wait(running, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in finished:
                    running.pop(future)
                    try:
                        played = future.result()
                    except Exception as error:  # noqa: BLE001 - arena's own failure: stop after the games in flight
                        failure = failure or error
                        continue
                    try:
                        self.store.record(played.key, played.result, duration_s=played.duration_s, logs=played.logs)
                    except DuplicateResult:
                        continue  # already stored (a game that ran twice on a cluster): keep the first
                    deal = self.deals[played.key] if self.config.duplicate else None
                    self.ratings.add(rated(played.key, deal, played.result))
                    self.played += 1
                    self.done += 1
                    self.game_s += played.duration_s
                    self.startup_s += played.startup_s
                    if self.progress is not None:
                        self.progress(
                            Progress(
                                done=self.done,
                                total=total,
                                played=self.played,
                                key=played.key,
                                leader=self.leader(),
                                elapsed_s=time.monotonic() - self.began,
                            )
                        )
        except KeyboardInterrupt:
            # Ctrl-C: start nothing new, store what finishes, then say how far we got.
            self.stop.set()
            for future in list(running):
                try:
                    played = future.result()
                except BaseException:  # noqa: BLE001, S112 - a game cut short by Ctrl-C is not stored
                    continue
                try:
                    self.store.record(played.key, played.result, duration_s=played.duration_s, logs=played.logs)
                except DuplicateResult:
                    continue  # already stored: keep the first
                self.played += 1
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if failure is not None:
            raise failure
        if self.stop.is_set():
            raise TournamentInterrupted(len(self.store.done_keys()), total, self.config.output_dir())


@dataclass(frozen=True)
class _Entry:
    bot: str
    score: float = 0.0
    conservative: float = 0.0


def run_tournament(
    config: TournamentConfig,
    *,
    progress: Callable[[Progress], None] | None = None,
    in_process: Mapping[str, SeatFactory] | None = None,
    allow_changes: bool = False,
    stop: threading.Event | None = None,
    sandbox: Sandbox | None = None,
    report: bool = True,
) -> TournamentOutcome:
    """Run (or resume) a tournament into its output folder; returns the standings.

    Raises TournamentError (bad bots, changed settings), TournamentInterrupted (Ctrl-C or
    `stop` set: every finished game is stored), or arena's own SandboxError. `report=False`
    skips the HTML site (benchmarks).
    """
    field_bots, challengers = resolve_bots(config, in_process)
    try:
        RatingSettings(**config.rating.model_dump())
    except RatingSettingsError as error:
        raise TournamentError([str(error)]) from None
    settings = settings_of(config, field_bots, challengers)
    fingerprint = fingerprint_of(settings)
    store = Store.open(config.output_dir(), create=True)
    try:
        before = store.settings()
        if before is not None and store.fingerprint() != fingerprint:
            changes = changed_settings(before, settings)
            if not allow_changes:
                raise SettingsChanged(
                    [
                        f"{config.output_dir()} holds a tournament with other settings; "
                        "use another output folder, or --allow-changes to continue with the new ones. Changed: "
                        + "; ".join(changes)
                    ]
                )
            store.drop_unfinished()
        store.save_settings(settings, fingerprint)
        key = run_key(config, store)
        store.add_bots(bot.record() for bot in [*field_bots, *challengers])
        resumed = len(store.done_keys())
        folder_bots = [bot for bot in [*field_bots, *challengers] if bot.kind == "folder"]
        if folder_bots and not config.cluster:  # a cluster's workers run the bots, not this machine
            box = sandbox or _sandbox(config.sandbox)
            # Processes or containers a killed earlier run left behind go before new ones start.
            box.cleanup_leftovers()
            if config.sandbox == "docker":
                # Build each bot's image once, here, not in several games at once; a failed
                # build is remembered by the sandbox and forfeits that bot's games.
                for bot in folder_bots:
                    if bot.dockerfile:
                        try:
                            box.image_for(load_spec(bot))
                        except BotFault:
                            pass
        runner = _Runner(config, store, key, field_bots, challengers, in_process, progress, stop, sandbox)
        try:
            if config.format == "swiss":
                total = runner.total()
                for round_no in range(1, config.rounds + 1):
                    games = runner.swiss_schedule(round_no)
                    runner.scheduled(games)
                    runner.play(games, total)
            else:
                games = runner.full_schedule()
                done = store.done_keys()
                runner.scheduled([game for game in games if game.key not in done] if allow_changes else games)
                total = len(store.games())
                runner.play(games, total)
        except ScheduleError as error:
            raise TournamentError([f"schedule: {error}"]) from None
        finally:
            runner.close()
        outcome = TournamentOutcome(
            output=config.output_dir(),
            total=total,
            done=len(store.done_keys()),
            played=runner.played,
            resumed=resumed,
            # Rated once, in schedule order, as the games came in; equal to stored_standings(store).
            standings=runner.ratings.ledger.table() if runner.ratings.complete else stored_standings(store),
            wall_s=time.monotonic() - runner.began,
            game_s=runner.game_s,
            startup_s=runner.startup_s,
        )
    finally:
        store.close()
    if report:
        outcome.notes.extend(render_report(config.output_dir()))
    return outcome


def run_key(config: TournamentConfig, store: Store) -> RunKey:
    """The run's key: the public key of `config.seed`, else the stored secret (drawn and
    stored on the first run, so a resume deals the same cards)."""
    if config.seed is not None:
        return RunKey.from_seed(config.seed)
    secret = store.secret()
    if secret is not None:
        return RunKey.from_secret(secret)
    # Two runners starting one store at once keep the first secret stored.
    return RunKey.from_secret(store.save_secret(RunKey.generate().secret))


def render_report(out_dir: Path) -> list[str]:
    """REPORT HOOK: build the HTML site when the report layer exists (issue 6); else skip."""
    try:
        from arena.report import render_site  # type: ignore[attr-defined]
    except ImportError:
        return []
    try:
        render_site(out_dir)
    except Exception as error:  # noqa: BLE001 - the results are stored; a failed site must not lose the run
        return [f"the HTML site could not be built ({type(error).__name__}: {error}); the results are stored"]
    return [f"site written to {out_dir}"]
