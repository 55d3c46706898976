"""Benchmark of the served arena (`arena serve --submissions`): readers' latency while
authors upload.

    python -m bench.server                      # 50 uploaders of 1 MB bots, 20 readers
    python -m bench.server --uploaders 10 --readers 5 --idle-s 5   # smaller
    python -m bench.server --bomb-s 0           # without the folder bombs
    python -m bench.server --json

1. A small tournament (8 in-process random bots, 3UP 3DOWN, 2 seats, round-robin) is
   played and its site rendered; `arena serve DIR --submissions` runs it in a process of
   its own (validation in the local sandbox, said explicitly; the per-address and per-author
   limits raised: every client here is 127.0.0.1).
2. Idle: `--readers` threads load the standings and a bot's page in turn for `--idle-s`
   seconds; their latencies' p50 and p99.
3. Folder bombs (issue 33), two cases, each while the same readers read: `--bombers`
   clients (threads of another process) send, one after another for at least `--bomb-s`
   seconds, (a) a 6 KB archive whose names make 36,000 folders (1,200 empty files 30
   folders down paths of their own; no bot.toml), refused from its headers, and (b) one
   at the limit: 322 files 30 folders down, 9,982 entries, unpacked, then refused for
   its missing bot.toml and removed (the most a refused upload can leave). The readers'
   p50 and p99 in each, against the same target as under load. (Before issue 33's fix
   the folders were not counted and a refused tree was removed in the event loop.)
4. Under load: the same readers while `--uploaders` clients (threads of another process)
   each upload `--uploads` bots of about 1 MB (bots/random with 1 MB of random bytes);
   the readers' p50 and p99 again, and uploads queued per second (202 answers).
   Target: p99 under load at most 3x idle, and under 100 ms.
5. Acceptance: the queue checks one bot at a time (the default) by its smoke match (two
   games of each declared game); bots accepted per minute over `--accept-s` seconds after
   the uploads, which bounds how fast a door takes bots in, whatever the upload rate.
6. A league playing (`--case league`): `arena league FILE` with a [server] table, in a
   probed process of its own, 8 bots in the local sandbox; once it lists --league-games
   games, each count of --league-readers (10, 50, 100) reads for --league-window-s (20 s):
   standings, bot pages, game pages and replays in turn, 50 ms between two requests, over
   4 processes. Requests a second, p50, p99 and most (by kind), and the server's own view:
   time inside it, its event loop's lag, its CPU beyond the league's own playing (measured
   first without readers). `--spy PREFIX` samples each window with py-spy.
Readers and uploaders run in processes apart from the server, so the figures are the
server's, not the measuring client's.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import httpx

from arena.game.seats import InProcessBot
from arena.play.tournament import run_tournament, validate_config
from bench import harness


def build_site(out: Path) -> list[str]:
    """A played, rendered tournament in `out`; the paths the readers load."""
    import random

    names = [f"bot{n}" for n in range(8)]

    def seat(name: str, seed: int):
        def make() -> InProcessBot:
            rng = random.Random(seed)
            return InProcessBot(lambda observation, legal: rng.randrange(len(legal)), name=name)
        return make

    data = {"name": "bench", "game": "3up3down", "seats": 2, "bots": [], "seed": 1, "output": str(out),
            "rules": {"max_turns": 60}}
    run_tournament(validate_config(data), in_process={name: seat(name, n) for n, name in enumerate(names)})
    pages = ["index.html"] + [f"bots/{page.name}" for page in sorted((out / "site" / "bots").glob("*.html"))[:4]]
    return pages


BOMBS = {  # name: (files, folders down each, what it is)
    "over": (1_200, 30, "6 KB making 36,000 folders"),
    "at the limit": (322, 30, "9,982 entries, no bot.toml"),
}


def folder_bomb(files: int, depth: int) -> bytes:
    """`files` empty files, each `depth` folders down a path of its own, and no bot.toml,
    as a .tar.gz: unpacking it makes files * depth folders."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for number in range(files):
            tar.addfile(tarfile.TarInfo(f"b{number}/" + "d/" * (depth - 1) + "f"), io.BytesIO(b""))
    return buffer.getvalue()


