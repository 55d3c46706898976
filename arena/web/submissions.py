"""The authors' door over HTTP: the JSON API (FastAPI router) for submissions and bots.

    POST   /api/submissions                      upload a bot (.tar.gz/.tar/.zip; bearer token) -> 202 + id
    GET    /api/submissions/{id}                  its state (its author and the organiser only)
    GET    /api/submissions                       the caller's submissions, newest first
    GET    /api/me                                who the token is, the bots they own
    GET    /api/bots/{name}                       a bot's versions and, when a league runs, its standing
    DELETE /api/bots/{name}/versions/{version}    retire a version (its owner or the organiser)

An upload counts against its author's hourly limit from the moment it starts, whatever
becomes of it. Its body is written to a file in quarantine as it comes, its limits (size,
time) checked as the bytes come; that is all the event loop does with it. A worker
process (`arena.web.intake`) then parses the form if it is one, unpacks it
(`arena.web.unpack`) and reads bot.toml for the name; a name owned by another author (or
the organiser's) is refused at once; otherwise it is queued (`arena.web.queue`). The name
is claimed only when the submission is accepted. The book (SQLite) and scrypt are called
in a few threads of the uploads' own, never in the pool the other routes use; what a
refused upload left is removed in a thread of its own (`Door.discard`), never in the event
loop. Every refusal is an HTTP status and `{"error": one line}`; nothing of a refused
upload stays.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sqlite3
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread
from anyio import CapacityLimiter
from fastapi import APIRouter, Query, Request, Security
from fastapi.responses import JSONResponse

from arena.diskfull import FULL_UPLOAD, is_full
from arena.web import api_models as shapes
from arena.web.api_models import BEARER, refusals
from arena.web.authors import DOOR, Book
from arena.web.intake import Intake, Opened
from arena.web.queue import QueueSettings, ValidationQueue, quarantine_dir
from arena.web.unpack import MB, UploadLimits, UploadRefused

RETIRED = "retired"
UPLOAD_THREADS = 4  # threads for the uploads' book calls and scrypt (the other routes keep the default pool)
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # a bot name or version: one folder, never '.' or '..'


@dataclass
class Door:
    """Everything the door's routes share: the book, the queue, the limits, the league."""

    registry: Path
    limits: UploadLimits = field(default_factory=UploadLimits)
    queue_settings: QueueSettings = field(default_factory=QueueSettings)
    league_dir: Path | None = None
    hide_stderr: bool = True  # a bot's stderr in a served league's replays is its author's

    def __post_init__(self) -> None:
        self.registry = Path(self.registry).resolve()
        self.book = Book(self.registry)
        self.queue = ValidationQueue(self.book, self.queue_settings)
        self.intake = Intake()
        self._upload_threads: CapacityLimiter | None = None
        self._standing_cache: tuple[int, Any] | None = None
        self._standing_lock = threading.Lock()
        self._names_cache: tuple[int, frozenset[str]] | None = None
        self._names_lock = threading.Lock()
        self._plain = PlainFolders(self.registry)
        self.book.played = self.played
        # Refused uploads' folders are removed here, one at a time: never in the event loop.
        self._discarding = ThreadPoolExecutor(1, thread_name_prefix="arena-discard")

    def start(self) -> Door:
        self.queue.start()
        return self

    def stop(self) -> None:
        self.queue.stop()
        self.intake.close()
        self._discarding.shutdown(wait=True)
        self.book.close()

    def discard(self, work: Path) -> asyncio.Future:
        """Remove a refused upload's folder in the discarding thread; await it to know it
        is gone (a cancelled request need not: it goes all the same)."""
        return asyncio.wrap_future(self._discarding.submit(shutil.rmtree, work, True))

    def versions(self, name: str) -> list[dict[str, Any]]:
        """A bot's versions in the registry: its submitted ones (oldest first), then any
        plain folder of that name."""
        return _versions(self.registry, name) + self._plain.versions(name)

    def played(self, name: str) -> bool:
        """Whether the bot name `name` is in the served league's store (any version, in
        play or not): such a name is nobody's to take by uploading it."""
        if self.league_dir is None or not (self.league_dir / "arena.sqlite").is_file():
            return False
        stamp = max(_mtime(path) for path in self.league_dir.glob("arena.sqlite*"))
        with self._names_lock:
            if self._names_cache is None or self._names_cache[0] != stamp:
                from arena.store.db import Store, StoreError

                try:
                    with Store.open(self.league_dir) as store:
                        names = frozenset(part for bot in store.bots() for part in (bot.name, bot.bot.split("@")[0]))
                except (StoreError, sqlite3.Error):
                    names = None  # being made: asked again next time
                if names is None:
                    return True  # unknown for now: taken (refused), never claimable
                self._names_cache = (stamp, names)
            return name in self._names_cache[1]

    async def in_upload_thread(self, call, *args):  # noqa: ANN001, ANN201
        """`call(*args)` in one of the uploads' own threads (at most UPLOAD_THREADS at once)."""
        if self._upload_threads is None:
            self._upload_threads = CapacityLimiter(UPLOAD_THREADS)
        return await anyio.to_thread.run_sync(call, *args, limiter=self._upload_threads)

    def standing(self, name: str) -> dict[str, Any] | None:
        """Where `name` (its newest version) stands in the league, or None without one."""
        if self.league_dir is None or not (self.league_dir / "arena.sqlite").is_file():
            return None
        from arena.ratings.standings import of_store
        from arena.store.db import Store

        # A write may sit in the WAL file a while before the store file itself changes.
        stamp = max(_mtime(path) for path in self.league_dir.glob("arena.sqlite*"))
        with self._standing_lock:
            if self._standing_cache is None or self._standing_cache[0] != stamp:
                with Store.open(self.league_dir) as store:
                    standing = of_store(store)
                    incidents = store.incidents()
                self._standing_cache = (stamp, (standing, incidents))
            standing, incidents = self._standing_cache[1]
        chosen = [m for m in standing.members.values() if m.lineage == name]
        if not chosen:
            return {"joined": False}
        member = max(chosen, key=lambda m: (m.joined, m.bot))
        rank, line = standing.find(member.bot) or (None, None)
        return {
            "joined": True, "bot": member.bot, "status": member.status, "reason": member.reason,
            "rank": rank, "of": len(standing.lines), "band": [line.band.low, line.band.high] if line else None,
            "settled": bool(line and line.settled),
            "games": line.games if line else 0,
            "latest_incidents": [
                {"game": key, "reason": str(incident.reason.value), "detail": incident.detail}
                for key, incident in incidents if incident.bot == member.bot
            ][-5:],
            # Every version that joined, oldest first, in its true state: what the door shows.
            "members": [_member_state(standing, m) for m in sorted(chosen, key=lambda m: (m.joined, m.bot))],
        }


