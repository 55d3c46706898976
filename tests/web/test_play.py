"""The human seat without a browser: `HumanSeat` in real refereed games (a wrong or stale
move is a message, never a forfeit; a seat with no page waits; a time limit is a TIMEOUT
incident, as for a bot; closing the table abandons the game), the table's store (every
game stored, the person marked kind='human'), and the router over Starlette's TestClient
(unknown tokens, other origins, oversized and malformed messages, files outside the
page's list, a reload's catch-up, one seat's token never showing another seat)."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from arena.faults import Reason
from arena.game.referee import play_game, verify_replay
from arena.game.seats import InProcessBot
from arena.human.seat import Channel, GameStopped, HumanSeat
from arena.human.table import PlayHost, TableConfig
from arena.store.db import Store
from arena.web.play_server import play_app
from tests.play_helpers import RANDOM, card_ids, ladder_door

SHORT = {"max_turns_per_round": 2}


def random_bot(seed: int = 1) -> InProcessBot:
    rng = random.Random(seed)
    return InProcessBot(lambda observation, legal: rng.randrange(len(legal)), name="random")


class Page:
    """A page of a seat, in a thread: receives every message, answers turns as told."""

    def __init__(self, channel: Channel):
        self.messages: list[dict] = []
        self.channel = channel
        self.lock = threading.Lock()
        channel.subscribe(self.receive)

    def receive(self, message) -> None:
        with self.lock:
            self.messages.append(message)

    def of(self, kind: str) -> list[dict]:
        with self.lock:
            return [m for m in self.messages if m is not None and m["type"] == kind]

    def wait(self, kind: str, count: int, timeout: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout
        while len(self.of(kind)) < count:
            assert time.monotonic() < deadline, f"no {kind} #{count}: {self.messages[-3:]}"
            time.sleep(0.005)
        return self.of(kind)[count - 1]


def run_in_thread(target):
    box: dict = {}

    def run() -> None:
        try:
            box["result"] = target()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def test_a_wrong_or_stale_move_is_a_message_on_the_page_never_a_forfeit():
    channel = Channel(0)
    person = HumanSeat("human", channel, "three-thirteen")
    page = Page(channel)
    thread, box = run_in_thread(lambda: play_game("three-thirteen", [person, random_bot()], SHORT, seed=7))
    turn = page.wait("turn", 1)
    assert turn["observation"]["seat"] == 0 and turn["legal"] == [
        {"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}
    ]
    channel.answer({"request": turn["request"], "action": {"type": "discard", "card": 0}})
    assert page.wait("error", 1)["message"] == "that move is not legal now: choose one of the moves offered"
    channel.answer({"request": turn["request"] + 5, "action": turn["legal"][0]})
    assert page.wait("error", 2)["message"] == "that move was for an earlier turn; the table has moved on"
    channel.answer({"request": turn["request"], "action": {"type": "draw", "source": "stock", "extra": 1}})
    page.wait("error", 3)
    assert len(page.of("turn")) == 1  # still the same turn, waiting
    answered = 1
    channel.answer({"request": turn["request"], "action": turn["legal"][0]})
    while thread.is_alive():
        if len(page.of("turn")) > answered:
            turn = page.of("turn")[answered]
            answered += 1
            channel.answer({"request": turn["request"], "action": turn["legal"][-1]})
        time.sleep(0.002)
    result = box["result"]
    assert result.incidents == [] and result.forfeits == []
    mine = [step.action for step in result.replay.actions if step.seat == 0]
    assert mine[0] == {"type": "draw", "source": "stock"} and len(mine) == answered
    verify_replay(result)
    over = page.wait("over", 1)
    assert over["places"] == result.places and over["scores"] == result.scores


def test_a_seat_without_a_page_waits_and_with_a_time_limit_times_out_as_a_bot_would():
    channel = Channel(1)
    person = HumanSeat("human", channel, "3up3down", time_s=0.3)
    page = Page(channel)
    channel.unsubscribe(page.receive)  # the tab is closed before the first turn
    began = time.monotonic()
    result = play_game("3up3down", [random_bot(), person], {"max_turns": 30}, seed=3)
    assert time.monotonic() - began >= 0.3
    assert result.forfeits == [1] and result.places[1] == 2
    (incident,) = result.incidents
    assert (incident.seat, incident.bot, incident.reason) == (1, "human", Reason.TIMEOUT)
    assert incident.detail == "the person at seat 1 gave no answer within 0.3 s"
    assert {step.by for step in result.replay.actions if step.seat == 1} == {"fallback"}
    verify_replay(result)

    # Without a limit the game waits for as long as it takes (here: until the table closes).
    waiting = HumanSeat("human", Channel(1), "3up3down")
    thread, box = run_in_thread(lambda: play_game("3up3down", [random_bot(), waiting], {"max_turns": 30}, seed=3))
    time.sleep(1.0)
    assert thread.is_alive() and waiting.channel.state["type"] == "turn"
    waiting.stop()
    thread.join(5)
    assert isinstance(box["error"], GameStopped)


def test_the_table_stores_every_game_with_the_person_marked_human(tmp_path):
    host = PlayHost()
    table = host.open(TableConfig(game="three-thirteen", bots=[RANDOM], rules=SHORT, out=tmp_path / "play"))
    try:
        page = Page(table.channels[0])
        answered = 0
        for game_number in (1, 2):
            while True:
                if page.of("over") and len(page.of("over")) >= game_number:
                    break
                turns = page.of("turn")
                if len(turns) > answered:
                    turn = turns[answered]
                    answered += 1
                    table.channels[0].answer({"request": turn["request"], "action": turn["legal"][0]})
                time.sleep(0.002)
            deadline = time.monotonic() + 20
            while len(table.games_stored) < game_number:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            if game_number == 1:
                assert page.of("notice")[-1]["stored"] == "00001-00001-0"
                dealt = len(page.of("new_game"))
                table.again(0)  # one person: the new deal starts at once
                assert page.wait("new_game", dealt + 1)["game_number"] == 2
    finally:
        host.close()
    assert table.games_stored == ["00001-00001-0", "00002-00001-0"]
    with Store.open(tmp_path / "play") as store:
        kinds = {bot.bot: bot.kind for bot in store.bots()}
        assert kinds == {"human": "human", "random": "folder"}
        results = [store.game_result(key) for key in table.games_stored]
        assert store.settings()["human"] is True
    assert results[0].seed != results[1].seed  # a new deal
    for result in results:
        assert result.seats == ["human", "random"] and result.incidents == []
        verify_replay(result)


def test_closing_the_table_mid_game_stores_nothing_and_ends_the_bots(tmp_path):
    host = PlayHost()
    table = host.open(TableConfig(game="3up3down", bots=[RANDOM], seats=3, first_seat=1, out=tmp_path / "p"))
    page = Page(table.channels[1])
    page.wait("turn", 1)
    assert table.names == ["random", "human", "random#2"]
    host.close()
    assert table.closed and table.games_stored == []
    with Store.open(tmp_path / "p") as store:
        assert store.games() == []
    assert None in page.messages  # the pages were told the table closed


def test_a_full_host_lets_a_table_nobody_has_open_give_way(tmp_path):
    from arena.human.table import PlayError

    host = PlayHost(max_tables=1)
    try:
        first = host.open(TableConfig(game="3up3down", out=tmp_path / "a"), owner="ann")
        page = Page(first.channels[0])
        with pytest.raises(PlayError) as full:
            host.open(TableConfig(game="3up3down", out=tmp_path / "b"), owner="bob")
        assert str(full.value) == "1 tables are playing already; try again when one has ended"
        first.channels[0].unsubscribe(page.receive)  # ann closed her tab
        second = host.open(TableConfig(game="3up3down", out=tmp_path / "b"), owner="bob")
        assert host.tables() == [second] and host.seat(first.tokens[0]) is None
        deadline = time.monotonic() + 20
        while not first.closed:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        host.close()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"game": "3up3down", "seats": 7}, "3up3down seats 2 to 6 players, not 7"),
        ({"game": "3up3down", "humans": 3}, "--humans is 3; a table of 2 seats takes 1 to 2 people"),
        ({"game": "3up3down", "first_seat": 2}, "--seat is 2; seats are numbered 0 to 1"),
        ({"game": "3up3down", "human_time_s": 0}, "--human-time-s is 0; give a number of seconds above 0"),
        ({"game": "3up3down", "bots": [RANDOM, RANDOM]}, "2 bot folders for 1 bot seat"),
    ],
)
def test_a_table_that_cannot_be_set_up_says_what_to_change(config, message, tmp_path):
    from arena.human.table import PlayError, PlayTable

    with pytest.raises(PlayError) as refused:
        PlayTable(TableConfig(out=tmp_path, **config))
    assert message in str(refused.value)


# --- the router ---------------------------------------------------------------------------


@pytest.fixture
def two_people(tmp_path):
    host = PlayHost()
    table = host.open(TableConfig(game="three-thirteen", humans=2, rules=SHORT, out=tmp_path / "two"))
    deadline = time.monotonic() + 20
    while table.channels[0].state is None or table.channels[1].state is None:  # dealt, shown to both
        assert time.monotonic() < deadline
        time.sleep(0.01)
    yield host, table, TestClient(play_app(host, tmp_path / "two" / "site"))
    host.close()


def join(socket, token: str) -> list[dict]:
    socket.send_text(json.dumps({"type": "join", "token": token}))
    first = json.loads(socket.receive_text())
    return [first]


def test_a_token_opens_its_own_seat_only_and_a_reload_catches_up(two_people):
    host, table, client = two_people
    first: dict[int, dict] = {}
    for seat in (0, 1):
        with client.websocket_connect("/play/ws") as socket:
            (hello,) = join(socket, table.tokens[seat])
            assert hello["type"] == "hello" and hello["seat"] == seat and hello["seats"] == ["human-1", "human-2"]
            first[seat] = json.loads(socket.receive_text())
            assert first[seat]["observation"]["seat"] == seat and first[seat]["replace"] is True
            assert {event["type"] for event in first[seat]["events"]} == {"round_start"}
    mover = first[0]["observation"]["current_player"]
    assert first[mover]["type"] == "turn" and first[1 - mover]["type"] == "update"
    # Nothing of one seat's hand reaches the other: no id, no face.
    for seat in (0, 1):
        theirs = {card["id"] for card in first[1 - seat]["observation"]["hand"]}
        assert theirs and not theirs & {int(card) for card in first[seat]["cards"]}
    with client.websocket_connect("/play/ws") as socket:
        join(socket, table.tokens[mover])
        turn = json.loads(socket.receive_text())
        socket.send_text(json.dumps({"type": "act", "request": turn["request"], "action": turn["legal"][0]}))
        nxt = json.loads(socket.receive_text())
        assert nxt["type"] == "update" and nxt["step"] == 1
    # A reload: the turn again, with the whole log of the game so far.
    with client.websocket_connect("/play/ws") as socket:
        join(socket, table.tokens[mover])
        again = json.loads(socket.receive_text())
        assert again["type"] == "turn" and again["replace"] is True and again["step"] == 1
        assert [event["type"] for event in again["events"]] == ["round_start", "draw"]
        # The faces of every card the log names come with it (the page has none yet).
        assert card_ids(again["events"], "three-thirteen") <= {int(card) for card in again["cards"]}


def test_hostile_requests_are_refused(two_people):
    host, table, client = two_people
    mover = table.channels[0].state["observation"]["current_player"]
    wrong = table.tokens[0][:-1] + ("A" if table.tokens[0][-1] != "A" else "B")
    for token in ("", "x" * 32, wrong, None, 7, "a" * 500):
        with client.websocket_connect("/play/ws") as socket:
            socket.send_text(json.dumps({"type": "join", "token": token}))
            refused = json.loads(socket.receive_text())
            assert refused["fatal"] is True and "token is not known" in refused["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                socket.receive_text()
            assert closed.value.code == 4403
    with client.websocket_connect("/play/ws") as socket:
        socket.send_text(json.dumps({"type": "join", "token": "a" * 5000}))
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_text()
        assert closed.value.code == 1009
    # A page of another site may not open a seat's socket, token or not.
    with pytest.raises(WebSocketDisconnect) as closed:
        with client.websocket_connect("/play/ws", headers={"origin": "http://evil.example"}) as socket:
            socket.receive_text()
    assert closed.value.code == 4403
    with client.websocket_connect("/play/ws") as socket:
        join(socket, table.tokens[1 - mover])
        socket.receive_text()  # its state
        socket.send_text(json.dumps({"type": "act", "request": 1, "action": {"type": "draw", "source": "stock"}}))
        assert json.loads(socket.receive_text())["message"] == "it is not your move now"
    with client.websocket_connect("/play/ws") as socket:
        join(socket, table.tokens[mover])
        socket.receive_text()  # its turn
        socket.send_text("not json")
        assert json.loads(socket.receive_text())["message"] == "a message is a JSON object with a type"
        socket.send_text(json.dumps({"type": "again"}))
        assert json.loads(socket.receive_text())["message"] == "the game is not over yet"
        socket.send_text(json.dumps({"type": "act", "request": 99, "action": {"type": "draw", "source": "stock"}}))
        assert "earlier turn" in json.loads(socket.receive_text())["message"]
        socket.send_text(json.dumps({"type": "act", "pad": "x" * 5000}))
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_text()
        assert closed.value.code == 1009
    with client.websocket_connect("/play/ws") as socket:
        socket.send_bytes(b"\x00" * 10)  # a binary frame instead of the join
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_text()
        assert closed.value.code == 1003
    # Only the page's own files: no path from a request reaches the disk.
    for name in ("..%2Fseat.py", "%2E%2E%2F%2E%2E%2Fstore.py", "seat.py", "play.html", "replay-chess.js"):
        answer = client.get(f"/play/assets/{name}")
        assert answer.status_code in (404, 503) and "import" not in answer.text  # (503: the site, not rendered)
    page = client.get("/play/")
    assert page.status_code == 200 and "default-src 'none'" in page.headers["content-security-policy"]
    assert client.get("/play/assets/replay-three-thirteen.js").status_code == 200
    assert client.get("/play/assets/play-3up3down.js").headers["content-type"].startswith("text/javascript")


def test_a_flood_of_messages_closes_the_connection(two_people):
    host, table, client = two_people
    with client.websocket_connect("/play/ws") as socket:
        join(socket, table.tokens[1])
        socket.receive_text()
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(200):
                socket.send_text(json.dumps({"type": "hello"}))
            while True:
                socket.receive_text()
        assert closed.value.code == 1008


# --- on the submission server -------------------------------------------------------------


def test_a_signed_in_author_plays_a_ladder_bot_stored_apart_from_the_league(tmp_path):
    door, token, host, app = ladder_door(tmp_path)
    client = TestClient(app)
    try:
        signed = {"Authorization": f"Bearer {token}"}
        assert client.get("/play/bots").status_code == 401
        assert client.post("/play/tables", json={"bot": "random"}).status_code == 401
        assert client.get("/play/bots", headers={"Authorization": "Bearer " + "x" * 40}).status_code == 401
        bots = client.get("/play/bots", headers=signed).json()["bots"]
        assert {(b["bot"], b["version"], b["game"]) for b in bots} == {
            ("random", "1.0", "3up3down"), ("random", "1.0", "three-thirteen")
        }
        refused = client.post("/play/tables", json={"bot": "../random"}, headers=signed)
        assert refused.status_code == 404 and "no ladder bot '../random'" in refused.json()["detail"]
        assert client.post("/play/tables", content=b"[1", headers=signed).status_code == 400
        opened = client.post("/play/tables", json={"bot": "random", "game": "three-thirteen"}, headers=signed).json()
        assert opened["seats"] == ["human:alice", "random"] and opened["url"].startswith("/play/#t=")
        with client.websocket_connect("/play/ws") as socket:
            join(socket, opened["url"].split("#t=")[1])
            first = json.loads(socket.receive_text())
            assert first["observation"]["seat"] == 0 and first["observation"]["game"] == "three-thirteen"
        (table,) = host.tables()
        assert table.config.human_time_s == 300 and table.config.sandbox == "local"
        # A second table of the same author replaces the first (one at a time).
        client.post("/play/tables", json={"bot": "random", "game": "3up3down"}, headers=signed)
        assert [t.game.name for t in host.tables()] == ["3up3down"]
    finally:
        host.close()
        door.stop()
    assert (tmp_path / "human-games" / "arena.sqlite").is_file()  # its own store, not a league's


def test_a_page_that_never_says_its_seat_is_closed(two_people, monkeypatch):
    from arena.web import play_routes

    host, table, client = two_people
    monkeypatch.setattr(play_routes, "JOIN_WAIT_S", 0.3)
    with client.websocket_connect("/play/ws") as socket:
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_text()  # nothing sent: the server closes it, never sends a seat's state
        assert closed.value.code == 4408
    assert table.channels[0].pages == 0 and table.channels[1].pages == 0


# --- the command ----------------------------------------------------------------------------


def test_arena_play_serves_a_table_stores_its_games_and_stops_on_ctrl_c(tmp_path):
    import os
    import re
    import signal
    import subprocess
    import sys

    from websockets.sync.client import connect

    env = {**os.environ, "PYTHONPATH": str(RANDOM.parent.parent)}
    command = [sys.executable, "-m", "arena", "play", "three-thirteen", "--no-open", "--port", "0",
               "--rule", "max_turns_per_round=1", "--out", "mine"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               cwd=tmp_path)
    try:
        line = process.stdout.readline()
        link = re.fullmatch(r"seat 0 \(human\): (http://127\.0\.0\.1:(\d+)/play/#t=([\w-]+))\n", line)
        assert link, line
        said = [process.stdout.readline(), process.stdout.readline()]
        assert said == ["games are stored in mine; Ctrl-C stops\n", f"their replays: http://127.0.0.1:{link.group(2)}/\n"]
        assert all(len(line.rstrip("\n")) <= 80 for line in [line, *said])  # issue 34 part 9 (it was 85)
        with connect(f"ws://127.0.0.1:{link.group(2)}/play/ws") as socket:
            socket.send(json.dumps({"type": "join", "token": link.group(3)}))
            while True:
                message = json.loads(socket.recv(timeout=60))
                if message["type"] == "turn":
                    socket.send(json.dumps({"type": "act", "request": message["request"], "action": message["legal"][0]}))
                elif message["type"] == "notice" and message.get("stored"):
                    assert message["replay"] == "games/00001-00001-0.html"  # the site, rendered
                    break
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode in (0, 130)
    assert "stopped; every finished game is stored" in out
    assert "Traceback" not in err
    with Store.open(tmp_path / "mine") as store:
        (game,) = store.games()
        assert store.game_result(game.key).seats == ["human", "random"]
    assert (tmp_path / "mine" / "site" / "games" / "00001-00001-0.html").is_file()


def test_arena_play_says_what_to_change_without_a_traceback(tmp_path, monkeypatch, capsys):
    from arena.cli.app import main

    for args, said in [
        (["chess"], "unknown game 'chess'"),
        (["3up3down", "--humans", "3"], "--humans is 3; a table of 2 seats takes 1 to 2 people"),
        (["3up3down", "--rule", "max_turns=0"], "rule option 'max_turns' got 0"),
        (["3up3down", str(tmp_path)], "has no bot.toml"),
    ]:
        monkeypatch.setattr("sys.argv", ["arena", "play", *args, "--no-open", "--out", str(tmp_path / "o")])
        with pytest.raises(SystemExit) as stopped:
            main()
        stderr = capsys.readouterr().err
        # One line (a bot folder's: then its mistakes listed under it, as everywhere), no traceback.
        assert stopped.value.code == 2 and said in stderr, stderr
        assert stderr.startswith("arena: error: ") and stderr.count("arena: error:") == 1
        assert "Traceback" not in stderr
