"""Proof that arena's behaviour does not change by accident (issue 23, part 7).

Three seeded runs, driven only through arena's command line (`python3 -m arena ...` in a
subprocess; this file imports nothing of arena, so it holds whatever arena's modules are
called or wherever they live):

- `duplicate-3up3down`: `arena run`, 3UP 3DOWN, three seats, round-robin of the three
  example bots that play it, duplicate deals, two cycles (6 games), public seed 7;
- `swiss-three-thirteen`: `arena run`, Three Thirteen, two seats, Swiss of three bots (a
  bye every round) over three rounds, duplicate deals (6 games), public seed 11;
- `league-3up3down`: `arena league`, 3UP 3DOWN, two seats, a registry of three example
  bots, public seed 5, stopped by `--games 12` (the league schedules no game past the
  12th: its last batch is cut to fit, so it always stops after the same 6 batches).

Each writes its store (`arena.sqlite`) and its site (`site/`); a league's site holds no
file per game, so its game list, game pages and replays are what `arena serve` answers
for them (fetched over HTTP and compared under the names the files had). Each output is made
canonical (the store table by table, rows sorted; each site file's bytes), with only the
values that differ between two identical runs masked (`MASKS` below says each and why),
and its sha256 is compared with the committed manifest `tests/golden/unchanged.json`;
`tests/golden/unchanged.tar.xz` holds the canonical text itself, so a mismatch shows
the first differing lines.

A mismatch means arena's stores or sites changed. If that was meant, regenerate with

    ARENA_UPDATE_GOLDEN=1 python3 -m pytest -q tests/site/test_unchanged.py

and name the intended change in the commit that carries the new manifest. Regenerating
to make a restructure pass is exactly what this test exists to prevent: a change meant
to keep behaviour (moving modules, merging runners, one standings type) must pass it
with the manifest untouched.

The bots are inputs too: a change to a file under bots/random, bots/threeup-heuristic,
bots/three-thirteen-heuristic or bots/node-simple changes their content hashes (stored
and shown) and may change their games; that is an intended change as well.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "unchanged.json"
GOLDEN_TEXT = ROOT / "tests" / "golden" / "unchanged.tar.xz"
UPDATE = os.environ.get("ARENA_UPDATE_GOLDEN") == "1"
BOTS = ("random", "threeup-heuristic", "three-thirteen-heuristic", "node-simple")

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="bots/node-simple needs node")

# name -> the command line, run in the work folder (which holds a copy of the bots).
RUNS = {
    "duplicate-3up3down": [
        "run", "--game", "3up3down", "--seats", "3", "--format", "round-robin", "--cycles", "2",
        "--duplicate", "--bots", "bots/random", "--bots", "bots/threeup-heuristic",
        "--bots", "bots/node-simple", "--seed", "7", "--jobs", "1", "--quiet",
        "--out", "duplicate-3up3down",
    ],
    "swiss-three-thirteen": [
        "run", "--game", "three-thirteen", "--seats", "2", "--format", "swiss", "--rounds", "3",
        "--duplicate", "--bots", "bots/random", "--bots", "bots/three-thirteen-heuristic",
        "--bots", "bots/node-simple", "--seed", "11", "--jobs", "1", "--quiet",
        "--out", "swiss-three-thirteen",
    ],
    "league-3up3down": [
        "league", "league-3up3down", "--game", "3up3down", "--seats", "2",
        "--registry", "registry", "--seed", "5", "--games", "12", "--jobs", "1",
    ],
}


def play(work: Path) -> None:
    """Copy the example bots into `work` (the tournaments' bots/ and the league's registry),
    then run every command of RUNS there."""
    for bot in BOTS:
        # __pycache__ left by other runs would change a bot's content hash.
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / "bots" / bot, work / "bots" / bot, ignore=ignore)
        if bot != "three-thirteen-heuristic":  # the league plays 3UP 3DOWN
            shutil.copytree(ROOT / "bots" / bot, work / "registry" / bot, ignore=ignore)
    env = {key: value for key, value in os.environ.items() if not key.startswith("ARENA_")}
    env.update(PYTHONPATH=str(ROOT), COLUMNS="80", PYTHONDONTWRITEBYTECODE="1")
    for name, argv in RUNS.items():
        done = subprocess.run(
            [sys.executable, "-m", "arena", *argv], cwd=work, env=env,
            capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, f"arena {' '.join(argv)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    fetch_served(work / "league-3up3down", env)


def fetch_served(out: Path, env: dict[str, str]) -> None:
    """A league's game list, game pages and replays as `arena serve OUT` answers them from
    its store, written into its site/ under the names a tournament's files have."""
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", str(out), "--port", str(port)], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        def get(path: str) -> bytes:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=60) as answer:
                return answer.read()

        deadline = time.monotonic() + 60
        while True:
            try:
                page = get("games/page-1.html")
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read().decode()
                time.sleep(0.2)
        assert not (out / "site" / "games").exists() and not (out / "site" / "replays").exists()
        (out / "site" / "games").mkdir()
        (out / "site" / "replays").mkdir()
        (out / "site" / "games" / "page-1.html").write_bytes(page)
        for key in sorted(set(re.findall(r'href="([0-9-]+)\.html"', page.decode()))):
            (out / "site" / "games" / f"{key}.html").write_bytes(get(f"games/{key}.html"))
            (out / "site" / "replays" / f"{key}.r4.js").write_bytes(get(f"replays/{key}.r4.js"))
    finally:
        server.terminate()
        server.wait(timeout=30)


