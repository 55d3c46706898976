"""A league's game pages and game lists answered from its store (issue 27, part 2): how
long the server takes to answer them at 10k and 100k (and with `--million` 1M) games.

    nice python -m bench.served_games [--json] [--million] [--sizes 10000,100000] [--repeat 5]

For each size a synthetic league store is built straight with SQL in bulk in the store's
schema (keys zero-padded as a league writes them, 200 bots, batches of 16 games of 4
seats, every game finished; no replay: a replay's first answer is its re-simulation,
bench/replay_size.py's write time, 1-2 s for a long Three Thirteen game, and later ones a
file read). Then `arena.web.league_games.ServedGames.answer` (what the server runs in its
thread for each request, without HTTP) is timed for the game page of the first, the
middle and the last game and the list page 1, the middle one and the last one, the
median of `--repeat` answers each, rendered each time (`list_page_kept_ms`: a list page
kept in memory, as readers get it until the league's next commit); `first_answer_ms` is the server's first answer alone
(it opens the store, loads the templates and reads where each list page starts:
`arena.store.partial.DoneIndex`, one pass over the finished games' keys). Figures in docs/performance.md, "League at scale".
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from arena.store.db import Store
from arena.web.league_games import ServedGames
from bench import harness

BOTS = 200
BATCH = 16
SEATS = 4
SIZES = (10_000, 100_000)
MILLION = 1_000_000


def key_of(number: int) -> str:
    batch, table = divmod(number, BATCH)
    return f"{batch + 1:05d}-{table + 1:05d}-0"


def build_store(out: Path, games: int) -> None:
    """A finished league of `games` games, written in bulk."""
    settings = {"format": "league", "game": "three-thirteen", "seats": SEATS, "name": "bench", "rules": {}}
    with Store.open(out, create=True) as store:
        store.save_settings(settings, "bench")
    rng = random.Random(f"served/{games}")
    names = [f"bot{i:03d}" for i in range(BOTS)]
    db = sqlite3.connect(out / "arena.sqlite", isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO bots (bot, name, version, content_hash, folder, kind) VALUES (?, ?, '1', '', '', 'in-process')",
        [(name, name) for name in names],
    )
    rows, seats = [], []
    for number in range(games):
        key = key_of(number)
        batch, table = divmod(number, BATCH)
        bots = [names[b] for b in rng.sample(range(BOTS), SEATS)]
        places = rng.sample(range(1, SEATS + 1), SEATS)
        rows.append((key, batch + 1, table + 1, 0, key[:-2], number, json.dumps(bots), "2026-12-02T00:00:00+00:00",
                     60.0, "three-thirteen", "{}", "1", number + 1))
        seats.extend((key, seat, bots[seat], places[seat], float(SEATS - places[seat]), places[seat], 0)
                     for seat in range(SEATS))
        if len(rows) >= 20_000 or number == games - 1:
            db.executemany(
                "INSERT INTO games (key, round, table_no, rotation, deal, seed, bots, status, finished_at, duration_s, "
                "game, rules, rules_version, seq) VALUES (?, ?, ?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?)", rows,
            )
            db.executemany("INSERT INTO seats (game_key, seat, bot, place, score, engine_place, forfeit) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)", seats)
            rows.clear()
            seats.clear()
    db.execute("COMMIT")
    db.close()


def timed(served: ServedGames, path: str, repeat: int, kept: bool = False) -> float:
    """The median time of `repeat` answers to `path`, in ms: each rendered (the answers
    kept in memory forgotten first), or with `kept` as a reader gets it between two
    commits of the league (rendered once, then kept)."""
    times = []
    for _ in range(repeat):
        if not kept:
            served._answers.clear()
        start = time.perf_counter()
        answer = served.answer(path)
        times.append((time.perf_counter() - start) * 1000)
        assert answer is not None and answer.status == 200, (path, answer)
    return statistics.median(times)


def measure(games: int, repeat: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="served-bench-"))
    try:
        start = time.perf_counter()
        build_store(work, games)
        built = time.perf_counter() - start
        served = ServedGames(work)
        start = time.perf_counter()
        served.answer("games/page-1.html")  # opens the store, loads the templates, reads the pages' starts
        first = time.perf_counter() - start
        pages = -(-games // 100)
        found: dict[str, Any] = {"games": games, "build_s": round(built, 1), "first_answer_ms": round(first * 1000, 1)}
        for label, number in (("first", 0), ("middle", games // 2), ("last", games - 1)):
            found[f"game_page_{label}_ms"] = round(timed(served, f"games/{key_of(number)}.html", repeat), 2)
        for label, page in (("first", 1), ("middle", pages // 2), ("last", pages)):
            found[f"list_page_{label}_ms"] = round(timed(served, f"games/page-{page}.html", repeat), 2)
        found["list_page_kept_ms"] = round(timed(served, "games/page-1.html", repeat, kept=True), 3)
        served.close()
        return found
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="one store of 2,000 games, 2 answers a page")
    parser.add_argument("--million", action="store_true", help="also 1,000,000 games (a store of about 300 MB)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="stored games, comma-separated")
    parser.add_argument("--repeat", type=int, default=5, help="answers timed per page (their median is shown)")
    options = parser.parse_args(argv)
    if options.quick:
        options.sizes, options.repeat, options.million = "2000", 2, False
    run = harness.Run()
    sizes = [int(size) for size in options.sizes.split(",") if size] + ([MILLION] if options.million else [])
    results = [measure(size, options.repeat) for size in sizes]
    def show(report: dict) -> None:
        for found in report["sizes"]:
            print(f"{found['games']:>9,} games (store built in {found['build_s']} s; first answer "
                  f"{found['first_answer_ms']} ms)")
            for name, value in found.items():
                if name.endswith("_ms") and name != "first_answer_ms":
                    print(f"  {name[:-3].replace('_', ' '):<22} {value:>9.2f} ms")


    run.finish(options, {"sizes": results}, show)

if __name__ == "__main__":
    main()
