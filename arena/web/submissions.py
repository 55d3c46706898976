"""The authors' door over HTTP: the JSON API (FastAPI router) for submissions and bots.

    POST   /api/submissions                      upload a bot (.tar.gz/.tar/.zip; bearer token) -> 202 + id
    GET    /api/submissions/{id}                  its state (its author and the organiser only)
    GET    /api/submissions                       the caller's submissions, newest first
    GET    /api/me                                who the token is, the bots they own
    GET    /api/bots/{name}                       a bot's versions and, when a league runs, its standing
    DELETE /api/bots/{name}/versions/{version}    retire a version (its owner or the organiser)

An upload is received with limits checked as the bytes come (size, time), unpacked into
quarantine (`arena.web.unpack`), and its bot.toml read for the name: a name owned by
another author is refused at once; otherwise it is queued (`arena.web.queue`). Every
refusal is an HTTP status and `{"error": one line}`; nothing of a refused upload stays.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from arena.config.botfolder import BotFolderError, load_bot
from arena.web.authors import DOOR, Book
from arena.web.queue import UNPACKED, QueueSettings, ValidationQueue, quarantine_dir
from arena.web.unpack import MB, UploadLimits, UploadRefused, unpack

RETIRED = "retired"
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
        self._standing_cache: tuple[int, Any] | None = None
        self._standing_lock = threading.Lock()

    def start(self) -> Door:
        self.queue.start()
        return self

    def stop(self) -> None:
        self.queue.stop()
        self.book.close()

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
    """Write the request's body (raw, or the 'bot' file of a form) into `target`, within
    the size and time limits, refused with UploadRefused as soon as either is passed."""
    most = limits.packed_mb * MB
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > most + 64 * 1024:
        raise UploadRefused(413, f"the upload is larger than {limits.packed_mb} MB packed (the limit)")
    deadline = time.monotonic() + limits.upload_s
    received = 0
    original = request.receive

    async def bounded() -> dict:
        nonlocal received
        left = deadline - time.monotonic()
        if left <= 0:
            raise UploadRefused(408, f"the upload took longer than {limits.upload_s:g} s (the limit); send it faster")
        try:
            message = await asyncio.wait_for(original(), left)
        except TimeoutError:
            raise UploadRefused(
                408, f"the upload took longer than {limits.upload_s:g} s (the limit); send it faster"
            ) from None
        received += len(message.get("body", b""))
        if received > most + 64 * 1024:
            raise UploadRefused(413, f"the upload is larger than {limits.packed_mb} MB packed (the limit)")
        return message

    kind = request.headers.get("content-type", "")
    if kind.startswith("multipart/form-data"):
        form = await Request(request.scope, bounded).form(max_files=1, max_fields=4)
        upload = form.get("bot")
        if upload is None or isinstance(upload, str):
            raise UploadRefused(400, "the form has no file field 'bot'; attach the packed bot folder as 'bot'")
        with open(target, "wb") as sink:
            while chunk := await upload.read(1 << 16):
                sink.write(chunk)
        await form.close()
    else:
        with open(target, "wb") as sink:
            async for chunk in Request(request.scope, bounded).stream():
                sink.write(chunk)
    if target.stat().st_size > most:
        raise UploadRefused(413, f"the upload is larger than {limits.packed_mb} MB packed (the limit)")
    if target.stat().st_size == 0:
        raise UploadRefused(400, "the upload is empty; send the packed bot folder (.tar.gz or .zip)")


def _take_in(door: Door, packed: Path, work: Path, author: str, organiser: bool, address: str) -> tuple[str, str, str]:
    """Unpack, read bot.toml, book the submission and move its folder to its id: (name,
    version, id), or UploadRefused."""
    bot = unpack(packed, work / UNPACKED, door.limits)
    try:
        manifest = load_bot(bot)
    except BotFolderError as error:
        raise UploadRefused(400, "bot.toml: " + "; ".join(error.mistakes)) from None
    refusal = door.book.may_use(author, organiser, manifest.name)
    if refusal:
        raise UploadRefused(403, refusal)
    if not organiser:  # the first author to submit a name owns it (of two at once, one wins)
        door.book.claim(author, manifest.name)
        refusal = door.book.may_use(author, organiser, manifest.name)
        if refusal:
            raise UploadRefused(403, refusal)
    sub_id = door.book.new_submission(author, manifest.name, manifest.version, address, packed.stat().st_size)
    packed.unlink()
    os.rename(work, quarantine_dir(door.registry) / sub_id)
    return manifest.name, manifest.version, sub_id


def door_router(door: Door) -> APIRouter:
    """The API's routes on `door`."""
    router = APIRouter(prefix="/api", tags=["authors"])

    @router.post("/submissions", status_code=202, summary="Upload a bot folder (.tar.gz, .tar or .zip)")
    async def submit(request: Request) -> JSONResponse:
        """The body is the packed bot folder (or a form with the file as 'bot'); answers 202
        with the submission's id: follow it at /api/submissions/{id}."""
        # The book (SQLite) and scrypt are called in worker threads: the event loop keeps
        # serving pages meanwhile.
        who = await run_in_threadpool(_who, door, request)
        if isinstance(who, JSONResponse):
            return who
        author, organiser = who
        if not organiser:
            hour_ago = time.time() - 3600
            if await run_in_threadpool(door.book.recent_uploads, author, hour_ago) >= door.limits.per_hour:
                return _error(429, f"more than {door.limits.per_hour} submissions in an hour (the limit); try later",
                              {"Retry-After": "600"})
        root = quarantine_dir(door.registry)
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".upload-", dir=root))
        try:
            packed = work / "packed"
            await _receive_upload(request, packed, door.limits)
            name, version, sub_id = await run_in_threadpool(
                _take_in, door, packed, work, author, organiser, _client(request)
            )
        except UploadRefused as refused:
            shutil.rmtree(work, ignore_errors=True)
            return _error(refused.status, refused.line)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        door.queue.wake()
        return JSONResponse(
            {"id": sub_id, "state": "queued", "name": name, "version": version, "url": f"/api/submissions/{sub_id}"},
            status_code=202,
        )

    @router.get("/submissions/{sub_id}", summary="A submission's state")
    def submission(sub_id: str, request: Request) -> JSONResponse:
        who = _who(door, request)
        if isinstance(who, JSONResponse):
            return who
        row = door.book.submission(sub_id)
        if row is None or not (who[1] or row.author == who[0]):
            return _error(404, f"no submission {sub_id} of yours")
        return JSONResponse(row.public())

    @router.get("/submissions", summary="Your submissions, newest first (the organiser: everyone's)")
    def submissions(request: Request, limit: int = Query(50, ge=1, le=500)) -> JSONResponse:
        who = _who(door, request)
        if isinstance(who, JSONResponse):
            return who
        rows = door.book.submissions_of(None if who[1] else who[0], limit)
        return JSONResponse({"submissions": [row.public() for row in rows]})

    @router.get("/me", summary="Who this token is and the bots they own")
    def me(request: Request) -> JSONResponse:
        who = _who(door, request)
        if isinstance(who, JSONResponse):
            return who
        mine = next((a for a in door.book.authors() if a.name == who[0]), None)
        return JSONResponse({"author": who[0], "organiser": who[1], "bots": list(mine.bots) if mine else []})

    @router.get("/bots/{name}", summary="A bot's versions and its standing in the league")
    def bot(name: str) -> JSONResponse:
        versions = _versions(door.registry, name)
        if not versions:
            return _error(404, f"no bot {name} in the registry")
        return JSONResponse({
            "name": name, "owner": door.book.owner_of(name) or None, "versions": versions,
            "standing": door.standing(name),
        })

    @router.delete("/bots/{name}/versions/{version}", summary="Retire a version (it leaves the league)")
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
    """A bot's submitted versions in the registry, oldest first."""
    from arena.store.registry import RECORD

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
            "games": record.get("games", []),
        })
    found.sort(key=lambda v: (v["date"] or "", v["version"]))
    return found


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
