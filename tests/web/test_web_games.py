"""A league's site holds no file per game: its game pages, game lists and replays are
answered by the server from the store (`arena.web.league_games`), with the site's templates, so
each is byte for byte the file a tournament's writer would have written; and every
request for them is hostile (unknown keys, `../`, pages out of range, huge numbers, a
duplicate deal's replay before its last rotation is played)."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import threading
import zlib
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.league.ladder import run_league
from arena.site.model import load_site_data
from arena.site.replay import FORMAT, read_script
from arena.site.writer import write_site
from arena.store.db import Store
from arena.store.partial import DoneIndex
from arena.web.app import AppServer, create_app, serve_site
from arena.web.league_games import CACHE_DIR, ServedGames, served_games_for
from tests.league.test_league import NAMES, config, in_process, registry_of

PAGES_FILE = ".site-pages.json"  # an older arena's record of its game pages (removed by a render)


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> Path:
    """A duplicate league of six in-process bots at three seats: 30 games (10 deals of 3
    rotations, 5 batches), its site rendered by the league after each batch."""
    base = tmp_path_factory.mktemp("served")
    out = base / "league"
    run_league(config(out, registry_of(base, ()), games=30, duplicate=True), in_process=in_process(NAMES))
    return out


def keys_of(out: Path) -> list[str]:
    with Store.open(out) as store:
        return [game.key for game in store.games("done")]


def client_of(out: Path, **options) -> TestClient:
    return TestClient(create_app(out / "site", served=ServedGames(out, **options)))


def static_copy(out: Path, where: Path) -> Path:
    """What the writer would write for this store with a file per game (a tournament's site)."""
    write_site(load_site_data(out, cache_ratings=False), where, game_files=True)
    return where


def reopen_deal(out: Path, key: str) -> None:
    """Make game `key` unplayed again (as when a league stops in the middle of a batch):
    its deal is then open and its other rotations withheld."""
    db = sqlite3.connect(out / "arena.sqlite")
    with db:
        for table in ("seats", "incidents", "replays", "logs"):
            db.execute(f"DELETE FROM {table} WHERE game_key = ?", (key,))
        db.execute("UPDATE games SET status = 'scheduled', finished_at = NULL WHERE key = ?", (key,))
    db.close()


def test_a_leagues_site_holds_no_file_per_game_and_says_where_they_are(league):
    site = league / "site"
    assert sorted(path.name for path in site.iterdir()) == ["assets", "bots", "data", "h2h.html", "index.html", "live.json"]
    assert not (league / PAGES_FILE).exists()
    note = "answered by its server (<code>arena serve</code> on its folder)"
    assert note in (site / "index.html").read_text()
    assert all(note in page.read_text() for page in (site / "bots").glob("*.html"))
    # An older render's files (pages, list pages, replays, their manifest) are removed.
    copy = league.parent / "older"
    shutil.copytree(league, copy)
    static_copy(copy, copy / "site")
    (copy / PAGES_FILE).write_text("{}")
    (copy / "site" / "games" / "notes.txt").write_text("the organiser's")
    assert len(list((copy / "site" / "games").iterdir())) == 32 and len(list((copy / "site" / "replays").iterdir())) == 30
    write_site(load_site_data(copy, cache_ratings=False), copy / "site")
    assert [path.name for path in (copy / "site" / "games").iterdir()] == ["notes.txt"]  # not ours: kept
    assert not (copy / "site" / "replays").exists() and not (copy / PAGES_FILE).exists()


def test_served_pages_and_replays_are_the_static_sites_bytes(league, tmp_path):
    static = static_copy(league, tmp_path / "static")
    client = client_of(league)
    compared = 0
    for sub in ("games", "replays"):
        for file in sorted((static / sub).iterdir()):
            answer = client.get(f"/{sub}/{file.name}")
            assert answer.status_code == 200, file.name
            assert answer.content == file.read_bytes(), file.name
            compared += 1
    assert compared == 30 + 1 + 30  # every game page, the list page, every replay
    assert client.get("/games/page-1.html").headers["content-type"] == "text/html; charset=utf-8"
    replay = client.get(f"/replays/{keys_of(league)[0]}.r{FORMAT}.js")
    assert replay.headers["content-type"] == "text/javascript; charset=utf-8"
    assert read_script(replay.text)["places"]
    assert client.get("/index.html").content == (league / "site" / "index.html").read_bytes()  # files still files


def test_a_list_page_and_a_game_page_of_a_big_league_are_its_hundreds(league, tmp_path, monkeypatch):
    """270 finished games: three list pages of 100, 100 and 70, each game page linking to
    its own list page and neighbours, all as the writer would write them."""
    copy = tmp_path / "big"
    shutil.copytree(league, copy)
    db = sqlite3.connect(copy / "arena.sqlite")
    with db:  # the stored games again under later batch numbers: a longer history
        games = db.execute("SELECT * FROM games").fetchall()
        columns = [row[1] for row in db.execute("PRAGMA table_info(games)")]
        for later in range(1, 9):  # 5 batches of 6 games each time
            for game in games:
                row = dict(zip(columns, game, strict=True))
                batch = row["round"] + 5 * later
                old, new = row["key"], f"{batch:05d}" + row["key"][5:]
                row.update(key=new, deal=new.rsplit("-", 1)[0], round=batch, seq=row["seq"] + 30 * later)
                db.execute(f"INSERT INTO games ({','.join(row)}) VALUES ({','.join('?' * len(row))})", list(row.values()))
                for table in ("seats", "replays", "logs", "incidents"):
                    cols = [c[1] for c in db.execute(f"PRAGMA table_info({table})") if c[1] != "id"]
                    picked = ",".join(c if c != "game_key" else "?" for c in cols)
                    db.execute(f"INSERT INTO {table} ({','.join(cols)}) SELECT {picked} FROM {table} WHERE game_key = ?",
                               (new, old))
    db.close()
    with Store.open(copy) as store:
        index = DoneIndex(store, 100)
        index.refresh()
        assert index.total == 270 and index.place("00010-00001-0") == 9 * 6 and len(index.starts) == 3
    monkeypatch.setattr("arena.site.writer._write_replays", lambda *args: (0, 0))  # pages only, compared
    static = static_copy(copy, tmp_path / "static")
    assert sorted(path.name for path in (static / "games").glob("page-*")) == ["page-1.html", "page-2.html", "page-3.html"]
    client = client_of(copy)
    compared = 0
    for file in sorted((static / "games").iterdir()):
        assert client.get(f"/games/{file.name}").content == file.read_bytes(), file.name
        compared += 1
    assert compared == 273
    assert '<a href="page-3.html" rel="next">' in client.get("/games/page-2.html").text
    assert '<a href="page-3.html">Games</a>' in client.get("/games/00045-00002-2.html").text
    missing = client.get("/games/page-4.html")
    assert missing.status_code == 404 and missing.text == "no page 4 of games: there are 3\n"


def test_a_withheld_deals_replay_is_never_served_before_its_last_rotation(league, tmp_path):
    copy = tmp_path / "open"
    shutil.copytree(league, copy)
    shutil.rmtree(copy / CACHE_DIR, ignore_errors=True)  # what other tests' requests cached
    last = keys_of(copy)[-1]
    deal = last.rsplit("-", 1)[0]
    reopen_deal(copy, last)
    client = client_of(copy)
    static = static_copy(copy, tmp_path / "static")
    for rotation in ("0", "1"):
        key = f"{deal}-{rotation}"
        page = client.get(f"/games/{key}.html")
        assert page.status_code == 200 and 'id="replay-withheld"' in page.text and "replays/" not in page.text
        assert " · seed " not in page.text  # the deal's seed would deal its cards: withheld as well
        assert page.content == (static / "games" / f"{key}.html").read_bytes()
        replay = client.get(f"/replays/{key}.r{FORMAT}.js")
        assert replay.status_code == 404
        assert replay.text == f"the replay of game {key} is withheld until every rotation of deal {deal} is played\n"
        assert not (static / "replays" / f"{key}.r{FORMAT}.js").exists()  # as the static site: none
    assert not (copy / CACHE_DIR).exists() or not any((copy / CACHE_DIR).iterdir())  # never simulated either
    complete = client.get(f"/games/{keys_of(copy)[0]}.html").text
    assert 'id="replay-withheld"' not in complete and " · seed " in complete  # a complete deal shows it
    unplayed = client.get(f"/games/{last}.html")
    assert unplayed.status_code == 404 and unplayed.text == f"no finished game {last} in this league\n"
    assert client.get(f"/replays/{last}.r{FORMAT}.js").status_code == 404
    assert f"{last}.html" not in client.get("/games/page-1.html").text
    reopened = keys_of(copy)
    assert len(reopened) == 29 and last not in reopened


@pytest.mark.parametrize("path,said", [
    ("/games/00099-00001-0.html", "no finished game 00099-00001-0 in this league\n"),
    ("/replays/00099-00001-0.r4.js", "no finished game 00099-00001-0 in this league\n"),
    ("/replays/00001-00001-0.r3.js", "no replay 00001-00001-0.r3.js: replays are in format 4\n"),
    ("/games/page-2.html", "no page 2 of games: there are 1\n"),
    ("/games/page-999999999.html", "no page 999999999 of games: there are 1\n"),
])
def test_what_is_not_there_is_404_with_its_reason(league, path, said):
    answer = client_of(league).get(path)
    assert (answer.status_code, answer.text) == (404, said)


def raw_get(server: AppServer, path: str) -> tuple[int, bytes]:
    """GET `path` exactly as written (no client tidies `..` or escapes away)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_hostile_paths_reach_nothing_outside_the_games(league):
    (league / "site" / "games").mkdir(exist_ok=True)  # a stray folder: still nothing to find in it
    server = serve_site(league / "site", 0).start()
    try:
        for path in (
            "/games/../../arena.sqlite", "/replays/../../arena.sqlite", "/games/%2e%2e/%2e%2e/arena.sqlite",
            "/replays/..%2f..%2farena.sqlite", "/games/..%2F..%2Farena.sqlite", "/replays/../../secret.key",
            f"/replays/../../{CACHE_DIR}/", "/replays/../../.replay-cache/00001-00001-0.r4.js", "/games/page-0.html", "/games/page-01.html",
            "/games/page--1.html", "/games/page-99999999999999999999999999.html", "/games/page-1e9.html",
            "/games/00001-00001-0.html%00", "/games/00001-00001-0%00.html", "/games/00001-00001-0 .html",
            "/games/00001-00001-0.html/..", "/replays/00001-00001-0.r99999999999999999999.js",
            "/games/0000000000000000001-00001-0.html", "/games/'; DROP TABLE games; --.html",
            "/replays/00001-00001-0.r4.js.part", "/games/" + "1" * 5000 + ".html",
        ):
            status, body = raw_get(server, path.replace(" ", "%20").replace("'", "%27").replace(";", "%3B"))
            assert status in (400, 404), (path, status)
            assert b"SQLite" not in body and b"<html" not in body, path
        status, _ = raw_get(server, "/games/00001-00001-0.html")
        assert status == 200
        with Store.open(league) as store:
            assert len(store.done_keys()) == 30  # the store is untouched
    finally:
        server.shutdown()
        (league / "site" / "games").rmdir()
    client = client_of(league)
    assert client.post("/games/00001-00001-0.html").status_code == 405


def test_replays_are_simulated_once_and_kept_in_a_bounded_cache(league, tmp_path):
    copy = tmp_path / "cached"
    shutil.copytree(league, copy)
    shutil.rmtree(copy / CACHE_DIR, ignore_errors=True)
    keys = keys_of(copy)[:6]
    sizing = ServedGames(copy, cache_bytes=0)  # keeps only the replay it just made
    size = {key: len(sizing.answer(f"replays/{key}.r{FORMAT}.js").body) for key in keys}
    (kept,) = (copy / CACHE_DIR).iterdir()
    assert kept.name.startswith(keys[-1] + ".") and kept.name.endswith(f".r{FORMAT}.js")
    shutil.rmtree(copy / CACHE_DIR)
    bound = size[keys[4]] + size[keys[5]]  # the last two fit, a third does not
    served = ServedGames(copy, cache_bytes=bound)
    simulated: list[str] = []
    simulate = served._simulate

    def counted(key: str) -> str:
        simulated.append(key)
        return simulate(key)

    served._simulate = counted
    start = threading.Barrier(6)
    answers: list[bytes] = []

    def ask() -> None:
        start.wait()
        answers.append(served.answer(f"replays/{keys[0]}.r{FORMAT}.js").body)

    askers = [threading.Thread(target=ask) for _ in range(6)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    assert simulated == [keys[0]] and len(answers) == 6 and len(set(answers)) == 1  # six at once: one simulation
    for key in keys:
        served.answer(f"replays/{key}.r{FORMAT}.js")
        assert served.cached_bytes() <= bound
    assert simulated == keys  # keys[0] came from the cache
    on_disk = sorted(path.name.split(".")[0] for path in (copy / CACHE_DIR).iterdir())
    assert on_disk == keys[4:]  # the two used last
    # A new server starts from the folder in its order of use: asked for keys[4] (from the
    # folder: not simulated), it leaves keys[5] the oldest.
    restarted = ServedGames(copy, cache_bytes=bound)
    restarted._simulate = counted
    restarted.answer(f"replays/{keys[4]}.r{FORMAT}.js")
    assert len(simulated) == 6
    again = ServedGames(copy, cache_bytes=bound)
    again.answer(f"replays/{keys[0]}.r{FORMAT}.js")
    on_disk = {path.name.split(".")[0]: path.stat().st_size for path in (copy / CACHE_DIR).iterdir()}
    assert keys[0] in on_disk and keys[5] not in on_disk
    assert again.cached_bytes() == sum(on_disk.values()) <= bound


def test_a_served_leagues_stderr_stays_its_authors(league, tmp_path):
    """With stderr hidden (a served league's default) a game page's incident lines and a
    replay's stderr lines are left out, as from files (arena.web.stderr)."""
    copy = tmp_path / "chatty"
    shutil.copytree(league, copy)
    shutil.rmtree(copy / CACHE_DIR, ignore_errors=True)
    key = keys_of(copy)[0]
    secret = "my secret plan: keep the wild cards"
    db = sqlite3.connect(copy / "arena.sqlite")
    with db:
        blob = db.execute("SELECT data FROM replays WHERE game_key = ?", (key,)).fetchone()[0]
        replay = json.loads(zlib.decompress(blob))
        replay["actions"][0]["stderr"] = [secret]
        db.execute("UPDATE replays SET data = ? WHERE game_key = ?", (zlib.compress(json.dumps(replay).encode()), key))
        seat, bot = db.execute("SELECT seat, bot FROM seats WHERE game_key = ? AND seat = 1", (key,)).fetchone()
        db.execute(
            "INSERT INTO incidents (game_key, seat, bot, reason, detail, decision, forfeit, log_tail, request) "
            "VALUES (?, ?, ?, 'CRASH', 'exited with code 3', 2, 0, ?, 2)", (key, seat, bot, f"{secret}\ngiving up\n"),
        )
    db.close()
    shown = client_of(copy)
    assert secret in shown.get(f"/games/{key}.html").text
    assert secret in json.dumps(read_script(shown.get(f"/replays/{key}.r{FORMAT}.js").text))
    hidden = client_of(copy, hide_stderr=True)
    page = hidden.get(f"/games/{key}.html").text
    assert secret not in page and "hidden: a bot's stderr is its author's" in page and "exited with code 3" in page
    script = read_script(hidden.get(f"/replays/{key}.r{FORMAT}.js").text)
    assert secret not in json.dumps(script) and script["decisions"][0][2] is None
    # The door's app (arena league --serve, arena serve --submissions) hides it by default.
    from arena.web.door_pages import door_app
    from arena.web.queue import QueueSettings
    from arena.web.submissions import Door

    door = Door(registry=tmp_path / "registry", league_dir=copy, queue_settings=QueueSettings(sandbox="local"))
    try:
        client = TestClient(door_app(copy / "site", door))
        assert secret not in client.get(f"/games/{key}.html").text
        assert secret not in client.get(f"/replays/{key}.r{FORMAT}.js").text
        # Nor by any other name of the path (issue 33), sent as it is to the real server.
        from tests.web.test_web_stderr import carries_stderr, raw_get, variants

        server = AppServer(door_app(copy / "site", door), "127.0.0.1", 0).start()
        try:
            for path in (f"/games/{key}.html", f"/replays/{key}.r{FORMAT}.js"):
                answers = [raw_get(server, variant) for variant in (path, *variants(path))]
                assert not [status for status, body in answers if status == 200 and carries_stderr(path, body)]
                assert sum(status == 200 for status, _ in answers) >= 10
        finally:
            server.shutdown()
    finally:
        door.stop()


def test_a_tournaments_site_keeps_its_files_and_the_server_serves_them(tmp_path):
    """A tournament's store beside the site: the paths are its files (served_games_for
    finds no league), and a folder without a store serves files alone."""
    from tests.report_helpers import build_tournament

    out = build_tournament(tmp_path / "cup", cycles=1)
    site = out / "site"
    served = served_games_for(site)
    client = TestClient(create_app(site, served=served))
    page = sorted((site / "games").glob("0*.html"))[0]
    (site / "games" / page.name).write_text("the file, not the store\n")
    assert client.get(f"/games/{page.name}").text == "the file, not the store\n"
    assert not served.is_league() and served._kind == "tournament"
    assert "served-games" not in (site / "index.html").read_text()
    assert client.get("/games/00099-00001-0.html").status_code == 404


def test_the_list_pages_index_follows_games_finishing_in_any_order(tmp_path):
    """DoneIndex, kept up to date as games finish out of order, are dropped unplayed and
    scheduled again (a dropped row's rowid taken by a new one), always equals the list read
    from scratch: each page's first key, the total, each game's place and each page's games."""
    import random

    from arena.store.keys import ScheduledGame

    rng = random.Random(27)
    writer = sqlite3.connect(tmp_path / "arena.sqlite", isolation_level=None)  # the league's own connection
    with Store.open(tmp_path, create=True) as store:
        index = DoneIndex(store, 7)
        batch = 0

        def schedule(tables: int) -> None:
            nonlocal batch
            batch += 1
            store.schedule([ScheduledGame(batch, table, 0, ("a", "b"), batch * 100 + table) for table in range(1, tables + 1)])

        def finish(count: int) -> None:
            open_keys = [key for (key,) in writer.execute("SELECT key FROM games WHERE status = 'scheduled'")]
            for key in rng.sample(open_keys, min(count, len(open_keys))):
                writer.execute("UPDATE games SET status = 'done' WHERE key = ?", (key,))

        def check() -> None:
            index.refresh()
            done = sorted(key for (key,) in writer.execute("SELECT key FROM games WHERE status = 'done'"))
            assert index.total == len(done) and index.starts == done[::7]
            for key in rng.sample(done, min(5, len(done))):
                assert index.place(key) == done.index(key)
            for number in range(1, len(index.starts) + 1):
                assert [row.key for row in index.games_of_page(number)] == done[(number - 1) * 7 : number * 7]
            fresh = DoneIndex(store, 7)
            fresh.refresh()
            assert (fresh.starts, fresh.total) == (index.starts, index.total)

        check()  # an empty store: no page
        for step in range(40):
            schedule(rng.randint(1, 9))
            finish(rng.randint(0, 8))
            if step % 7 == 3:  # the league drops a leaving bot's unplayed games; the next batch takes their rowids
                pending = [key for (key,) in writer.execute("SELECT key FROM games WHERE status = 'scheduled'")]
                writer.execute("DELETE FROM games WHERE key = ?", (max(pending),)) if pending else None
            check()
        finish(10_000)
        check()
        assert index.total == len(store.done_keys()) > 100 and not index.pending
    writer.close()


def test_every_way_of_serving_a_league_answers_its_games(league, tmp_path):
    """`arena serve DIR` (serve_site), `arena league --serve` and `arena serve LEAGUE_FILE`
    without submissions (serve_door), and with them (the door's app, stderr hidden)."""
    import httpx

    from arena.cli.authors import serve_door

    key = keys_of(league)[7]
    page = client_of(league).get(f"/games/{key}.html").content
    servers = [
        (serve_site(league / "site", 0), None),
        serve_door(league / "site", registry=tmp_path / "registry", host="127.0.0.1", port=0, league_dir=league,
                   submissions=False),
        serve_door(league / "site", registry=tmp_path / "registry", host="127.0.0.1", port=0, league_dir=league,
                   validate_sandbox="local"),
    ]
    for server, door in servers:
        server.start()
        try:
            answer = httpx.get(server.url + f"games/{key}.html", timeout=20)
            assert answer.status_code == 200 and answer.content == page
            assert httpx.get(server.url + f"replays/{key}.r{FORMAT}.js", timeout=20).status_code == 200
            assert httpx.get(server.url + "games/page-2.html", timeout=20).status_code == 404
        finally:
            server.shutdown()
            if door is not None:
                door.stop()


def test_the_stderr_api_withholds_an_open_deal_as_the_pages_do(league, tmp_path):
    """GET /api/games/{key}/stderr reads one game's row (not the league's every game): a
    game of a deal with a rotation still to play is 404 even to the organiser, as its replay."""
    from arena.web.door_pages import door_app
    from arena.web.queue import QueueSettings
    from arena.web.submissions import Door

    copy = tmp_path / "open"
    shutil.copytree(league, copy)
    keys = keys_of(copy)
    reopen_deal(copy, keys[-1])
    door = Door(registry=tmp_path / "registry", league_dir=copy, queue_settings=QueueSettings(sandbox="local"))
    boss = door.book.add("boss", organiser=True)
    try:
        client = TestClient(door_app(copy / "site", door))
        asked = {"Authorization": f"Bearer {boss}"}
        whole = client.get(f"/api/games/{keys[0]}/stderr", headers=asked)
        assert whole.status_code == 200 and len(whole.json()["seats"]) == 3
        for key in (keys[-2], keys[-1], "00099-00001-0"):
            answer = client.get(f"/api/games/{key}/stderr", headers=asked)
            assert answer.status_code == 404
            assert answer.json() == {"error": f"no finished game {key} (or its deal is still being played)"}
    finally:
        door.stop()


def test_a_replay_is_answered_where_no_cache_folder_can_be_made(league, tmp_path):
    copy = tmp_path / "nocache"
    shutil.copytree(league, copy)
    shutil.rmtree(copy / CACHE_DIR, ignore_errors=True)
    (copy / CACHE_DIR).write_text("a file where the cache folder would be")
    key = keys_of(copy)[2]
    client = client_of(copy)
    for _ in range(2):
        answer = client.get(f"/replays/{key}.r{FORMAT}.js")
        assert answer.status_code == 200 and read_script(answer.text)["places"]
    assert (copy / CACHE_DIR).read_text() == "a file where the cache folder would be"


def test_a_served_page_follows_the_store_as_games_finish(league, tmp_path):
    """Answers are kept until the store changes: the last game's page gains its *next*
    link, and the list its game, as soon as the league stores the next game."""
    copy = tmp_path / "growing"
    shutil.copytree(league, copy)
    keys = keys_of(copy)
    writer = sqlite3.connect(copy / "arena.sqlite", isolation_level=None)  # the league's own connection
    writer.execute("UPDATE games SET status = 'scheduled' WHERE key = ?", (keys[-1],))
    served = ServedGames(copy)
    page = served.answer(f"games/{keys[-2]}.html").body.decode()
    assert 'rel="next"' not in page and f"{keys[-1]}.html" not in served.answer("games/page-1.html").body.decode()
    assert served.answer(f"games/{keys[-2]}.html").body.decode() == page  # kept
    assert served.answer(f"games/{keys[-1]}.html").status == 404
    writer.execute("UPDATE games SET status = 'done' WHERE key = ?", (keys[-1],))  # the game is stored
    assert f'<a href="{keys[-1]}.html" rel="next">' in served.answer(f"games/{keys[-2]}.html").body.decode()
    assert f'<a href="{keys[-1]}.html">' in served.answer("games/page-1.html").body.decode()
    assert served.answer(f"games/{keys[-1]}.html").status == 200
    writer.close()


def test_a_replay_is_read_and_stripped_once_whatever_the_league_commits(league, tmp_path, monkeypatch):
    """A finished game's replay never changes: kept as answered (its stderr stripped) by the
    game's identity, not until the next commit (a playing league commits every game, and
    every replay was read from the cache folder and stripped again: most of the server's
    threads' time with 100 readers, bench/server.py)."""
    import arena.web.stderr as stderr

    copy = tmp_path / "committing"
    shutil.copytree(league, copy)
    key = keys_of(copy)[0]
    stripped: list[str] = []
    strip = stderr.strip_replay
    monkeypatch.setattr(stderr, "strip_replay", lambda text: stripped.append(text) or strip(text))
    served = ServedGames(copy, hide_stderr=True)
    writer = sqlite3.connect(copy / "arena.sqlite", isolation_level=None)  # the league's own connection
    writer.execute("CREATE TABLE commits (n INTEGER)")
    answers, versions = [], set()
    for commit in range(3):
        answers.append(served.answer(f"replays/{key}.r{FORMAT}.js").body)
        versions.add(served._store.data_version())
        writer.execute("INSERT INTO commits VALUES (?)", (commit,))  # a commit of another game, say
    writer.close()
    assert len(versions) == 3  # the store moved between the answers
    assert len(stripped) == 1 and len(set(answers)) == 1
    # Another league in the same folder (keys start again): its game of that key is another replay.
    with Store.open(copy) as store:
        row = store.game_row(key)
    writer = sqlite3.connect(copy / "arena.sqlite", isolation_level=None)
    writer.execute("UPDATE games SET seed = seed + 1 WHERE key = ?", (key,))
    writer.close()
    served.answer(f"replays/{key}.r{FORMAT}.js")
    assert len(stripped) == 2 and row is not None


def test_a_server_reads_where_the_list_pages_start_when_it_starts(league):
    """served_games_for (arena serve) warms the list's index in a thread of its own; a
    folder whose store is not there yet (a league not started) is read at its first request."""
    import time

    served = served_games_for(league / "site")
    deadline = time.monotonic() + 30
    while served._done is None or served._done.total != 30:
        assert time.monotonic() < deadline, "the index was not read"
        time.sleep(0.05)
    assert served._done.starts == [keys_of(league)[0]]
    empty = ServedGames(league.parent / "not-yet").warm()
    time.sleep(0.2)
    assert empty._done is None and empty.answer("games/page-1.html") is None
