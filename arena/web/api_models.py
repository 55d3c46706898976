"""What the served arena's JSON API answers and takes, as the OpenAPI document declares it.

The routes (`arena.web.submissions`, `arena.web.stderr`, the human seat's `/play/tables`
and `/play/bots`) build their answers as plain dicts and return them as they are; these
models are their declared shapes, so `/api/openapi.json` says every status a route can
answer, with its body (tests/web/test_web_api_schema.py holds the server to it with
schemathesis). Every refusal of the authors' API is `Refusal`: `{"error": one line}`;
the human seat's, as FastAPI's own, `{"detail": one line}`.
"""

from __future__ import annotations

from typing import Any

from fastapi.security import HTTPBearer
from pydantic import BaseModel, Field

# The author's token, `Authorization: Bearer arena_<id>_<secret>`: declared for the docs
# and for API clients; each route checks it itself (a missing or wrong one: 401).
BEARER = HTTPBearer(
    auto_error=False, scheme_name="token",
    description="An author's token (`arena authors add NAME` prints it once): `Authorization: Bearer TOKEN`.",
)


class Refusal(BaseModel):
    """Any refusal of the authors' API: one line saying what was wrong and what to do."""

    error: str


class Detail(BaseModel):
    """A refusal of the human seat's routes (FastAPI's shape): one line."""

    detail: str


WHY = {
    400: "The upload or request is not what the route takes (the line says which part)",
    401: "No token, or a wrong or revoked one (`Authorization: Bearer TOKEN`)",
    403: "The bot's name is another author's or the organiser's",
    404: "No such thing, or none of yours",
    408: "The upload took longer than the server's upload time",
    413: "Over a limit: the packed size, the unpacked size, the files and folders, or one file",
    415: "Not a .tar.gz, .tar or .zip archive of a bot folder",
    429: "Over a limit of requests or uploads: try again later (Retry-After)",
    500: "The server could not open the upload (its worker stopped): send it again",
}


def refusals(*codes: int, model: type[BaseModel] = Refusal) -> dict[int | str, dict[str, Any]]:
    """The `responses` of a route that may refuse with `codes`."""
    return {code: {"model": model, "description": WHY[code]} for code in codes}


class Queued(BaseModel):
    """An upload received and queued for its checks: follow it at `url`."""

    id: str
    state: str = Field(description="queued")
    name: str
    version: str
    url: str


class Submission(BaseModel):
    """A submission's state, to its author and the organiser."""

    id: str
    author: str
    name: str
    version: str
    state: str = Field(description="queued, checking, building, smoke match, then accepted or refused")
    final: bool = Field(description="accepted or refused: it changes no more")
    bot: str | None = Field(description="name@version once accepted")
    content_hash: str | None
    reasons: list[str] = Field(description="why it was refused, one line each")
    stderr: str = Field(description="the end of the bot's stderr in its checks")
    created: float = Field(description="seconds since 1970")
    updated: float
    note: str = Field("", description="said with the final state: e.g. that this version was already there")


class Submissions(BaseModel):
    submissions: list[Submission]


class Me(BaseModel):
    """Who a token is, and the bot names they own."""

    author: str
    organiser: bool
    bots: list[str]


class Version(BaseModel):
    """A version of a bot in the registry."""

    version: str
    date: str | None = Field(description="when it was accepted (a plain folder's: its bot.toml's time)")
    content_hash: str | None = Field(description="sha256 of its files; null for a plain folder (never submitted)")
    games: list[str]
    submitted: bool = Field(description="false for a plain folder the organiser put in the registry (REGISTRY/NAME)")


class Incident(BaseModel):
    game: str
    reason: str
    detail: str | None


class MemberState(BaseModel):
    """One version of a bot as the league has it."""

    bot: str
    status: str = Field(description="active (playing, or waiting for its first game), retired, removed, suspended")
    reason: str | None
    joined_at: int = Field(description="the batch it joined at")
    left_at: int | None = Field(description="the batch it left at")
    games: int
    rank: int | None
    band: list[int] | None
    settled: bool


class Standing(BaseModel):
    """Where a bot's newest version stands in the served league (`joined` false: not yet)."""

    joined: bool
    bot: str | None = None
    status: str | None = None
    reason: str | None = None
    rank: int | None = None
    of: int | None = None
    band: list[int] | None = Field(None, description="the places it could hold (90%)")
    settled: bool | None = None
    games: int | None = None
    latest_incidents: list[Incident] | None = None
    members: list[MemberState] | None = Field(None, description="every version that joined, oldest first")


class Bot(BaseModel):
    """A bot: its versions in the registry and its standing in the league (null without one)."""

    name: str
    owner: str | None = Field(description="the author who owns the name; null: the organiser's")
    versions: list[Version]
    standing: Standing | None


class Retired(BaseModel):
    retired: str = Field(description="name@version, out of the registry (kept in .door/retired/)")


class SeatStderr(BaseModel):
    bot: str
    decisions: list[dict[str, Any]] = Field(description="{step, stderr}: the lines the bot wrote at each decision")
    log_end: str = Field(description="the end of its stderr in the game")


class GameStderr(BaseModel):
    """The caller's bots' stderr in one game, by seat."""

    game: str
    seats: dict[str, SeatStderr]


class TableRequest(BaseModel):
    """A table against a ladder bot (`GET /play/bots` lists them)."""

    bot: str
    game: str | None = Field(None, description="the game, when the bot plays more than one")


class TableOpened(BaseModel):
    url: str = Field(description="the table's page; its #fragment holds the seat's token")
    seats: list[str]


class LadderBot(BaseModel):
    bot: str
    version: str
    game: str


class LadderBots(BaseModel):
    bots: list[LadderBot]


ARCHIVES = ("application/gzip", "application/x-tar", "application/zip")
UPLOAD_BODY = {
    "required": True,
    "description": "The bot folder packed as .tar.gz, .tar or .zip (the folder itself, or its files; the server "
    "reads which from the bytes), or a form with the archive as its one file field `bot`.",
    "content": {
        **{kind: {"schema": {"type": "string", "format": "binary"}} for kind in ARCHIVES},
        "multipart/form-data": {
            "schema": {
                "type": "object", "required": ["bot"], "additionalProperties": False,
                "properties": {"bot": {"type": "string", "format": "binary", "description": "the packed bot folder"}},
            },
            "encoding": {"bot": {"contentType": ", ".join(ARCHIVES)}},
        },
    },
}
