"""The human seat: a `Seat` like any other for the referee, whose decisions come from a page.

The referee's thread calls `HumanSeat.decide`; it publishes a `turn` on the seat's
`Channel` (the seat's observation and legal actions, exactly as a bot gets them, and the
events the seat saw since its last message) and waits for an answer that the web side
puts in through `Channel.answer`, from any thread. An answer that names another request
(stale) or an action that is not legal gets an `error` message on the page and the seat
keeps waiting: a person's slip is never a forfeit. With a time limit (`time_s`) a seat
that gives no answer in time faults with TIMEOUT, as a bot would (an incident, a
forfeit). `stop()` ends the wait with `GameStopped` (Ctrl-C, the server closing): the
game is abandoned, not stored.

What reaches the page is built here and nowhere else: only `observation(seat)`,
`legal_actions()` of that seat's own decisions and `events(seat)` ever go in a message,
plus what is computed from them alone (the replay viewer's table of the observation, the
faces of the cards they show, a game's hints such as the combinations going out would
lay).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from arena.faults import BotFault, Reason
from arena.game.protocol import GameOver, Start
from arena.game.seats import Seat
from arena.human.turn_help import Hint
from engine.api import Action, Event, Observation
from engine.registry import get_game

POLL_S = 0.1  # how often a waiting seat looks at its stop flag


class GameStopped(Exception):
    """The table is closing (Ctrl-C, the server stopping): the game is abandoned, not stored."""


def card_faces(game: str, *values: Any) -> dict[str, Any]:
    """Every card object in `values` (observations, actions, events) as {id: face}, with the
    game's own `card_face` (what the replay viewer draws)."""
    tables = get_game(game).replay_tables()
    faces: dict[str, Any] = {}
    if tables is None:
        return faces

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            face = tables.card_face(value)
            if face is not None:
                faces[str(value["id"])] = face
                return
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for value in values:
        walk(value)
    return faces


def seat_table(game: str, observation: Observation, seat: int) -> dict[str, Any] | None:
    """The replay viewer's table of this observation (engine/<game>/replay.py), or None."""
    tables = get_game(game).replay_tables()
    return None if tables is None else tables.seat(observation, seat)


class Channel:
    """One human seat's line to its pages: messages out (to every open page of the seat),
    answers in. Thread-safe: the game thread publishes, the web side subscribes and answers."""

    def __init__(self, seat: int):
        self.seat = seat
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[dict[str, Any] | None], None]] = []
        self._answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self.state: dict[str, Any] | None = None  # the last view (update or turn) of this game
        self.over: dict[str, Any] | None = None  # the game's end, once over
        self.log: list[Event] = []  # every event of this game the seat saw, in order
        self.intro: dict[str, Any] = {}  # who sits where, the game, the rules (set by the table)
        self.notice: dict[str, Any] | None = None  # the table's last word (e.g. waiting for the other player)

    # -- out ------------------------------------------------------------------------------

    def subscribe(self, send: Callable[[dict[str, Any] | None], None]) -> list[dict[str, Any]]:
        """Add a page; returns the messages that bring it up to date (a reload rejoins here).
        `send` is called from the game thread (None: the table is closing)."""
        with self._lock:
            self._subscribers.append(send)
            return self._catch_up()

    def unsubscribe(self, send: Callable[[dict[str, Any] | None], None]) -> None:
        """A page has gone (its tab closed): the game waits for the seat as before."""
        with self._lock:
            if send in self._subscribers:
                self._subscribers.remove(send)

    @property
    def pages(self) -> int:
        """How many pages of this seat are open."""
        with self._lock:
            return len(self._subscribers)

    def _catch_up(self) -> list[dict[str, Any]]:
        out = [{"type": "hello", **self.intro}]
        if self.state is not None:
            # The whole log of the game so far: the page starts its list of moves afresh
            # (with the faces of the cards the log names: the page has none of them yet).
            cards = {**card_faces(self.intro["game"], self.log), **self.state.get("cards", {})}
            out.append({**self.state, "events": list(self.log), "cards": cards, "replace": True})
        if self.over is not None:
            out.append(self.over)
        if self.notice is not None:
            out.append(self.notice)
        return out

    def publish(self, message: dict[str, Any] | None) -> None:
        """Send a message to every open page of the seat (None: the table is closing)."""
        with self._lock:
            if message is not None:
                kind = message["type"]
                if kind in ("turn", "update"):
                    self.log.extend(message.get("events", ()))
                    self.state = {key: value for key, value in message.items() if key != "events"}
                elif kind == "over":
                    self.log.extend(message.get("events", ()))
                    self.over = message
                elif kind == "notice":
                    self.notice = message
                elif kind == "new_game":
                    self.state, self.over, self.log, self.notice = None, None, [], None
            subscribers = list(self._subscribers)
        for send in subscribers:
            send(message)

    # -- in -------------------------------------------------------------------------------

    def answer(self, message: dict[str, Any], reply: Callable[[dict[str, Any]], None] | None = None) -> None:
        """A page's answer to a request: {"request": id, "action": {...}} (checked by the seat)."""
        self._answers.put({**message, "_reply": reply})

    def next_answer(self, timeout: float) -> dict[str, Any] | None:
        """The next answer from a page, or None after `timeout` seconds."""
        try:
            return self._answers.get(timeout=timeout)
        except queue.Empty:
            return None

    def drop_answers(self) -> None:
        """Forget answers left over (they named a request that is gone)."""
        while True:
            try:
                self._answers.get_nowait()
            except queue.Empty:
                return


