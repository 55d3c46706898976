"""Benchmark of the HTML report: a big synthetic store rendered into the site, and the cost
of replays of real games.

    python -m bench.report                 # 1,000 bots, 100,000 four-seat games
    python -m bench.report --json          # one JSON object
    python -m bench.report --bots 100 --games 5000 --keep /tmp/store   # smaller; keep the folder

1. A synthetic store (the real `arena.store.db` schema, bulk-loaded in one transaction):
   rounds of 250 four-seat tables, every bot once per round, places drawn from a
   per-bot strength plus noise (so ratings spread out), an empty replay per game.
   Loading it is not timed as part of the render.
2. The render (`load_site_data` + `write_site` with `replays="none"`), timed in parts:
   reading the store, the rating pass (TrueSkill, schedule order), writing the pages.
   Target: <= 60 s in all, and no page larger than 1 MB. Then the same render again:
   the rating pass resumes from the JSON cache the first one left beside the store.
3. Replays are rendered once per game and kept, so they are measured apart on real
   games between random players (4 seats, default rules): time per game, largest file.
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import sqlite3
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

from arena.game.record import GameResult, Replay, ReplayAction
from arena.schedule.formats import ScheduledGame
from arena.site.model import load_site_data
from arena.site.replay import replay_frames, script_text
from arena.site.writer import write_site
from arena.store.db import STORE_FILE, Store
from bench import harness
from engine.players import play_random_game

SEATS = 4


def build_store(folder: Path, bots: int, games: int, seed: int = 1) -> float:
    """Write a synthetic tournament store into `folder`; returns the seconds it took."""
    began = time.perf_counter()
    rng = random.Random(seed)
    names = [f"bot-{i:04d}" for i in range(bots)]
    strength = {name: rng.gauss(0, 1) for name in names}
    with Store.open(folder, create=True) as store:
        store.save_settings(
            {"name": f"synthetic {bots} bots", "game": "3up3down", "seats": SEATS, "format": "round-robin",
             "duplicate": False, "rules": {}, "seed": seed},
            "synthetic",
        )
    empty_replay = zlib.compress(Replay(actions=[], events=[]).model_dump_json().encode())
    db = sqlite3.connect(folder / STORE_FILE)
    db.execute("PRAGMA synchronous=OFF")
    with db:
        db.executemany(
            "INSERT INTO bots (bot, name, version, content_hash, folder, kind) VALUES (?, ?, ?, ?, ?, 'folder')",
            [(n, n, "1.0", f"{i:064x}", f"/bots/{n}") for i, n in enumerate(names)],
        )
        tables_per_round = bots // SEATS
        made = 0
        round_no = 0
        while made < games:
            round_no += 1
            order = names[:]
            rng.shuffle(order)
            for table_no in range(1, tables_per_round + 1):
                if made == games:
                    break
                table = tuple(order[(table_no - 1) * SEATS : table_no * SEATS])
                game = ScheduledGame(round_no, table_no, 0, table, rng.getrandbits(62))
                db.execute(
                    "INSERT INTO games (key, round, table_no, rotation, deal, seed, bots, status, finished_at, "
                    "duration_s, game, rules) VALUES (?, ?, ?, 0, ?, ?, ?, 'done', '2026-11-29T12:00:00+00:00', "
                    "0.5, '3up3down', '{}')",
                    (game.key, round_no, table_no, game.deal, game.seed, json.dumps(list(table))),
                )
                noisy = sorted(table, key=lambda name: -(strength[name] + rng.gauss(0, 1.5)))
                place = {name: index + 1 for index, name in enumerate(noisy)}
                db.executemany(
                    "INSERT INTO seats (game_key, seat, bot, place, score, engine_place, forfeit) VALUES (?, ?, ?, ?, ?, ?, 0)",
                    [(game.key, seat, name, place[name], place[name] - 1, place[name]) for seat, name in enumerate(table)],
                )
                db.execute("INSERT INTO replays (game_key, encoding, data) VALUES (?, 'json+zlib', ?)", (game.key, empty_replay))
                if rng.random() < 0.01:  # a few incidents, so bot pages show some
                    db.execute(
                        "INSERT INTO incidents (game_key, seat, bot, reason, detail, decision, forfeit, log_tail) "
                        "VALUES (?, 0, ?, 'TIMEOUT', 'no answer within 1.0 s', 17, 1, '')",
                        (game.key, table[0]),
                    )
                made += 1
    db.close()
    return time.perf_counter() - began


def _cpu() -> float:
    """CPU seconds of this process and of its finished child processes."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def render(folder: Path) -> dict:
    """Render the site of the store in `folder` as `render_site` does (the rating pass in a
    second process while the game pages are written), without replays; times and sizes."""
    began = time.perf_counter()
    cpu_began = _cpu()
    data = load_site_data(folder, background=True)
    loaded = time.perf_counter()
    site = folder / "site"
    counts = write_site(data, site, replays="none")
    written = time.perf_counter()
    cpu = _cpu() - cpu_began
    largest, largest_path, files, total = 0, "", 0, 0
    for path in site.rglob("*"):
        if path.is_file():
            size = path.stat().st_size
            files += 1
            total += size
            if path.suffix == ".html" and size > largest:
                largest, largest_path = size, str(path.relative_to(site))
    return {
        "bots": len(data.bots),
        "games": len(data.games),
        "pages": counts["pages"],
        "load_s": round(loaded - began, 2),
        "write_pages_s": round(written - loaded, 2),
        "render_s": round(written - began, 2),
        "render_cpu_s": round(cpu, 2),  # this process and its workers: what the render costs on an idle machine
        "largest_page_bytes": largest,
        "largest_page": largest_path,
        "site_files": files,
        "site_mb": round(total / 1e6, 1),
    }


