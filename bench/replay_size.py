"""Benchmark of a replay file: its bytes and its write time, today's writer against the
writer before issue 27 (kept here, and only here, to measure against).

    python -m bench.replay_size               # 4 Three Thirteen and 8 3UP 3DOWN games
    python -m bench.replay_size --games 2     # 2 of each game; --json for one object

Each game is a real one: random players at 4 seats, default rules, seeds 1..N, with the
per-decision facts the referee records for a bot (a think time, the number of legal
actions, no stderr). Both writers re-simulate the stored game and produce the replay
script (`replays/<key>.r<N>.js`) the site writes; the time is the wall time of that (one
process, best of `--repeat`), the bytes the script's. The old writer is the code of
arena/site/replay.py before this change: every step asked every seat's observation, the
data went out as plain JSON. Each new file is read back and checked equal to the old
data (the viewer draws the same replay).

`measure(games)` returns the figures; bench/league_scale.py quotes its
`tt_replay_bytes_ratio` (new bytes / old bytes for Three Thirteen; target <= 0.25).
Target for the write time: <= 0.25 of the old one too (`tt_replay_time_ratio`).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from typing import Any

from arena.game.record import GameResult, Replay, ReplayAction
from arena.site.replay import (
    LEGAL_SHOWN,
    ReplayUnavailable,
    _collect_cards,
    _faults,
    _script_json,
    _tables,
    diff,
    mask,
    read_script,
    replay_frames,
    script_text,
)
from bench import harness
from engine.api import GameError
from engine.players import play_random_game
from engine.registry import get_game

SEATS = 4
TARGET = 0.25


# --- the writer before issue 27 (arena/site/replay.py at bc29938), for comparison only ---


def old_replay_frames(result: GameResult) -> dict[str, Any]:
    """The replay data as the old writer built it: every seat's observation at every step."""
    tables = _tables(result.game)
    full_table, seat_table, card_face = tables.full, tables.seat, tables.card_face
    try:
        game = get_game(result.game)
        state = game.new_game(result.players, result.rules, result.seed)
    except GameError as error:
        raise ReplayUnavailable(f"the stored game cannot be set up again: {error}") from None
    players = state.players
    cards: dict[int, list[Any]] = {}
    steps: list[list[Any]] = []
    frames: list[list[Any]] = []
    seen_events = 0
    distinct: dict[str, int] = {}
    legal_steps: list[list[int] | None] = []
    previous_full: dict[str, Any] = {}
    previous_exceptions: list[dict[str, Any]] = [{} for _ in range(players)]

    def snapshot() -> None:
        nonlocal previous_full
        views = [state.observation(seat) for seat in range(players)]
        full = full_table(state, views)
        frame: list[Any] = [diff(previous_full, full)]
        for seat in range(players):
            own = seat_table(views[seat], seat)
            masked = mask(full, seat)
            exceptions = {zone: value for zone, value in own.items() if zone not in masked or masked[zone] != value}
            frame.append(diff(previous_exceptions[seat], exceptions))
            previous_exceptions[seat] = exceptions
        frames.append(frame)
        previous_full = full

    snapshot()
    for step in result.replay.actions:
        options = None
        if step.by == "bot":
            number_of = lambda action: distinct.setdefault(json.dumps(action, sort_keys=True), len(distinct))  # noqa: E731
            options = [number_of(step.action), *(number_of(a) for a in state.legal_actions()[:LEGAL_SHOWN])]
        legal_steps.append(options)
        state.apply(step.action)
        public = state.events(None)
        fresh = _collect_cards(public[seen_events:], card_face, cards)
        seen_events = len(public)
        if fresh and fresh[0].get("type") == step.action.get("type") and set(fresh[0]) <= {"type", "seat", "source", "card"}:
            fresh = fresh[1:]
        entry: list[Any] = [step.seat, step.action]
        if fresh or step.by != "bot":
            entry.append(fresh)
        if step.by != "bot":
            entry.append(step.by)
        steps.append(entry)
        snapshot()
    deal_cards: dict[int, list[Any]] = {}
    _collect_cards(state.spectator_view(), card_face, deal_cards)
    _collect_cards(state.full_events(), card_face, deal_cards)
    deal_cards.update(cards)
    decisions = [
        None if step.think_s is None and step.legal is None and step.stderr is None
        else [step.think_s, step.legal, step.stderr]
        for step in result.replay.actions
    ]
    return {
        "format": 3, "game": result.game, "rules": result.rules, "rules_version": result.rules_version,
        "seed": result.seed, "players": players, "seats": list(result.seats), "places": list(result.places),
        "scores": list(result.scores), "forfeits": list(result.forfeits),
        "decisions": decisions if any(decisions) else None,
        "actions": [json.loads(text) for text in distinct],
        "legal": legal_steps if distinct else None,
        "faults": _faults(result),
        "cards": {str(card_id): face for card_id, face in sorted(deal_cards.items())},
        "steps": steps, "frames": frames,
    }


