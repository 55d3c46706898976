"""The incremental site equals a full render (issue 27, part 2): a store is grown batch by
batch (games finishing out of order too: a later game done while an earlier one still
plays), the site is brought up to date after each step from its state beside the store
(`arena.site.state`), and every file of it is compared, byte for byte, with a site
rendered from scratch (`full=True`, a fresh folder) from the same store. For a
round-robin tournament, a Swiss, a duplicate tournament and a league whose bots join
late, one of them a new version that inherits its predecessor's rating."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import arena.site.state as state_module
import arena.site.writer as writer
from arena.config.fingerprint import fingerprint_of, settings_of
from arena.config.league_file import LeagueConfig
from arena.ratings import confidence, standings
from arena.ratings.ledger import RatingLedger
from arena.ratings.results import store_ledger
from arena.site import charts
from arena.site.model import load_site_data
from arena.site.state import STATE_FILE, SiteState
from arena.site.writer import write_site
from arena.store.db import Store
from arena.store.keys import game_key
from arena.store.seeds import RunKey
from tests.report_helpers import build_league, build_tournament

RESULT_TABLES = ("seats", "incidents", "logs", "replays")


class _Frozen(datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 12, 2, 2, 30, tzinfo=UTC)


@pytest.fixture(autouse=True)
def frozen(monkeypatch):
    monkeypatch.setattr(writer, "datetime", _Frozen)
    # The store is read 7 games at a time (2,000 in use): a duplicate deal of 3 rotations
    # falls across a read, the cut before a game still playing too.
    monkeypatch.setattr(state_module, "CHUNK", 7)


def files_of(site: Path) -> dict[str, bytes]:
    return {path.relative_to(site).as_posix(): path.read_bytes() for path in sorted(site.rglob("*")) if path.is_file()}


def done_keys(store_dir: Path) -> list[str]:
    with Store.open(store_dir) as store:
        return [game.key for game in store.games("done")]


def grown(full: Path, into: Path, done: set[str]) -> None:
    """`into`'s store: `full`'s with only the games in `done` finished (the others scheduled,
    their results gone, as before they were played), and a league's members that join
    after the last batch begun left out. Its site and state are kept."""
    into.mkdir(parents=True, exist_ok=True)
    (into / "arena.sqlite").unlink(missing_ok=True)
    for suffix in ("-wal", "-shm"):
        (into / f"arena.sqlite{suffix}").unlink(missing_ok=True)
    source = sqlite3.connect(full / "arena.sqlite")
    target = sqlite3.connect(into / "arena.sqlite")
    source.backup(target)
    source.close()
    for name in ("secret.key",):
        if (full / name).is_file():
            shutil.copy(full / name, into / name)
    undone = [key for (key,) in target.execute("SELECT key FROM games") if key not in done]
    with target:
        for table in RESULT_TABLES:
            target.executemany(f"DELETE FROM {table} WHERE game_key = ?", [(key,) for key in undone])
        target.executemany(
            "UPDATE games SET status = 'scheduled', finished_at = NULL, duration_s = NULL WHERE key = ?",
            [(key,) for key in undone],
        )
        begun = max((int(key.split("-")[0]) for key in done), default=0)
        late = [bot for (bot,) in target.execute("SELECT bot FROM members WHERE joined > ?", (begun + 1,))]
        target.executemany("DELETE FROM members WHERE bot = ?", [(bot,) for bot in late])
        target.executemany("DELETE FROM bots WHERE bot = ?", [(bot,) for bot in late])
    target.close()


def check_steps(full: Path, work: Path, steps: list[set[str]], replays: str = "none") -> None:
    """Grow `work` through `steps` (the finished games at each), rendering incrementally,
    and compare with a fresh full render at each step."""
    for number, done in enumerate(steps):
        grown(full, work / "grow", done)
        counts = write_site(load_site_data(work / "grow"), work / "grow" / "site", replays=replays)
        fresh = work / f"fresh-{number}"
        grown(full, fresh, done)
        write_site(load_site_data(fresh), fresh / "site", replays=replays, full=True)
        incremental, scratch = files_of(work / "grow" / "site"), files_of(fresh / "site")
        assert sorted(incremental) == sorted(scratch), (number, set(incremental) ^ set(scratch))
        differ = [name for name in scratch if incremental[name] != scratch[name]]
        assert differ == [], (number, differ)
        assert counts["games"] == len(done)
        shutil.rmtree(fresh)


def steps_of(keys: list[str], sizes: list[int], out_of_order: bool = True) -> list[set[str]]:
    """The finished games after each step, only growing: the first sizes[i] games, each
    preceded (with `out_of_order`) by a step where the game before the last is still
    playing while the last is done."""
    steps: list[set[str]] = []
    previous = 0
    for size in sizes:
        if out_of_order and size - 2 >= previous:
            steps.append(set(keys[:size]) - {keys[size - 2]})
        steps.append(set(keys[:size]))
        previous = size
    steps.append(set(keys))
    return steps


def test_a_round_robin_grown_game_by_game_equals_a_full_render(tmp_path):
    full = build_league(tmp_path / "full", cycles=6)  # 120 games: two list pages
    keys = done_keys(full)
    check_steps(full, tmp_path, steps_of(keys, [0, 1, 2, 40, 99, 100, 101, 117]))


def test_a_swiss_grown_round_by_round_equals_a_full_render(tmp_path):
    full = build_tournament(tmp_path / "full", format="swiss", rounds=3)
    keys = done_keys(full)
    check_steps(full, tmp_path, steps_of(keys, list(range(0, len(keys))), out_of_order=True))


def test_a_duplicate_tournament_grown_rotation_by_rotation_equals_a_full_render(tmp_path):
    full = build_tournament(tmp_path / "full", duplicate=True, rules={"max_turns": 40})
    keys = done_keys(full)  # 4 deals x 3 rotations: a deal's games are withheld until it is whole
    check_steps(full, tmp_path, steps_of(keys, list(range(0, len(keys))), out_of_order=True), replays="all")


# --- a league, written as a league's store is (members joining at their batch) -------------

BOTS = ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]


def league_store(out: Path, batches: int = 14, tables: int = 3, seats: int = 3) -> Path:
    """A league store: six bots from batch 1, gus from batch 4, hal from batch 6 and ann's
    version 2 (inheriting ann's rating) from batch 8, when ann retires; seeded results,
    an incident and a bot's stderr now and then."""
    config = LeagueConfig(game="3up3down", seats=seats, seed=4, output=str(out), batch=tables, inherit_rating=True)
    settings = settings_of(config)
    with Store.open(out, create=True) as store:
        store.save_settings(settings, fingerprint_of(settings))
        RunKey.of_store(config.seed, store)
    joined = {**dict.fromkeys(BOTS[:6], 1), "gus": 4, "hal": 6, "ann@2": 8}
    rng = random.Random(27)
    db = sqlite3.connect(out / "arena.sqlite", isolation_level=None)
    db.execute("BEGIN")
    for bot, batch in joined.items():
        db.execute("INSERT INTO bots VALUES (?, ?, ?, '', '', 'in-process')", (bot, bot.split("@")[0], "2" if "@" in bot else "1"))
        retired = bot == "ann"
        db.execute(
            "INSERT INTO members VALUES (?, ?, ?, ?, ?, ?)",
            (bot, bot.split("@")[0], batch, 8 if retired else None, "retired" if retired else "active",
             "replaced by ann@2" if retired else ""),
        )
    seq = 0
    for batch in range(1, batches + 1):
        field = [bot for bot, first in joined.items() if first <= batch and not (bot == "ann" and batch >= 8)]
        for table in range(1, tables + 1):
            seq += 1
            key = game_key(batch, table, 0)
            bots = rng.sample(field, seats)
            places = [1, 1, 3] if rng.random() < 0.2 else list(range(1, seats + 1))  # now and then a tie
            rng.shuffle(places)
            db.execute(
                "INSERT INTO games (key, round, table_no, rotation, deal, seed, bots, status, finished_at, duration_s, "
                "game, rules, rules_version, seq) VALUES (?, ?, ?, 0, ?, ?, ?, 'done', '2026-12-02T00:00:00+00:00', "
                "?, '3up3down', '{}', '1', ?)",
                (key, batch, table, key.rsplit("-", 1)[0], seq, json.dumps(bots), 1.5 + seq, seq),
            )
            db.executemany(
                "INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, 0)",
                [(key, seat, bot, places[seat], float(seats - places[seat]), places[seat]) for seat, bot in enumerate(bots)],
            )
            if seq % 7 == 0:
                db.execute(
                    "INSERT INTO incidents (game_key, seat, bot, reason, detail, decision, forfeit, log_tail, request) "
                    "VALUES (?, 1, ?, 'TIMEOUT', 'no answer in 5 s', 3, 1, 'tail', 4)",
                    (key, bots[1]),
                )
                db.execute("UPDATE seats SET forfeit = 1 WHERE game_key = ? AND seat = 1", (key,))
            if seq % 5 == 0:
                db.execute("INSERT INTO logs VALUES (?, 0, ?, ?)", (key, bots[0], f"thinking about game {seq}\n"))
    db.execute("COMMIT")
    db.close()
    return out


def test_a_league_grown_batch_by_batch_equals_a_full_render(tmp_path):
    full = league_store(tmp_path / "full")
    keys = done_keys(full)
    sizes = [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39]  # batch by batch
    check_steps(full, tmp_path, steps_of(keys, sizes))
    # The state is beside the store, and a render with nothing new changes no file.
    grow = tmp_path / "grow"
    assert (grow / STATE_FILE).is_file()
    before = {path: path.stat().st_mtime_ns for path in (grow / "site").rglob("*") if path.is_file()}
    counts = write_site(load_site_data(grow), grow / "site", replays="none")
    assert counts["files_written"] == 0
    assert before == {path: path.stat().st_mtime_ns for path in (grow / "site").rglob("*") if path.is_file()}


def test_a_damaged_or_foreign_state_is_rebuilt_not_trusted(tmp_path):
    full = league_store(tmp_path / "full", batches=6)
    keys = done_keys(full)
    grow = tmp_path / "grow"
    grown(full, grow, set(keys[:9]))
    write_site(load_site_data(grow), grow / "site", replays="none")
    fresh = tmp_path / "fresh"
    grown(full, fresh, set(keys))
    write_site(load_site_data(fresh), fresh / "site", replays="none", full=True)
    expected = files_of(fresh / "site")
    for damage in (b"not a database at all", None):
        grown(full, grow, set(keys[:9]))
        write_site(load_site_data(grow), grow / "site", replays="none")
        if damage is None:  # a state of other settings: its head differs
            with sqlite3.connect(grow / STATE_FILE) as db:
                db.execute("UPDATE meta SET value = '\"other\"' WHERE key = 'head'")
            db.close()
        else:
            (grow / STATE_FILE).write_bytes(damage)
        grown(full, grow, set(keys))
        write_site(load_site_data(grow), grow / "site", replays="none")
        assert files_of(grow / "site") == expected


def test_the_ledger_window_is_rows_appended_and_trimmed_as_a_rebuild_has_them(tmp_path, monkeypatch):
    # A window of 5 updates: every render appends the batch's and drops the oldest.
    monkeypatch.setattr(confidence, "WINDOW", 5)
    full = league_store(tmp_path / "full", batches=6)
    keys = done_keys(full)  # 18 games, an update each
    check_steps(full, tmp_path, steps_of(keys, [0, 3, 4, 9, 12, 15]))
    fresh = tmp_path / "fresh"
    grown(full, fresh, set(keys))
    write_site(load_site_data(fresh), fresh / "site", replays="none", full=True)

    def window(folder: Path) -> tuple[int, list[tuple[Any, ...]]]:
        with sqlite3.connect(folder / STATE_FILE) as db:
            made = json.loads(db.execute("SELECT value FROM meta WHERE key = 'updates_made'").fetchone()[0])
            rows = db.execute("SELECT n, bots, ranks, added FROM updates ORDER BY n").fetchall()
        db.close()
        return made, rows

    made, rows = window(tmp_path / "grow")
    assert made == 18 and [row[0] for row in rows] == [14, 15, 16, 17, 18]
    assert (made, rows) == window(fresh)
    # The newest row is the last game's update: its bots in seat order, one rank and one
    # change of the natural parameters (two doubles) each.
    db = sqlite3.connect(full / "arena.sqlite")
    seated = json.loads(db.execute("SELECT bots FROM games WHERE key = ?", (keys[-1],)).fetchone()[0])
    db.close()
    _, bots, ranks, added = rows[-1]
    assert json.loads(bots) == seated and len(json.loads(ranks)) == len(seated) and len(added) == 16 * len(seated)
    # And the ledger read back from them has the window as the one that made it.
    with Store.open(full) as store:
        ledger = store_ledger(store, record=True)
    assert list(ledger.ratings.updates)[-5:] == list(_loaded_window(tmp_path / "grow"))


def test_the_confidence_is_saved_with_the_state_for_the_next_process(tmp_path, monkeypatch):
    full = league_store(tmp_path / "full", batches=6)
    keys = done_keys(full)
    grow = tmp_path / "grow"
    computed: list[int] = []
    real = RatingLedger.confidence
    monkeypatch.setattr(RatingLedger, "confidence", lambda self: computed.append(1) or real(self))

    def render_in_a_new_process() -> dict[str, bytes]:
        monkeypatch.setattr(standings, "_CONFIDENCES", {})  # nothing computed in this process yet
        write_site(load_site_data(grow), grow / "site", replays="none")
        return files_of(grow / "site")

    grown(full, grow, set(keys[:12]))
    first = render_in_a_new_process()
    assert len(computed) == 1
    assert render_in_a_new_process() == first and len(computed) == 1  # nothing new: the saved one
    grown(full, grow, set(keys[:15]))  # a batch: other ratings, computed once and saved
    after = render_in_a_new_process()
    assert len(computed) == 2 and after != first
    assert render_in_a_new_process() == after and len(computed) == 2
    # A saved confidence made by another method (or damaged) is computed again, not trusted.
    with sqlite3.connect(grow / STATE_FILE) as db:
        key, saved = json.loads(db.execute("SELECT value FROM meta WHERE key = 'confidence'").fetchone()[0])
        db.execute("UPDATE meta SET value = ? WHERE key = 'confidence'", (json.dumps([key, {**saved, "method": "x"}]),))
    db.close()
    assert render_in_a_new_process() == after and len(computed) == 3
    fresh = tmp_path / "fresh"
    grown(full, fresh, set(keys[:15]))
    write_site(load_site_data(fresh), fresh / "site", replays="none", full=True)
    assert files_of(fresh / "site") == after


def test_a_chart_reads_only_the_points_it_draws_and_draws_what_every_point_gives(tmp_path, monkeypatch):
    # Charts of 4 points (300 in use): every bot's is thinned, ann@2's starts at its inherited point.
    monkeypatch.setattr(charts, "CHART_POINTS", 4)
    full = league_store(tmp_path / "full", batches=8)
    keys = done_keys(full)
    check_steps(full, tmp_path, steps_of(keys, [0, 6, 12, 21]))
    with Store.open(tmp_path / "grow") as store:
        state = SiteState(tmp_path / "grow", store)
        try:
            state.refresh()
            drawn = 0  # the bots whose chart is thinned
            for bot in BOTS + ["ann@2"]:
                points = state.db.execute("SELECT games, mu, sigma, cons FROM points WHERE bot = ? ORDER BY i", (bot,)).fetchall()
                chart, links = state.chart(bot)
                assert chart == charts.rating_chart(points, (state.rating.mu, state.rating.sigma)), bot
                games = [point[0] for point in chart["points"]]
                assert len(chart["points"]) <= 5 and links == [keyed(state, bot, n) for n in games]
                drawn += len(points) > 5  # more than it draws
            assert drawn >= 6
            assert state.db.execute("SELECT games FROM points WHERE bot = 'ann@2' AND i = 0").fetchone() == (0,)
        finally:
            state.close()


def keyed(state: SiteState, bot: str, n: int) -> str:
    return state.db.execute("SELECT key FROM rows WHERE bot = ? AND n = ?", (bot, n)).fetchone()[0]


def _loaded_window(folder: Path) -> list[Any]:
    with Store.open(folder) as store:
        state = SiteState(folder, store)
        try:
            return list(state._load_ledger().ratings.updates)
        finally:
            state.close()


def test_a_bots_games_are_scripts_of_a_few_and_a_full_one_is_never_written_again(tmp_path, monkeypatch):
    # 4 games to a data script (1,000 in use): every bot of the league fills several; and
    # 3 rounds (a league's batches) to a script of rounds.
    monkeypatch.setattr(writer, "ROWS_PER_SCRIPT", 4)
    monkeypatch.setattr(writer, "ROUNDS_PER_SCRIPT", 3)
    full = league_store(tmp_path / "full", batches=10)
    keys = done_keys(full)
    steps = steps_of(keys, [0, 3, 6, 9, 12, 18, 24, 27])  # out of order too: a full script rewritten until in order
    check_steps(full, tmp_path, steps)
    grow = tmp_path / "grow"
    scripts = grow / "site" / "data" / "bots"
    site = json.loads((grow / "site" / "data" / "site.js").read_text().split("=", 2)[2].rstrip(";\n"))
    assert site["rows_per_script"] == 4
    for name, slugged, games in site["bots"]:
        files = sorted((scripts / slugged).glob("*.js"), key=lambda path: int(path.stem)) if games else []
        assert [path.name for path in files] == [f"{n}.js" for n in range(1, -(-games // 4) + 1)], name
        rows = [row for path in files for row in json.loads(path.read_text().split("=", 2)[2].rstrip(";\n"))]
        assert len(rows) == games and [len(json.loads(path.read_text().split("=", 2)[2].rstrip(";\n"))) for path in files[:-1]] == [4] * (len(files) - 1)
        with Store.open(full) as store:
            assert [row[0] for row in rows] == [row.key for row in store.games("done") if name in row.bots]
    assert max(games for _, _, games in site["bots"]) > 12  # several full scripts
    # Rounds 1-3, 4-6, 7-9, 10: each with its 3 games, all on list page 1.
    assert site["round_scripts"] == 4 and site["rounds_per_script"] == 3
    rounds = [json.loads((scripts.parent / "rounds" / f"{n}.js").read_text().split("=", 2)[2].rstrip(";\n")) for n in range(1, 5)]
    assert rounds == [[[r, 1, 1, 3] for r in range(first, min(first + 3, 11))] for first in (1, 4, 7, 10)]

    # In order, batch by batch: the scripts written are only those from the one that held
    # each bot's first new game; a script full before the render is not even compared.
    written: list[Path] = []
    real = writer._write_if_changed
    monkeypatch.setattr(writer, "_write_if_changed", lambda path, data: written.append(path) or real(path, data))
    grown(full, grow, set(keys[:21]))  # the store put back: the state rebuilt, every script written
    write_site(load_site_data(grow), grow / "site", replays="none")
    before = {path: json.loads(path.read_text().split("=", 2)[2].rstrip(";\n")) for path in scripts.rglob("*.js")}
    for size in (24, 27, 30):
        written.clear()
        grown(full, grow, set(keys[:size]))
        write_site(load_site_data(grow), grow / "site", replays="none")
        touched = {path for path in written if path.parent.parent == scripts}
        full_before = {path for path, rows in before.items() if len(rows) == 4}
        assert touched and not touched & full_before
        # The rounds: only the script of the last round saved before and that of the new one.
        assert {path.name for path in written if path.parent.name == "rounds"} == {
            f"{(round_of - 1) // 3 + 1}.js" for round_of in (size // 3 - 1, size // 3)
        }
        assert {path.parent.name for path in touched} == {
            writer.slug(bot) for key in keys[size - 3:size] for bot in json.loads(
                sqlite3.connect(full / "arena.sqlite").execute("SELECT bots FROM games WHERE key = ?", (key,)).fetchone()[0]
            )
        }
        before = {path: json.loads(path.read_text().split("=", 2)[2].rstrip(";\n")) for path in scripts.rglob("*.js")}


def test_a_render_of_an_older_layout_leaves_no_script_of_it(tmp_path):
    full = league_store(tmp_path / "full", batches=4)
    keys = done_keys(full)
    grow = tmp_path / "grow"
    grown(full, grow, set(keys))
    write_site(load_site_data(grow), grow / "site", replays="none")
    scripts = grow / "site" / "data" / "bots"
    older = scripts / f"{writer.slug('bob')}.js"  # an older arena's: every game of bob in one
    older.write_text("window.ARENA_DATA=window.ARENA_DATA||{};")
    beyond = scripts / writer.slug("bob") / "9.js"  # past bob's last (a store put back)
    beyond.write_text("window.ARENA_DATA=window.ARENA_DATA||{};")
    write_site(load_site_data(grow), grow / "site", replays="none", full=True)
    assert not older.exists() and not beyond.exists() and (scripts / writer.slug("bob") / "1.js").is_file()


def test_a_rebuild_is_committed_in_parts_and_a_stopped_one_goes_on_from_its_last(tmp_path, monkeypatch):
    """A rebuild commits every CHECKPOINT games: stopped after one, the next render applies
    only the games after it, and the site is byte for byte the one an uninterrupted
    rebuild writes (a league here; a duplicate tournament below, committed between deals)."""
    full = league_store(tmp_path / "full")  # 42 games; read 7 at a time
    keys = done_keys(full)
    reference = tmp_path / "reference"
    grown(full, reference, set(keys))
    write_site(load_site_data(reference), reference / "site", replays="none", full=True)
    monkeypatch.setattr(state_module, "CHECKPOINT", 10)
    work = tmp_path / "work"
    grown(full, work, set(keys))
    read: list[int] = []
    real = state_module.read_games

    def stopped_at_the_fourth_read(store, rows):
        read.append(len(rows))
        if len(read) == 4:
            raise KeyboardInterrupt  # the process stopped mid-rebuild
        return real(store, rows)

    monkeypatch.setattr(state_module, "read_games", stopped_at_the_fourth_read)
    with pytest.raises(KeyboardInterrupt):
        write_site(load_site_data(work), work / "site", replays="none", full=True)
    with sqlite3.connect(work / STATE_FILE) as db:  # committed after 14 games (the second read of 7)
        saved = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('count', 'cursor', 'rendered')"))
    db.close()
    assert saved == {"count": "14", "cursor": json.dumps(keys[13])}
    read.clear()
    monkeypatch.setattr(state_module, "read_games", lambda store, rows: read.append(len(rows)) or real(store, rows))
    write_site(load_site_data(work), work / "site", replays="none")
    assert sum(read) == len(keys) - 14
    assert files_of(work / "site") == files_of(reference / "site")


def test_a_duplicate_rebuild_committed_in_parts_writes_what_one_in_one_part_writes(tmp_path, monkeypatch):
    full = build_tournament(tmp_path / "full", duplicate=True, rules={"max_turns": 40})  # 4 deals x 3 rotations
    write_site(load_site_data(full), full / "one", replays="none", full=True)
    monkeypatch.setattr(state_module, "CHECKPOINT", 2)  # after every read of 7 (two deals: 6 games)
    commits = []
    real = state_module.SiteState._commit
    monkeypatch.setattr(state_module.SiteState, "_commit", lambda self, *args: commits.append(args) or real(self, *args))
    write_site(load_site_data(full), full / "parts", replays="none", full=True)
    assert [count for count, _ in commits] == [6, 12, 12]  # two deals, two more, then the end
    assert files_of(full / "parts") == files_of(full / "one")
