"""What a bot's author is told when the bot faults: the end of its stderr (complete up to
the fault) and a hint where arena knows one, in `arena match`, `arena submit` and `arena
run`; and incident numbers in the bot's own terms (the request ids it saw)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.faults import BotFault, Reason, explain_fault, fault_hint
from arena.game.referee import play_game
from arena.game.seats import InProcessBot, Seat
from arena.play.match import run_match
from tests.bot_folders import written_bot as bot_folder  # a folder readable by everyone
from tests.command import arena

ROOT = Path(__file__).resolve().parents[2]
RANDOM = str(ROOT / "bots" / "random")


# A bot that logs two lines and then answers with an illegal index (its stdout overtakes its stderr).
TWO_LINES_THEN_ILLEGAL = """
    import json, sys
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            print(json.dumps({"type": "ready", "name": "two-lines", "version": "1.0"}), flush=True)
        elif message["type"] == "request":
            sys.stderr.write("first line\\n"); sys.stderr.flush()
            sys.stderr.write("second line\\n"); sys.stderr.flush()
            print(json.dumps({"type": "action", "id": message["id"], "index": 999}), flush=True)
"""

# Answers its first two requests, logs the id of each, and chooses an illegal index at request 3.
ILLEGAL_AT_REQUEST_3 = """
    import json, sys
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            print(json.dumps({"type": "ready", "name": "third", "version": "1.0"}), flush=True)
        elif message["type"] == "request":
            print(f"asked request {message['id']}", file=sys.stderr, flush=True)
            index = 0 if message["id"] < 3 else 999
            print(json.dumps({"type": "action", "id": message["id"], "index": index}), flush=True)
