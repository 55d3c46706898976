"""Submitting a bot to a registry (`arena submit`) and listing one (`arena bots`).

A registry is a folder of bot folders: `--registry DIR`, else $ARENA_REGISTRY, else
`./bots` in the working folder (never a folder inside arena's installation). A submitted bot is copied to
`REGISTRY/NAME/VERSION/` with a `submission.json` beside its files (name, version,
content hash, date, the smoke games it played); the example bots shipped with arena sit
directly in `REGISTRY/NAME/`. Both layouts are listed.

The folder is first copied into a staging folder inside the registry
(`REGISTRY/.incoming-*`) by `arena.botcopy`: no link of any kind, no device, fifo or
socket, nothing its owner cannot read (as root, the folder is read with its owner's
rights), within the folder limits; every problem is one line naming its path (the
author's build/ of a bot with a `build` step is left out: arena builds it). Everything
after that uses only the copy: its bot.toml must be valid and name only known games;
then its content hash is compared with the registry's before anything is built or
played (the same version with the same content is already there: nothing to do; with
other content: refused at once, raise the version). The sandbox is prepared from the copy
(the Docker image is built from it when the bot has a Dockerfile and the sandbox is
docker); its `build` step runs on the copy, in the sandbox, from an empty build/
(arena.langs.build); the built copy must pass the league's own check
(`playable_problem`: the league runs it before a bot's first game), so an accepted bot
is one the league can play; and a smoke match of the copy against the example random bot
under the given limits must end without a single incident of the submitted bot, in
every game it declares. Then the copy is renamed to `REGISTRY/NAME/VERSION/`; whatever
happens, the staging folder is removed (and a registry made for a refused bot).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from arena.botcopy import FolderLimits, copy_bot_folder, vet_bot_folder
from arena.config.botfolder import (  # noqa: F401 - REGISTRY_ENV, default_registry: read here too
    MANIFEST,
    REGISTRY_ENV,
    BotFolderError,
    BotManifest,
    default_registry,
    load_bot,
    registry_folders,
)
from arena.errors import ArenaError
from arena.faults import BotFault, SandboxError
from arena.langs.build import BuildFailed, run_build
from arena.play.match import MatchError, run_match
from arena.resources import bots_dir
from arena.sandbox import Limits, Sandbox, get_sandbox
from arena.sandbox.access import NOBODY, nobody_may
from arena.store.db import RECORD_FILE, content_hash
from engine.api import GameError
from engine.registry import get_game

RECORD = RECORD_FILE
# Smoke games per declared game: seats rotate, so the bot plays first and second.
SMOKE_GAMES = 2


class SubmitRefused(ArenaError, ValueError):
    """The bot was not accepted; `reasons` has one line per reason."""

    def __init__(self, folder: Path, reasons: list[str]):
        self.reasons = reasons
        listed = "\n".join(f"  - {reason}" for reason in reasons)
        super().__init__(f"refused {folder}: {len(reasons)} reason(s):\n{listed}")


@dataclass
class Submission:
    """An accepted bot: where it went and what was checked."""

    name: str
    version: str
    content_hash: str
    folder: Path
    smoke_games: dict[str, int] = field(default_factory=dict)
    already_there: bool = False  # this version with this content was in the registry: nothing checked again
    newest: str | None = None  # the newest version of the bot in the registry (the one a league plays)

    def already_line(self) -> str:
        """What to tell the author of a submission that was already there."""
        newest = "" if self.newest in (None, self.version) else f"; the newest there is {self.name}@{self.newest}"
        return f"{self.name}@{self.version} is already in the registry with this content: nothing new{newest}"


@dataclass(frozen=True)
class RegistryEntry:
    """One bot of a registry, as `arena bots` lists it."""

    name: str
    version: str
    games: tuple[str, ...]
    content_hash: str
    date: str
    folder: Path


_INSTALLATION = Path(__file__).resolve().parent.parent  # the arena package: never a registry


STAGING_PREFIX = ".incoming-"  # REGISTRY/.incoming-PID-XXXX: a submission being checked


def abandoned_staging(registry: Path) -> list[Path]:
    """The staging folders of `registry` that no `arena submit` holds any more (its process
    was killed with a server, say): safe to remove. A submit holds an exclusive flock on its
    staging folder from making it to removing it; the kernel lets go of it when the process
    ends, however it ends, so a folder whose lock can be taken is abandoned."""
    found = []
    for staging in Path(registry).glob(f"{STAGING_PREFIX}*"):
        try:
            fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue  # gone meanwhile, or not a folder arena made
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a submit that runs now
        finally:
            os.close(fd)
        found.append(staging)
    return found


def _hold(staging: Path) -> int:
    """Take the lock that says `staging` is in use (see `abandoned_staging`)."""
    fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _inside_installation(registry: Path) -> bool:
    """True when `registry` is in the installed arena package (e.g. site-packages/arena/_shipped/bots)."""
    return registry.resolve().is_relative_to(_INSTALLATION)


def _make_folder(path: Path) -> list[Path]:
    """Make `path` and its missing parents; the ones made, deepest first."""
    made = []
    for folder in [path, *path.parents]:
        if folder.exists():
            break
        made.append(folder)
    path.mkdir(parents=True, exist_ok=True)
    return made


def submit_bot(
    bot_dir: str | Path,
    registry: str | Path | None = None,
    *,
    sandbox: str = "local",
    limits: Limits | None = None,
    opponent: str | Path | None = None,
    folder_limits: FolderLimits | None = None,
    stage: Callable[[str], None] | None = None,
    runtime: str | None = None,
) -> Submission:
    """Check a bot and copy it into the registry; SubmitRefused lists every reason.
    `folder_limits`: how much the folder may hold (default `FolderLimits.from_env()`);
    `stage` is told each step as it starts ("checking", "building", "smoke match");
    `runtime`: the docker sandbox's (runc or runsc; None, its default)."""
    folder = Path(bot_dir).resolve()
    registry = Path(registry).resolve() if registry is not None else default_registry()
    if _inside_installation(registry):
        raise SubmitRefused(
            folder,
            [f"the registry {registry} is inside arena's installation, which is never a registry: give "
             f"--registry DIR, set {REGISTRY_ENV}=DIR, or submit from a folder whose ./bots is to be the registry"],
        )
    if not folder.is_dir():
        raise SubmitRefused(folder, ["is not a folder (a bot is a folder with a bot.toml)"])
    try:
        made = _make_folder(registry)
        staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=registry))
    except OSError as error:
        raise SubmitRefused(
            folder, [f"the registry {registry} is not writable ({error.strerror}); choose one with --registry DIR"]
        ) from None
    held = _hold(staging)  # held until the folder is gone: a restarted server leaves it alone
    try:
        os.chmod(staging, 0o755)  # the sandbox's user (nobody) runs the smoke match from it
        return _submit_copy(
            folder, staging / "bot", registry, sandbox=sandbox, runtime=runtime, limits=limits, opponent=opponent,
            folder_limits=folder_limits if folder_limits is not None else FolderLimits.from_env(),
            stage=stage or (lambda step: None),
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        os.close(held)
        for path in made:  # a registry made for a bot that was refused
            try:
                path.rmdir()
            except OSError:
                break


def _submit_copy(
    folder: Path, copy: Path, registry: Path, *, sandbox: str, runtime: str | None, limits: Limits | None,
    opponent: str | Path | None, folder_limits: FolderLimits, stage: Callable[[str], None],
) -> Submission:
    """The checks, the smoke match and the move into the registry, all on the copy."""
    stage("checking")
    reasons = copy_bot_folder(folder, copy, folder_limits, keep_refused=True, leave_out_build=True)
    refused_names = {reason.split(":", 1)[0] for reason in reasons}
    if (copy / MANIFEST).is_file() or MANIFEST not in refused_names:
        try:
            manifest = load_bot(copy, check_games=True)  # every mistake at once, unknown games too
        except BotFolderError as error:
            reasons += error.mistakes
    if reasons:
        raise SubmitRefused(folder, reasons)
    games = [get_game(game).name for game in manifest.games]

    # The content hash first: a version already there is known before a build or a game.
    digest = content_hash(copy)
    target = _target(folder, registry, manifest.name, manifest.version, digest)
    if target.exists():
        return Submission(manifest.name, manifest.version, digest, target, already_there=True,
                          newest=newest_version(registry, manifest.name))

    box = get_sandbox(sandbox, **({"runtime": runtime} if runtime else {}))
    try:
        box.hide_paths([registry])  # the smoke match must not read the bots already accepted
        smoke = _built_and_smoked(box, folder, copy, manifest, sandbox=sandbox, games=games, opponent=opponent,
                                  limits=limits, folder_limits=folder_limits, stage=stage)
    finally:
        box.close()  # with what it holds (a Docker engine's connections): a server validates for months

    # Again: another submission of this name may have landed meanwhile (a shell's).
    if _target(folder, registry, manifest.name, manifest.version, digest).exists():
        return Submission(manifest.name, manifest.version, digest, target, smoke, already_there=True,
                          newest=newest_version(registry, manifest.name))
    (copy / RECORD).write_text(
        json.dumps(
            {
                "name": manifest.name,
                "version": manifest.version,
                "content_hash": digest,
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "games": list(manifest.games),
                "smoke_games": smoke,
                "sandbox": sandbox,
            },
            indent=2,
        )
        + "\n"
    )
    os.chmod(copy / RECORD, 0o644)  # read by the user the bots run as, whatever arena's umask
    if not target.parent.exists():
        target.parent.mkdir()
        os.chmod(target.parent, 0o755)
    try:
        copy.rename(target)  # a half-copied bot is never seen under its real name
    except OSError as error:
        raise SubmitRefused(folder, [f"{target} cannot be written ({error.strerror})"]) from None
    return Submission(manifest.name, manifest.version, digest, target, smoke,
                      newest=newest_version(registry, manifest.name))


def _built_and_smoked(
    box: Sandbox, folder: Path, copy: Path, manifest: BotManifest, *, sandbox: str, games: list[str],
    opponent: str | Path | None, limits: Limits | None, folder_limits: FolderLimits, stage: Callable[[str], None],
) -> dict[str, int]:
    """The copy built (its image, its build step) and played in a smoke match of each game
    in `box`: how many games of each; SubmitRefused with every reason."""
    reasons: list[str] = []
    if sandbox == "docker" and manifest.dockerfile:
        stage("building")
        try:
            box.image_for(manifest.spec())  # built from the vetted copy, now, not in its first game
        except (SandboxError, BotFault) as error:
            said = error.detail if isinstance(error, BotFault) else str(error)
            raise SubmitRefused(folder, [f"building its Docker image failed: {said}"]) from None
    if manifest.build:
        stage("building")
        try:
            # On the copy, from scratch: what the registry keeps is what the sandbox made.
            run_build(manifest.spec(), box, fresh=True, folder_limits=folder_limits)  # build/ counts too
        except BuildFailed as error:
            raise SubmitRefused(folder, [str(error)]) from None
        except SandboxError as error:
            raise SubmitRefused(folder, [f"its build could not run: {error}"]) from None
    # What the league checks before its first game, on what it will play from.
    problem = playable_problem(copy, docker=sandbox == "docker", dockerfile=bool(manifest.dockerfile),
                               folder_limits=folder_limits)
    if problem is not None:
        raise SubmitRefused(folder, [problem])
    random_bot = Path(opponent) if opponent is not None else bots_dir() / "random"
    smoke: dict[str, int] = {}
    stage("smoke match")
    for game in games:
        try:
            # Deals from a secret (no seed): a bot cannot recognise the smoke match by its cards.
            match = run_match(
                game, [copy, random_bot], games=SMOKE_GAMES, sandbox=box, limits=limits or Limits()
            )
        except (MatchError, GameError) as error:
            reasons.append(f"smoke match of {game}: {error}")
            continue
        mine = match.bots[0].name
        explained: set[str] = set()
        for result in match.games:
            for incident in result.incidents:
                if incident.bot == mine:
                    reason = (
                        f"smoke match of {game}, game {incident.game_number}: {incident.reason.value} "
                        f"{incident.when()}: {incident.detail}"
                    )
                    if incident.reason.value not in explained:  # the same fault again needs no second telling
                        explained.add(incident.reason.value)
                        reason += "".join(f"\n      {line}" for line in incident.explained(box.name))
                    reasons.append(reason)
        smoke[game] = len(match.games)
    if reasons:
        raise SubmitRefused(folder, reasons)
    return smoke


def _target(folder: Path, registry: Path, name: str, version: str, digest: str) -> Path:
    """`REGISTRY/NAME/VERSION`, where the bot goes: SubmitRefused when NAME is an example
    bot's plain folder, or when VERSION is there with other content (the author's fix is a
    new version; the registry keeps what it accepted)."""
    if (registry / name / MANIFEST).is_file():
        # An example bot sits there as a plain folder; a version folder inside it would change it.
        raise SubmitRefused(folder, [f"{name} is already a bot folder of the registry (one of the examples); "
                                     "choose another name"])
    target = registry / name / version
    if target.exists():
        record_path = target / RECORD
        try:
            stored = json.loads(record_path.read_text()) if record_path.is_file() else {}
        except (OSError, ValueError):
            stored = {}
        if stored.get("content_hash") != digest:
            raise SubmitRefused(folder, [f"{name} version {version} is already in the registry with other content; "
                                         "raise the version in bot.toml"])
    return target


def newest_version(registry: Path, name: str) -> str | None:
    """The newest submitted version of `name` in the registry (by date, then version, as a
    league takes it: arena.league.members.registry_field), or None."""
    newest: tuple[str, str] | None = None
    for record_path in Path(registry, name).glob(f"*/{RECORD}"):
        if record_path.parent.name.startswith("."):
            continue
        try:
            record = json.loads(record_path.read_text())
        except (OSError, ValueError):
            continue
        key = (str(record.get("date") or ""), record_path.parent.name)
        if newest is None or key > newest:
            newest = key
    return newest[1] if newest else None


def playable_problem(folder: Path, *, docker: bool, dockerfile: bool, folder_limits: FolderLimits) -> str | None:
    """Why no game can start a bot from `folder` (None: nothing is wrong with it): gone,
    holding what no bot folder may hold (arena.botcopy: links, devices, files its owner
    cannot read, over the size limits), or closed to the user the bots run as. The league
    asks it before a bot's first game; `submit_bot` on the built copy before accepting it."""
    folder = Path(folder)
    if not folder.is_dir():
        return f"its folder {folder} is gone"
    problems = vet_bot_folder(folder, folder_limits)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return f"its folder cannot be played from: {problems[0]}{more}"
    if (docker and not dockerfile) or (not docker and os.geteuid() == 0):  # the folder is read by nobody
        for path in sorted([folder, *folder.rglob("*")]):
            info = path.lstat()
            want = 5 if stat.S_ISDIR(info.st_mode) else 4
            readable = info.st_mode & want == want if docker else nobody_may(info.st_mode, info.st_uid, info.st_gid, want)
            if not readable:
                shown = path.relative_to(folder).as_posix() if path != folder else "."
                return (
                    f"its folder cannot be played from: {shown} is not readable by user nobody (uid {NOBODY}), "
                    "who runs the bots; submit it again (arena submit copies it readable)"
                )
    return None


def list_registry(registry: str | Path | None = None, broken: list[BotFolderError] | None = None) -> list[RegistryEntry]:
    """Every bot in the registry (submitted NAME/VERSION folders and plain NAME folders);
    a folder whose bot.toml is wrong is not a bot: its mistakes go to `broken`."""
    registry = Path(registry) if registry is not None else default_registry()
    if not registry.is_dir():
        raise FileNotFoundError(f"registry {registry} is not a folder")
    entries = []
    for folder in registry_folders(registry):
        candidate = folder / MANIFEST
        try:
            manifest = load_bot(folder)
        except BotFolderError as error:
            if broken is not None:
                broken.append(error)
            continue
        record_path = folder / RECORD
        record = json.loads(record_path.read_text()) if record_path.is_file() else {}
        date = record.get("date") or datetime.fromtimestamp(
            candidate.stat().st_mtime, UTC
        ).isoformat(timespec="seconds")
        entries.append(
            RegistryEntry(
                name=manifest.name,
                version=manifest.version,
                games=manifest.games,
                content_hash=record.get("content_hash") or content_hash(folder),
                date=date,
                folder=folder,
            )
        )
    entries.sort(key=lambda entry: (entry.name, entry.version))
    return entries
