"""`arena submit BOT_DIR --to URL`: pack a bot folder, upload it to a served arena, follow
the submission to its end, printing each stage.

Exit codes (`submit_remote` returns them): 0 accepted, 1 refused (the reasons printed),
2 a usage or connection error (no token, no such folder, the server unreachable).
"""

from __future__ import annotations

import io
import os
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from arena.web.errors import WebError

TOKEN_ENV = "ARENA_TOKEN"
SKIPPED = ("__pycache__", ".git", ".hg", ".svn", ".venv", "node_modules")


def read_token(token_file: Path | None) -> str:
    """The token from --token-file, else $ARENA_TOKEN; WebError saying how to give one."""
    if token_file is not None:
        try:
            token = token_file.read_text().strip()
        except OSError as error:
            raise WebError(f"cannot read the token file {token_file}: {error.strerror}") from None
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise WebError(f"no token: set {TOKEN_ENV}=TOKEN or give --token-file FILE (the organiser gives you a token)")
    return token


def pack(folder: Path) -> bytes:
    """The bot folder as a .tar.gz (files and folders only; caches and VCS folders left out,
    and build/ of a bot with a `build` step: the server builds it from the sources)."""
    from arena.store.db import has_build_step

    folder = Path(folder)
    if not (folder / "bot.toml").is_file():
        raise WebError(f"{folder} has no bot.toml: give the bot's folder")
    built = has_build_step(folder)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for root, folders, files in os.walk(folder):
            top = Path(root) == folder
            folders[:] = sorted(name for name in folders
                                if name not in SKIPPED and not (top and built and name == "build"))
            for name in sorted(files):
                path = Path(root) / name
                if name.endswith(".pyc"):
                    continue
                if path.is_symlink() or not path.is_file():
                    raise WebError(f"{path}: links and special files are refused by the server; put the file itself in")
                tar.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return buffer.getvalue()


def submit_remote(
    folder: Path, url: str, token: str, *, say: Callable[[str], None], league: bool = False,
    poll_s: float = 1.0, timeout_s: float = 3600.0, wait_s: float = 30.0,
) -> int:
    """Upload, follow, print; returns the exit code."""
    base = url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise WebError(f"--to {url!r} is not an http:// or https:// address (e.g. https://arena.example.org)")
    body = pack(folder)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
            answer = client.post("/api/submissions", content=body, headers={"Content-Type": "application/gzip"})
            if answer.status_code != 202:
                say(f"refused ({answer.status_code}): {_line(answer)}")
                return 2 if answer.status_code == 401 else 1
            made = answer.json()
            say(f"uploaded {len(body) / 1024:.0f} KB: submission {made['id']} ({made['name']} {made['version']})")
            state, started = "", time.monotonic()
            while True:
                got = client.get(f"/api/submissions/{made['id']}")
                if got.status_code != 200:
                    say(f"cannot follow the submission ({got.status_code}): {_line(got)}")
                    return 2
                row = got.json()
                if row["state"] != state:
                    state = row["state"]
                    say(f"  {state}")
                if row["final"]:
                    break
                if time.monotonic() - started > timeout_s:
                    say(f"still {state} after {timeout_s:.0f} s; follow it at {base}/api/submissions/{made['id']}")
                    return 2
                time.sleep(poll_s)
            if row["state"] == "refused":
                say(f"refused: {len(row['reasons'])} reason(s):")
                for reason in row["reasons"]:
                    say(f"  - {reason}")
                return 1
            if row.get("note"):  # e.g. this version was already there: nothing new was checked
                say(row["note"])
            else:
                say(f"accepted: {row['bot']} (sha256 {(row['content_hash'] or '')[:16]})")
            if league:
                say(_where(client, row["name"], wait_s, poll_s))
            return 0
    except httpx.HTTPError as error:
        say(f"cannot reach {base}: {error}")
        return 2


def _where(client: httpx.Client, name: str, wait_s: float, poll_s: float) -> str:
    """Where the bot stands in the server's league (waiting a little for its first games)."""
    deadline = time.monotonic() + wait_s
    while True:
        standing = client.get(f"/api/bots/{name}").json().get("standing")
        if standing is None:
            return "the server runs no league: nothing to rank it in yet"
        if (standing.get("joined") and standing.get("games")) or time.monotonic() >= deadline:
            break
        time.sleep(poll_s)
    if not standing.get("joined"):
        return f"{name} has not joined the league yet: it joins within seconds"
    band = standing.get("band")
    where = f"rank {standing['rank']} of {standing['of']}" + (f", 90% interval {band[0]}-{band[1]}" if band else "")
    state = standing["status"] if standing["status"] != "active" else ("settled" if standing["settled"] else "provisional")
    return f"{standing['bot']}: {standing['games']} games so far, {where}; {state}"


def _line(answer: httpx.Response) -> str:
    try:
        return str(answer.json().get("error") or answer.json())
    except ValueError:
        return answer.text.strip()[:200] or answer.reason_phrase