class HumanSeat(Seat):
    """A person at a page (see the module docstring). `time_s`: the most a decision may
    take (None: no limit). `hint(observation, legal)` adds a game's help to each turn."""

    def __init__(
        self, name: str, channel: Channel, game: str, *, time_s: float | None = None, hint: Hint | None = None,
        stop: threading.Event | None = None,
    ):
        self.name = name
        self.channel = channel
        self.game = get_game(game).name
        self.time_s = time_s
        self.hint = hint
        self.stop_event = stop or threading.Event()
        self.seat = channel.seat
        self._request_id = 0
        self.step: int | None = None  # actions taken in the game so far (when the table says)
        self._received = 0  # events of this game the referee has given the seat
        self._pushed = 0  # events of this game already sent to the page
        self._pending: list[Event] = []
        self.game_number = 0
        self.first_state: Any = None  # the game's state as dealt, when the table gives it (shown at once)

    def stop(self) -> None:
        """End any wait with GameStopped."""
        self.stop_event.set()

    # -- messages -------------------------------------------------------------------------

    def _take_events(self) -> list[Event]:
        out, self._pending = self._pending, []
        return out

    def _view(self, kind: str, observation: Observation, **extra: Any) -> dict[str, Any]:
        events = self._take_events()
        legal = extra.get("legal", [])
        return {
            "type": kind,
            "game_number": self.game_number,
            "step": self.step,
            "observation": observation,
            "table": seat_table(self.game, observation, self.seat),
            "cards": card_faces(self.game, observation, legal, events),
            "events": events,
            **extra,
        }

    # -- Seat -----------------------------------------------------------------------------

    def start_game(self, start: Start) -> None:
        """A new game: the page starts afresh."""
        self.game_number = start.game_number
        self._received = self._pushed = 0
        self._pending = []
        self.step = 0
        self.channel.drop_answers()
        self.channel.publish({"type": "new_game", "game_number": start.game_number, "seat": start.seat})
        if self.first_state is not None:
            # The deal, before anyone moves: a person who does not move first sees the table too.
            state, self.first_state = self.first_state, None
            self.observe(state)

    def send_events(self, events: list[Event]) -> None:
        """Keep the events the page has not had yet (the table's live updates may have sent some)."""
        start = self._received
        self._received += len(events)
        fresh = events[max(0, self._pushed - start):]
        self._pushed = max(self._pushed, self._received)
        self._pending.extend(fresh)

    def observe(self, state: Any) -> None:
        """After any action (the table's `on_step`): the seat's observation and its new events, live."""
        self.step = len(state.history)
        fresh = state.events_since(self.seat, self._pushed)
        self._pushed += len(fresh)
        self._pending.extend(fresh)
        self.channel.publish(self._view("update", state.observation(self.seat)))

    def decide(self, observation: Observation, legal_actions: list[Action]) -> Action:
        """Publish the turn, then wait for a legal answer naming it (or the time limit)."""
        self._request_id += 1
        request = self._request_id
        hints = self.hint(observation, legal_actions) if self.hint is not None else None
        began = time.monotonic()
        deadline = None if self.time_s is None else began + self.time_s
        self.channel.drop_answers()  # anything sent before this turn was shown is not an answer to it
        self.channel.publish(
            self._view(
                "turn", observation, request=request, legal=legal_actions, hints=hints,
                time_s=self.time_s,
            )
        )
        while True:
            if self.stop_event.is_set():
                raise GameStopped("the table was closed")
            wait = POLL_S if deadline is None else min(POLL_S, deadline - time.monotonic())
            if wait <= 0:
                self.channel.publish({"type": "timeout", "request": request, "time_s": self.time_s})
                raise BotFault(
                    Reason.TIMEOUT, f"the person at seat {self.seat} gave no answer within {self.time_s:g} s"
                )
            answer = self.channel.next_answer(wait)
            if answer is None:
                continue
            action = self._check(answer, request, legal_actions)
            if action is not None:
                self.last_think_s = round(time.monotonic() - began, 3)
                self.last_stderr = None
                return action

    def _check(self, answer: dict[str, Any], request: int, legal: list[Action]) -> Action | None:
        """The legal action an answer names; else None, after telling its page why."""
        reply = answer.get("_reply") or (lambda message: self.channel.publish(message))
        if answer.get("request") != request:
            reply({"type": "error", "message": "that move was for an earlier turn; the table has moved on",
                   "request": answer.get("request")})
            return None
        chosen = answer.get("action")
        for action in legal:
            if action == chosen:
                return action
        reply({"type": "error", "message": "that move is not legal now: choose one of the moves offered",
               "request": request})
        return None

    def game_over(self, message: GameOver) -> None:
        """The result, on the page."""
        events = self._take_events()
        self.channel.publish(
            {
                "type": "over",
                "game_number": self.game_number,
                "places": message.places,
                "scores": message.scores,
                "forfeits": message.forfeits,
                "events": events,
                "cards": card_faces(self.game, events),
            }
        )
