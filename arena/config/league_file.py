"""A league's settings (`arena league`'s flags, or a `[league]` table of a league file).

`load_league(target, overrides, rule_args)` reads them as `load_tournament` reads a
tournament's (`read_file`, `apply_overrides`: the same file reading, flags and `--rule`),
or from a league folder's stored settings when it has run before; `LeagueConfig` checks
them (a `RunConfig`, as a tournament's: the same keys and checks of `game`, `seats`,
`rules`, `cluster`, `runtime`, limits and rating). `bot_process` and `warm_start` mean
what they mean in a tournament; a league's defaults are per-game and cold, what every
league played before it had them.
What a resume compares is `arena.config.fingerprint`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, StrictBool, ValidationError

from arena.config.botfolder import default_registry
from arena.config.tournament_file import (
    BOT_PROCESS_MEANS,
    WARM_START_MEANS,
    BotProcess,
    Name,
    RunConfig,
    TournamentError,
    apply_overrides,
    read_file,
)
from arena.store.db import Store

FORMAT = "league"  # the `format` stored with a league's settings
SUSPEND_AFTER = 5  # forfeits in a row that suspend a bot


RANDOM_SHARE = 0.15  # the chance that a seat goes to a bot drawn at random (arena.schedule.matchmaker)

class LeagueConfig(RunConfig):
    """A league's settings (the flags of `arena league`, or a `[league]` table)."""

    name: Name = "league"
    bot_process: BotProcess = Field("per-game", description=BOT_PROCESS_MEANS)
    warm_start: StrictBool = Field(False, description=WARM_START_MEANS)
    output: str = "league"
    registry: str | None = Field(None, description="The registry folder; none: `arena submit`'s default.")
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

    def registry_dir(self) -> Path:
        """The registry the league watches."""
        return Path(self.base_dir, self.registry).resolve() if self.registry else default_registry()


# Tables of a league file beside [league]: a key of that name inside [league] is one of
# them misplaced (`server = 5`, or `server.port = 8000` under [league]).
OWN_TABLES = {"server": "port = 8000, ...: docs/server.md"}


def _validate(data: Mapping[str, Any], source: str) -> LeagueConfig:
    try:
        return LeagueConfig.model_validate(dict(data))
    except ValidationError as invalid:
        lines = []
        for error in invalid.errors():
            key = ".".join(str(part) for part in error["loc"])
            message = error["msg"].removeprefix("Value error, ")
            if error["type"] == "extra_forbidden" and key in OWN_TABLES:
                lines.append(f"{key} = {json.dumps(error.get('input'), default=str)} is inside [league]; [{key}] is "
                             f"a table of its own: a line [{key}] after the [league] keys, then its keys "
                             f"({OWN_TABLES[key]}) below it")
            elif error["type"] == "extra_forbidden":
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
    stored settings, when it has run before); `overrides` (the flags) and `rule_args`
    (`--rule`) go on top, as a tournament's do (`arena.config.tournament_file.apply_overrides`)."""
    target = Path(target)
    data: dict[str, Any] = {}
    source = "league"
    if target.is_file():
        source = f"league file {target}"
        data = read_file(target, source, table="league")
    else:
        stored = _stored_settings(target)
        if stored is not None:
            data.update({key: value for key, value in stored.items() if key in LeagueConfig.model_fields})
            for key in ("games", "until_stable"):  # when to stop is this run's own choice
                data.pop(key, None)
        # The folder named is the league's, wherever it was first run (a folder moved, or
        # put back from a backup, must not play into the place it came from).
        data["output"] = str(target.resolve())
    rule_mistakes = apply_overrides(data, overrides, rule_args)
    if rule_mistakes:
        raise TournamentError(rule_mistakes, source)
    return _validate(data, source)


def _stored_settings(folder: Path) -> dict[str, Any] | None:
    from arena.store.db import STORE_FILE

    if not (folder / STORE_FILE).is_file():
        return None
    with Store.open(folder) as store:
        store.check()  # damage said first, not met in the settings
        stored = store.settings()
    if stored is not None and stored.get("format") != FORMAT:
        raise TournamentError([f"{folder} holds a tournament, not a league; give the league another folder"])
    return stored
