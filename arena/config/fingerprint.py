"""What a resume compares, for a tournament and a league alike: the settings stored with a
run (`settings_of`), their fingerprint (`fingerprint_of`) and what changed
(`changed_settings`, `changed_keys`).

A run stores its settings and the sha256 of those that decide what is played; running it
again on the same folder with other such settings is refused (a tournament names each
change; `--allow-changes` goes on with the new ones). What does not change what is
played (`UNFINGERPRINTED`: the name, how many jobs or machines play, where the output
goes, whether processes start ahead of need, the docker sandbox's runtime, and a league's
registry and when it stops)
may differ between runs. `bot_process` is fingerprinted: a bot that keeps its process
between games may play differently; a store from before the setting played per-game.

A league stores `bot_process`, `warm_start` and `runtime` only when they are not its
defaults (per-game, cold, none), and `inherit_rating` only when true: a league stored before it had
these settings resumes as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from arena.config.league_file import FORMAT as LEAGUE
from arena.config.league_file import LeagueConfig
from arena.config.tournament_file import TournamentConfig

# Settings that do not change what is played: free to differ between runs of one
# tournament (name, jobs, output, cluster, warm_start) or league (also its registry, and
# games and until_stable: when this run stops).
# The docker sandbox's runtime (runc or runsc) is how bots are kept apart, not what they
# play: a run may resume under the other one.
UNFINGERPRINTED = (
    "name", "jobs", "output", "cluster", "warm_start", "runtime", "registry", "games", "until_stable",
)
# What a store made before bot_process existed played: its fingerprint is kept for it.
OLD_BOT_PROCESS = "per-game"
# A league's settings stored only when they differ from these (see the module docstring).
LEAGUE_UNSTORED = {"bot_process": "per-game", "warm_start": False, "inherit_rating": False, "runtime": None}


def settings_of(
    config: TournamentConfig | LeagueConfig,
    field_bots: Sequence[BaseModel] = (),
    challengers: Sequence[BaseModel] = (),
) -> dict[str, Any]:
    """The settings stored with a run: a tournament's with its bots (`arena.config.field.
    BotRef`s: id, name, version, content hash, kind), a league's with its format and the
    registry it watches (its bots come and go: they are its members)."""
    settings = config.model_dump(mode="json")
    if isinstance(config, LeagueConfig):
        for key, default in LEAGUE_UNSTORED.items():
            if settings.get(key) == default:
                del settings[key]
        settings["format"] = LEAGUE
        settings["registry"] = str(config.registry_dir())
        return settings
    stored = {"id", "name", "version", "content_hash", "kind"}
    settings["bots"] = [bot.model_dump(include=stored) for bot in field_bots]
    settings["challengers"] = [bot.model_dump(include=stored) for bot in challengers]
    return settings


def fingerprint_of(settings: Mapping[str, Any]) -> str:
    """sha256 of the settings that decide what is played (`UNFINGERPRINTED` left out)."""
    kept = {key: value for key, value in settings.items() if key not in UNFINGERPRINTED}
    if kept.get("bot_process", OLD_BOT_PROCESS) == OLD_BOT_PROCESS:
        kept.pop("bot_process", None)  # a store from before the setting played per-game
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()


def changed_keys(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The fingerprinted settings that differ, sorted (a store from before `bot_process`
    played per-game)."""
    before = {"bot_process": OLD_BOT_PROCESS, **before}
    now = {"bot_process": OLD_BOT_PROCESS, **now}
    return sorted(
        key for key in set(before) | set(now) if key not in UNFINGERPRINTED and before.get(key) != now.get(key)
    )


def changed_settings(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """One line per fingerprinted setting that differs (each bot that came, went or changed)."""
    lines = []
    for key in changed_keys(before, now):
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
        shown = {"bot_process": OLD_BOT_PROCESS, **before}.get(key)
        lines.append(f"{key}: was {json.dumps(shown)}, now {json.dumps(now.get(key))}")
    return lines