def _member_state(standing: Any, member: Any) -> dict[str, Any]:
    """A league member's state: active (playing, or waiting for its first game), retired,
    removed or suspended, with its reason, the batches it joined and left at, its games and rank."""
    rank, line = standing.find(member.bot) or (None, None)
    return {
        "bot": member.bot, "status": member.status, "reason": member.reason, "joined_at": member.joined,
        "left_at": member.left_at, "games": line.games if line else 0, "rank": rank,
        "band": [line.band.low, line.band.high] if line and line.band else None, "settled": bool(line and line.settled),
    }


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:  # the WAL file goes when the last connection closes
        return 0


def _error(status: int, line: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": line}, status_code=status, headers=headers)


def _client(request: Request) -> str:
    return request.client.host if request.client else "?"


def _who(door: Door, request: Request) -> tuple[str, bool] | JSONResponse:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("bearer "):
        return _error(401, "no token: send 'Authorization: Bearer TOKEN' (the organiser gives you one)",
                      {"WWW-Authenticate": "Bearer"})
    who = door.book.authenticate(header[7:].strip())
    if who is None:
        return _error(401, "the token is wrong or revoked; ask the organiser for a new one (arena authors rotate)",
                      {"WWW-Authenticate": "Bearer"})
    return who


async def _receive_upload(request: Request, target: Path, limits: UploadLimits) -> None:
    """Write the request's body (raw, or a form: a worker reads it) into `target` as it
    comes, refused with UploadRefused as soon as the size or the time limit is passed."""
    most = limits.packed_mb * MB + 64 * 1024  # a form's own lines come on top of the file
    too_large = f"the upload is larger than {limits.packed_mb} MB packed (the limit)"
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > most:
        raise UploadRefused(413, too_large)
    received = 0
    try:
        async with asyncio.timeout(limits.upload_s):
            with open(target, "wb") as sink:
                async for chunk in request.stream():
                    received += len(chunk)
                    if received > most:
                        raise UploadRefused(413, too_large)
                    sink.write(chunk)
    except TimeoutError:
        raise UploadRefused(408, f"the upload took longer than {limits.upload_s:g} s (the limit); send it faster") from None


def _book_it(
    door: Door, opened: Opened, work: Path, author: str, organiser: bool, address: str, upload: str | None
) -> str:
    """Check the name's owner, book the submission and move its folder to its id: the id,
    or UploadRefused. The name is not claimed here: only an accepted submission claims
    it (`arena.web.queue`), so a refused upload takes nobody's name."""
    name = opened.name
    refusal = door.book.may_use(author, organiser, name)
    if refusal:
        raise UploadRefused(403, refusal)
    sub_id = door.book.new_submission(author, name, opened.version, address, opened.packed_bytes, upload)
    (work / "packed").unlink()
    os.rename(work, quarantine_dir(door.registry) / sub_id)
    return sub_id


def door_router(door: Door) -> APIRouter:
    """The API's routes on `door`."""
    router = APIRouter(prefix="/api", tags=["authors"])
    signed = [Security(BEARER)]  # declared in the document; each route checks the token itself

    @router.post("/submissions", status_code=202, summary="Upload a bot folder (.tar.gz, .tar or .zip)",
                 response_model=shapes.Queued, dependencies=signed,
                 responses=refusals(400, 401, 403, 408, 413, 415, 429, 500),
                 openapi_extra={"requestBody": shapes.UPLOAD_BODY})
    async def submit(request: Request) -> JSONResponse:
        """The body is the packed bot folder (or a form with the file as 'bot'); answers 202
        with the submission's id: follow it at /api/submissions/{id}."""
        # The book (SQLite) and scrypt in the uploads' own threads; the body to a file; the
        # rest in a worker process: the event loop keeps serving pages meanwhile.
        who = await door.in_upload_thread(_who, door, request)
        if isinstance(who, JSONResponse):
            return who
        author, organiser = who
        upload = None
        if not organiser:  # every upload counts from its start, whatever becomes of it
            try:
                upload = await door.in_upload_thread(door.book.start_upload, author, time.time() - 3600,
                                                     door.limits.per_hour)
            except (OSError, sqlite3.OperationalError) as error:  # the book's disk may be full
                if not is_full(error):
                    raise
                return _error(507, FULL_UPLOAD)
            if upload is None:
                return _error(429, f"more than {door.limits.per_hour} submissions in an hour (the limit); try later",
                              {"Retry-After": "600"})
        root = quarantine_dir(door.registry)
        try:
            root.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=".upload-", dir=root))
        except OSError as error:
            if not is_full(error):
                raise
            return _error(507, FULL_UPLOAD)
        try:
            body = work / "body"
            await _receive_upload(request, body, door.limits)
            opened = await door.intake.open(body, work, door.limits, request.headers.get("content-type", ""),
                                            door.in_upload_thread)
            sub_id = await door.in_upload_thread(_book_it, door, opened, work, author, organiser, _client(request),
                                                 upload)
        except UploadRefused as refused:
            await door.discard(work)
            if upload is not None:
                await door.in_upload_thread(door.book.refuse_upload, upload, refused.status, refused.line)
            return _error(refused.status, refused.line)
        except (OSError, sqlite3.OperationalError) as error:  # the body, the book: the disk may be full
            shutil.rmtree(work, ignore_errors=True)
            if not is_full(error):
                raise
            return _error(507, FULL_UPLOAD)
        except BaseException:
            door.discard(work)  # not awaited: the request may be cancelled
            raise
        name, version = opened.name, opened.version
        door.queue.wake()
        return JSONResponse(
            {"id": sub_id, "state": "queued", "name": name, "version": version, "url": f"/api/submissions/{sub_id}"},
            status_code=202,
        )

    @router.get("/submissions/{sub_id}", summary="A submission's state", response_model=shapes.Submission,
                dependencies=signed, responses=refusals(401, 404))
    def submission(sub_id: str, request: Request) -> JSONResponse:
        who = _who(door, request)
        if isinstance(who, JSONResponse):
            return who
        row = door.book.submission(sub_id)
        if row is None or not (who[1] or row.author == who[0]):
            return _error(404, f"no submission {sub_id} of yours")
        return JSONResponse(row.public())

    @router.get("/submissions", summary="Your submissions, newest first (the organiser: everyone's)",
                response_model=shapes.Submissions, dependencies=signed, responses=refusals(401))
    def submissions(request: Request, limit: int = Query(50, ge=1, le=500)) -> JSONResponse:
        who = _who(door, request)
        if isinstance(who, JSONResponse):
            return who
        rows = door.book.submissions_of(None if who[1] else who[0], limit)
        return JSONResponse({"submissions": [row.public() for row in rows]})

    @router.get("/me", summary="Who this token is and the bots they own", response_model=shapes.Me,
                dependencies=signed, responses=refusals(401))
    def me(request: Request) -> JSONResponse:
        who = _who(door, request)
        if isinstance(who, JSONResponse):
            return who
        mine = next((a for a in door.book.authors() if a.name == who[0]), None)
        return JSONResponse({"author": who[0], "organiser": who[1], "bots": list(mine.bots) if mine else []})

    @router.get("/bots/{name}", summary="A bot's versions and its standing in the league",
                response_model=shapes.Bot, responses=refusals(404))
    def bot(name: str) -> JSONResponse:
        """Any bot the registry holds (a submitted one, or a plain folder the organiser put
        there) or the league has played."""
        versions = door.versions(name)
        standing = door.standing(name)
        if not versions and not (standing and standing["joined"]):
            return _error(404, f"no bot {name[:100]} in the registry or the league")
        return JSONResponse({
            "name": name, "owner": door.book.owner_of(name) or None, "versions": versions, "standing": standing,
        })

    @router.delete("/bots/{name}/versions/{version}", summary="Retire a version (it leaves the league)",
                   response_model=shapes.Retired, dependencies=signed, responses=refusals(401, 403, 404))
    def retire(name: str, version: str, request: Request) -> JSONResponse:
        who = _who(door, request)
        if isinstance(who, JSONResponse):
            return who
        if not (_SAFE.fullmatch(name) and _SAFE.fullmatch(version)):  # never '..', never a path
            return _error(404, f"no version {version} of {name} in the registry")
        refusal = door.book.may_use(who[0], who[1], name)
        if refusal and door.book.owner_of(name) is not None:
            return _error(403, refusal)
        folder = door.registry / name / version
        if not (folder / "bot.toml").is_file():
            return _error(404, f"no version {version} of {name} in the registry")
        kept = door.registry / DOOR / RETIRED / name
        kept.mkdir(parents=True, exist_ok=True)
        os.rename(folder, kept / f"{version}.{int(time.time())}")  # one rename: the league sees it gone at once
        return JSONResponse({"retired": f"{name}@{version}"})

    return router


