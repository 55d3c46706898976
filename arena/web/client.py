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
            if answer.status_code in (404, 405, 503) and not _from_the_door(answer):
                say(_no_door(base))  # the site alone answered: a page's address, or no door on that server
                return 2
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
                say(_where(client, row["name"], row["version"], wait_s, poll_s))
            return 0
    except httpx.HTTPError as error:
        say(f"cannot reach {base}: {error}")
        return 2


def _where(client: httpx.Client, name: str, version: str, wait_s: float, poll_s: float) -> str:
    """This version's true state in the server's league, in one line: playing (games, rank,
    band, settled or provisional), joined and waiting for its first game, suspended,
    retired or removed (with the reason), or not joined yet. Waits up to `wait_s` for
    the league to take this very version in and play it, or stop it; an older version
    still playing until this one joins is never taken for it."""
    bot_id, deadline = f"{name}@{version}", time.monotonic() + wait_s
    while True:
        answer = client.get(f"/api/bots/{name}")
        if answer.status_code == 404:
            return f"{bot_id} is no longer in the registry (retired since)"
        standing = answer.json().get("standing")
        if standing is None:
            return "the server runs no league: nothing to rank it in yet"
        mine = [m for m in standing.get("members", []) if m["bot"] == bot_id or m["bot"].startswith(bot_id + "~")]
        member = mine[-1] if mine else None
        if (member and (member["games"] or member["status"] != "active")) or time.monotonic() >= deadline:
            break
        time.sleep(poll_s)
    if member is None:
        return f"{bot_id} has not joined the league yet: it joins within seconds"
    if member["status"] != "active":  # suspended, retired or removed: it plays no more
        since = f" from batch {member['left_at']}" if member.get("left_at") is not None else ""
        return f"{member['bot']}: {member['games']} games; {member['status']}{since}: {member['reason']}"
    if not member["games"]:
        return f"{member['bot']}: joined the league at batch {member['joined_at']}; waiting for its first game"
    band = member.get("band")
    where = f"rank {member['rank']} of {standing['of']}" + (f", 90% interval {band[0]}-{band[1]}" if band else "")
    return f"{member['bot']}: {member['games']} games so far, {where}; {'settled' if member['settled'] else 'provisional'}"


def _from_the_door(answer: httpx.Response) -> bool:
    """True when the door's API answered (its refusals are JSON with an "error")."""
    try:
        return isinstance(answer.json(), dict) and "error" in answer.json()
    except ValueError:
        return False


def _no_door(base: str) -> str:
    """What to do when `base` takes no submissions: its root, if it was a page's address
    (the /door/ page the server prints, say); else a server started without the door."""
    parsed = httpx.URL(base + "/")
    root = str(parsed.copy_with(path="/", query=None, fragment=None))
    if parsed.path.strip("/"):
        return (f"--to {base}/ is a page of the arena, not its address: give the server's address alone, "
                f"--to {root}")
    return (f"{root} takes no submissions: it serves a site only; ask the organiser for the address of an arena "
            "started with --submissions (arena serve --submissions, or arena league --serve)")


def _line(answer: httpx.Response) -> str:
    try:
        return str(answer.json().get("error") or answer.json())
    except ValueError:
        return answer.text.strip()[:200] or answer.reason_phrase
