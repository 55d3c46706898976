"""The protocol models, the examples in docs/protocol.md, the Python bot helper, and
bot.toml checks."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from arena.config.botfolder import BotFolderError, load_bot
from arena.game.protocol import (
    PROTOCOL_VERSION,
    ActionAnswer,
    Ready,
    decode_bot,
    decode_referee,
    encode,
    json_schema,
)
from arena.faults import BotFault, Reason
from engine import get_game
from tests.arena_bot_helper import HELPER, arena_bot
from tests.bot_folders import ROOT

DOC = ROOT / "docs" / "protocol.md"
REFEREE_TYPES = {"hello", "start", "events", "request", "game_over", "match_over"}
BOT_TYPES = {"ready", "action"}


def doc_examples() -> list[dict]:
    blocks = re.findall(r"```json\n(.*?)\n```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return [json.loads(block) for block in blocks]


def test_every_message_type_has_an_example_in_the_docs():
    assert {example["type"] for example in doc_examples()} == REFEREE_TYPES | BOT_TYPES


def test_the_rules_in_the_doc_examples_are_the_games_current_defaults():
    def rules_in(value):
        if isinstance(value, dict):
            if "rules" in value:
                yield value["rules"]
            for item in value.values():
                yield from rules_in(item)
        elif isinstance(value, list):
            for item in value:
                yield from rules_in(item)

    found = [(example.get("game", "3up3down"), rules) for example in doc_examples() for rules in rules_in(example)]
    assert found
    for game, rules in found:
        assert rules == get_game(game).resolve_options({}), "docs/protocol.md shows outdated rules"


@pytest.mark.parametrize("example", doc_examples(), ids=lambda example: example["type"])
def test_each_doc_example_is_a_valid_message(example):
    line = json.dumps(example).encode()
    if example["type"] in REFEREE_TYPES:
        parsed = decode_referee(line)
        assert json.loads(encode(parsed)) == example  # nothing missing, nothing extra (as sent)
    else:
        parsed = decode_bot(line)
        dumped = parsed.model_dump(exclude_none=True)
        assert {key: dumped[key] for key in example} == example


def test_the_schema_names_every_message_of_both_directions():
    schema = json_schema()
    referee = json.dumps(schema["referee_to_bot"])
    bot = json.dumps(schema["bot_to_referee"])
    for kind in REFEREE_TYPES:
        assert f'"const": "{kind}"' in referee
    for kind in BOT_TYPES:
        assert f'"const": "{kind}"' in bot


def fault_of(line: bytes) -> BotFault:
    with pytest.raises(BotFault) as caught:
        decode_bot(line)
    return caught.value


def test_an_answer_by_index_or_by_action():
    assert decode_bot(b'{"type":"action","id":3,"index":0}') == ActionAnswer(type="action", id=3, index=0)
    verbatim = decode_bot(b'{"type":"action","id":3,"action":{"take":2},"comment":"ignored"}')
    assert verbatim.action == {"take": 2} and verbatim.index is None


def test_ready_defaults_to_protocol_1():
    assert decode_bot(b'{"type":"ready","name":"x"}') == Ready(type="ready", name="x", version="", protocol=1)


def test_bytes_that_are_not_utf8_are_invalid_json():
    fault = fault_of(b'{"type":"action","id":1,"index":\xff}')
    assert fault.reason is Reason.INVALID_JSON and "not UTF-8" in fault.detail


def test_text_that_is_not_json_is_invalid_json():
    fault = fault_of(b"play the red two")
    assert fault.reason is Reason.INVALID_JSON and "'play the red two'" in fault.detail


def test_deeply_nested_json_is_refused_without_a_recursion_error():
    assert fault_of(b"[" * 100_000).reason is Reason.INVALID_JSON
    assert fault_of(b"[" * 5000 + b"]" * 5000).reason in (Reason.INVALID_JSON, Reason.BAD_MESSAGE)


@pytest.mark.parametrize(
    "line, words",
    [
        (b'{"type":"action","id":1}', "exactly one of 'index' and 'action'"),
        (b'{"type":"action","id":1,"index":0,"action":{"take":1}}', "exactly one of 'index' and 'action'"),
        (b'{"type":"action","id":1,"index":true}', "valid integer"),
        (b'{"type":"action","index":0}', "id: Field required"),
        (b'{"type":"pass","id":1}', "does not match any of the expected tags"),
        (b'{"name":"x"}', "Unable to extract tag"),
        (b"[1, 2]", "Input should be an object"),
        (b'{"type":"ready","name":""}', "at least 1 character"),
    ],
)
def test_a_wrong_message_is_a_bad_message_saying_what_is_wrong(line, words):
    fault = fault_of(line)
    assert fault.reason is Reason.BAD_MESSAGE and words in fault.detail, fault.detail


def run_helper(decide, *messages, **hooks) -> tuple[list[dict], arena_bot.Context]:
    stdin = io.BytesIO(b"".join(json.dumps(message).encode() + b"\n" for message in messages))
    stdout = io.StringIO()
    ctx = arena_bot.run(decide, name="helper-test", version="2.5", stdin=stdin, stdout=stdout, **hooks)
    return [json.loads(line) for line in stdout.getvalue().splitlines()], ctx


HELLO = {
    "type": "hello", "protocol": 1, "game": "nim-test", "players": 2, "rules": {"stones": 5},
    "games": 1, "seed": 42,
    "limits": {"startup_s": 1, "decision_s": 1, "time_bank_s": 1, "max_line_bytes": 100, "memory_mb": 64},
}
START = {"type": "start", "game_number": 1, "seat": 1, "players": 2, "rules": {"stones": 5}}
LEGAL = [{"take": 1}, {"take": 2}, {"take": 3}]


def request(number: int) -> dict:
    return {"type": "request", "id": number, "observation": {"stones": 5}, "legal_actions": LEGAL,
            "time_s": 1.0, "bank_s": 1.0}


def test_the_helper_answers_hello_and_requests_by_index_or_action():
    answers, ctx = run_helper(
        lambda observation, legal: 2 if observation["stones"] == 5 else legal[0],
        HELLO, START, request(1), {**request(2), "observation": {"stones": 4}},
        {"type": "match_over", "games": 1},
    )
    assert answers == [
        {"type": "ready", "name": "helper-test", "version": "2.5", "protocol": 1},
        {"type": "action", "id": 1, "index": 2},
        {"type": "action", "id": 2, "action": {"take": 1}},
    ]
    assert ctx.seat == 1 and ctx.game == "nim-test" and ctx.rules == {"stones": 5}


def test_the_helper_gives_context_events_and_a_seeded_rng_to_a_three_argument_decide():
    seen = []

    def decide(observation, legal, ctx):
        seen.append((ctx.seat, list(ctx.events), ctx.request["id"]))
        return ctx.rng.randrange(len(legal))

    events = {"type": "events", "events": [{"type": "take", "seat": 0, "take": 1}]}
    over = {"type": "game_over", "game_number": 1, "seat": 1, "places": [2, 1], "scores": [0, 1], "forfeits": []}
    finished = []
    answers, ctx = run_helper(decide, HELLO, START, events, request(7), over,
                              on_game_over=lambda message, ctx: finished.append(message["places"]))
    import random

    assert answers[1] == {"type": "action", "id": 7, "index": random.Random(42).randrange(3)}
    assert seen == [(1, [{"type": "take", "seat": 0, "take": 1}], 7)]
    assert finished == [[2, 1]] and ctx.results == [over]


def test_the_helper_stops_at_end_of_input():
    answers, ctx = run_helper(lambda observation, legal: 0, HELLO)
    assert [answer["type"] for answer in answers] == ["ready"] and ctx is not None


def test_every_example_bot_carries_the_current_helper():
    canonical = HELPER.read_bytes()
    copies = list((ROOT / "bots").glob("*/arena_bot.py"))
    assert copies, "the example Python bots use the helper"
    for copy in copies:
        assert copy.read_bytes() == canonical, f"{copy} differs from bots/arena_bot.py: copy it again"


def test_the_helper_speaks_arenas_protocol_version():
    # The helper lives outside the package (a bot carries a copy of it): its version is a
    # copy too, checked here against the protocol's one home.
    assert HELPER.parent == ROOT / "bots" and not (ROOT / "arena" / "arena_bot.py").exists()
    assert arena_bot.PROTOCOL_VERSION == PROTOCOL_VERSION
    answers, _ = run_helper(lambda observation, legal: 0, HELLO)
    assert answers[0]["protocol"] == PROTOCOL_VERSION


def test_every_kit_and_example_bot_says_arenas_protocol_version():
    # Each starter kit and the Node example bot write the version in their `ready` (a copy,
    # as a bot carries no arena): every copy must be arena.game.protocol's.
    said = {}
    for path in sorted([*(ROOT / "kits").rglob("*"), ROOT / "bots" / "node-simple" / "bot.js"]):
        if path.suffix not in (".c", ".cpp", ".go", ".java", ".js", ".py", ".rs") or "build" in path.parts:
            continue
        found = re.findall(r"""["']?protocol["']?\s*[:,]\s*(\d+)""", path.read_text(encoding="utf-8"))
        if found:
            said[str(path.relative_to(ROOT))] = {int(number) for number in found}
    assert {path.split("/")[1] for path in said if path.startswith("kits/")} == {
        "c", "cpp", "go", "java", "node", "python", "rust",
    }
    assert all(numbers == {PROTOCOL_VERSION} for numbers in said.values()), said


def write_manifest(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(text)
    return folder


def test_a_good_manifest_is_read():
    bot = load_bot(ROOT / "bots" / "random")
    assert (bot.name, bot.version, bot.command) == ("random", "1.0", ("python3", "bot.py"))
    assert bot.plays("3up3down") and bot.plays("three-thirteen") and not bot.plays("chess")


def test_a_command_may_be_one_string(tmp_path):
    bot = load_bot(write_manifest(tmp_path / "b", 'name="b"\nversion="1"\ncommand="node bot.js --fast"\ngames=["g"]\n'))
    assert bot.command == ("node", "bot.js", "--fast")


def test_a_wrong_manifest_gets_one_message_per_mistake(tmp_path):
    folder = write_manifest(
        tmp_path / "bad",
        'name = "no spaces allowed"\ncommand = []\ngames = "3up3down"\ndockerfile = "Dockerfile"\ncolour = "red"\n',
    )
    with pytest.raises(BotFolderError) as caught:
        load_bot(folder)
    assert caught.value.mistakes == [
        "unknown key 'colour'; allowed keys: name, version, command, games, dockerfile, language, build",
        "'name' is 'no spaces allowed'; allowed: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        ' (e.g. "my-bot")',
        "'version' is missing (e.g. version = \"1.0\")",
        "'command' is []; allowed: a non-empty list of non-empty strings, or a string",
        "'games' is '3up3down'; allowed: a non-empty list of game names",
        "'dockerfile' 'Dockerfile' does not exist in the bot folder",
    ]
    assert str(caught.value).count("\n  - ") == 6


def test_a_folder_without_manifest_or_with_broken_toml_says_so(tmp_path):
    with pytest.raises(BotFolderError, match="has no bot.toml"):
        load_bot(tmp_path)
    with pytest.raises(BotFolderError, match="is not a folder"):
        load_bot(tmp_path / "missing")
    with pytest.raises(BotFolderError, match="not valid TOML"):
        load_bot(write_manifest(tmp_path / "broken", "name = \n"))


def test_a_dockerfile_outside_the_folder_is_refused(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    folder = write_manifest(tmp_path / "b", 'name="b"\nversion="1"\ncommand=["x"]\ngames=["g"]\ndockerfile="../Dockerfile"\n')
    with pytest.raises(BotFolderError, match="points outside the bot folder"):
        load_bot(folder)