def old_script_text(data: dict[str, Any], key: str) -> str:
    """The old replay script: the data as plain JSON."""
    return f"window.ARENA_REPLAYS=window.ARENA_REPLAYS||{{}};window.ARENA_REPLAYS[{_script_json(key)}]={_script_json(data)};\n"


# --- the measure ---------------------------------------------------------------------------


def real_game(game: str, seed: int) -> GameResult:
    """A finished random game at 4 seats as the store keeps it, with each decision's facts."""
    state = play_random_game(game, SEATS, {}, seed)
    replayed = get_game(game).new_game(SEATS, state.options, seed)
    rng = random.Random(seed)
    actions = []
    for seat, action in state.history:
        legal = len(replayed.legal_actions())
        replayed.apply(action)
        think = round(rng.lognormvariate(-6.5, 0.7), 6)  # about 1.5 ms, as a quick bot's
        actions.append(ReplayAction(seat=seat, action=action, by="bot", think_s=think, legal=legal, stderr=None))
    return GameResult(
        game=game, seed=seed, rules=state.options, rules_version=get_game(game).rules_version,
        seats=[f"bot-{i}" for i in range(SEATS)], places=state.places(), scores=[float(s) for s in state.scores()],
        engine_places=state.places(), forfeits=[False] * SEATS, incidents=[],
        replay=Replay(actions=actions, events=[]),
    )


def _best(write, result: GameResult, repeat: int) -> tuple[float, str]:
    best, text = float("inf"), ""
    for _ in range(repeat):
        began = time.perf_counter()
        text = write(result)
        best = min(best, time.perf_counter() - began)
    return best, text


def measure_game(game: str, count: int, repeat: int = 2) -> dict[str, Any]:
    """Old and new bytes and write times over `count` real games of `game`."""
    old_bytes = new_bytes = 0
    old_s = new_s = 0.0
    actions = largest = 0
    for seed in range(1, count + 1):
        result = real_game(game, seed)
        spent_old, old_text = _best(lambda r: old_script_text(old_replay_frames(r), "k"), result, repeat)
        spent_new, new_text = _best(lambda r: script_text(replay_frames(r), "k"), result, repeat)
        old = old_replay_frames(result)
        new = read_script(new_text)
        if {**old, "format": None} != {**new, "format": None}:
            raise AssertionError(f"{game} seed {seed}: the new replay's data differs from the old one's")
        old_bytes += len(old_text.encode())
        new_bytes += len(new_text.encode())
        largest = max(largest, len(new_text.encode()))
        old_s += spent_old
        new_s += spent_new
        actions += len(result.replay.actions)
    return {
        "games": count,
        "mean_actions": round(actions / count),
        "old_bytes": round(old_bytes / count),
        "new_bytes": round(new_bytes / count),
        "new_largest_bytes": largest,
        "bytes_ratio": round(new_bytes / old_bytes, 3),
        "old_ms": round(1000 * old_s / count, 1),
        "new_ms": round(1000 * new_s / count, 1),
        "time_ratio": round(new_s / old_s, 3),
    }


def measure(games: int = 4, repeat: int = 2) -> dict[str, Any]:
    """The figures: per game (Three Thirteen: `games` games; 3UP 3DOWN: twice as many), and
    the Three Thirteen ratios under their keys."""
    tt = measure_game("three-thirteen", games, repeat)
    up = measure_game("3up3down", 2 * games, repeat)
    return {
        "three-thirteen": tt,
        "3up3down": up,
        "tt_replay_bytes_ratio": tt["bytes_ratio"],
        "tt_replay_time_ratio": tt["time_ratio"],
        "target_ratio": TARGET,
        "ok": tt["bytes_ratio"] <= TARGET and tt["time_ratio"] <= TARGET,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = harness.parser(__doc__, quick="1 game of each, written once")
    parser.add_argument("--games", type=int, default=4, help="Three Thirteen games (3UP 3DOWN: twice as many)")
    parser.add_argument("--repeat", type=int, default=2, help="writes of each game per writer; the best counts")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.repeat = 1, 1
    run = harness.Run()
    if args.games < 1 or args.repeat < 1:
        parser.error("--games and --repeat must be at least 1")
    figures = measure(args.games, args.repeat)
    def show(figures: dict) -> None:
        for game in ("three-thirteen", "3up3down"):
            f = figures[game]
            print(f"{game}: {f['games']} random 4-seat games, {f['mean_actions']:,} actions on average")
            print(f"  bytes: {f['old_bytes']:,} -> {f['new_bytes']:,} ({f['bytes_ratio']}x; "
                  f"largest {f['new_largest_bytes']:,})")
            print(f"  write: {f['old_ms']} ms -> {f['new_ms']} ms ({f['time_ratio']}x)")
        print(f"tt_replay_bytes_ratio {figures['tt_replay_bytes_ratio']}, tt_replay_time_ratio "
              f"{figures['tt_replay_time_ratio']} (target <= {TARGET})")
        print("OK" if figures["ok"] else "TARGET MISSED")


    run.finish(args, figures, show)

if __name__ == "__main__":
    main()