"""


# ------------------------------------------------------------------------------ the hints


@pytest.mark.parametrize(
    "reason, detail, log, sandbox, hint",
    [
        ("CRASH", "exited with code 127", "arena: cannot run 'python4': not found in PATH", "local",
         "`command` was not found"),
        ("CRASH", "exited with code 127", "arena-stdio: 1: exec: jq: not found", "docker",
         "missing from the Docker image"),
        ("CRASH", "exited with code 126", "", "local", "make it executable"),
        ("TIMEOUT", "did not answer 'hello' within the start-up limit of 10 s", "", "local", "flush stdout"),
        ("TIMEOUT", "gave no answer within 11 s (decision limit 1 s plus what was left of the time bank)", "",
         "docker", "flush stdout"),
        ("INVALID_JSON", "wrote a line that is not JSON: 'thinking...'", "", "local", "write logs and debugging"),
        ("BAD_MESSAGE", "spoke out of turn: wrote 'debug: hand is [1, 2]' when no answer was asked for", "",
         "local", "write logs and debugging output to stderr"),
    ],
)
def test_a_fault_arena_recognises_comes_with_its_hint(reason, detail, log, sandbox, hint):
    assert hint in fault_hint(reason, detail, log, sandbox)


@pytest.mark.parametrize(
    "reason, detail",
    [
        ("CRASH", "exited with code 1"),
        ("ILLEGAL_ACTION", "chose index 9; allowed: 0..3"),
        ("BAD_MESSAGE", "spoke out of turn: wrote '{\"type\": \"action\", \"id\": 4}' when no answer was asked for"),
        ("TIMEOUT", "stopped reading its input"),
    ],
)
def test_a_fault_without_a_known_cause_has_no_hint(reason, detail):
    assert fault_hint(reason, detail, "Traceback (most recent call last):\nValueError: boom", "local") is None


def test_the_explanation_is_the_last_five_lines_of_stderr_then_the_hint():
    log = "\n".join(f"line {n}" for n in range(1, 9)) + "\n\n"
    assert explain_fault(Reason.INVALID_JSON, "wrote a line that is not JSON: 'x'", log) == [
        "its stderr ends with:", "| line 4", "| line 5", "| line 6", "| line 7", "| line 8",
        "hint: arena reads every line the bot writes to stdout as a protocol message: write logs and debugging "
        "output to stderr instead (Python: print(..., file=sys.stderr))",
    ]
    assert explain_fault(Reason.ILLEGAL_ACTION, "chose index 9; allowed: 0..3", "") == ["it wrote nothing to stderr"]


# ------------------------------------------------------------------------------ the commands


def test_match_shows_why_a_command_cannot_run(tmp_path):
    missing = bot_folder(tmp_path / "p4", '"python4 bot.py"')
    run = arena("match", "3up3down", str(missing), RANDOM, "--rule", "max_turns=20")
    assert run.returncode == 0, run.stderr
    assert "game 1, seat 0, p4: CRASH at the start of the game: exited with code 127\n" in run.stdout
    assert "  its stderr ends with:\n  | arena: cannot run 'python4'" in run.stdout
    assert "  hint: the program in bot.toml's `command` was not found" in run.stdout


def test_submit_refusal_shows_the_bots_stderr_and_a_hint(tmp_path):
    missing = bot_folder(tmp_path / "p4", '"python4 bot.py"')
    run = arena("submit", str(missing), "--registry", str(tmp_path / "registry"))
    assert run.returncode == 2
    lines = run.stderr.splitlines()  # each line of a reason wrapped at 80 columns, under its indentation
    first = lines.index("  - smoke match of 3up3down, game 1: CRASH at the start of the game: exited with")
    assert lines[first + 1] == "    code 127"
    assert lines[first + 2] == "      its stderr ends with:"
    assert lines[first + 3].startswith("      | arena: cannot run 'python4'")
    hint = next(n for n in range(first + 4, len(lines)) if not lines[n].startswith("        "))
    assert lines[hint].startswith("      hint: the program in bot.toml's `command` was not found")
    assert max(len(line) for line in lines[first:]) <= 80
    assert not (tmp_path / "registry").exists()


def test_match_numbers_an_incident_by_the_request_id_the_bot_saw(tmp_path):
    third = bot_folder(tmp_path / "third", '["python3", "bot.py"]', ILLEGAL_AT_REQUEST_3)
    run = arena("match", "3up3down", str(third), RANDOM, "--seed", "3")
    assert run.returncode == 0, run.stderr
    # Its log's last words name request 3, and so does the incident.
    assert "game 1, seat 0, third: ILLEGAL_ACTION at request 3 (after " in run.stdout
    assert "  | asked request 3\n" in run.stdout


def test_incident_request_is_none_outside_a_request_and_counts_through_the_match(tmp_path):
    third = bot_folder(tmp_path / "third", '["python3", "bot.py"]', ILLEGAL_AT_REQUEST_3)
    match = run_match("3up3down", [third, RANDOM], games=2, seed=3)
    [first] = match.games[0].incidents
    assert (first.request, first.log_tail.splitlines()[-1]) == (3, "asked request 3")
    assert first.decision >= 2  # moves of both seats: not what the bot saw
    # Restarted for game 2, the bot sees ids go on from the match's count, and so does the incident.
    [second] = match.games[1].incidents
    assert second.request == int(second.log_tail.splitlines()[-1].split()[-1]) and second.request > 3


# ----------------------------------------------------------------- stderr complete up to the fault


class _LogCompleteOnlyOnceStopped(Seat):
    """A seat whose process still holds its last log line in a pipe until it is stopped."""

    name = "late-log"

    def __init__(self) -> None:
        self.stopped = False

    def start_game(self, start) -> None:
        raise BotFault(Reason.CRASH, "exited with code 1")

    def send_events(self, events) -> None:
        pass

    def decide(self, observation, legal_actions):
        raise AssertionError("a forfeited seat is not asked")

    def game_over(self, message) -> None:
        pass

    def abandon(self):
        self.stopped = True
        return None

    def log_tail(self, limit: int = 2000) -> str:
        return "first line\nsecond line\n" if self.stopped else "first line\n"


def test_the_incident_log_is_read_once_the_bot_is_stopped():
    result = play_game("3up3down", [_LogCompleteOnlyOnceStopped(), InProcessBot(lambda o, legal: 0)], seed=1)
    [incident] = result.incidents
    assert incident.log_tail == "first line\nsecond line\n"


def test_the_last_stderr_lines_before_a_fault_are_all_kept_locally(tmp_path):
    bot = bot_folder(tmp_path / "two-lines", '["python3", "bot.py"]', TWO_LINES_THEN_ILLEGAL)
    match = run_match("3up3down", [bot, RANDOM], games=12, seed=5)
    tails = [incident.log_tail for game in match.games for incident in game.incidents]
    assert len(tails) == 12
    assert [tail.splitlines()[-2:] for tail in tails] == [["first line", "second line"]] * 12


@pytest.mark.parametrize("stdio", ["fifo", "attach"])
def test_the_last_stderr_lines_before_a_fault_are_all_kept_in_docker(docker_engine, tmp_path, stdio):
    from arena.sandbox.docker import DockerSandbox

    bot = bot_folder(tmp_path / "two-lines", '["python3", "bot.py"]', TWO_LINES_THEN_ILLEGAL)
    match = run_match("3up3down", [bot, RANDOM], games=8, seed=5, sandbox=DockerSandbox(stdio=stdio))
    tails = [incident.log_tail for game in match.games for incident in game.incidents]
    assert [tail.splitlines()[-2:] for tail in tails] == [["first line", "second line"]] * 8


JQ_BOT = """\
if .type == "hello" then {type: "ready", name: "jq-bot", version: "1.0"}
elif .type == "request" then {type: "action", id: .id, index: 0}
else empty end
"""


def test_a_jq_bot_in_the_base_image_is_told_jq_is_missing_from_the_image(docker_engine, tmp_path):
    bot = bot_folder(tmp_path / "jq-bot", '["jq", "-c", "--unbuffered", "-f", "bot.jq"]')
    (bot / "bot.jq").write_text(JQ_BOT)
    (bot / "bot.jq").chmod(0o644)
    run = arena("match", "3up3down", str(bot), RANDOM, "--sandbox", "docker", "--rule", "max_turns=20")
    assert run.returncode == 0, run.stderr
    from arena.sandbox.docker.engine import default_image

    # Found before the container starts (issue 26): one line, what is wrong and what to do.
    said = " ".join(run.stdout.split())  # the terminal's lines are wrapped at 80 columns
    assert (
        f"jq-bot: CRASH at the start of the game: its program 'jq' is not in its image {default_image()} "
        "(arena's base image (python3 only)): set language in bot.toml to one that has it (c, cpp, rust, go, "
        "java, node, python; docs/protocol.md, Your language), or bring a Dockerfile it wrote nothing"
    ) in said


def test_the_docker_hint_for_a_missing_program_names_language_and_dockerfile():
    from arena.faults import fault_hint

    hint = fault_hint("CRASH", "exited with code 127", "arena-stdio: 1: exec: jq: not found", "docker")
    assert hint.startswith("the program in bot.toml's `command` is missing from the Docker image (arena's base ")
    assert "name the bot's `language` in bot.toml" in hint and "give it a Dockerfile" in hint


def _own_layers() -> str:
    """A Dockerfile line that keeps a test's build cache its own (see tests/sandbox/test_sandbox_docker.py)."""
    import uuid

    return f"LABEL arena.test-run={uuid.uuid4().hex}\n"


