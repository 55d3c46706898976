"""League at scale (issue 27, part 5): the league's own work after a batch, at 10k, 100k
and (with `--million`) 1M stored games.

    nice python -m bench.league_scale [--json] [--million] [--sizes 10000,100000]
        [--seats 4] [--no-site] [--replay-games 1] [--keep DIR] [--window N]

For each size a synthetic league store is built straight with SQL in bulk, in the store's
real schema (arena/store/db.py: meta with the league's settings, bots, members, games with
their keys and sequence numbers, seats): 200 in-process bots, batches of 16 games
(`batch = 16` tables), each game 4 bots (`--seats`, 2 to 4) drawn at random, places by a
draw of the TrueSkill model from each bot's true skill (numpy, 20,000 games at a time;
no journal, indexes built at the end: about 2 minutes for 1M games). No game is played
and no replay is stored (a synthetic game has none to re-simulate); the store has no saved
league state, as one from before it existed.

Then, in a child process per size (so that its peak resident memory is the league's
alone), arena's own league (`arena.league.ladder._League`, the class `arena league` runs)
opens the store as a resumed league does (`open_s`: without a saved state it streams the
store and rates the history once, then saves its state), schedules its next batch (untimed: the first
schedule rates the whole history once), the site is rendered once (untimed), the batch's
16 games are marked done in the store (SQL) and the league is told of each
(`game_stored`, as the runner does). Timed, in the order the league does them:

- `stored_s`: the 16 `game_stored` calls; the last completes the batch, so `batch_done`
  runs: the standings' ledger takes the batch (ratings), `of_ledger` builds the standings
  (table and confidence: `RatingLedger.confidence()`), who is settled, the progress line;
  `confidence_s` is that confidence alone, timed again right after on the same ledger,
  `sweep_cpu_s` its posterior's sweep alone (the rest is the 2,000 draws of the field);
  the `_cpu_s` figures are this process's CPU time, steadier than wall time on a loaded
  machine;
- `schedule_s`: `schedule_batch` of the next batch: the matchmaker's ratings through
  batch b-2, suspension, the matchmaker, the schedule stored;
- `site_s`: the site re-rendered (`arena.site.writer.render_site`, which writes
  live.json; the league's renderer thread calls the same, with replays; here
  `replays="none"`, as no synthetic game has a replay: a Three Thirteen replay's write
  time is bench/replay_size.py's, about 1-2 s per new game); `site_cpu_s` its CPU time
  (the site reads its state beside the store, `arena.site.state`: the render after the
  untimed first one applies only the batch).

`after_batch_s` = stored_s + schedule_s + site_s (wall time), `after_batch_cpu_s` the
same in this process's CPU time (steadier on a loaded machine, and so the ratio
`after_batch_cpu_1m_over_10k` beside `after_batch_1m_over_10k`). Then `save_s`: the league's state saved
(what it does after a batch at most once a minute, `SAVE_S`: not in after_batch_s), and
`reopen_s`: the league opened again from that state (`reopened_from_batch`: the batch its
standings resumed after). `rss_mb` is the child's peak resident memory after all of it
(VmHWM; `ru_maxrss_mb` beside it also holds the parent's peak, carried in at exec);
`rss_mb_opened` the peak once the league is open and its first batch scheduled (the
league's own), `rss_mb_first_site` once the site's first render is done (its state
rebuilt from every game: `first_site_s`, `first_site_cpu_s`). `tt_replay_bytes_ratio` is bench/replay_size.py's
`measure()` over `--replay-games` Three Thirteen games (0: not measured).

Targets (issue 27): after_batch_1m_over_10k <= 1.5, site_update_s_100k <= 2 s,
rss_mb_1m <= 2,000, tt_replay_bytes_ratio <= 0.25. Figures in docs/performance.md,
"League at scale".
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from arena.config.fingerprint import fingerprint_of, settings_of
from arena.config.league_file import LeagueConfig
from arena.store.db import Store
from arena.store.keys import game_key
from arena.store.seeds import RunKey
from bench import harness

BOTS = 200
BATCH = 16  # games per batch (tables; one rotation: not duplicate)
GAME = "three-thirteen"
BETA = 25.0 / 6
SIZES = (10_000, 100_000)
MILLION = 1_000_000
CHUNK = 20_000  # games generated and inserted at a time
SEED = 27


def bot_name(index: int) -> str:
    return f"bot{index:03d}"


def league_config(out: Path, seats: int) -> LeagueConfig:
    return LeagueConfig(
        game=GAME, seats=seats, seed=SEED, output=str(out), registry=str(out / "registry"), batch=BATCH,
    )


def build_store(out: Path, games: int, seats: int) -> None:
    """A league store of `games` finished games in batches of BATCH, written in bulk."""
    config = league_config(out, seats)
    settings = settings_of(config)
    with Store.open(out, create=True) as store:
        store.save_settings(settings, fingerprint_of(settings))
        RunKey.of_store(config.seed, store)
    rng = np.random.default_rng([SEED, games, seats])
    skills = rng.uniform(20.0, 30.0, BOTS)
    names = [bot_name(i) for i in range(BOTS)]
    quoted = [json.dumps(name) for name in names]
    db = sqlite3.connect(out / "arena.sqlite", isolation_level=None)
    # In bulk: no journal, a big page cache, the secondary indexes built once at the end
    # (sorted) instead of kept up to date row by row; the store is WAL again after.
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("PRAGMA cache_size=-262144")
    indexes = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
                         "AND tbl_name IN ('games', 'seats')").fetchall()
    for name, _ in indexes:
        db.execute(f"DROP INDEX {name}")
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO bots (bot, name, version, content_hash, folder, kind) VALUES (?, ?, 'in-process', '', '', 'in-process')",
        [(name, name) for name in names],
    )
    db.executemany(
        "INSERT INTO members (bot, lineage, joined, left_at, status, reason) VALUES (?, ?, 1, NULL, 'active', '')",
        [(name, name) for name in names],
    )
    rules = json.dumps(config.rules, sort_keys=True)
    when = "2026-12-02T00:00:00+00:00"
    for first in range(0, games, CHUNK):
        count = min(CHUNK, games - first)
        tables = _tables(rng, count, seats)
        performance = skills[tables] + rng.normal(0.0, BETA, (count, seats))
        # Place 1 for the best performance: the rank of each seat's performance, from the top.
        places = (np.argsort(np.argsort(-performance, axis=1), axis=1) + 1).tolist()
        chunk_games, chunk_seats = [], []
        for row, (table_bots, table_places) in enumerate(zip(tables.tolist(), places)):
            number = first + row
            batch, table = divmod(number, BATCH)
            key = game_key(batch + 1, table + 1, 0)
            bots = [names[b] for b in table_bots]
            chunk_games.append(
                (key, batch + 1, table + 1, 0, key[:-2], number, "[" + ", ".join(quoted[b] for b in table_bots) + "]",
                 when, 60.0, GAME, rules, "1", number + 1)
            )
            chunk_seats.extend(
                (key, seat, bots[seat], place, float(seats - place), place, 0) for seat, place in enumerate(table_places)
            )
        _flush(db, chunk_games, chunk_seats)
    db.execute("COMMIT")
    for _, sql in indexes:
        db.execute(sql)
    db.execute("PRAGMA journal_mode=WAL")
    db.close()


def _tables(rng: np.random.Generator, count: int, seats: int) -> np.ndarray:
    """`count` tables of `seats` distinct bots, drawn uniformly (rows with a bot twice are drawn again)."""
    tables = rng.integers(0, BOTS, (count, seats))
    while True:
        ordered = np.sort(tables, axis=1)
        twice = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if not len(twice):
            return tables
        tables[twice] = rng.integers(0, BOTS, (len(twice), seats))


def _flush(db: sqlite3.Connection, games: list, seats: list) -> None:
    db.executemany(
        "INSERT INTO games (key, round, table_no, rotation, deal, seed, bots, status, finished_at, duration_s, "
        "game, rules, rules_version, seq) VALUES (?, ?, ?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?)",
        games,
    )
    db.executemany(
        "INSERT INTO seats (game_key, seat, bot, place, score, engine_place, forfeit) VALUES (?, ?, ?, ?, ?, ?, ?)",
        seats,
    )
    games.clear()
    seats.clear()


def _finish(out: Path, games, rng: random.Random) -> list[Any]:
    """Mark a scheduled batch's games done in the store (SQL) and return the results the
    league is told of (what `rated_game` reads of a played game's result)."""
    db = sqlite3.connect(out / "arena.sqlite", isolation_level=None, timeout=30)
    played = []
    db.execute("BEGIN IMMEDIATE")
    for game in games:
        seats = len(game.table)
        places = list(range(1, seats + 1))
        rng.shuffle(places)
        db.execute("UPDATE games SET status = 'done', finished_at = '2026-12-02T00:00:00+00:00', duration_s = 60.0, "
                   "game = ?, rules_version = '1' WHERE key = ?", (GAME, game.key))
        db.executemany(
            "INSERT INTO seats (game_key, seat, bot, place, score, engine_place, forfeit) VALUES (?, ?, ?, ?, ?, ?, 0)",
            [(game.key, seat, bot, places[seat], float(seats - places[seat]), places[seat]) for seat, bot in enumerate(game.table)],
        )
        played.append(SimpleNamespace(result=SimpleNamespace(seats=list(game.table), places=places, forfeits=[])))
    db.execute("COMMIT")
    db.close()
    return played


def measure_size(out: Path, seats: int, site: bool) -> dict[str, Any]:
    """In this process: the league over the store in `out`, one batch, timed."""
    from arena.league.ladder import _League
    from arena.site.writer import render_site

    config = league_config(out, seats)
    began = time.perf_counter()
    store = Store.open(out)
    key = RunKey.of_store(config.seed, store)
    league = _League(config, store, key, None, lambda progress: None, threading.Event(), None, None, False, 1.0)
    opened_s = time.perf_counter() - began
    began = time.perf_counter()
    games = league.schedule_batch()  # the first one rates the whole history (the lag ledger)
    first_schedule_s = time.perf_counter() - began
    rss_mb_opened = peak_rss_mb()  # the league's own peak: opened (its history rated) and scheduled
    first_site_s = first_site_cpu_s = None
    if site:
        began, cpu = time.perf_counter(), time.process_time()
        render_site(out, replays="none")  # the site's state rebuilt: every game rated once more
        first_site_s, first_site_cpu_s = time.perf_counter() - began, time.process_time() - cpu
    rss_mb_first_site = peak_rss_mb()
    played = _finish(out, games, random.Random(SEED))
    began, cpu = time.perf_counter(), time.process_time()
    for game, result in zip(games, played):
        league.game_stored(game, result, False)
    stored_s, stored_cpu_s = time.perf_counter() - began, time.process_time() - cpu
    began, cpu = time.perf_counter(), time.process_time()
    league.full.confidence()
    confidence_s, confidence_cpu_s = time.perf_counter() - began, time.process_time() - cpu
    began, cpu = time.perf_counter(), time.process_time()
    league.full.ratings.posterior()
    sweep_cpu_s = time.process_time() - cpu
    began, cpu = time.perf_counter(), time.process_time()
    league.schedule_batch()
    schedule_s, schedule_cpu_s = time.perf_counter() - began, time.process_time() - cpu
    site_s = site_cpu_s = 0.0
    if site:
        began, cpu = time.perf_counter(), time.process_time()
        render_site(out, replays="none")
        site_s, site_cpu_s = time.perf_counter() - began, time.process_time() - cpu
    done = league.done()
    began = time.perf_counter()
    if store.done_count() != done:  # what done() was before the league counted them itself
        raise SystemExit(f"the league counts {done} games, the store {store.done_count()}")
    count_s = time.perf_counter() - began
    began, cpu = time.perf_counter(), time.process_time()
    league._save()  # what the league does after a batch at most once a minute (SAVE_S)
    save_s, save_cpu_s = time.perf_counter() - began, time.process_time() - cpu
    store.close()
    began = time.perf_counter()  # a resume from that saved state: only the batch after it is rated
    store = Store.open(out)
    again = _League(config, store, key, None, lambda progress: None, threading.Event(), None, None, False, 1.0)
    reopen_s = time.perf_counter() - began
    resumed_from = again.resumed_from
    store.close()
    return {
        "games": done,
        "open_s": round(opened_s, 3),
        "first_schedule_s": round(first_schedule_s, 3),
        "first_site_s": None if first_site_s is None else round(first_site_s, 2),
        "first_site_cpu_s": None if first_site_cpu_s is None else round(first_site_cpu_s, 2),
        "rss_mb_opened": rss_mb_opened,
        "rss_mb_first_site": rss_mb_first_site,
        "stored_s": round(stored_s, 4),
        "stored_cpu_s": round(stored_cpu_s, 4),
        "confidence_s": round(confidence_s, 4),
        "confidence_cpu_s": round(confidence_cpu_s, 4),
        "sweep_cpu_s": round(sweep_cpu_s, 4),
        "schedule_s": round(schedule_s, 4),
        "site_s": round(site_s, 3),
        "site_cpu_s": round(site_cpu_s, 3),
        "schedule_cpu_s": round(schedule_cpu_s, 4),
        "after_batch_s": round(stored_s + schedule_s + site_s, 3),
        "after_batch_cpu_s": round(stored_cpu_s + schedule_cpu_s + site_cpu_s, 3),
        "count_s": round(count_s, 3),
        "save_s": round(save_s, 3),
        "save_cpu_s": round(save_cpu_s, 3),
        "reopen_s": round(reopen_s, 3),
        "reopened_from_batch": resumed_from,
        "rss_mb": peak_rss_mb(),
        "ru_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def peak_rss_mb() -> float:
    """This process's own peak resident memory: VmHWM, the high-water mark of its memory
    map. Not ru_maxrss: Linux carries into it, at exec, the peak of the memory map the
    process was started from (the parent's, which built the store: 490 MB at 1M games)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_size(games: int, seats: int, site: bool, keep: Path | None, window: int | None) -> dict[str, Any]:
    """Build the store of `games` games and measure it in a child process."""
    where = Path(tempfile.mkdtemp(prefix=f"league-scale-{games}-", dir=keep))
    try:
        began = time.perf_counter()
        build_store(where, games, seats)
        build_s = time.perf_counter() - began
        child = subprocess.run(
            [sys.executable, "-m", "bench.league_scale", "--measure", str(where), "--seats", str(seats)] + ([] if site else ["--no-site"])
            + ([] if window is None else ["--window", str(window)]),
            capture_output=True, text=True, cwd=ROOT,
        )
        if child.returncode:
            raise SystemExit(f"measuring {games} games failed:\n{child.stderr}")
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        figures["build_s"] = round(build_s, 1)
        return figures
    finally:
        if keep is None:
            shutil.rmtree(where, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="one league of 2,000 games")
    parser.add_argument("--million", action="store_true", help="also 1M games (long: minutes to build, GBs of site)")
    parser.add_argument("--sizes", help="comma-separated game counts instead of 10000,100000")
    parser.add_argument("--seats", type=int, default=4, choices=(2, 3, 4), help="seats per game (default 4)")
    parser.add_argument("--no-site", action="store_true", help="do not render the site (no site_s)")
    parser.add_argument("--replay-games", type=int, default=1, help="Three Thirteen games for the replay ratio (0: skip)")
    parser.add_argument("--window", type=int, metavar="UPDATES",
                        help="the confidence sweep's window (default arena's own; 1000000000: every update, as before issue 27)")
    parser.add_argument("--keep", type=Path, help="build the stores under this folder and keep them")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.million, args.replay_games = "2000", False, 0
    run = harness.Run()
    if args.window is not None:
        from arena.ratings import confidence

        confidence.WINDOW = args.window
    if args.measure is not None:
        print(json.dumps(measure_size(args.measure, args.seats, not args.no_site)))
        return
    sizes = [int(size) for size in args.sizes.split(",")] if args.sizes else list(SIZES)
    if args.million:
        sizes.append(MILLION)
    per_size = {}
    for games in sizes:
        per_size[games] = run_size(games, args.seats, not args.no_site, args.keep, args.window)
        if not args.json:
            print(f"{games:>9,} games: {json.dumps(per_size[games])}", flush=True)
    from arena.ratings import confidence

    report: dict[str, Any] = {"window": confidence.WINDOW, "bots": BOTS, "seats": args.seats, "batch_games": BATCH, "sizes": per_size}
    report["after_batch_s"] = {str(games): figures["after_batch_s"] for games, figures in per_size.items()}
    if 10_000 in per_size and MILLION in per_size:
        report["after_batch_1m_over_10k"] = round(per_size[MILLION]["after_batch_s"] / per_size[10_000]["after_batch_s"], 2)
        report["after_batch_cpu_1m_over_10k"] = round(
            per_size[MILLION]["after_batch_cpu_s"] / per_size[10_000]["after_batch_cpu_s"], 2
        )
    if 100_000 in per_size and not args.no_site:
        report["site_update_s_100k"] = per_size[100_000]["site_s"]
    if MILLION in per_size:
        report["rss_mb_1m"] = per_size[MILLION]["rss_mb"]
    if args.replay_games:
        from bench import replay_size

        report["tt_replay_bytes_ratio"] = replay_size.measure(args.replay_games, repeat=1)["tt_replay_bytes_ratio"]

    def show(report: dict) -> None:
        for name in ("after_batch_s", "after_batch_1m_over_10k", "site_update_s_100k", "rss_mb_1m", "tt_replay_bytes_ratio"):
            if name in report:
                print(f"{name}: {report[name]}")

    run.finish(args, report, show)


if __name__ == "__main__":
    main()