def rating_pass_s(folder: Path) -> float:
    """The TrueSkill pass alone (in the render it runs beside the game pages)."""
    from arena.site.model import rate

    data = load_site_data(folder, background=True)
    data.ratings_ready()
    began = time.perf_counter()
    rate(data.games, [bot.bot for bot in data.bots], data.settings)
    return round(time.perf_counter() - began, 2)


def game_lists(folder: Path) -> dict:
    """The bots' full game lists alone (in the render they are part of the pages): each
    game's rating and rank change for every seat, made game by game into the site's state
    (`arena.site.state`, rebuilt from scratch here), then one data script per bot."""
    from arena.site.state import SiteState
    from arena.site.writer import _write_game_data
    from arena.store.db import Store

    with Store.open(folder) as store:
        state = SiteState(folder, store, full=True)
        try:
            began = time.perf_counter()
            state.refresh()
            moved = time.perf_counter()
            bots = sorted(line.bot for line in state.ledger.table().standings)
            _write_game_data(folder / "site", state, bots, bots, every=True)
            written = time.perf_counter()
        finally:
            state.close()
    sizes = [path.stat().st_size for path in (folder / "site" / "data" / "bots").rglob("*.js")]
    return {
        "rating_moves_s": round(moved - began, 2),
        "data_scripts_s": round(written - moved, 2),
        "bot_script_largest_bytes": max(sizes),
        "bot_scripts_mb": round(sum(sizes) / 1e6, 1),
    }