def _versions(registry: Path, name: str) -> list[dict[str, Any]]:
    """A bot's submitted versions in the registry (REGISTRY/NAME/VERSION), oldest first."""
    from arena.registry.submit import RECORD

    if not _SAFE.fullmatch(name):
        return []
    found = []
    for toml in sorted((registry / name).glob("*/bot.toml")):
        folder = toml.parent
        if folder.name.startswith("."):
            continue
        record = {}
        if (folder / RECORD).is_file():
            try:
                record = json.loads((folder / RECORD).read_text())
            except ValueError:
                record = {}
        found.append({
            "version": folder.name, "date": record.get("date"), "content_hash": record.get("content_hash"),
            "games": record.get("games", []), "submitted": True,
        })
    found.sort(key=lambda v: (v["date"] or "", v["version"]))
    return found


class PlainFolders:
    """The registry's plain bot folders (REGISTRY/X/bot.toml, put there by the organiser, as
    the examples are): the league plays them under their bot.toml's name, which need not be
    the folder's. Each bot.toml is read again only when it changes."""

    def __init__(self, registry: Path):
        self.registry = registry
        self._read: dict[Path, tuple[tuple[int, int], dict[str, Any] | None]] = {}
        self._lock = threading.Lock()

    def versions(self, name: str) -> list[dict[str, Any]]:
        """The plain folders whose bot.toml names `name`."""
        found = []
        with self._lock:
            seen = {}
            for toml in sorted(self.registry.glob("*/bot.toml")):
                if toml.parent.name.startswith("."):
                    continue
                try:
                    stat_result = toml.stat()
                except OSError:
                    continue
                stamp = (stat_result.st_mtime_ns, stat_result.st_size)
                cached = self._read.get(toml)
                seen[toml] = cached if cached is not None and cached[0] == stamp else (stamp, _plain(toml))
                version = seen[toml][1]
                if version is not None and version["name"] == name:
                    found.append({key: value for key, value in version.items() if key != "name"})
            self._read = seen
        return found