def _bomb_all(url: str, token: str, bombers: int, seconds: float, body: bytes, out, ready) -> None:  # noqa: ANN001
    """In a process of its own: `bombers` threads each sending `body` again and again
    until `seconds` have passed (the bomb in flight is answered first); each answer's
    status and time."""
    answers: list[tuple[int, float]] = []
    lock = threading.Lock()
    clients = [httpx.Client(base_url=url, timeout=600, headers={"Authorization": f"Bearer {token}"})
               for _ in range(bombers)]

    def bomb(client: httpx.Client) -> None:
        deadline = time.monotonic() + seconds
        while True:
            started = time.monotonic()
            code = client.post("/api/submissions", content=body, headers={"Content-Type": "application/gzip"}).status_code
            with lock:
                answers.append((code, time.monotonic() - started))
            if time.monotonic() >= deadline:
                return

    ready.set()
    threads = [threading.Thread(target=bomb, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put(answers)


def packed_bot(number: int, size: int) -> bytes:
    """bots/random renamed, with `size` random bytes beside it, as a .tar.gz."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in ("bot.py", "arena_bot.py"):
            tar.add(ROOT / "bots" / "random" / name, arcname=name)
        toml = (f'name = "up{number}"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\n'
                'games = ["3up3down"]\n').encode()
        for name, payload in (("bot.toml", toml), ("weights.bin", os.urandom(size))):
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    return buffer.getvalue()


class _Timed:
    """ASGI middleware of the probed server: each request's time in the server, from its
    call to its answer's last byte handed to uvicorn, as (start, seconds, kind)."""

    def __init__(self, app, record: dict):  # noqa: ANN001
        self.app = app
        self.record = record

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        kind = "upload" if scope["method"] == "POST" else "read" if scope["path"].endswith(".html") else "other"

        async def timed_send(message) -> None:  # noqa: ANN001
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.record["requests"].append((started, time.monotonic() - started, kind))

        await self.app(scope, receive, timed_send)


async def _probe_loop(record: dict) -> None:
    """Every 5 ms: how late the event loop woke this task (its lag), and the thread pool's
    borrowed tokens and waiting tasks (anyio's default limiter, which Starlette uses)."""
    import asyncio

    import anyio.to_thread

    while True:
        started = time.monotonic()
        await asyncio.sleep(0.005)
        limiter = anyio.to_thread.current_default_thread_limiter().statistics()
        record["lag"].append((started, time.monotonic() - started - 0.005, limiter.borrowed_tokens,
                              limiter.tasks_waiting))


def _probed_server(probe_file: str, argv: list[str]) -> None:
    """`arena serve ARGV` with a probe in its process (see _Timed, _probe_loop); what it
    saw is written to `probe_file` as JSON when it stops."""
    import asyncio
    import atexit

    import uvicorn

    from arena.web import app as web_app

    record: dict = {"requests": [], "lag": []}
    atexit.register(lambda: Path(probe_file).write_text(json.dumps(record)))
    plain_init = web_app.AppServer.__init__
    plain_startup = uvicorn.Server.startup

    def init(self, app, *args, **options) -> None:  # noqa: ANN001
        plain_init(self, _Timed(app, record), *args, **options)

    async def startup(self, sockets=None) -> None:  # noqa: ANN001
        await plain_startup(self, sockets=sockets)
        asyncio.get_running_loop().create_task(_probe_loop(record))

    web_app.AppServer.__init__ = init
    uvicorn.Server.startup = startup
    sys.argv = ["arena", *argv]
    from arena.cli.app import main

    main()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def readers(clients: list[httpx.Client], pages: list[str], stop: threading.Event) -> list[tuple[float, float]]:
    """A thread a client loading `pages` in turn until `stop`; each read's (start, seconds).
    The clients are made beforehand (an httpx client's making costs tens of ms of CPU)."""
    seen: list[tuple[float, float]] = []
    lock = threading.Lock()

    def read(offset: int) -> None:
        client = clients[offset]
        step = offset
        while not stop.is_set():
            started = time.monotonic()
            answer = client.get(pages[step % len(pages)])
            took = time.monotonic() - started
            assert answer.status_code == 200, answer.status_code
            with lock:
                seen.append((started, took))
            step += 1
            time.sleep(0.05)

    threads = [threading.Thread(target=read, args=(n,)) for n in range(len(clients))]
    for thread in threads:
        thread.start()
    stop.wait()
    for thread in threads:
        thread.join()
    return seen


def _upload_all(url: str, token: str, count: int, uploads: int, size: int, out, ready) -> None:  # noqa: ANN001
    """In a process of its own: `count` threads, each uploading `uploads` bots; `ready`
    is set when the bodies and clients are made, as the uploads begin."""
    bodies = [packed_bot(n, size) for n in range(count * uploads)]
    codes: list[int] = []
    lock = threading.Lock()

    clients = [httpx.Client(base_url=url, timeout=300, headers={"Authorization": f"Bearer {token}"})
               for _ in range(count)]

    def upload(first: int) -> None:
        client = clients[first // uploads]
        for n in range(first, first + uploads):
            answer = client.post("/api/submissions", content=bodies[n], headers={"Content-Type": "application/gzip"})
            with lock:
                codes.append(answer.status_code)

    ready.set()
    started = time.perf_counter()
    threads = [threading.Thread(target=upload, args=(n * uploads,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put({"codes": codes, "wall_s": time.perf_counter() - started, "bytes": sum(map(len, bodies))})


def main(argv: Sequence[str] | None = None) -> None:
    if sys.argv[1:2] == ["--probed-server"]:
        _probed_server(sys.argv[2], sys.argv[3:])
        return
    parser = harness.parser(__doc__, quick="5 readers, 4 uploaders of one 64 KB bot each, 2 s idle, 20 s to accept, "
                            "bombs of 2 s; a league of 3 bots read by 5 readers for 2 s")
    parser.add_argument("--uploaders", type=int, default=50)
    parser.add_argument("--uploads", type=int, default=2, help="bots each uploader sends")
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--size-kb", type=int, default=1024, help="random bytes in each bot")
    parser.add_argument("--idle-s", type=float, default=10.0)
    parser.add_argument("--accept-s", type=float, default=60.0)
    parser.add_argument("--bombers", type=int, default=1, help="clients sending folder bombs, one after another")
    parser.add_argument("--bomb-s", type=float, default=10.0, help="each bomb case lasts at least this (0: none)")
    parser.add_argument("--spy", metavar="PREFIX", help="sample the server with py-spy under load (PREFIX-gil.txt, "
                        "PREFIX-all.txt: raw stacks)")
    parser.add_argument("--trace", type=Path, help="write every read's time and the server probe's samples here (JSON)")
    parser.add_argument("--case", choices=("all", "uploads", "league"), default="all",
                        help="uploads: steps 1-5 (a served tournament); league: step 6 (a served league playing)")
    parser.add_argument("--league-readers", default="10,50,100", help="step 6: readers in each window, in turn")
    parser.add_argument("--league-window-s", type=float, default=20.0, help="step 6: each window's length")
    parser.add_argument("--league-games", type=int, default=40, help="step 6: games played before the readers start")
    parser.add_argument("--league-bots", type=int, default=8, help="step 6: bots in the league's registry")
    parser.add_argument("--think-s", type=float, default=0.05, help="step 6: a reader's pause between two requests")
    parser.add_argument("--reader-processes", type=int, default=4, help="step 6: processes the readers run in")
    args = parser.parse_args(argv)
    if args.quick:
        args.readers, args.uploaders, args.uploads, args.size_kb = 5, 4, 1, 64
        args.idle_s, args.accept_s, args.bomb_s = 2.0, 20.0, 2.0
        args.league_readers, args.league_window_s, args.league_games, args.league_bots = "5", 2.0, 3, 3
    run = harness.Run()
    figures: dict = {}
    shows = []
    if args.case in ("all", "uploads"):
        part, show = uploads_case(args)
        figures.update(part)
        shows.append(show)
    if args.case in ("all", "league"):
        part, show = league_case(args)
        figures["league"] = part
        shows.append(show)
    run.finish(args, figures, lambda whole: [show(whole) for show in shows])


def uploads_case(args) -> tuple[dict, Callable[[dict], None]]:  # noqa: ANN001
    """Readers of a served tournament, idle, under folder bombs and under uploads; then
    the queue's acceptance (the module docstring's steps 1-5)."""

    work = Path(tempfile.mkdtemp(prefix="arena-bench-server-"))
    server = None
    try:
        pages = build_site(work / "cup")
        registry = work / "registry"
        registry.mkdir()
        from arena.web.authors import Book

        token = Book(registry).add("bench")
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="300")
        probe_file = work / "probe.json"
        server = subprocess.Popen(
            [sys.executable, "-m", "bench.server", "--probed-server", str(probe_file), "serve", str(work / "cup"), "--submissions", "--registry", str(registry),
             "--validate-sandbox", "local", "--port", "0", "--requests-per-minute", "10000000",
             "--uploads-per-hour", "1000000"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
        )
        url = re.search(r"at (http://\S+/) ", server.stdout.readline()).group(1)
        threading.Thread(target=lambda: server.stdout.read(), daemon=True).start()

        clients = [httpx.Client(base_url=url, timeout=30) for _ in range(args.readers)]
        for client in clients:  # warm up: first answers load code; each client's connection opened
            for page in pages:
                client.get(page)
        stop = threading.Event()
        timer = threading.Timer(args.idle_s, stop.set)
        timer.start()
        idle_window = [time.monotonic()]
        idle = readers(clients, pages, stop)
        idle_window.append(time.monotonic())

        bombs, bomb_windows = {}, {}
        for case, (files, depth, _) in BOMBS.items() if args.bomb_s > 0 else ():
            answers_out: multiprocessing.Queue = multiprocessing.Queue()
            armed = multiprocessing.Event()
            bomber = multiprocessing.Process(target=_bomb_all, args=(
                url, token, args.bombers, args.bomb_s, folder_bomb(files, depth), answers_out, armed))
            stop = threading.Event()
            bomber.start()
            armed.wait(600)
            threading.Thread(target=lambda b=bomber, s=stop: (b.join(), s.set()), daemon=True).start()
            window = [time.monotonic()]
            reads = readers(clients, pages, stop)
            window.append(time.monotonic())
            bombs[case] = (reads, answers_out.get(timeout=600))
            bomb_windows[case] = window

        results: multiprocessing.Queue = multiprocessing.Queue()
        ready = multiprocessing.Event()
        uploader = multiprocessing.Process(
            target=_upload_all, args=(url, token, args.uploaders, args.uploads, args.size_kb * 1024, results, ready)
        )
        stop = threading.Event()
        uploader.start()
        ready.wait(600)  # the load window is the uploads', not the making of their bodies
        load_started = time.perf_counter()
        threading.Thread(target=lambda: (uploader.join(), stop.set()), daemon=True).start()
        spies = [spy(server.pid, args.spy, what) for what in ("gil", "all")] if args.spy else []
        load_window = [time.monotonic()]
        loaded = readers(clients, pages, stop)
        load_window.append(time.monotonic())
        for running in spies:
            running.send_signal(signal.SIGINT)
            running.wait(60)
        sent = results.get(timeout=600)
        first_upload = load_started

        deadline = time.perf_counter() + args.accept_s
        with httpx.Client(base_url=url, timeout=30, headers={"Authorization": f"Bearer {token}"}) as client:
            while True:
                rows = client.get("/api/submissions", params={"limit": 500}).json()["submissions"]
                accepted = [row for row in rows if row["state"] == "accepted"]
                if time.perf_counter() >= deadline or len(accepted) == len(rows):
                    break
                time.sleep(1.0)
        accept_window = time.perf_counter() - first_upload
        states = {state: sum(row["state"] == state for row in rows) for state in {row["state"] for row in rows}}
        checks = [row["updated"] - row["created"] for row in accepted]
        load_average = os.getloadavg()[0]
        stop_server(server)
        probe = json.loads(probe_file.read_text())
        if args.trace:
            args.trace.write_text(json.dumps({"idle": idle, "load": loaded, "idle_window": idle_window,
                                              "load_window": load_window, **probe}))
        inside = server_side(probe, idle_window, load_window)
        bomb_figures = {}
        for case, (reads, answers) in bombs.items():
            took = [seconds for _, seconds in reads]
            seen = server_side(probe, idle_window, bomb_windows[case])
            bomb_figures[case] = {
                "bombs": len(answers), "codes": sorted({code for code, _ in answers}),
                "answer_p50_s": round(statistics.median(seconds for _, seconds in answers), 2),
                "p50_ms": round(percentile(took, 0.5) * 1000, 1), "p99_ms": round(percentile(took, 0.99) * 1000, 1),
                "max_ms": round(max(took, default=0) * 1000, 1), "reads": len(took), "window_s": round(bomb_windows[case][1] - bomb_windows[case][0], 1),
                "server_p99_ms": seen["server_load_p99_ms"], "lag_p99_ms": seen["lag_load_p99_ms"],
                "lag_max_ms": seen["lag_load_max_ms"],
            }
        idle, loaded = [took for _, took in idle], [took for _, took in loaded]

        queued = sum(code == 202 for code in sent["codes"])
        figures = {
            "readers": args.readers, "uploaders": args.uploaders, "uploads": len(sent["codes"]),
            "upload_mb": round(sent["bytes"] / len(sent["codes"]) / (1 << 20), 2),
            "idle_p50_ms": round(percentile(idle, 0.5) * 1000, 1), "idle_p99_ms": round(percentile(idle, 0.99) * 1000, 1),
            "load_p50_ms": round(percentile(loaded, 0.5) * 1000, 1),
            "load_p99_ms": round(percentile(loaded, 0.99) * 1000, 1),
            "reads_idle": len(idle), "reads_load": len(loaded),
            "queued": queued, "refused": len(sent["codes"]) - queued,
            "queued_per_s": round(queued / sent["wall_s"], 1), "upload_wall_s": round(sent["wall_s"], 1),
            "accepted": len(accepted), "accepted_per_min": round(len(accepted) / accept_window * 60, 1),
            "median_check_s": round(statistics.median(checks), 1) if checks else None,
            "load_average": round(load_average, 1), "cpus": os.cpu_count(), "states": states, **inside,
        }
        figures["p99_ratio"] = round(figures["load_p99_ms"] / figures["idle_p99_ms"], 2)
        for case, bomb in bomb_figures.items():
            bomb["p99_ratio"] = round(bomb["p99_ms"] / figures["idle_p99_ms"], 2)
            bomb["met"] = bomb["p99_ratio"] <= 3 and bomb["p99_ms"] < 100
        figures["bombs"] = bomb_figures

        def show(figures: dict) -> None:
            print(f"served arena: {args.readers} readers (standings and bot pages), {args.uploaders} uploaders of "
                  f"{figures['upload_mb']} MB bots ({figures['uploads']} uploads); load average {figures['load_average']} "
                  f"on {figures['cpus']} CPUs")
            print(f"  readers idle:       p50 {figures['idle_p50_ms']:7.1f} ms   p99 {figures['idle_p99_ms']:7.1f} ms   "
                  f"({figures['reads_idle']} reads)")
            print(f"  readers under load: p50 {figures['load_p50_ms']:7.1f} ms   p99 {figures['load_p99_ms']:7.1f} ms   "
                  f"({figures['reads_load']} reads)")
            verdict = "met" if figures["p99_ratio"] <= 3 and figures["load_p99_ms"] < 100 else "NOT met"
            print(f"  in the server, reads: idle p50 {inside['server_idle_p50_ms']} / p99 {inside['server_idle_p99_ms']} ms,"
                  f" under load p50 {inside['server_load_p50_ms']} / p99 {inside['server_load_p99_ms']} ms; event loop "
                  f"lag p99 {inside['lag_idle_p99_ms']} -> {inside['lag_load_p99_ms']} ms (most "
                  f"{inside['lag_load_max_ms']} ms); thread pool under load: at most {inside['pool_load_busy']} busy, "
                  f"{inside['pool_load_waiting']} waiting")
            print(f"  p99 under load / idle: {figures['p99_ratio']}x (target: at most 3x and under 100 ms: {verdict})")
            for case, bomb in bomb_figures.items():
                print(f"  folder bomb {case}: {BOMBS[case][2]}")
                print(f"    {bomb['bombs']} sent by {args.bombers} in {bomb['window_s']} s, answered "
                      f"{bomb['codes']} in {bomb['answer_p50_s']} s (p50)")
                print(f"    readers: p50 {bomb['p50_ms']} ms, p99 {bomb['p99_ms']} ms, most {bomb['max_ms']:.0f} ms "
                      f"({bomb['reads']} reads)")
                print(f"    p99 / idle: {bomb['p99_ratio']}x (at most 3x and under 100 ms: "
                      f"{'met' if bomb['met'] else 'NOT met'})")
                print(f"    in the server: read p99 {bomb['server_p99_ms']} ms, event loop lag p99 "
                      f"{bomb['lag_p99_ms']} ms (most {bomb['lag_max_ms']} ms)")
            print(f"  uploads queued: {figures['queued']} in {figures['upload_wall_s']} s = {figures['queued_per_s']} a "
                  f"second ({figures['refused']} refused)")
            print(f"  accepted: {figures['accepted']} in {accept_window:.0f} s = {figures['accepted_per_min']} a minute, "
                  f"one check at a time (median {figures['median_check_s']} s from upload to accepted): the smoke "
                  "matches bound acceptance, not the uploads")
            print(f"  submissions by state at the end: {json.dumps(states, sort_keys=True)}")

        return figures, show
    finally:
        if server is not None:
            stop_server(server)
        shutil.rmtree(work, ignore_errors=True)


LEAGUE_FILE = """[league]
name = "bench ladder"
game = "3up3down"
seats = 2
sandbox = "local"
registry = "registry"
output = "ladder"
seed = 1
rules = {{ max_turns = 60 }}

[server]
port = 0
validate_sandbox = "local"
requests_per_minute = 100000000
"""
KINDS = ("standings", "bot page", "game page", "replay")  # what a league's readers load, in turn


def league_case(args) -> tuple[dict, Callable[[dict], None]]:  # noqa: ANN001
    """Step 6: `arena league FILE` (its [server] table: the site and the door) playing in a
    process of its own, probed; once it holds --league-games games, each count of readers
    in --league-readers reads for --league-window-s: requests a second, p50, p99, and the
    server's own view (time inside it, its event loop's lag)."""
    work = Path(tempfile.mkdtemp(prefix="arena-bench-league-"))
    server = None
    try:
        registry = work / "registry"
        for number in range(args.league_bots):
            folder = registry / f"lb{number}" / "1.0"
            shutil.copytree(ROOT / "bots" / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
            (folder / "bot.toml").write_text(f'name = "lb{number}"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\n'
                                             'games = ["3up3down"]\n')
        (work / "ladder.toml").write_text(LEAGUE_FILE.format())
        probe_file = work / "probe.json"
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="300")
        server = subprocess.Popen(
            [sys.executable, "-m", "bench.server", "--probed-server", str(probe_file), "league",
             str(work / "ladder.toml"), "--public-seed-ok"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
        )
        url = None
        for line in server.stdout:
            found = re.search(r"serving the league at (http://\S+/)", line)
            if found:
                url = found.group(1)
                break
        if url is None:
            raise SystemExit("bench: the league's server did not start")
        threading.Thread(target=lambda: server.stdout.read(), daemon=True).start()
        played_s = _wait_for_games(url, args.league_games)
        # The league alone (no reader): the CPU its playing takes in the server's process.
        _, alone = read_league(url, {kind: [] for kind in KINDS}, 0, args, server.pid)
        alone_share = (alone[3] - alone[2]) / (alone[1] - alone[0])
        windows = []
        for count in [int(part) for part in str(args.league_readers).split(",") if part.strip()]:
            paths = league_paths(url, work / "ladder" / "site")
            spies = [spy(server.pid, f"{args.spy}-league{count}", what) for what in ("gil", "all")] if args.spy else []
            reads, window = read_league(url, paths, count, args, server.pid)
            for running in spies:
                running.send_signal(signal.SIGINT)
                running.wait(60)
            windows.append((count, reads, window, {kind: len(found) for kind, found in paths.items()}))
        games_at_end = _games_listed(url)
        load_average = os.getloadavg()[0]
        stop_server(server)
        probe = json.loads(probe_file.read_text())
        figures = {"bots": args.league_bots, "games_before": args.league_games, "games_at_end": games_at_end,
                   "played_s": round(played_s, 1), "think_s": args.think_s, "load_average": round(load_average, 1),
                   "league_cpu_share": round(alone_share, 2),
                   "windows": [league_window(count, reads, window, probe, paths, alone_share)
                               for count, reads, window, paths in windows]}
    finally:
        if server is not None:
            stop_server(server)
        shutil.rmtree(work, ignore_errors=True)

    def show(whole: dict) -> None:
        league = whole["league"]
        print(f"served league playing ({league['bots']} bots, 3up3down, local sandbox; {league['games_at_end']} "
              f"games listed at the end): readers of {', '.join(KINDS)}, {league['think_s'] * 1000:.0f} ms between "
              f"two requests; the league alone took {league['league_cpu_share']} of a core in the server's process")
        for row in league["windows"]:
            print(f"  {row['readers']:>3} readers: {row['per_s']:6.1f} requests/s, p50 {row['p50_ms']:7.1f} ms, "
                  f"p99 {row['p99_ms']:7.1f} ms, most {row['max_ms']:.0f} ms, {row['errors']} errors")
            print("      p99 by kind: " + ", ".join(f"{kind} {row['kinds'][kind]['p99_ms']} ms"
                                                   for kind in KINDS if kind in row["kinds"]))
            print(f"      in the server: p99 {row['server_p99_ms']} ms; event loop lag p99 {row['lag_p99_ms']} ms, "
                  f"most {row['lag_max_ms']} ms; its CPU {row['server_cpu_share']} of a core, "
                  f"{row['server_cpu_ms_per_read']} ms a read (beyond the league's own)")

    return figures, show


def _games_listed(url: str) -> int:
    """Finished games on the first list page (at most GAMES_PER_PAGE)."""
    try:
        page = httpx.get(url + "games/page-1.html", timeout=30)
    except httpx.HTTPError:
        return 0
    return len(set(re.findall(r'href="([0-9]+-[0-9]+-[0-9]+)\.html"', page.text))) if page.status_code == 200 else 0


def _wait_for_games(url: str, games: int, limit_s: float = 600.0) -> float:
    """Seconds until the league lists `games` finished games (and its site answers)."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        if _games_listed(url) >= games and httpx.get(url, timeout=30).status_code == 200:
            return time.monotonic() - started
        time.sleep(1.0)
    raise SystemExit(f"bench: the league did not play {games} games in {limit_s:.0f} s")


def league_paths(url: str, site: Path) -> dict[str, list[str]]:
    """What the readers load: the standings, every bot's page, the game pages of the first
    list page and their replays (as each game page names its replay)."""
    keys = sorted(set(re.findall(r'href="([0-9]+-[0-9]+-[0-9]+)\.html"', httpx.get(url + "games/page-1.html",
                                                                                 timeout=30).text)))
    replays = []
    for key in keys[:5]:
        named = re.search(r"replays/([0-9-]+\.r[0-9]+\.js)", httpx.get(url + f"games/{key}.html", timeout=30).text)
        if named:
            replays.append(named.group(1))
    form = re.sub(r"^[0-9-]+", "", replays[0]) if replays else ".r4.js"
    return {
        "standings": ["index.html"],
        "bot page": [f"bots/{page.name}" for page in sorted((site / "bots").glob("*.html"))],
        "game page": [f"games/{key}.html" for key in keys],
        "replay": [f"replays/{key}{form}" for key in keys],
    }


def _read_league(url: str, paths: dict[str, list[str]], threads: int, until: float, think_s: float, seed: int,
                 out, ready) -> None:  # noqa: ANN001
    """In a process of its own: `threads` readers, each loading a kind in turn (KINDS) and
    a page of that kind at random, until the monotonic clock passes `until`; every read's
    (start, seconds, status, kind)."""
    import random

    clients = [httpx.Client(base_url=url, timeout=60) for _ in range(threads)]
    seen: list[tuple[float, float, int, str]] = []
    lock = threading.Lock()

    def read(number: int) -> None:
        rng = random.Random(seed * 1000 + number)
        client, step = clients[number], number
        while time.monotonic() < until:
            kind = KINDS[step % len(KINDS)]
            step += 1
            if not paths[kind]:
                continue
            started = time.monotonic()
            try:
                status = client.get(rng.choice(paths[kind])).status_code
            except httpx.HTTPError:
                status = 0
            with lock:
                seen.append((started, time.monotonic() - started, status, kind))
            time.sleep(think_s)

    ready.set()
    pool = [threading.Thread(target=read, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    out.put(seen)


def cpu_s(pid: int) -> float:
    """The CPU seconds process `pid` has used (user and system, its threads together)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_league(url: str, paths: dict[str, list[str]], readers: int, args, pid: int) -> tuple[list, list[float]]:  # noqa: ANN001
    """`readers` readers spread over --reader-processes processes for --league-window-s
    seconds (the measuring client must not be the bottleneck: one process's threads share
    its GIL); every read, and the window's start and end and the server's (`pid`) CPU
    seconds at each."""
    processes = max(1, min(args.reader_processes, readers))
    shares = [readers // processes + (1 if n < readers % processes else 0) for n in range(processes)]
    out: multiprocessing.Queue = multiprocessing.Queue()
    begin = time.monotonic() + 2.0 + 0.02 * readers  # after every process has made its clients
    until = begin + args.league_window_s
    workers = []
    for number, share in enumerate(shares):
        ready = multiprocessing.Event()
        worker = multiprocessing.Process(target=_read_league, args=(url, paths, share, until, args.think_s, number,
                                                                     out, ready))
        worker.start()
        workers.append((worker, ready))
    spent: list[float] = []

    def measure() -> None:
        for moment in (begin, until):
            time.sleep(max(0.0, moment - time.monotonic()))
            spent.append(cpu_s(pid))

    meter = threading.Thread(target=measure)
    meter.start()
    reads = []
    for _ in workers:
        reads += out.get(timeout=args.league_window_s + 600)
    for worker, _ in workers:
        worker.join(60)
    meter.join()
    return [read for read in reads if read[0] >= begin], [begin, until, *spent]


def league_window(readers: int, reads: list, window: list[float], probe: dict, paths: dict, alone: float) -> dict:
    """One window's figures: from the readers' side, and the probe's in the server (its CPU
    beyond `alone`, the share of a core the league's playing took without readers)."""
    took = [seconds for _, seconds, status, _ in reads if status == 200]
    seconds = window[1] - window[0]
    kinds = {}
    for kind in KINDS:
        mine = [taken for _, taken, status, what in reads if what == kind and status == 200]
        if mine:
            kinds[kind] = {"reads": len(mine), "p50_ms": round(percentile(mine, 0.5) * 1000, 1),
                           "p99_ms": round(percentile(mine, 0.99) * 1000, 1)}
    inside = [taken for start, taken, kind in probe["requests"] if window[0] <= start <= window[1] and kind != "upload"]
    lags = [lag for start, lag, _, _ in probe["lag"] if window[0] <= start <= window[1]]
    server_cpu = window[3] - window[2]
    return {
        "readers": readers, "reads": len(took), "per_s": round(len(took) / seconds, 1),
        "server_cpu_share": round(server_cpu / seconds, 2),  # of one core: the league's own playing included
        "server_cpu_ms_per_read": round(max(0.0, server_cpu - alone * seconds) / max(1, len(reads)) * 1000, 2),
        "errors": sum(status != 200 for _, _, status, _ in reads),
        "statuses": sorted({status for _, _, status, _ in reads}),
        "p50_ms": round(percentile(took, 0.5) * 1000, 1), "p99_ms": round(percentile(took, 0.99) * 1000, 1),
        "max_ms": round(max(took, default=0) * 1000, 1), "kinds": kinds, "paths": paths,
        "server_p99_ms": round(percentile(inside, 0.99) * 1000, 1),
        "lag_p99_ms": round(percentile(lags, 0.99) * 1000, 1),
        "lag_max_ms": round(max(lags, default=0) * 1000, 1),
    }


def spy(pid: int, prefix: str, what: str) -> subprocess.Popen:
    """py-spy sampling the server while the uploads last: the threads holding the GIL
    ("gil") or every thread, idle or not ("all"); raw stacks in PREFIX-WHAT.txt."""
    flags = ["--gil"] if what == "gil" else ["--idle"]
    return subprocess.Popen(
        [shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(pid), "--threads", "--nonblocking", "--rate", "200", "--format", "raw",
         "-o", f"{prefix}-{what}.txt", *flags], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def stop_server(server: subprocess.Popen) -> None:
    if server.poll() is not None:
        return
    server.send_signal(signal.SIGINT)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def server_side(probe: dict, idle_window: list[float], load_window: list[float]) -> dict:
    """What the probe in the server saw in each window: the reads' time inside the server,
    the event loop's lag, the thread pool's busy and waiting tasks."""
    def within(rows: list, window: list[float]) -> list:
        return [row for row in rows if window[0] <= row[0] <= window[1]]

    def ms(values: list[float], share: float) -> float:
        return round(percentile(values, share) * 1000, 1)

    figures = {}
    for phase, window in (("idle", idle_window), ("load", load_window)):
        reads = [took for _, took, kind in within(probe["requests"], window) if kind == "read"]
        lags = within(probe["lag"], window)
        figures[f"server_{phase}_p50_ms"] = ms(reads, 0.5)
        figures[f"server_{phase}_p99_ms"] = ms(reads, 0.99)
        figures[f"lag_{phase}_p99_ms"] = ms([lag for _, lag, _, _ in lags], 0.99)
        figures[f"lag_{phase}_max_ms"] = round(max((lag for _, lag, _, _ in lags), default=0) * 1000, 1)
        figures[f"pool_{phase}_busy"] = max((busy for _, _, busy, _ in lags), default=0)
        figures[f"pool_{phase}_waiting"] = max((waiting for _, _, _, waiting in lags), default=0)
    uploads = [took for _, took, kind in probe["requests"] if kind == "upload"]
    figures["server_upload_p50_ms"] = ms(uploads, 0.5)
    return figures


if __name__ == "__main__":
    main()
