"""The human seat over HTTP: the page, its assets and one WebSocket per open page.

`play_router(host)` is a FastAPI `APIRouter` (mounted by `arena play`, and by a server
that lets signed-in authors play: `auth=` and `open_table=`, see `docs/play.md`):

    GET  /play/                 the page (the seat's token is in the URL's #fragment,
                                which no request carries)
    GET  /play/assets/NAME      the page's scripts and styles, from a fixed list
    WS   /play/ws               first message {"type": "join", "token": T}; then the
                                seat's messages (arena/human/seat.py) and the page's
                                {"type": "act", "request": N, "action": {...}} and
                                {"type": "again"}
    POST /play/tables           (with `auth`) a new table against a bot: {"bot": NAME}
                                -> {"url": "/play/#t=TOKEN"}
    GET  /play/bots             (with `auth`) the bots one may play

Every request is hostile: a WebSocket from another origin is refused, a token is looked
up by its hash, a message over `MAX_MESSAGE` bytes or more than `MAX_RATE` a second
closes the connection, and nothing from a request names a file.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import (
    APIRouter,
    Depends,
    HTTPException,
    Request,
    WebSocket,
    WebSocketDisconnect,
)
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse

from arena.human.table import PlayError, PlayHost, PlayTable, TableConfig
from arena.resources import templates_dir
from engine import all_games

PAGE_DIR = Path(__file__).resolve().parent / "play_page"
MAX_MESSAGE = 4096  # bytes of one message from a page (a move is well under 200)
MAX_RATE = 20  # messages a second from one page, averaged over a few seconds
JOIN_WAIT_S = 10.0  # a page has this long to say which seat it is
PAGES_PER_SEAT = 8  # open pages of one seat at once
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def _assets() -> dict[str, Path]:
    """Every file the page may load, by the name it asks for (nothing else is served)."""
    files = {path.name: path for path in PAGE_DIR.iterdir() if path.suffix in (".js", ".css")}
    files["site.css"] = templates_dir() / "assets" / "site.css"
    files["favicon.svg"] = templates_dir() / "assets" / "favicon.svg"
    for game in all_games():
        tables = game.replay_tables()
        if tables is not None:
            files[f"replay-{game.name}.js"] = tables.script
    return files


def _headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def _same_origin(websocket: WebSocket) -> bool:
    """A browser names the page's origin; it must be this server (a page elsewhere may not join)."""
    origin = websocket.headers.get("origin")
    if origin is None:
        return True  # not a browser (a test client, a script): it still needs the token
    host = websocket.headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}")


def play_router(
    host: PlayHost,
    *,
    prefix: str = "/play",
    auth: Callable[..., Any] | None = None,
    open_table: Callable[[Any, dict[str, Any]], TableConfig] | None = None,
    bots: Callable[[], list[dict[str, Any]]] | None = None,
) -> APIRouter:
    """The router of the human seat (see the module docstring). With `auth` (a FastAPI
    dependency returning the signed-in user, raising 401 otherwise) and `open_table(user,
    body) -> TableConfig`, POST {prefix}/tables opens a table for that user, and GET
    {prefix}/bots lists what `bots()` offers."""
    router = APIRouter(prefix=prefix)
    assets = _assets()

    @router.get("", include_in_schema=False)
    def bare() -> RedirectResponse:
        return RedirectResponse(f"{prefix}/", status_code=307)

    @router.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> HTMLResponse:
        return HTMLResponse((PAGE_DIR / "play.html").read_text(encoding="utf-8"), headers=_headers())

    @router.get("/assets/{name}", include_in_schema=False)
    def asset(name: str) -> FileResponse:
        path = assets.get(name)
        if path is None:
            raise HTTPException(404, "no such file")
        kind = {"js": "text/javascript", "css": "text/css", "svg": "image/svg+xml"}[path.suffix[1:]]
        return FileResponse(path, media_type=f"{kind}; charset=utf-8" if kind != "image/svg+xml" else kind,
                            headers=_headers())

    if auth is not None and open_table is not None:

        from arena.web.api_models import Detail, LadderBots, TableOpened, TableRequest

        def declared(*codes: int) -> dict[int | str, dict[str, Any]]:
            why = {400: "The request is not a table request, or the table cannot be opened (the line says why)",
                   401: "Not signed in (`Authorization: Bearer TOKEN`)", 404: "No such ladder bot",
                   413: f"A table request is at most {MAX_MESSAGE} bytes"}
            return {code: {"model": Detail, "description": why[code]} for code in codes}

        body = {"required": True, "content": {"application/json": {"schema": TableRequest.model_json_schema()}}}

        @router.post("/tables", response_model=TableOpened, responses=declared(400, 401, 404, 413),
                     openapi_extra={"requestBody": body})
        async def new_table(request: Request, user: Any = Depends(auth)) -> dict[str, Any]:
            """Open a table for the signed-in user against a bot; the answer's URL holds the seat's token."""
            if int(request.headers.get("content-length") or 0) > MAX_MESSAGE:
                raise HTTPException(413, f"a table request is at most {MAX_MESSAGE} bytes")
            try:
                body = json.loads(await request.body() or b"{}")
            except ValueError:
                raise HTTPException(400, "the body is not JSON: send {\"bot\": NAME}") from None
            if not isinstance(body, dict):
                raise HTTPException(400, "send a JSON object: {\"bot\": NAME}")
            try:
                config = open_table(user, body)
                table = await asyncio.to_thread(host.open, config, owner=str(user))
            except PlayError as error:
                raise HTTPException(400, str(error)) from None
            token = next(iter(table.tokens.values()))
            return {"url": f"{prefix}/#t={token}", "seats": table.names}

        @router.get("/bots", response_model=LadderBots, responses=declared(401))
        def ladder(user: Any = Depends(auth)) -> dict[str, Any]:
            """The bots a signed-in user may play (each name's current version)."""
            return {"bots": bots() if bots is not None else []}

    @router.websocket("/ws")
    async def seat_socket(websocket: WebSocket) -> None:
        if not _same_origin(websocket):
            await websocket.close(code=4403)
            return
        await websocket.accept()
        try:
            found = await _join(websocket, host)
        except WebSocketDisconnect:
            return
        except asyncio.TimeoutError:
            await websocket.close(code=4408, reason=f"say which seat within {JOIN_WAIT_S:g} s")
            return
        if found is None:
            return
        table, seat = found
        await _serve_seat(websocket, table, seat)

    return router