def mask(text: str, masks) -> str:
    for pattern, mark in masks:
        text = pattern.sub(mark, text)
    return text


def store_files(db_path: Path, prefix: str, text_masks) -> dict[str, bytes]:
    """The store, one canonical text per table (`PREFIX/TABLE`) plus its schema: each row
    as a JSON list, the rows sorted, the timing columns masked."""
    files = {}
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        schema = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
        files[f"{prefix}/schema"] = "".join(json.dumps(row) + "\n" for row in schema).encode()
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall():
            cursor = db.execute(f'SELECT * FROM "{table}"')
            columns = [d[0] for d in cursor.description]
            lines = []
            for row in cursor.fetchall():
                values = []
                for column, value in zip(columns, row, strict=True):
                    if isinstance(value, bytes):
                        value = blob_text(table, column, row, columns, value)
                    if (table, column) in TIMING_COLUMNS and value is not None:
                        value = TIMING_MARK
                    if table == "meta" and column == "value" and row[0] in TIMING_META:
                        value = TIMING_MARK
                    values.append(value)
                lines.append(mask(json.dumps(values, ensure_ascii=False), text_masks) + "\n")
            files[f"{prefix}/{table}"] = (json.dumps(columns) + "\n" + "".join(sorted(lines))).encode()
    finally:
        db.close()
    return files


def blob_text(table, column, row, columns, value: bytes) -> str:
    """A replay (json+zlib) as its JSON text with think times masked; a league's saved state
    (sha256, then zlib of JSON) as its JSON with the digest of arena's rating code masked
    (an edit of that code's text is no change of what is stored); another blob in hex."""
    if (table, column) == ("replays", "data") and row[columns.index("encoding")] == "json+zlib":
        return mask(zlib.decompress(value).decode(), REPLAY_MASKS)
    if (table, column) == ("saved_state", "value"):
        state = json.loads(zlib.decompress(value[32:]))
        state["code"] = "<CODE>"
        return json.dumps(state, sort_keys=True)
    return value.hex()


def canonical(work: Path) -> dict[str, bytes]:
    """Every output of every run: relative path -> canonical bytes."""
    tmp = [(re.compile(re.escape(str(work))), "<TMP>")]
    files = {}
    for name in RUNS:
        out = work / name
        files.update(store_files(out / "arena.sqlite", f"{name}/arena.sqlite", tmp))
        for path in sorted((out / "site").rglob("*")):
            if path.is_file():
                rel = f"{name}/{path.relative_to(out).as_posix()}"
                data = path.read_bytes()
                try:
                    text = data.decode()
                except UnicodeDecodeError:
                    files[rel] = data
                    continue
                if path.parent.name == "replays":
                    text = mask_decisions(unpack_replay(text))
                files[rel] = mask(text, tmp + SITE_MASKS).encode()
    return files


# ----------------------------------------------------------------------------- the masks
# Only what differs between two runs of the same commands: each is a measured time or a
# clock reading (machine load decides it), or the work folder's path (a new temporary
# folder each run; arena stores bot folders and the output folder as absolute paths).
# Everything else, every place, score, rating, seed, action, page and byte, is compared.

TIMING_MARK = "<TIMING>"

# The store's columns that hold a clock reading or a measured time.
TIMING_COLUMNS = {
    ("games", "finished_at"),  # when the game's result was committed (UTC clock)
    ("games", "duration_s"),  # the game's wall time
}
# meta rows (key -> value) whose value is a clock reading.
TIMING_META = {
    "created",  # when the store was made (UTC clock)
}

# A stored replay (json+zlib, decompressed): each bot decision's measured think time,
# `"think_s":0.000275` (a number; a decision without one stores null, left as is).
REPLAY_MASKS = [(re.compile(r'(?<="think_s":)-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?'), f'"{TIMING_MARK}"')]

SITE_MASKS = [
    # A game page's subtitle ends with the game's wall time, `· 0.4 s</p>` (templates/game.html).
    (re.compile(r'(?<=<p class="sub">)([^<\n]* · )\d+\.\d( s</p>)'), rf"\1{TIMING_MARK}\2"),
    # The index's footer says when the site was rendered, `Rendered by arena on
    # 2026-12-02 00:55 UTC` (templates/base.html; only the index passes `generated`).
    (re.compile(r"(?<=<footer>Rendered by arena on )\d{4}-\d\d-\d\d \d\d:\d\d UTC(?= · |</footer>)"), TIMING_MARK),
]

# A replay file of the site (site/replays/KEY.r4.js) packs its bulk (decisions, steps,
# frames, ...) as zlib-compressed JSON in base64 under "z" (issue 27): compressed, a think
# time could not be masked, so the file is compared as its script with "z" left empty and
# the inflated JSON after it (the packed bytes follow from that JSON: zlib is deterministic).
PACKED = re.compile(r'"z":"([A-Za-z0-9+/=]*)"')