def _plain(toml: Path) -> dict[str, Any] | None:
    """A plain folder's one version (with its bot's name), or None when it is not a bot."""
    from datetime import UTC, datetime

    from arena.config.botfolder import BotFolderError, load_bot

    try:
        manifest = load_bot(toml.parent)
        date = datetime.fromtimestamp(toml.stat().st_mtime, UTC).isoformat(timespec="seconds")
    except (BotFolderError, OSError):
        return None
    return {"name": manifest.name, "version": manifest.version, "date": date, "content_hash": None,
            "games": list(manifest.games), "submitted": False}


class AddressLimit:
    """ASGI middleware: at most `per_minute` requests from one address in any minute;
    more get 429 and one line (a flood from one address cannot starve the others)."""

    def __init__(self, app, per_minute: int):  # noqa: ANN001
        self.app = app
        self.per_minute = per_minute
        self.seen: dict[str, deque[float]] = {}

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        address = (scope.get("client") or ("?", 0))[0]
        now = time.monotonic()
        times = self.seen.setdefault(address, deque())
        while times and now - times[0] > 60:
            times.popleft()
        if len(times) >= self.per_minute:
            answer = _error(429, f"more than {self.per_minute} requests a minute from {address} (the limit); slow down",
                            {"Retry-After": "60"})
            await answer(scope, receive, send)
            return
        times.append(now)
        if len(self.seen) > 100_000:
            self.seen = {address: times}
        await self.app(scope, receive, send)
