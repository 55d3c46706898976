"""Benchmark of the served arena (`arena serve --submissions`): readers' latency while
authors upload.

    python bench/server.py                      # 50 uploaders of 1 MB bots, 20 readers
    python bench/server.py --uploaders 10 --readers 5 --idle-s 5   # smaller
    python bench/server.py --json

1. A small tournament (8 in-process random bots, 3UP 3DOWN, 2 seats, round-robin) is
   played and its site rendered; `arena serve DIR --submissions` runs it in a process of
   its own (validation in the local sandbox, said explicitly; the per-address and per-author
   limits raised: every client here is 127.0.0.1).
2. Idle: `--readers` threads load the standings and a bot's page in turn for `--idle-s`
   seconds; their latencies' p50 and p99.
3. Under load: the same readers while `--uploaders` clients (threads of another process)
   each upload `--uploads` bots of about 1 MB (bots/random with 1 MB of random bytes);
   the readers' p50 and p99 again, and uploads queued per second (202 answers).
   Target: p99 under load at most 3x idle, and under 100 ms.
4. Acceptance: the queue checks one bot at a time (the default) by its smoke match (two
   games of each declared game); bots accepted per minute over `--accept-s` seconds after
   the uploads, which bounds how fast a door takes bots in, whatever the upload rate.
Readers and uploaders run in processes apart from the server, so the figures are the
server's, not the measuring client's.
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from arena.game.seats import InProcessBot  # noqa: E402
from arena.run.tournament import run_tournament, validate_config  # noqa: E402


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


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def readers(url: str, pages: list[str], count: int, stop: threading.Event) -> list[float]:
    """`count` threads loading `pages` in turn until `stop`; every latency, seconds."""
    seen: list[float] = []
    lock = threading.Lock()

    def read(offset: int) -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            step = offset
            while not stop.is_set():
                started = time.perf_counter()
                answer = client.get(pages[step % len(pages)])
                took = time.perf_counter() - started
                assert answer.status_code == 200, answer.status_code
                with lock:
                    seen.append(took)
                step += 1
                time.sleep(0.05)

    threads = [threading.Thread(target=read, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    stop.wait()
    for thread in threads:
        thread.join()
    return seen


def _upload_all(url: str, token: str, count: int, uploads: int, size: int, out) -> None:  # noqa: ANN001
    """In a process of its own: `count` threads, each uploading `uploads` bots."""
    bodies = [packed_bot(n, size) for n in range(count * uploads)]
    codes: list[int] = []
    lock = threading.Lock()

    def upload(first: int) -> None:
        with httpx.Client(base_url=url, timeout=300, headers={"Authorization": f"Bearer {token}"}) as client:
            for n in range(first, first + uploads):
                answer = client.post("/api/submissions", content=bodies[n], headers={"Content-Type": "application/gzip"})
                with lock:
                    codes.append(answer.status_code)

    started = time.perf_counter()
    threads = [threading.Thread(target=upload, args=(n * uploads,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put({"codes": codes, "wall_s": time.perf_counter() - started, "bytes": sum(map(len, bodies))})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--uploaders", type=int, default=50)
    parser.add_argument("--uploads", type=int, default=2, help="bots each uploader sends")
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--size-kb", type=int, default=1024, help="random bytes in each bot")
    parser.add_argument("--idle-s", type=float, default=10.0)
    parser.add_argument("--accept-s", type=float, default=60.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="arena-bench-server-"))
    server = None
    try:
        pages = build_site(work / "cup")
        registry = work / "registry"
        registry.mkdir()
        from arena.web.authors import Book

        token = Book(registry).add("bench")
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="300")
        server = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", str(work / "cup"), "--submissions", "--registry", str(registry),
             "--validate-sandbox", "local", "--port", "0", "--requests-per-minute", "10000000",
             "--uploads-per-hour", "1000000"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        )
        url = re.search(r"at (http://\S+/) ", server.stdout.readline()).group(1)
        threading.Thread(target=lambda: server.stdout.read(), daemon=True).start()

        with httpx.Client(base_url=url, timeout=30) as client:  # warm up: first answers load code
            for page in pages * 5:
                client.get(page)
        stop = threading.Event()
        timer = threading.Timer(args.idle_s, stop.set)
        timer.start()
        idle = readers(url, pages, args.readers, stop)

        results: multiprocessing.Queue = multiprocessing.Queue()
        uploader = multiprocessing.Process(
            target=_upload_all, args=(url, token, args.uploaders, args.uploads, args.size_kb * 1024, results)
        )
        stop = threading.Event()
        load_started = time.perf_counter()
        uploader.start()
        threading.Thread(target=lambda: (uploader.join(), stop.set()), daemon=True).start()
        loaded = readers(url, pages, args.readers, stop)
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
            "load_average": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(), "states": states,
        }
        figures["p99_ratio"] = round(figures["load_p99_ms"] / figures["idle_p99_ms"], 2)
        if args.json:
            print(json.dumps(figures))
            return
        print(f"served arena: {args.readers} readers (standings and bot pages), {args.uploaders} uploaders of "
              f"{figures['upload_mb']} MB bots ({figures['uploads']} uploads); load average {figures['load_average']} "
              f"on {figures['cpus']} CPUs")
        print(f"  readers idle:       p50 {figures['idle_p50_ms']:7.1f} ms   p99 {figures['idle_p99_ms']:7.1f} ms   "
              f"({figures['reads_idle']} reads)")
        print(f"  readers under load: p50 {figures['load_p50_ms']:7.1f} ms   p99 {figures['load_p99_ms']:7.1f} ms   "
              f"({figures['reads_load']} reads)")
        verdict = "met" if figures["p99_ratio"] <= 3 and figures["load_p99_ms"] < 100 else "NOT met"
        print(f"  p99 under load / idle: {figures['p99_ratio']}x (target: at most 3x and under 100 ms: {verdict})")
        print(f"  uploads queued: {figures['queued']} in {figures['upload_wall_s']} s = {figures['queued_per_s']} a "
              f"second ({figures['refused']} refused)")
        print(f"  accepted: {figures['accepted']} in {accept_window:.0f} s = {figures['accepted_per_min']} a minute, "
              f"one check at a time (median {figures['median_check_s']} s from upload to accepted): the smoke "
              "matches bound acceptance, not the uploads")
        print(f"  submissions by state at the end: {json.dumps(states, sort_keys=True)}")
    finally:
        if server is not None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