def test_a_download_in_a_dockerfile_fails_and_the_refusal_says_builds_have_no_network(docker_engine, tmp_path):
    bot = bot_folder(tmp_path / "jq-bot", '["jq", "-c", "--unbuffered", "-f", "bot.jq"]')
    (bot / "bot.toml").write_text((bot / "bot.toml").read_text() + 'dockerfile = "Dockerfile"\n')
    (bot / "bot.jq").write_text(JQ_BOT)
    (bot / "Dockerfile").write_text(f"FROM arena-base:bookworm\n{_own_layers()}RUN apt-get install -y jq\nCOPY . /bot\n")
    for path in bot.iterdir():
        path.chmod(0o644)
    run = arena("submit", str(bot), "--sandbox", "docker", "--registry", str(tmp_path / "registry"),
                env={"ARENA_DOCKER_BUILD_NETWORK": ""})
    assert run.returncode == 2
    said = " ".join(run.stderr.split())  # the reasons are wrapped at 80 columns
    assert "building its Docker image failed: its Dockerfile did not build: The command '/bin/sh -c apt-get " \
           "install -y jq' returned a non-zero code: 100 (the build's last words: " in said
    assert "E: Unable to locate package jq" in said
    assert ("Bot images are built without network: a RUN step that downloads (apt-get install, pip install, npm "
            "install) fails; put what the bot needs in its folder, or the organiser may allow network for build "
            "steps only: ARENA_DOCKER_BUILD_NETWORK=bridge (the bot still runs without network)") in said