def replay_costs(samples: dict[str, int]) -> dict:
    """Replay data of real random games: ms per game and the largest script, per game."""
    out = {}
    for game, count in samples.items():
        times, sizes, actions = [], [], []
        for seed in range(1, count + 1):
            state = play_random_game(game, SEATS, {}, seed)
            result = GameResult(
                game=game, seed=seed, rules=state.options, seats=[f"b{i}" for i in range(SEATS)],
                places=state.places(), scores=[float(s) for s in state.scores()], engine_places=state.places(),
                forfeits=[], incidents=[],
                replay=Replay(actions=[ReplayAction(seat=s, action=a, by="bot") for s, a in state.history], events=[]),
            )
            began = time.perf_counter()
            text = script_text(replay_frames(result), "k")
            times.append(time.perf_counter() - began)
            sizes.append(len(text.encode()))
            actions.append(len(state.history))
        out[game] = {
            "games": count,
            "ms_per_game": round(1000 * sum(times) / count, 1),
            "mean_actions": round(sum(actions) / count),
            "mean_bytes": round(sum(sizes) / count),
            "largest_bytes": max(sizes),
        }
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = harness.parser(__doc__, quick="40 bots, 400 games, 2 replay games")
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--replay-games", type=int, default=20, help="real 3up3down games for the replay figure (Three Thirteen: a quarter)")
    parser.add_argument("--keep", type=Path, help="build the store here and keep it (default: a temporary folder)")
    args = parser.parse_args(argv)
    if args.quick:
        args.bots, args.games, args.replay_games = 40, 400, 2
    run = harness.Run()
    if args.bots < SEATS or args.games < 1:
        parser.error(f"--bots must be at least {SEATS} and --games at least 1")

    folder = args.keep or Path(tempfile.mkdtemp(prefix="arena-bench-report-"))
    if folder.exists():
        shutil.rmtree(folder)
    try:
        build_s = build_store(folder, args.bots, args.games)
        figures = {"build_store_s": round(build_s, 1), **render(folder)}
        # Again, as after more games: the rating pass resumes from the cache the first render
        # left (here nothing new), every page is written again.
        figures["render_again_s"] = render(folder)["render_s"]
        figures["rating_pass_s"] = rating_pass_s(folder)
        figures["game_lists"] = game_lists(folder)
        figures["target_render_s"] = 60
        figures["target_page_bytes"] = 1_000_000
        figures["ok"] = figures["render_s"] <= 60 and figures["largest_page_bytes"] <= 1_000_000
        figures["ok_again"] = figures["render_again_s"] <= 60
        figures["replays"] = replay_costs({"3up3down": args.replay_games, "three-thirteen": max(1, args.replay_games // 4)})
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    def show(figures: dict) -> None:
        print(f"synthetic store: {figures['bots']:,} bots, {figures['games']:,} games (built in {figures['build_store_s']} s)")
        print(f"render: {figures['render_s']} s  (reading the store {figures['load_s']} s; pages {figures['write_pages_s']} s, "
              f"while the TrueSkill pass, {figures['rating_pass_s']} s alone, runs beside them)  target <= 60 s")
        print(f"render CPU time: {figures['render_cpu_s']} s (all processes; the wall time above is on a shared machine)")
        print(f"render again (ratings resumed from the last render's cache): {figures['render_again_s']} s")
        print(f"pages: {figures['pages']:,}; largest {figures['largest_page_bytes']:,} bytes ({figures['largest_page']}), "
              f"target <= 1,000,000; site {figures['site_files']:,} files, {figures['site_mb']} MB")
        lists = figures["game_lists"]
        print(f"bots' full game lists: the site's state rebuilt (each game's rating and rank change) {lists['rating_moves_s']} s, "
              f"one data script per bot {lists['data_scripts_s']} s ({lists['bot_scripts_mb']} MB, "
              f"largest {lists['bot_script_largest_bytes']:,} bytes)")
        for game, cost in figures["replays"].items():
            print(f"replay {game}: {cost['ms_per_game']} ms per game ({cost['mean_actions']} actions), "
                  f"{cost['mean_bytes']:,} bytes on average, largest {cost['largest_bytes']:,} ({cost['games']} random 4-seat games)")
        print("OK" if figures["ok"] else "TARGET MISSED")


    run.finish(args, figures, show)

if __name__ == "__main__":
    main()
