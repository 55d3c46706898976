"""The `[server]` table of a league file: `arena league FILE` then also serves the site and
the authors' door, as `arena league ... --serve PORT` does, and `arena serve FILE` serves
the league that way while it runs apart (flags override the table).

    [server]
    port = 8000                 # required to serve (0: any free port)
    host = "127.0.0.1"          # anything else needs certfile/keyfile or insecure_http
    submissions = true          # the authors' door (default true)
    validate_jobs = 1
    validate_sandbox = "docker" # "local" only for authors you trust
    validate_runtime = "runsc"  # docker's runtime for the checks (default: runc)
    max_upload_mb = 50
    max_unpacked_mb = 200
    max_files = 10000
    uploads_per_hour = 10
    upload_s = 120
    requests_per_minute = 600
    show_stderr = false         # bots' stderr in replays for everyone
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena.web.errors import WebError


class ServerConfig(BaseModel):
    """How a league serves itself (defaults as `arena serve`'s flags)."""

    model_config = ConfigDict(extra="forbid")

    port: int = Field(8000, ge=0, le=65535)
    host: str = "127.0.0.1"
    submissions: bool = True
    validate_jobs: int = Field(1, ge=1, le=64)
    validate_sandbox: Literal["docker", "local"] = "docker"
    validate_runtime: Literal["runc", "runsc"] | None = None  # None: $ARENA_DOCKER_RUNTIME, else runc
    max_upload_mb: int = Field(50, ge=1)
    max_unpacked_mb: int = Field(200, ge=1)
    max_files: int = Field(10_000, ge=1)
    uploads_per_hour: int = Field(10, ge=1)
    upload_s: float = Field(120.0, gt=0)
    requests_per_minute: int = Field(600, ge=1)
    show_stderr: bool = False
    certfile: str | None = None
    keyfile: str | None = None
    insecure_http: bool = False

    def upload_limits(self) -> dict:
        return {
            "packed_mb": self.max_upload_mb, "unpacked_mb": self.max_unpacked_mb, "files": self.max_files,
            "per_hour": self.uploads_per_hour, "upload_s": self.upload_s, "per_address": self.requests_per_minute,
        }


def server_table(target: Path) -> dict | None:
    """The raw `[server]` table of a league file (None: a folder, or no table)."""
    if not Path(target).is_file():
        return None
    try:
        document = tomllib.loads(Path(target).read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None  # load_league says what is wrong with the file
    table = document.get("server")
    if table is not None and not isinstance(table, dict):
        raise WebError(f"{target}: server = {table!r}: [server] must be a table: a line [server], then its keys "
                       "(port = 8000, ...: docs/server.md) below it")
    return table


def server_config(table: dict | None, overrides: dict) -> ServerConfig:
    """The table with the flags on top; WebError names every wrong key."""
    try:
        return ServerConfig.model_validate({**(table or {}), **overrides})
    except ValidationError as error:
        wrong = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors())
        raise WebError(f"[server] settings: {wrong}") from None


def league_file_server(target: Path, given: dict) -> tuple[ServerConfig, Path, Path, object]:
    """`arena serve LEAGUE_FILE`: the league's [server] table with the flags `given` on the
    command line on top (without a table, the door only with --submissions), and the
    league's output folder, registry and bots' limits (the smoke matches use them)."""
    from arena.config.league_file import load_league

    config = load_league(target)
    table = server_table(target)
    settings = server_config(table if table is not None else {"submissions": False}, given)
    return settings, config.output_dir(), config.registry_dir(), config.limits.limits()