def test_the_organiser_may_give_build_steps_a_network(docker_engine, tmp_path, monkeypatch):
    import docker

    from arena.sandbox import BotSpec
    from arena.sandbox.docker import DockerSandbox

    folder = bot_folder(tmp_path / "networked", '["python3", "bot.py"]', "print('hi')\n")
    # An interface besides loopback exists in a build step only with a network.
    (folder / "Dockerfile").write_text(f"FROM arena-base:bookworm\n{_own_layers()}RUN test -e /sys/class/net/eth0\n")
    bot = BotSpec(name="networked", folder=folder, command=("python3", "bot.py"), dockerfile="Dockerfile")
    monkeypatch.delenv("ARENA_DOCKER_BUILD_NETWORK", raising=False)
    with pytest.raises(BotFault, match="returned a non-zero code: 1$"):
        DockerSandbox().image_for(bot)
    monkeypatch.setenv("ARENA_DOCKER_BUILD_NETWORK", "bridge")
    tag = DockerSandbox().image_for(bot)
    try:
        assert docker.from_env().images.get(tag).labels["arena.bot"] == "networked"
    finally:
        docker.from_env().images.remove(tag, force=True)


# ------------------------------------------------------------------ what docs/protocol.md promises


PROTOCOL_DOC = (ROOT / "docs" / "protocol.md").read_text()


def test_the_documented_string_command_splits_as_the_doc_says(tmp_path):
    import json as json_module
    import re

    from arena.config.botfolder import check_manifest

    written, words = re.search(r'`command = "([^"]+)"` is `(\[[^`]+\])`', PROTOCOL_DOC.replace("\n", " ")).groups()
    manifest = check_manifest(tmp_path, {"name": "x", "version": "1", "command": written, "games": ["3up3down"]})
    assert list(manifest.command) == json_module.loads(words) == ["python3", "bot.py", "--depth", "3"]
    assert "not run by a shell" in PROTOCOL_DOC


def test_a_bot_is_named_by_its_bot_toml_whatever_it_says_in_ready(tmp_path):
    assert "never by what it says in `ready`" in PROTOCOL_DOC
    liar = bot_folder(tmp_path / "toml-name", '["python3", "bot.py"]', """
        import json, sys
        for line in sys.stdin:
            message = json.loads(line)
            if message["type"] == "hello":
                print(json.dumps({"type": "ready", "name": "another-name", "version": "9"}), flush=True)
            elif message["type"] == "request":
                print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
    """)
    match = run_match("3up3down", [liar, RANDOM], games=1, seed=2)
    assert [bot.name for bot in match.bots] == ["toml-name", "random"]
    assert match.games[0].seats == ["toml-name", "random"] and match.games[0].incidents == []


def test_the_documented_card_ids_are_those_the_example_deal_shows():
    import json as json_module
    import re

    said = re.search(r"the six cards dealt to seat 0, ids ([\d, and]+)\)", PROTOCOL_DOC.replace("\n", " ")).group(1)
    ids = [int(number) for number in re.findall(r"\d+", said)]
    dealt = re.search(r'\{"type": "dealt", "seat": 0, "cards": (\[.*?\])\}', PROTOCOL_DOC).group(1)
    assert ids == [card["id"] for card in json_module.loads(dealt)]
    chosen = json_module.loads(re.search(r'"action": (\{"type": "choose_up", "cards": \[[\d, ]+\]\})', PROTOCOL_DOC).group(1))
    assert set(chosen["cards"]) <= set(ids)  # the answer's ids are cards the bot was dealt
