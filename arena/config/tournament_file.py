"""The tournament file: what a tournament is, validated.

`load_tournament(path, overrides, rule_args)` reads a TOML tournament file (or none: flags
alone), applies overrides (the `arena run` flags) and validates it with pydantic; every
mistake is one line naming the key, the bad value and what is allowed (`TournamentError`).
Reading a file (`read_file`) and putting the flags over it (`apply_overrides`) serve a
league too (`arena.config.league_file`); so do `Strict` (the base of every settings model),
`RunConfig` (the settings a tournament's and a league's share, with their checks: the
base of both, and what the runner reads), the limits and the rating settings.
What a resume compares (the stored settings and their fingerprint) is
`arena.config.fingerprint`.
"""

from __future__ import annotations

import importlib.util
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from arena.errors import ArenaError
from arena.limits import LimitsSettings
from arena.ratings.ledger import RatingSettings
from engine.api import GameError
from engine.registry import get_game

FORMATS = ("round-robin", "swiss", "gauntlet")
SANDBOXES = ("local", "docker")
BOT_PROCESSES = ("per-game", "per-slot")


def swiss_sizes(bots: int, seats: int) -> list[int]:
    """The table sizes of a Swiss round of `bots` at `seats` a table: the fewest tables,
    sizes differing by at most one, larger first; two seats and an odd field leave one bot
    out (a bye). Checked by `arena.schedule.swiss.swiss_table_sizes`; the site says them."""
    if seats == 2 and bots % 2:
        bots -= 1
    tables = -(-bots // seats)
    small, extra = divmod(bots, tables)
    return [small + 1] * extra + [small] * (tables - extra)


def said_sizes(sizes: Sequence[int]) -> str:
    """Table sizes as a reader says them: "3 and 3", "4, 3 and 3"."""
    words = [str(size) for size in sizes]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def swiss_seats_note(bots: int, seats: int) -> str | None:
    """What a Swiss of `bots` at `seats` plays when that is not tables of `seats` (None
    when it is): the terminal says it before the first game, the site beside the seats."""
    sizes = swiss_sizes(bots, seats)
    if all(size == seats for size in sizes):
        return None
    return (f"seats = {seats}, but a Swiss round of {bots} bots seats tables of {said_sizes(sizes)}: the fewest "
            f"tables that hold every bot, their sizes within one")


def runtime_mistakes(sandbox: str, runtime: str | None) -> list[str]:
    """A Docker runtime asked for bots that do not run in Docker (a tournament's, a league's)."""
    if runtime is not None and sandbox != "docker":
        return [f"'runtime' {runtime!r} is a setting of the docker sandbox; sandbox is {sandbox!r}"]
    return []


def default_bot_process(sandbox: str) -> str:
    """per-slot for the local sandbox (trusted code, speed), per-game for Docker (untrusted)."""
    return "per-slot" if sandbox == "local" else "per-game"


class TournamentError(ArenaError, ValueError):
    """A tournament cannot run as given; `mistakes` has one line per mistake."""

    def __init__(self, mistakes: Sequence[str], source: str = "tournament", data: Mapping[str, Any] | None = None):
        self.mistakes = list(mistakes)
        self.source = source
        self.data = data  # the settings as given (file and flags), when they had mistakes
        super().__init__(
            mistakes[0] if len(mistakes) == 1 else f"{len(mistakes)} mistakes in the {source}:\n"
            + "\n".join(f"  - {line}" for line in mistakes)
        )


class SettingsChanged(TournamentError):
    """The output folder holds a tournament with other settings."""


# A cluster is a Dask scheduler, `tcp://HOST:PORT` (or tls://); HOST a name, IPv4 or [IPv6].
_ADDRESS = re.compile(r"^(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


CLUSTER_EXTRA = "pip install 'arena[cluster]'"


def cluster_support_missing() -> bool:
    """True when Dask's distributed package, which --cluster needs, is not installed."""
    try:
        return importlib.util.find_spec("distributed") is None
    except (ImportError, ValueError):
        return True


def check_address(address: str) -> str:
    """The scheduler address if it reads `tcp://HOST:PORT`; ValueError saying what is allowed."""
    match = _ADDRESS.match(address.strip())
    if not match or not 1 <= int(match.group(3)) <= 65535:
        raise ValueError(
            "a cluster is the Dask scheduler's address, tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786; "
            "tls:// when the cluster uses TLS)"
        )
    return address.strip()


def cluster_setting(cluster: str | None) -> str | None:
    """A `cluster` key's check (a tournament's and a league's): None for the local pool
    (cluster = "" or --cluster '' too), else the scheduler's address; ValueError when it is
    not one, or when Dask's distributed package is missing."""
    if cluster is None or not cluster.strip():
        return None
    address = check_address(cluster)
    if cluster_support_missing():
        raise ValueError(
            f"playing on a Dask cluster needs Dask's distributed package, an extra of arena: {CLUSTER_EXTRA} "
            "(on this machine and on every worker; see docs/cluster.md)"
        )
    return address


class Strict(BaseModel):
    """The base of every settings model of arena's: an unknown key is a mistake (named, with
    the keys allowed), and a model, once validated, never changes (frozen)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# The files' `limits` table: made from the one definition of the limits (arena/limits.py).
LimitsConfig = LimitsSettings


class RatingConfig(Strict):
    """TrueSkill settings (see docs/tournaments.md)."""

    mu: float = 25.0
    sigma: float = Field(25.0 / 3, gt=0)
    beta: float = Field(25.0 / 6, gt=0)
    tau: float = Field(0.0, ge=0)
    draw_probability: float = Field(0.001, gt=0, lt=1)
    duplicate_update: Literal["hand", "deal", "rotation"] = "hand"

    def settings(self) -> RatingSettings:
        """arena.ratings.ledger's settings."""
        return RatingSettings(**self.model_dump())


Name = Annotated[str, Field(min_length=1, max_length=200)]
BotProcess = Literal["per-game", "per-slot"]
BOT_PROCESS_MEANS = (
    "per-game: a fresh process per bot per game; per-slot: one process per bot slot for the run "
    "(a bot may carry memory between games)."
)
WARM_START_MEANS = "Start bot processes (local) or containers (docker) ahead of need; false: each when needed."


class RunConfig(Strict):
    """The settings a tournament's and a league's share, and their checks: the base of
    `TournamentConfig` and `arena.config.league_file.LeagueConfig` (each gives its own
    defaults of `name`, `bot_process`, `warm_start` and `output`), and everything the
    runner (`arena.play.runner.Runner`) reads of either."""

    name: Name
    game: str
    seats: int = Field(ge=2, le=6)
    duplicate: StrictBool = False  # true or false: "yes" is a mistake, not true
    seed: int | None = Field(
        None, ge=0, le=2**63 - 1,
        description="A public seed (reproducible, and predictable by bots); none: a secret key is drawn and stored.",
    )
    rules: dict[str, Any] = Field(default_factory=dict)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    rating: RatingConfig = Field(default_factory=RatingConfig)
    sandbox: Literal["local", "docker"] = "local"
    runtime: Literal["runc", "runsc"] | None = Field(
        None,
        description="docker only: runc (the host's kernel) or runsc (gVisor's, a second kernel between the bots "
        "and the host; README, 'Where a bot runs'). None: $ARENA_DOCKER_RUNTIME, else runc.",
    )
    bot_process: BotProcess | None = Field(
        None, description=BOT_PROCESS_MEANS + " None: per-slot for local, per-game for docker."
    )
    warm_start: StrictBool = Field(True, description=WARM_START_MEANS)
    jobs: int = Field(1, ge=1, le=256)
    cluster: str | None = Field(None, description="Dask scheduler tcp://HOST:PORT; none: the local pool.")
    output: str
    base_dir: str = Field(".", exclude=True, description="Folder that relative paths start from.")

    @field_validator("cluster")
    @classmethod
    def _cluster_address(cls, cluster: str | None) -> str | None:
        return cluster_setting(cluster)

    @field_validator("game")
    @classmethod
    def _known_game(cls, game: str) -> str:
        return known_game(game)

    @model_validator(mode="after")
    def _fits_together(self) -> RunConfig:
        mistakes, resolved = self._mistakes_between_keys()
        mistakes += runtime_mistakes(self.sandbox, self.runtime)
        if mistakes:
            raise ValueError("\n".join(mistakes))
        object.__setattr__(self, "rules", resolved)
        if self.bot_process is None:
            object.__setattr__(self, "bot_process", default_bot_process(self.sandbox))
        return self

    def _mistakes_between_keys(self) -> tuple[list[str], dict[str, Any]]:
        """The mistakes between keys (all at once), and the rules with the game's defaults."""
        return game_mistakes({"game": self.game, "seats": self.seats, "rules": self.rules})

    def output_dir(self) -> Path:
        """The output folder (relative to the settings file's folder)."""
        return Path(self.base_dir, self.output).resolve()


class TournamentConfig(RunConfig):
    """A validated tournament file (after the flags' overrides)."""

    name: Name = "tournament"
    format: Literal["round-robin", "swiss", "gauntlet"] = "round-robin"
    rounds: int | None = Field(None, ge=1, le=100_000)
    cycles: int = Field(1, ge=1, le=10_000)
    challengers: list[str] = Field(default_factory=list)
    bots: list[str] = Field(default_factory=list)
    output: str = "arena-results"

    def _mistakes_between_keys(self) -> tuple[list[str], dict[str, Any]]:
        return _cross_key_mistakes(self.model_dump(exclude={"base_dir"}))


def known_game(game: str) -> str:
    """A `game` key's check (a tournament's and a league's): the game's canonical name."""
    try:
        return get_game(game).name
    except GameError as error:
        raise ValueError(str(error)) from None


def game_mistakes(values: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The mistakes of `seats` and `rules` for `game` (a tournament's and a league's), and
    the rules with the game's defaults filled in; a key missing from `values` is not checked."""
    mistakes: list[str] = []
    resolved: dict[str, Any] = dict(values.get("rules") or {})
    chosen = None
    if "game" in values:
        try:
            chosen = get_game(values["game"])
        except GameError:
            chosen = None  # the game's own mistake is already listed
    if chosen is not None and "seats" in values:
        try:
            chosen.check_players(values["seats"])
        except GameError as error:
            mistakes.append(f"seats = {values['seats']}: {error}")
    if chosen is not None and "rules" in values:
        try:
            resolved = chosen.resolve_options(values["rules"])
        except GameError as error:
            mistakes.append(f"rules = {json.dumps(values['rules'])}: {error}")
    return mistakes, resolved


def _cross_key_mistakes(values: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The mistakes between keys, and the rules with the game's defaults filled in.

    `values` may lack keys (those that were themselves wrong): a check that needs one is
    skipped, so a file with mistakes of both kinds gets every one of them at once.
    """
    mistakes, resolved = game_mistakes(values)
    form = values.get("format")
    cycles = values.get("cycles", 1)
    challengers = values.get("challengers") or []
    if form == "swiss" and values.get("rounds") is None and "rounds" not in values.get("_wrong", ()):
        mistakes.append("rounds is missing: a Swiss tournament needs a number of rounds (e.g. rounds = 5)")
    if form == "gauntlet" and not challengers and "challengers" not in values.get("_wrong", ()):
        mistakes.append("challengers is missing: a gauntlet needs challenger bot folders (e.g. challengers = [\"my-bot\"])")
    if form is not None and form != "gauntlet" and challengers:
        mistakes.append(f"challengers is only for format = \"gauntlet\", not {form!r}")
    if form is not None and form != "round-robin" and cycles != 1:
        mistakes.append(f"cycles is only for format = \"round-robin\", not {form!r}")
    if values.get("rounds") is not None and cycles != 1:
        mistakes.append("give either rounds (design rounds) or cycles (whole round-robins), not both")
    return mistakes, resolved


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
        wrong = {str(error["loc"][0]) for error in invalid.errors() if error["loc"]}
        if wrong:
            # Pydantic checks keys against each other only once every key is right: check
            # here those that are, so that one run names every mistake.
            right = {key: value for key, value in data.items() if key not in wrong}
            right.setdefault("format", "round-robin")
            right["_wrong"] = wrong
            lines += [line for line in _cross_key_mistakes(right)[0] if line not in lines]
        raise TournamentError(lines, source, dict(data)) from None


def read_file(path: Path, source: str, table: str | None = None) -> dict[str, Any]:
    """The settings of a TOML file (a tournament file's top level, or a league file's
    `[league]` table: `table`), with `base_dir`, the folder relative paths start from."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TournamentError([f"{source} does not exist"], source) from None
    except IsADirectoryError:
        raise TournamentError(
            [f"{path} is a folder, not a {table or 'tournament'} file (TOML); give the file, or flags alone"], source
        ) from None
    except OSError as error:
        raise TournamentError([f"{path} cannot be read ({error.strerror})"], source) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise TournamentError([f"{path} is not valid TOML: {error}"], source) from None
    if table is not None:
        if not isinstance(document.get(table), dict):
            raise TournamentError([f"{path} has no [{table}] table (a {table} file holds one)"], source)
        document = dict(document[table])
    document["base_dir"] = str(path.resolve().parent)
    return document


def apply_overrides(
    data: dict[str, Any], overrides: Mapping[str, Any] | None, rule_args: Sequence[str] = ()
) -> list[str]:
    """Put the flags over the file's settings, in place (a tournament's and a league's):
    `overrides` holds top-level keys, a `limits`, `rating` or `rules` dict merged key by key
    into the file's; `rule_args` are `key=value` rule strings (`--rule`), parsed by the
    game's own option types and merged over the rules. Returns the `--rule` mistakes."""
    for key, value in (overrides or {}).items():
        if key in ("limits", "rating", "rules") and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    if not rule_args:
        return []
    try:
        parsed = get_game(str(data.get("game"))).parse_options(rule_args)
    except GameError as error:
        return [f"--rule: {error}"]
    data["rules"] = {**(data.get("rules") or {}), **parsed}
    return []


def load_tournament(
    path: str | Path | None,
    overrides: Mapping[str, Any] | None = None,
    rule_args: Sequence[str] = (),
) -> TournamentConfig:
    """Read a tournament file (or none), apply `overrides` (the flags) and `rule_args`
    (`--rule`, see `apply_overrides`) and validate it."""
    data: dict[str, Any] = {}
    source = "command-line tournament"
    if path is not None:
        path = Path(path)
        source = f"tournament file {path}"
        data = read_file(path, source)
    rule_mistakes = apply_overrides(data, overrides, rule_args)
    try:
        config = validate_config(data, source)
    except TournamentError as invalid:
        raise TournamentError(rule_mistakes + invalid.mistakes, source, data) from None
    if rule_mistakes:
        raise TournamentError(rule_mistakes, source, data)
    return config
