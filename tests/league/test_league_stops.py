"""A league resumes from any stop: stopped while a replaced version's scheduled games are
unplayed (Ctrl-C, kill -9), it plays them on resume as the league that never stopped
would, and a store left mid-change (a bot removed but its games not yet dropped) resumes
too. The kill test stops a league with SIGKILL at random moments, some right after a new
version joins, and checks that every resume works and nothing is lost or stored twice."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from arena.league.ladder import LeagueConfig, LeagueInterrupted, run_league
from arena.store.db import Store, StoreError

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random"
SHORT = {"max_turns": 12}
LIMITS = {"startup_s": 60.0, "decision_s": 20.0, "time_bank_s": 60.0}


def put(registry: Path, name: str, version: str = "1.0") -> Path:
    """The random bot as NAME/VERSION in the registry (as `arena submit` lays it out)."""
    folder = registry / name / version
    shutil.copytree(RANDOM, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "{version}"\ncommand = ["python3", "bot.py"]\ngames = ["3up3down"]\n'
    )
    return folder


def config(out: Path, registry: Path, **settings) -> LeagueConfig:
    data = {
        "game": "3up3down", "seats": 2, "seed": 5, "rules": SHORT, "limits": LIMITS, "output": str(out),
        "registry": str(registry), "jobs": 1, "batch": 4,
    }
    data.update(settings)
    return LeagueConfig(**data)


def unplayed(out: Path) -> list[tuple[str, ...]]:
    with Store.open(out) as store:
        return [game.bots for game in store.games(status="scheduled")]


def test_a_league_stopped_with_a_replaced_versions_games_unplayed_resumes_and_plays_them(tmp_path):
    registry, out = stopped_with_vb_10_unplayed(tmp_path)  # asserts vb@1.0's games unplayed: the point of the test
    outcome = run_league(config(out, registry, games=12), report=False)
    assert outcome.done == 12 and not unplayed(out)
    with Store.open(out) as store:
        members = {m.bot: m for m in store.members()}
        old = [g for g in store.games() if "vb@1.0" in g.bots]
    assert members["vb@1.0"].status == "retired" and members["vb@1.0"].left_at == 2
    assert old and all(g.round == 1 and g.status == "done" for g in old)


def stopped_with_vb_10_unplayed(tmp_path: Path) -> tuple[Path, Path]:
    """A league stopped with batch 1 scheduled and unplayed (vb@1.0 in it), vb 2.0 joined."""
    registry = tmp_path / "registry"
    for name in ("va", "vb", "vc"):
        put(registry, name)
    out = tmp_path / "league"
    stop = threading.Event()

    def replace_and_stop(batch: int) -> None:
        if batch == 2:  # batch 1 is scheduled, not played: vb 2.0 retires vb 1.0 from batch 2
            put(registry, "vb", "2.0")
            stop.set()

    try:
        run_league(config(out, registry), before_batch=replace_and_stop, stop=stop, report=False)
    except LeagueInterrupted:
        pass
    assert any("vb@1.0" in bots for bots in unplayed(out))
    return registry, out


def test_a_replaced_version_whose_folder_is_gone_has_its_unplayed_games_dropped(tmp_path):
    registry, out = stopped_with_vb_10_unplayed(tmp_path)
    with Store.open(out) as store:
        played = {g.key for g in store.games(status="done") if "vb@1.0" in g.bots}
    shutil.rmtree(registry / "vb" / "1.0")
    outcome = run_league(config(out, registry, games=12), report=False)
    assert not unplayed(out)
    with Store.open(out) as store:
        assert {g.key for g in store.games() if "vb@1.0" in g.bots} == played
        assert outcome.done == len(store.done_keys())


def test_a_league_stopped_between_a_removal_and_the_drop_of_its_games_resumes(tmp_path):
    """A kill between the two writes of a removal (the member row, then its games)."""
    registry, out = stopped_with_vb_10_unplayed(tmp_path)
    shutil.rmtree(registry / "vc")
    with Store.open(out) as store:
        store.set_member("vc@1.0", "removed", 2, "no longer in the registry")
    assert any("vc@1.0" in bots for bots in unplayed(out))
    run_league(config(out, registry, games=12), report=False)
    assert not unplayed(out)
    with Store.open(out) as store:
        assert all(g.status == "done" for g in store.games())
        assert all("vc@1.0" not in g.bots for g in store.games() if g.round >= 2)


# ----------------------------------------------------------------------------- the kill test

KILLS = 10


def snapshot(out: Path) -> dict[str, tuple]:
    """Every game of the league: key -> (seq, bots, seed, status, places, scores)."""
    with Store.open(out) as store:
        seats: dict[str, list] = {}
        for seat in store.seats():
            seats.setdefault(seat.game_key, []).append((seat.seat, seat.place, seat.score))
        return {
            g.key: (g.seq, g.bots, g.seed, g.status, tuple(seats.get(g.key, ()))) for g in store.games()
        }


def members_now(out: Path) -> dict:
    try:
        with Store.open(out) as store:
            return {m.bot: m for m in store.members()}
    except StoreError:  # the file exists a moment before its tables do
        return {}


def done_now(out: Path) -> int:
    try:
        with Store.open(out) as store:
            return len(store.done_keys())
    except StoreError:
        return 0


def check_sound(out: Path, before: dict[str, tuple]) -> dict[str, tuple]:
    """Nothing stored before is lost or changed, no game is stored twice, the schedule's
    numbers run 1, 2, 3, ... without a gap."""
    now = snapshot(out)
    for key, game in before.items():
        if game[3] == "done":
            assert now.get(key) == game, f"game {key} changed or went"
    assert sorted(game[0] for game in now.values()) == list(range(1, len(now) + 1))
    for key, (_, bots, _, status, seats) in now.items():
        assert len(seats) == (len(bots) if status == "done" else 0), f"game {key} seats {seats}"
    return now


def test_a_league_killed_at_random_moments_resumes_every_time_and_loses_nothing(tmp_path):
    """Ten kill -9s: half at a random moment, half right after a new version joins (its
    predecessor's games then still to play). Each resume plays on; nothing stored is lost
    or stored twice; the league then ends as an uninterrupted one fed the same versions
    before the same batches ends, game for game."""
    registry = tmp_path / "registry"
    for name in ("va", "vb", "vc"):
        put(registry, name)
    out = tmp_path / "league"
    command = [
        sys.executable, "-m", "arena", "league", str(out), "--game", "3up3down", "--seats", "2",
        "--registry", str(registry), "--seed", "5", "--rule", "max_turns=12", "--jobs", "2",
        "--startup-s", "60", "--decision-s", "20", "--time-bank-s", "60",
    ]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    rng = random.Random(35)
    before: dict[str, tuple] = {}
    versions = 1
    for stop in range(KILLS):
        league = subprocess.Popen(
            command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        try:
            played = done_now(out)
            deadline = time.monotonic() + 60
            if stop % 2:  # right after a new version joins
                versions += 1
                bot = rng.choice(("va", "vb", "vc"))
                new = f"{bot}@{versions}.0"
                put(tmp_path / "incoming", bot, f"{versions}.0").rename(registry / bot / f"{versions}.0")
                while new not in members_now(out):
                    assert league.poll() is None and time.monotonic() < deadline, league.stderr.read().decode()
                    time.sleep(0.005)
            else:  # after a game or two more, at a random moment
                while done_now(out) <= played:
                    assert league.poll() is None and time.monotonic() < deadline, league.stderr.read().decode()
                    time.sleep(0.02)
                time.sleep(rng.uniform(0, 0.5))
            assert league.poll() is None, league.stderr.read().decode()
            league.send_signal(signal.SIGKILL)
            league.wait()
        finally:
            if league.poll() is None:
                league.kill()
                league.wait()
            try:
                os.killpg(league.pid, signal.SIGKILL)  # its bots, as systemd would
            except ProcessLookupError:
                pass
            league.stderr.close()
        before = check_sound(out, before)
    games = max(game[0] for game in before.values()) + 4
    resumed = subprocess.run([*command, "--games", str(games)], env=environment, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = check_sound(out, before)
    assert len(after) == games and all(game[3] == "done" for game in after.values())

    # The same league uninterrupted, each version put in before the batch it joined.
    members = members_now(out)
    again_registry = tmp_path / "again-registry"
    arrivals: dict[int, list[Path]] = {}
    # A version that joined and was replaced before its first batch (a stop right after it
    # joined, then the next version put in before the resume scheduled that batch) never
    # played; an uninterrupted league given both before the batch sees only the newer one.
    unplayed_versions = {bot for bot, m in members.items() if m.left_at == m.joined and m.status == "retired"}
    assert not any(set(bots) & unplayed_versions for _, bots, *_ in after.values())
    members = {bot: m for bot, m in members.items() if bot not in unplayed_versions}
    for member in members.values():
        name, version = member.bot.split("@")
        folder = registry / name / version
        if member.joined == 1:
            shutil.copytree(folder, again_registry / name / version)
        else:
            arrivals.setdefault(member.joined, []).append(folder)

    def submit_at(batch: int) -> None:
        for folder in arrivals.pop(batch, []):
            shutil.copytree(folder, again_registry / folder.relative_to(registry))

    again = tmp_path / "again"
    run_league(config(again, again_registry, games=games, batch=None, jobs=2), before_batch=submit_at, report=False)
    assert {m.bot: (m.joined, m.left_at, m.status) for m in members_now(again).values()} == {
        m.bot: (m.joined, m.left_at, m.status) for m in members.values()
    }
    assert snapshot(again) == after
