"""The referee: one game between seats, forfeits, what each seat is told, the result
record and its replay; and whole matches of the real games with the example bot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nimtest_game import NIM, nim_registered

from arena.game.protocol import GameOver, Start
from arena.game.record import GameResult, Incident
from arena.game.referee import (
    ReplayMismatch,
    fallback_rng,
    places_with_forfeits,
    play_game,
    verify_replay,
)
from arena.faults import BotFault, Reason
from arena.game.seats import InProcessBot, Seat
from arena.play.match import run_match, standings
from arena.ratings.ledger import RatedGame
from arena.ratings.ledger import standings as rating_standings
from arena.sandbox import Limits, get_sandbox

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def nim():
    with nim_registered() as game:
        yield game


def take(n):
    """A bot that takes n stones when it can, else as many as it can."""
    return lambda observation, legal: min(n, len(legal)) - 1


class Spy(Seat):
    """Takes one stone; records every message it is given; may fault on cue."""

    def __init__(self, name, fault_at=None, fault_on_start=None, fault_on_game_over=None, abandon_reason=None):
        self.name = name
        self.heard: list = []
        self.decisions = 0
        self.fault_at = fault_at
        self.fault_on_start = fault_on_start
        self.fault_on_game_over = fault_on_game_over
        self.abandon_reason = abandon_reason
        self.abandoned = 0

    def start_game(self, start: Start) -> None:
        self.heard.append(start.model_dump(exclude_none=True))
        if self.fault_on_start:
            raise self.fault_on_start

    def send_events(self, events):
        self.heard.append({"events": events})

    def decide(self, observation, legal_actions):
        self.heard.append({"observation": observation, "legal": legal_actions})
        self.decisions += 1
        if self.decisions == self.fault_at:
            raise BotFault(Reason.TIMEOUT, "gave no answer within 0.5 s")
        return legal_actions[0]

    def game_over(self, message: GameOver) -> None:
        self.heard.append(message.model_dump())
        if self.fault_on_game_over:
            raise self.fault_on_game_over

    def abandon(self):
        self.abandoned += 1
        return self.abandon_reason

    def log_tail(self, limit=2000):
        return "last words"


def test_forfeits_share_last_place_and_the_others_keep_their_order():
    assert places_with_forfeits([1, 2, 3, 4], []) == [1, 2, 3, 4]
    assert places_with_forfeits([1, 2, 3, 4], [0]) == [4, 1, 2, 3]
    assert places_with_forfeits([2, 1, 2, 3], [1, 3]) == [1, 4, 1, 4]
    # Everyone forfeits: all last, nobody first (a forfeit is never a win or a Swiss point).
    assert places_with_forfeits([1, 2], [0, 1]) == [2, 2]
    assert places_with_forfeits([1, 2, 3], [0, 1, 2]) == [3, 3, 3]


def test_a_game_between_in_process_bots_gives_the_exact_record():
    result = play_game("nim-test", [InProcessBot(take(1), "ones"), InProcessBot(take(3), "threes")],
                       {"stones": 7}, seed=3)
    # 7 -1-> 6 -3-> 3 -1-> 2 -2-> 0: "threes" takes the last stones.
    assert [step.action["take"] for step in result.replay.actions] == [1, 3, 1, 2]
    assert [step.seat for step in result.replay.actions] == [0, 1, 0, 1]
    assert (result.places, result.scores, result.forfeits, result.incidents) == ([2, 1], [0.0, 1.0], [], [])
    assert result.seats == ["ones", "threes"] and result.rules == {"stones": 7} and result.seed == 3
    assert result.replay.events[-1] == {"type": "win", "seat": 1}
    assert verify_replay(result).is_over
    assert GameResult.model_validate_json(result.model_dump_json()) == result  # a plain, storable record


def test_each_seat_hears_only_its_own_secret():
    spies = [Spy("a"), Spy("b"), Spy("c")]
    play_game("nim-test", spies, {"stones": 9}, seed=5)
    state = NIM.new_game(3, {"stones": 9}, seed=5)
    secrets = state.secrets
    for seat, spy in enumerate(spies):
        heard = json.dumps(spy.heard)
        assert f'"secret": {secrets[seat]}' in heard
        for other in range(3):
            if other != seat:
                assert str(secrets[other]) not in heard
        assert spy.heard[0] == {"type": "start", "game_number": 1, "seat": seat, "players": 3, "rules": {"stones": 9}}
        assert spy.heard[-1]["type"] == "game_over"


def test_every_event_reaches_its_seat_exactly_once_and_in_order():
    spies = [Spy("a"), Spy("b")]
    result = play_game("nim-test", spies, {"stones": 6}, seed=2)
    state = verify_replay(result)
    for seat, spy in enumerate(spies):
        told = [event for message in spy.heard if "events" in message for event in message["events"]]
        assert told == state.events(seat)


def test_a_faulting_seat_forfeits_and_a_fallback_finishes_its_game():
    faulty, steady = Spy("faulty", fault_at=2), Spy("steady")
    result = play_game("nim-test", [faulty, steady], {"stones": 10}, seed=4, game_number=3)
    assert result.incidents == [
        Incident(game_number=3, seat=0, bot="faulty", reason=Reason.TIMEOUT,
                 detail="gave no answer within 0.5 s", decision=2, forfeit=True, log_tail="last words")
    ]
    assert result.forfeits == [0] and result.places == [2, 1] and faulty.abandoned == 1
    by_seat = {(step.seat, step.by) for step in result.replay.actions}
    assert (0, "fallback") in by_seat and (1, "fallback") not in by_seat
    assert faulty.decisions == 2  # never asked again after its fault
    assert not any(message.get("type") == "game_over" for message in faulty.heard)
    verify_replay(result)


def test_the_fallback_is_seeded_by_the_game_seed_and_seat():
    runs = [play_game("nim-test", [Spy("x", fault_at=1), Spy("y")], {"stones": 30}, seed=8) for _ in range(2)]
    assert runs[0].replay == runs[1].replay
    first_fallback = next(step for step in runs[0].replay.actions if step.by == "fallback")
    legal = [{"take": 1}, {"take": 2}, {"take": 3}]
    assert first_fallback.action == legal[fallback_rng(8, 0).randrange(3)]


def test_two_forfeits_share_last_place():
    seats = [Spy("a", fault_at=1), Spy("b"), Spy("c", fault_at=1)]
    result = play_game("nim-test", seats, {"stones": 12}, seed=1)
    assert result.forfeits == [0, 2] and result.places == [3, 1, 3]  # shared last = the table's size
    assert [incident.seat for incident in result.incidents] == [0, 2]


def test_when_every_seat_forfeits_nobody_wins_or_scores_a_swiss_point():
    seats = [Spy("a", fault_at=1), Spy("b", fault_at=1)]
    result = play_game("nim-test", seats, {"stones": 12}, seed=1)
    assert result.forfeits == [0, 1] and result.places == [2, 2]
    rated = rating_standings([RatedGame("00001-00001-0", ("a", "b"), tuple(result.places))])
    line = {line.bot: line for line in rated}
    assert (line["a"].wins, line["a"].score, line["b"].wins, line["b"].score) == (0, 0.0, 0, 0.0)


def test_a_fault_at_the_start_forfeits_before_any_decision():
    crash = BotFault(Reason.CRASH, "exited with code 1")
    broken = Spy("broken", fault_on_start=crash)
    result = play_game("nim-test", [Spy("ok"), broken], {"stones": 5}, seed=1)
    (incident,) = result.incidents
    assert (incident.seat, incident.reason, incident.decision) == (1, Reason.CRASH, 0)
    assert all(step.by == "fallback" for step in result.replay.actions if step.seat == 1)
    assert broken.decisions == 0


def test_a_fault_after_the_game_is_recorded_but_the_result_stands():
    late = Spy("late", fault_on_game_over=BotFault(Reason.CRASH, "exited with code 0"))
    result = play_game("nim-test", [late, InProcessBot(take(1), "ones")], {"stones": 3}, seed=1)
    # 3 -1-> 2 -1-> 1 -1-> 0: seat 0 takes the last stone and wins anyway.
    assert result.places == [1, 2] and result.forfeits == []
    (incident,) = result.incidents
    assert incident.forfeit is False and incident.detail.endswith("(after the game ended; the result stands)")


def test_a_memory_kill_found_when_stopping_the_bot_is_reported_as_out_of_memory():
    oom = Spy("hog", fault_at=1, abandon_reason=Reason.OUT_OF_MEMORY)
    result = play_game("nim-test", [oom, Spy("ok")], {"stones": 5}, seed=1)
    assert result.incidents[0].reason is Reason.OUT_OF_MEMORY


def test_a_tampered_record_does_not_replay():
    result = play_game("nim-test", [InProcessBot(take(1), "a"), InProcessBot(take(2), "b")], {"stones": 9}, seed=1)
    with pytest.raises(ReplayMismatch, match="places differ"):
        verify_replay(result.model_copy(update={"places": [1, 1]}))
    with pytest.raises(ReplayMismatch, match="scores differ"):
        verify_replay(result.model_copy(update={"scores": [5.0, 0.0]}))
    moved = result.model_copy(deep=True)
    moved.replay.actions[0].action = {"take": 2}
    with pytest.raises(ReplayMismatch):
        verify_replay(moved)


SHORT_RULES = {"3up3down": {"max_turns": 60}, "three-thirteen": {"max_turns_per_round": 3}}


@pytest.mark.parametrize("game", ["3up3down", "three-thirteen"])
def test_a_match_of_real_games_with_the_random_bot_replays_exactly(game):
    pytest.importorskip({"3up3down": "engine.threeup", "three-thirteen": "engine.three_thirteen"}[game])
    bots = [ROOT / "bots" / "random"] * 3
    sandbox = get_sandbox("local", warn=False)
    limits = Limits(decision_s=2.0, startup_s=10.0)
    first = run_match(game, bots, games=3, seed=21, sandbox=sandbox, rules=SHORT_RULES[game], limits=limits)
    again = run_match(game, bots, games=3, seed=21, sandbox=sandbox, rules=SHORT_RULES[game], limits=limits)
    assert [result.incidents for result in first.games] == [[], [], []]
    for result in first.games:
        verify_replay(result)
    # Deterministic bots (seeded by the referee) and seeded deals: the match replays exactly.
    # (Think times and stderr lines per decision depend on the machine's timing, not on the game.)
    timing = {"actions": {"__all__": {"think_s", "stderr"}}}
    assert [r.replay.model_dump(exclude=timing) for r in first.games] == [r.replay.model_dump(exclude=timing) for r in again.games]
    assert [r.seats for r in first.games] == [
        ["random", "random#2", "random#3"],
        ["random#2", "random#3", "random"],
        ["random#3", "random", "random#2"],
    ]
    assert sum(row.games for row in standings(first)) == 9


SLOWPOKE = '''
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "slowpoke"}), flush=True)
    elif message["type"] == "request":
        print("time_s", message["time_s"], "bank_s", message["bank_s"], file=sys.stderr, flush=True)
        time.sleep(0.7)
        print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
'''


def test_overruns_draw_on_the_time_bank_until_it_is_spent(tmp_path):
    folder = tmp_path / "slowpoke"
    folder.mkdir()
    (folder / "bot.py").write_text(SLOWPOKE)
    (folder / "bot.toml").write_text('name="slowpoke"\nversion="1"\ncommand=["python3","bot.py"]\ngames=["nim-test"]\n')
    limits = Limits(decision_s=0.5, time_bank_s=0.5, startup_s=5)
    result = run_match("nim-test", [folder, ROOT / "tests" / "bots" / "steady"], games=1,
                       rules={"stones": 40}, limits=limits, sandbox=get_sandbox("local", warn=False))
    (game,) = result.games
    (incident,) = game.incidents
    # 0.7 s a decision: 0.2 s from the bank each time; the third ask allows 0.5 + 0.1 s.
    assert incident.reason is Reason.TIMEOUT and incident.seat == 0 and incident.decision == 4
    told = [line.split() for line in incident.log_tail.splitlines()]
    assert [(float(words[1]), float(words[3])) for words in told] == [
        (1.0, 0.5), (pytest.approx(0.8, abs=0.05), pytest.approx(0.3, abs=0.05)),
        (pytest.approx(0.6, abs=0.08), pytest.approx(0.1, abs=0.08)),
    ]


def test_a_failure_of_the_sandbox_itself_is_an_error_not_a_forfeit(tmp_path):
    from arena.faults import SandboxError
    from arena.sandbox.base import Sandbox

    class Unreachable(Sandbox):
        name = "unreachable"

        def start(self, bot, limits):
            raise SandboxError("the Docker engine is not answering")

    with pytest.raises(SandboxError, match="not answering"):
        run_match("nim-test", [ROOT / "tests" / "bots" / "steady"] * 2, sandbox=Unreachable())
