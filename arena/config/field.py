"""The field: the bot folders a tournament names (folders or globs), checked and given ids.

`resolve_bots(config)` returns the field and the challengers as `BotRef`s (a bot as a game
needs it: its id in the tournament, folder, command and content hash); every mistake is
one line of a `TournamentError`. A gauntlet's challengers are never in its field (a field
glob that matches one leaves it out). `load_tournament` adds the bot folders' mistakes to
those of settings that have mistakes of their own, so one run names every mistake.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from arena.config import tournament_file
from arena.config.botfolder import BotFolderError, BotManifest, load_bot
from arena.config.tournament_file import Strict, TournamentConfig, TournamentError
from arena.game.seats import Seat
from arena.store.db import BotRecord, content_hash
from engine.api import GameError
from engine.registry import get_game


class BotRef(Strict):
    """A bot as a game needs it: id in the tournament, and where its program is."""

    id: str
    name: str
    version: str
    folder: str
    command: tuple[str, ...] = ()
    dockerfile: str | None = None
    language: str | None = None
    build: tuple[str, ...] = ()
    content_hash: str
    kind: Literal["folder", "in-process"] = "folder"

    def record(self) -> BotRecord:
        """The store's row for this bot."""
        return BotRecord(self.id, self.name, self.version, self.content_hash, self.folder, self.kind)


def unique_names(manifests: Sequence[BotManifest]) -> list[str]:
    """Bot names as shown in results: a name that several bots share becomes name@version
    when their versions differ (two versions of one bot), and a name (or name@version) used
    twice becomes name#2, name#3..."""
    versions: dict[str, set[str]] = {}
    for manifest in manifests:
        versions.setdefault(manifest.name, set()).add(manifest.version)
    seen: dict[str, int] = {}
    names = []
    for manifest in manifests:
        name = manifest.name if len(versions[manifest.name]) == 1 else f"{manifest.name}@{manifest.version}"
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return names


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


def _field_and_challengers(
    game: str, base: Path, bots: Sequence[str], challengers: Sequence[str], mistakes: list[str]
) -> tuple[list[BotManifest], list[BotManifest]]:
    """The field's and the challengers' manifests; mistakes collected. A challenger is never
    in its own field: a field glob that matches a challenger's folder leaves it out."""
    field = _expand(bots, base, "bots", game, mistakes)
    rivals = _expand(challengers, base, "challengers", game, mistakes)
    challenging = {m.folder for m in rivals}
    field = [m for m in field if m.folder not in challenging]
    for key, listed in (("bots", field), ("challengers", rivals)):
        folders = [m.folder for m in listed]
        repeated = sorted({str(f) for f in folders if folders.count(f) > 1})
        if repeated:
            mistakes.append(f"{key}: a folder is listed more than once: {', '.join(repeated)}")
    return field, rivals


def bot_mistakes(data: Mapping[str, Any]) -> list[str]:
    """The mistakes in the bot folders of tournament settings that are not valid as a whole
    (`TournamentError.data`): every check that the rest of the settings allow."""
    try:
        game = get_game(str(data.get("game"))).name
    except GameError:
        return []  # which bots play is unknown without the game; the game's mistake is listed
    lists = [data.get(key, []) for key in ("bots", "challengers")]
    if not all(isinstance(entries, list) and all(isinstance(e, str) for e in entries) for entries in lists):
        return []  # their own mistake is listed
    mistakes: list[str] = []
    _field_and_challengers(game, Path(str(data.get("base_dir", "."))), lists[0], lists[1], mistakes)
    return mistakes


def load_tournament(
    path: str | Path | None, overrides: Mapping[str, Any] | None = None, rule_args: Sequence[str] = ()
) -> TournamentConfig:
    """`arena.config.tournament_file.load_tournament`, and when the settings have mistakes, those of
    their bot folders too: every mistake in one go."""
    try:
        return tournament_file.load_tournament(path, overrides, rule_args)
    except TournamentError as invalid:
        more = bot_mistakes(invalid.data) if invalid.data is not None else []
        if not more:
            raise
        raise TournamentError(invalid.mistakes + more, invalid.source) from None


def resolve_bots(
    config: TournamentConfig, in_process: Mapping[str, SeatFactory] | None = None
) -> tuple[list[BotRef], list[BotRef]]:
    """The field and the challengers as BotRefs, ids unique; TournamentError lists every mistake."""
    mistakes: list[str] = []
    field, challengers = _field_and_challengers(
        config.game, Path(config.base_dir), config.bots, config.challengers, mistakes
    )
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
            language=m.language,
            build=m.build,
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
