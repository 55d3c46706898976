"""A bot's stderr on a served league is its author's: the served replays and bot pages
leave it out (the files on disk keep it), its author and the organiser read it through
the API with their token, and `show_stderr` serves it to everyone."""

from __future__ import annotations

import json

import httpx
import pytest

from arena.play.tournament import run_tournament, validate_config
from arena.site.replay import read_script
from arena.site.writer import slug
from arena.web.app import AppServer
from arena.web.door_pages import door_app
from arena.web.queue import QueueSettings
from arena.web.submissions import Door
from tests.report_helpers import HOSTILE_LOG, _random_seat, chatty_bot


@pytest.fixture(scope="module")
def cup(tmp_path_factory):
    """A tournament of chatty (a folder bot writing a line to stderr every decision) and two
    in-process bots, at 3 seats: one game per cycle, two cycles."""
    base = tmp_path_factory.mktemp("stderr")
    folder = chatty_bot(base)
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(toml[: toml.index("version")] + 'version = "1.0"\n' +
                                     toml[toml.index("\n", toml.index("version")) + 1:])
    data = {"name": "cup", "game": "3up3down", "seats": 3, "bots": [str(folder)], "seed": 3, "cycles": 2,
            "output": str(base / "cup"), "limits": {"decision_s": 5.0}, "rules": {"max_turns": 60}}
    in_process = {"steady": _random_seat("steady", 2), "plain": _random_seat("plain", 3)}
    run_tournament(validate_config(data), in_process=in_process)
    return base / "cup"


def serve(cup, tmp_path, hide: bool):
    door = Door(registry=tmp_path / "registry", league_dir=cup, hide_stderr=hide,
                queue_settings=QueueSettings(sandbox="local"))
    return AppServer(door_app(cup / "site", door), "127.0.0.1", 0).start(), door


def chatty_game(cup) -> str:
    for script in sorted((cup / "site" / "replays").glob("*.js")):
        if "thinking" in json.dumps(read_script(script.read_text())):
            return script.name.split(".")[0]
    raise AssertionError("no replay holds chatty's stderr")


def test_served_replays_and_bot_pages_leave_stderr_out_and_its_author_reads_it(cup, tmp_path):
    key = chatty_game(cup)
    server, door = serve(cup, tmp_path, hide=True)
    ann, bob = door.book.add("ann"), door.book.add("bob")
    boss = door.book.add("boss", organiser=True)
    door.book.claim("ann", "chatty")
    try:
        with httpx.Client(base_url=server.url, timeout=20) as client:
            script_name = next((cup / "site" / "replays").glob(f"{key}.r*.js")).name
            served = client.get(f"/replays/{script_name}").text
            on_disk = (cup / "site" / "replays" / script_name).read_text()
            kept, stripped = read_script(on_disk), read_script(served)
            assert "thinking <script>" in json.dumps(kept["decisions"]) and "thinking" not in json.dumps(stripped)
            assert served.startswith("window.ARENA_REPLAYS") and '"z":"' in served  # packed again
            # Think times and choices stay; only the lines go.
            assert [d[:2] for d in stripped["decisions"]] == [d[:2] for d in kept["decisions"]]
            assert any(d[2] for d in kept["decisions"]) and not any(d[2] for d in stripped["decisions"])
            same = lambda data: {name: value for name, value in data.items() if name not in ("decisions", "faults")}  # noqa: E731
            assert same(stripped) == same(kept)
            page = client.get(f"/bots/{slug('chatty')}.html").text
            assert "thinking &lt;script&gt;" not in page and "hidden: a bot&#39;s stderr" not in page
            assert "hidden: a bot's stderr is its author's" in page
            mine = client.get(f"/api/games/{key}/stderr", headers={"Authorization": f"Bearer {ann}"}).json()
            (seat,) = mine["seats"].values()
            assert seat["bot"] == "chatty" and seat["decisions"][0]["stderr"] == [HOSTILE_LOG]
            assert HOSTILE_LOG in seat["log_end"]
            other = client.get(f"/api/games/{key}/stderr", headers={"Authorization": f"Bearer {bob}"})
            assert other.status_code == 404 and other.json() == {"error": f"no bot of yours played game {key}"}
            everything = client.get(f"/api/games/{key}/stderr", headers={"Authorization": f"Bearer {boss}"}).json()
            assert len(everything["seats"]) == 3
            assert client.get(f"/api/games/{key}/stderr").status_code == 401
    finally:
        server.shutdown()
        door.stop()


def test_show_stderr_serves_the_site_as_it_is(cup, tmp_path):
    key = chatty_game(cup)
    server, door = serve(cup, tmp_path, hide=False)
    try:
        script_name = next((cup / "site" / "replays").glob(f"{key}.r*.js")).name
        served = httpx.get(server.url + f"replays/{script_name}", timeout=20).text
        assert served == (cup / "site" / "replays" / script_name).read_text()
    finally:
        server.shutdown()
        door.stop()