async def _receive(websocket: WebSocket, timeout: float | None = None) -> dict[str, Any] | None:
    """The page's next message as a dict; None (after telling the page) when it is not one."""
    received = await asyncio.wait_for(websocket.receive(), timeout)
    if received["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(received.get("code", 1000))
    text = received.get("text")
    if text is None:  # a binary frame: a page sends text
        await websocket.close(code=1003, reason="a message is JSON text")
        raise WebSocketDisconnect(1003)
    if len(text.encode("utf-8", "replace")) > MAX_MESSAGE:
        await websocket.close(code=1009, reason=f"a message is at most {MAX_MESSAGE} bytes")
        raise WebSocketDisconnect(1009)
    try:
        message = json.loads(text)
    except ValueError:
        message = None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        await websocket.send_text(json.dumps({"type": "error", "message": "a message is a JSON object with a type"}))
        return None
    return message


async def _join(websocket: WebSocket, host: PlayHost) -> tuple[PlayTable, int] | None:
    message = await _receive(websocket, JOIN_WAIT_S)
    found = host.seat(message.get("token")) if message is not None and message["type"] == "join" else None
    if found is None:
        await websocket.send_text(json.dumps({"type": "error", "fatal": True, "message":
                                              "this page's seat token is not known here: open the link that "
                                              "`arena play` printed"}))
        await websocket.close(code=4403)
        return None
    table, seat = found
    if table.channels[seat].pages >= PAGES_PER_SEAT:
        await websocket.send_text(json.dumps({"type": "error", "fatal": True, "message":
                                              f"this seat is open in {PAGES_PER_SEAT} pages already: close one"}))
        await websocket.close(code=4429)
        return None
    return found


async def _serve_seat(websocket: WebSocket, table: PlayTable, seat: int) -> None:
    """Send the seat's messages to the page while taking its moves, until either side goes."""
    loop = asyncio.get_running_loop()
    outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    channel = table.channels[seat]

    def send(message: dict[str, Any] | None) -> None:
        loop.call_soon_threadsafe(outbox.put_nowait, message)

    for message in channel.subscribe(send):
        outbox.put_nowait(message)
    if table.closed:
        outbox.put_nowait({"type": "notice", "closed": True, "text": "This table has closed; its games are stored."})

    async def sender() -> None:
        while True:
            message = await outbox.get()
            if message is None:
                await websocket.send_text(json.dumps({"type": "notice", "closed": True,
                                                      "text": "The table has closed (the server stopped)."}))
                await websocket.close(code=1001)
                return
            await websocket.send_text(json.dumps(message))

    async def receiver() -> None:
        window, count = time.monotonic(), 0
        while True:
            message = await _receive(websocket)
            count += 1
            now = time.monotonic()
            if now - window > 3:
                window, count = now, 1
            elif count > MAX_RATE * 3:
                await websocket.close(code=1008, reason="too many messages")
                return
            if message is None:
                continue
            if message["type"] == "act":
                if (channel.state or {}).get("type") != "turn":
                    send({"type": "error", "message": "it is not your move now"})
                    continue
                channel.answer({"request": message.get("request"), "action": message.get("action")}, reply=send)
            elif message["type"] == "again":
                if channel.over is None:
                    send({"type": "error", "message": "the game is not over yet"})
                else:
                    table.again(seat)
            else:
                send({"type": "error", "message": "a page sends act (a move) or again (a new deal)"})

    tasks = [asyncio.create_task(sender()), asyncio.create_task(receiver())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        channel.unsubscribe(send)
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except (asyncio.CancelledError, WebSocketDisconnect, RuntimeError):
                pass
            except Exception:  # noqa: BLE001, S110 - a broken connection ends only that page
                pass