def unpack_replay(text: str) -> str:
    found = PACKED.search(text)
    if not found:
        return text
    inflated = zlib.decompress(base64.b64decode(found.group(1))).decode()
    return text[: found.start(1)] + text[found.end(1):] + "\n" + inflated + "\n"


# The replay's data (inflated, above) lists each bot decision as
# [think_s, legal, stderr] under "decisions": the think time (a number; null stays) is
# masked at the start of each entry of that array only (found by scanning its brackets
# and strings, so no other array and no stderr text is touched).
THINK = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?=,)")


def mask_decisions(text: str) -> str:
    at = text.find('"decisions":[')
    if at < 0:
        return text
    out, i, depth, in_string = [], at + len('"decisions":'), 0, False
    out.append(text[:i])
    while i < len(text):
        c = text[i]
        out.append(c)
        i += 1
        if in_string:
            if c == "\\":
                out.append(text[i])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "[":
            depth += 1
            if depth == 2 and (think := THINK.match(text, i)):  # an entry's first element
                out.append(f'"{TIMING_MARK}"')
                i = think.end()
        elif c == "]":
            depth -= 1
            if depth == 0:
                break
    return "".join(out) + text[i:]


# ------------------------------------------------------------------------------ the test


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_golden(files: dict[str, bytes]) -> None:
    """The manifest (path -> sha256) and the canonical outputs themselves (tar.xz, for the
    diff a mismatch prints)."""
    GOLDEN.write_text(json.dumps({rel: digest(data) for rel, data in sorted(files.items())}, indent=1) + "\n")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=9) as tar:
        for rel, data in sorted(files.items()):
            info = tarfile.TarInfo(rel)  # no owner, mode or time: the archive is a function of the files
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    GOLDEN_TEXT.write_bytes(buffer.getvalue())


def golden_texts() -> dict[str, bytes]:
    if not GOLDEN_TEXT.is_file():
        return {}
    with tarfile.open(GOLDEN_TEXT, mode="r:xz") as tar:
        return {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}


SHOWN = 12  # changed files shown with their first difference; the others by name


def first_difference(rel: str, old: bytes | None, new: bytes, context: int = 160) -> str:
    """Where a file first differs: its line and column, and that stretch of the old and the
    new text (a long line, such as a replay's, is cut around the difference)."""
    if old is None:
        return f"  {rel}: the canonical text of the manifest's version is not in {GOLDEN_TEXT.name}"
    try:
        old_lines, new_lines = old.decode().splitlines(), new.decode().splitlines()
    except UnicodeDecodeError:
        return f"  {rel}: a binary file ({len(old)} bytes before, {len(new)} now)"
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if a != b:
            column = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
            start = max(0, column - context // 2)
            return (
                f"  {rel}: first difference at line {number}, column {column + 1}:\n"
                f"    was: {a[start:start + context]!r}\n"
                f"    now: {b[start:start + context]!r}"
            )
    shorter = min(len(old_lines), len(new_lines))
    if len(old_lines) == len(new_lines):
        return f"  {rel}: the same lines, different line endings or final newline"
    extra = new_lines[shorter:] if len(new_lines) > shorter else old_lines[shorter:]
    said = "now has" if len(new_lines) > shorter else "has lost"
    return f"  {rel}: {said} {len(extra)} lines from line {shorter + 1}, the first: {extra[0][:context]!r}"


def test_seeded_runs_store_and_show_what_they_always_did():
    """A seeded Swiss and duplicate tournament of each game and a seeded league, run through
    the command line, give the stores and sites the manifest records, byte for byte but for
    the masked timings and the work folder's path."""
    work = Path(tempfile.mkdtemp(prefix="arena-unchanged-"))
    try:
        work.chmod(0o755)  # as root, bots run as nobody and must read their folders
        play(work)
        files = canonical(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if UPDATE:
        write_golden(files)
    manifest = json.loads(GOLDEN.read_text())
    now = {rel: digest(data) for rel, data in files.items()}
    missing = sorted(set(manifest) - set(now))
    extra = sorted(set(now) - set(manifest))
    changed = sorted(rel for rel in set(now) & set(manifest) if now[rel] != manifest[rel])
    if not (missing or extra or changed):
        return
    report = [f"arena's seeded outputs differ from {GOLDEN.relative_to(ROOT)}:"]
    report += [f"  no longer written: {rel}" for rel in missing]
    report += [f"  new: {rel}" for rel in extra]
    if changed:
        report.append(f"{len(changed)} changed:")
        old = golden_texts()
        report += [first_difference(rel, old.get(rel), files[rel]) for rel in changed[:SHOWN]]
        report += [f"  {rel}" for rel in changed[SHOWN:]]
    report.append(
        "If the change is intended, regenerate with ARENA_UPDATE_GOLDEN=1 (see this file's "
        "docstring) and name the change in the commit."
    )
    pytest.fail("\n".join(report), pytrace=False)