def test_a_forfeits_last_stderr_lines_are_left_out_of_the_served_game_page_and_replay(cup, tmp_path):
    """A forfeit's last lines (issue 22: on its game page and at its replay step) are
    stderr too: served with stderr hidden, neither the game page nor the replay has them."""
    import shutil
    import sqlite3

    from arena.site.model import load_site_data
    from arena.site.replay import FORMAT, script_text
    from arena.site.writer import write_site

    copy = tmp_path / "cup"
    shutil.copytree(cup, copy)
    data = load_site_data(copy, cache_ratings=False)
    game = data.games[0]
    secret = "my secret plan: keep the wild cards"
    with sqlite3.connect(copy / "arena.sqlite") as db:  # the game's stored incident: the site reads the store
        db.execute("DELETE FROM incidents WHERE game_key = ?", (game.key,))
        db.execute(
            "INSERT INTO incidents (game_key, seat, bot, reason, detail, decision, forfeit, log_tail, request) "
            "VALUES (?, 0, ?, 'CRASH', 'exited with code 3', 2, 1, ?, 2)",
            (game.key, game.seats[0], f"{secret}\ngiving up\n"),
        )
    db.close()
    write_site(data, copy / "site", replays="none", full=True)
    page_file = copy / "site" / "games" / f"{game.key}.html"
    assert secret in page_file.read_text()  # the site on disk keeps it
    replay = copy / "site" / "replays" / f"{game.key}.r{FORMAT}.js"
    replay.write_text(script_text({"format": FORMAT, "decisions": None, "faults": [[3, 0, "CRASH", "exited", [secret]]]}, game.key))
    server, door = serve(copy, tmp_path, hide=True)
    try:
        with httpx.Client(base_url=server.url, timeout=20) as client:
            page = client.get(f"/games/{game.key}.html").text
            assert secret not in page and "giving up" not in page
            assert "hidden: a bot's stderr is its author's" in page and "exited with code 3" in page
            served = client.get(f"/replays/{replay.name}").text
            assert secret not in served and '"faults":[[3,0,"CRASH","exited",null]]' in served
    finally:
        server.shutdown()
        door.stop()
    server, door = serve(copy, tmp_path, hide=False)
    try:
        assert secret in httpx.get(server.url + f"games/{game.key}.html", timeout=20).text
    finally:
        server.shutdown()
        door.stop()


def game_of(cup, bot: str) -> str:
    """A finished game `bot` played."""
    import sqlite3

    with sqlite3.connect(cup / "arena.sqlite") as db:
        (key,) = db.execute("SELECT game_key FROM seats WHERE bot = ? ORDER BY game_key LIMIT 1", (bot,)).fetchone()
    db.close()
    return key


def test_a_name_that_played_is_nobodys_to_take_and_a_name_is_claimed_only_on_acceptance(cup, tmp_path):
    """Issue 33: "steady" has played (it is in the served store) but is in no registry: an
    upload named steady claimed it before validation, refused or not, and its uploader then
    read steady's stderr through the API. Now such a name is refused to every author but
    the organiser, and a free name is claimed only when its submission is accepted."""
    from arena.web.client import pack
    from tests.web_helpers import bot_folder

    server, door = serve(cup, tmp_path, hide=True)  # its queue not started: an upload stays queued
    mallory, boss = door.book.add("mallory"), door.book.add("boss", organiser=True)
    key = game_of(cup, "steady")
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            squat = client.post("/api/submissions", content=pack(bot_folder(tmp_path, "steady")),
                                headers={"Authorization": f"Bearer {mallory}"})
            assert squat.status_code == 403, squat.text
            assert squat.json() == {"error": "the bot name steady has played in this league and is not yours; "
                                             "choose another name in bot.toml"}
            assert door.book.owner_of("steady") == ""
            peek = client.get(f"/api/games/{key}/stderr", headers={"Authorization": f"Bearer {mallory}"})
            assert peek.status_code == 404 and peek.json() == {"error": f"no bot of yours played game {key}"}
            fresh = client.post("/api/submissions", content=pack(bot_folder(tmp_path, "fresh")),
                                headers={"Authorization": f"Bearer {mallory}"})
            assert fresh.status_code == 202 and fresh.json()["state"] == "queued"
            assert door.book.owner_of("fresh") is None  # queued, not accepted: nobody's yet
            # The organiser may still submit a name that played (it is theirs).
            theirs = client.post("/api/submissions", content=pack(bot_folder(tmp_path / "o", "steady")),
                                 headers={"Authorization": f"Bearer {boss}"})
            assert theirs.status_code == 202, theirs.text
    finally:
        server.shutdown()
        door.stop()


SECRET = "my secret plan: keep the wild cards"


@pytest.fixture(scope="module")
def secret_cup(cup, tmp_path_factory):
    """The cup copied, a game's incident holding SECRET as its last stderr lines (on its
    game page) and that game's replay holding it at a forfeit: with chatty's lines (its bot
    page, the replays), every kind of file that can carry stderr."""
    import shutil
    import sqlite3

    from arena.site.model import load_site_data
    from arena.site.replay import FORMAT, script_text
    from arena.site.writer import write_site

    copy = tmp_path_factory.mktemp("secret") / "cup"
    shutil.copytree(cup, copy)
    data = load_site_data(copy, cache_ratings=False)
    game = data.games[0]
    with sqlite3.connect(copy / "arena.sqlite") as db:
        db.execute("DELETE FROM incidents WHERE game_key = ?", (game.key,))
        db.execute(
            "INSERT INTO incidents (game_key, seat, bot, reason, detail, decision, forfeit, log_tail, request) "
            "VALUES (?, 0, ?, 'CRASH', 'exited with code 3', 2, 1, ?, 2)", (game.key, game.seats[0], SECRET + "\n"),
        )
    db.close()
    write_site(data, copy / "site", replays="none", full=True)
    replay = copy / "site" / "replays" / f"{game.key}.r{FORMAT}.js"
    replay.write_text(script_text({"format": FORMAT, "decisions": None, "faults": [[3, 0, "CRASH", "x", [SECRET]]]},
                                  game.key))
    page = copy / "site" / "bots" / f"{slug('chatty')}.html"
    (copy / "site" / "latest.html").symlink_to(page)  # another name of the page, inside the site
    (copy / "site" / "Bots").mkdir()  # as /Bots/ names bots/ on a file system that ignores case
    shutil.copy(page, copy / "site" / "Bots" / "chatty.HTML")
    return copy, [f"/bots/{slug('chatty')}.html", f"/games/{game.key}.html", f"/replays/{replay.name}",
                  f"/replays/{chatty_game(cup)}.r{FORMAT}.js", "/latest.html", "/Bots/chatty.HTML"]


def variants(path: str) -> list[str]:
    """The same file named other ways: doubled slashes, dot segments, percent-encoded dots,
    slashes and letters, trailing slashes, other cases, a detour through the API's prefix."""
    folder, _, name = path.strip("/").rpartition("/")
    letters = "".join(f"%{ord(c):02x}" for c in folder)
    stem, dot, ext = name.rpartition(".")
    return [
        f"//{folder}/{name}", f"/{folder}//{name}", f"///{folder}///{name}", f"/./{folder}/{name}",
        f"/{folder}/./{name}", f"/{folder}/../{folder}/{name}", f"/%2e/{folder}/{name}", f"/{folder}/%2e/{name}",
        f"/{folder}/%2E/{name}", f"/{folder}/%2e%2e/{folder}/{name}", f"/{folder}%2f{name}", f"/{folder}%2F{name}",
        f"/%2f{folder}/{name}", f"/{folder}/%2e%2f{name}", f"/{letters}/{name}", f"/{folder}/{name}/",
        f"/{folder}/{name}//", f"/{folder}/{name}/.", f"/{folder}/{name}/%2e", f"/{folder}/{name}%2f",
        f"/{folder}/{name}?x=1", f"/{folder.upper()}/{name}", f"/{folder}/{stem}{dot}{ext.upper()}",
        f"/{folder.capitalize()}/{name}", f"/api/../{folder}/{name}", f"/door/%2e%2e/{folder}/{name}",
        f"/api/games/../../{folder}/{name}",
    ]


def raw_get(server, target: str) -> tuple[int, bytes]:
    """GET `target` sent as it is (no client normalises it): the status and the body."""
    import socket

    with socket.create_connection((server.host, server.port), timeout=20) as raw:
        raw.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while more := raw.recv(65536):
            answer += more
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


def carries_stderr(path: str, body: bytes) -> bool:
    text = body.decode("utf-8", "replace")
    if path.startswith("/replays/"):
        text = json.dumps(read_script(text)) if text.startswith("window.") else text
    return SECRET in text or "thinking" in text


def test_no_path_variant_serves_stderr_that_the_plain_path_hides(secret_cup, tmp_path):
    """Issue 33: with stderr hidden, /bots//X.html, /bots/./X.html, //bots/X.html,
    /bots/%2e/X.html served the bot page with its stderr and /replays//K.r4.js the replay
    with its stderr: the filter matched the raw path, the file server the normalised one.
    Every variant of every file that can carry stderr is answered without it (or not at all)."""
    copy, paths = secret_cup
    server, door = serve(copy, tmp_path, hide=False)
    try:  # shown: each file does carry stderr, so the test can fail
        for path in paths:
            status, body = raw_get(server, path)
            assert status == 200 and carries_stderr(path, body), path
    finally:
        server.shutdown()
        door.stop()
    server, door = serve(copy, tmp_path, hide=True)
    leaks, served = [], 0
    try:
        for path in paths:
            status, body = raw_get(server, path)
            assert status == 200 and not carries_stderr(path, body), path
            for variant in variants(path):
                status, body = raw_get(server, variant)
                served += status == 200
                if status == 200 and carries_stderr(path, body):
                    leaks.append(variant)
    finally:
        server.shutdown()
        door.stop()
    assert leaks == []
    assert served >= 10 * len(paths)  # most variants do name the file (and are served without stderr)
