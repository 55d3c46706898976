"""Every command of `arena`, at 80 columns (COLUMNS=80): its normal output (stdout and
stderr: warnings, notes, incidents, progress lines) has no line longer than 80 characters.

One module-scoped session plays a small version of what an organiser and an author do:
a match with a crasher, an SPRT, a run with incidents and its standings, secret and site,
a registry listed, a bot submitted (to a registry and to a league), a league of a few
batches with a new version and a suspension, its standings with and without the retired
versions, the demo; and `--help` of the command and of every subcommand (serve's and
play's too: they run until Ctrl-C)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.app import app
from tests import command

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random"
HEURISTIC = ROOT / "bots" / "threeup-heuristic"
WIDTH = 80
# A long bot name: what would break a line first.
LONG = "cat-overthinker-deluxe-edition"


def arena(*args: str, cwd: Path = ROOT, ok: bool = True) -> subprocess.CompletedProcess:
    run = command.arena(*args, cwd=cwd, columns=WIDTH, env={"PYTHONPATH": str(ROOT)}, timeout=600)
    if ok:
        assert run.returncode == 0, (args, run.stdout, run.stderr)
    return run


JSON_OUTPUT = {"schema", "schema --game"}
# A JSON member whose value is one string: JSON cannot break a string, so a machine's
# output (`arena schema`, `--json`) keeps a long description on its line.
JSON_STRING = re.compile(r'^ *"[^"]*": "(?:[^"\\]|\\.)*",?$')


# `match --verbose`: each action and event as one JSON value on its line, to be read back.
TRACE = re.compile(r"^ *(?:seat \d+(?: \(fallback\))?: )?(?P<value>\{.*\})$")


def is_trace(line: str) -> bool:
    found = TRACE.match(line)
    if found is None:
        return False
    json.loads(found["value"])
    return True


def too_long(run: subprocess.CompletedProcess, label: str) -> list[str]:
    """The lines of a command's output wider than the terminal (for JSON, other than a
    member holding one string; for a verbose match, other than its JSON trace)."""
    if label in JSON_OUTPUT:
        json.loads(run.stdout)
    return [
        line for line in (run.stdout + run.stderr).splitlines()
        if len(line) > WIDTH
        and " " in line.strip()  # one word longer than a line (a path) is never cut: alone on its line
        and not (label in JSON_OUTPUT and JSON_STRING.match(line))
        and not (label == "match --verbose" and is_trace(line))
    ]


def copy_bot(source: Path, folder: Path, name: str, version: str = "1.0") -> Path:
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (folder / "bot.toml").read_text()
    toml = re.sub(r'^name = .*$', f'name = "{name}"', toml, flags=re.M)
    (folder / "bot.toml").write_text(re.sub(r'^version = .*$', f'version = "{version}"', toml, flags=re.M))
    return folder


def crasher(folder: Path, version: str = "1") -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(
        f'name = "crasher"\nversion = "{version}"\ngames = ["3up3down"]\n'
        'command = ["python3", "-c", "import sys; print(\'a long line of stderr before the crash, to show '
        'that an excerpt of the log is wrapped too, whatever it says\', file=sys.stderr); sys.exit(3)"]\n'
    )
    return folder


def docker_reachable() -> bool:
    try:
        import docker

        docker.from_env(timeout=5).ping()
    except Exception:  # noqa: BLE001 - no engine here: `arena images list` has nothing to list
        return False
    return True


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Every command's output, by a label."""
    base = tmp_path_factory.mktemp("width")
    field = base / "field"
    for name in ("ann", LONG):
        copy_bot(RANDOM, field / name, name)
    crasher(field / "crasher")
    registry = base / "registry"
    for name in ("ann", "bob", LONG):
        copy_bot(RANDOM, registry / name / "1.0", name)
    crasher(registry / "crasher" / "1")
    (registry / "zed" / "1.0").mkdir(parents=True)  # put there by hand, its bot.toml wrong
    (registry / "zed" / "1.0" / "bot.toml").write_text('name = "zed"\nversion = "1.0"\ngames = ["3up3down"]\n')
    out, league = base / "run", base / "league"
    quick = ["--rule", "max_turns=40"]
    runs = {}
    runs["games"] = arena("games")
    runs["schema"] = arena("schema")
    runs["schema --game"] = arena("schema", "--game", "three-thirteen")
    runs["match"] = arena("match", "3up3down", str(field / LONG), str(RANDOM), str(field / "crasher"), "--games", "3",
                          *quick)
    runs["match --verbose"] = arena("match", "3up3down", str(RANDOM), str(field / LONG), "--seed", "1", "--verbose",
                                    "--rule", "max_turns=6")
    runs["match --sprt"] = arena("match", "3up3down", str(HEURISTIC), str(RANDOM), "--sprt", "0", "100", "--games",
                                 "40", "--seed", "3", "--rule", "max_turns=60")
    runs["run"] = arena("run", "--game", "3up3down", "--seats", "3", "--bots", str(field / "*"), "--bots",
                        str(RANDOM), "--cycles", "1", "--out", str(out), "--quiet", *quick)
    runs["standings"] = arena("standings", str(out))
    secret = arena("secret", str(out))
    runs["secret"] = secret
    runs["secret --check"] = arena("secret", str(out), "--check", secret.stdout.strip())
    runs["report"] = arena("report", str(out))
    runs["bots"] = arena("bots", "--registry", str(registry))
    runs["submit"] = arena("submit", str(field / LONG), "--registry", str(base / "r"), "--startup-s", "30")
    runs["league"] = arena("league", str(league), "--game", "3up3down", "--seats", "2", "--registry", str(registry),
                           "--games", "24", "--seed", "4", *quick)
    copy_bot(RANDOM, base / "ann-2", "ann", "2.0")
    runs["submit --league"] = arena("submit", str(base / "ann-2"), "--league", str(league), "--wait-s", "0")
    runs["league again"] = arena("league", str(league), "--games", "30")
    runs["standings league"] = arena("standings", str(league))
    runs["standings --hide-retired"] = arena("standings", str(league), "--hide-retired")
    runs["demo"] = arena("demo", "--cycles", "1", "--out", str(base / "demo"), "--quiet")
    runs["new"] = arena("new", str(base / "my-c-bot"), "--language", "c")
    if docker_reachable():
        runs["images list"] = arena("images", "list")
    runs["--help"] = arena("--help")
    commands = [[command.name or command.callback.__name__] for command in app.registered_commands]
    for group in app.registered_groups:  # e.g. `arena authors`, and each of its commands
        commands.append([group.name])
        commands += [[group.name, command.name or command.callback.__name__]
                     for command in group.typer_instance.registered_commands]
    runs.update(helps(commands))
    return runs


# Every command's `--help` in one process at 80 columns, as `python -m arena COMMAND --help`
# prints it, byte for byte (typer builds a new console for each help, of the width COLUMNS
# says): 22 processes, each a second of importing arena, made one (54 -> 35 CPU-s a run).
HELPS = """
import json, sys
from typer.testing import CliRunner
from arena.cli.app import app
said = {}
for words in json.loads(sys.argv[1]):
    run = CliRunner().invoke(app, [*words, "--help"], prog_name="python -m arena", env={"COLUMNS": "80"})
    said[" ".join(words) + " --help"] = [run.exit_code, run.stdout, run.stderr]
print(json.dumps(said))
"""


def helps(commands: list[list[str]]) -> dict[str, subprocess.CompletedProcess]:
    run = subprocess.run(
        [sys.executable, "-c", HELPS, json.dumps(commands)], capture_output=True, text=True, cwd=ROOT, timeout=600,
        env={**os.environ, "COLUMNS": str(WIDTH), "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stderr
    said = {}
    for label, (code, stdout, stderr) in json.loads(run.stdout).items():
        assert code == 0 and "Usage: python -m arena " in stdout, (label, stdout, stderr)
        said[label] = subprocess.CompletedProcess([label], code, stdout, stderr)
    return said


def test_every_command_fits_80_columns(session):
    wide = {label: lines for label, run in session.items() if (lines := too_long(run, label))}
    assert not wide, "\n".join(f"{label}: {len(lines)} lines, the first: {lines[0]!r}" for label, lines in wide.items())


def test_the_session_shows_what_must_fit(session):
    """The lines most likely to be long are there to be measured."""
    assert "crasher" in session["match"].stdout and "CRASH" in session["match"].stdout  # incident lines
    assert "pair 10" in session["match --sprt"].stdout and "H1 accepted" in session["match --sprt"].stdout
    assert "incidents:" in session["run"].stdout and "local sandbox" in session["run"].stderr
    assert "band:" in session["standings"].stdout
    assert re.search(r"^batch \d+:", session["league"].stdout, re.M)
    assert "suspended" in session["league"].stdout  # the crasher, with its reason
    league_said = " ".join(session["league"].stdout.split())
    assert league_said.count("/zed/1.0 cannot join, its bot.toml is wrong: 'command' is missing") == 1  # once
    assert "not listed:" in session["bots"].stdout
    assert any(is_trace(line) and len(line) > WIDTH for line in session["match --verbose"].stdout.splitlines())
    assert "ann@2.0 joins" in session["league again"].stdout and "retired" in session["standings league"].stdout
    assert {"serve --help", "league --help", "submit --help", "match --help", "play --help"} <= set(session)
    assert any(label.startswith("authors ") for label in session)


def test_a_mistakes_list_fits_80_columns_under_its_first_line(tmp_path):
    """Issue 34 part 9: bot.toml's mistakes under `arena match` (a line of 98) and a
    refusal's reasons under `arena submit` (87) are wrapped, each under its bullet; the
    first line stays whole (the folder in a short path here, so that it fits too)."""
    import tempfile

    short = Path(tempfile.mkdtemp(prefix="w", dir="/tmp"))
    try:
        bad = short / "bad"
        bad.mkdir()
        (bad / "bot.toml").write_text('name = "bad bot"\nversion = "1.0"\ngames = ["3up3down", "poker"]\n')
        linked = copy_bot(RANDOM, short / "linked", "linked")
        (linked / "shadow").symlink_to("/etc/shadow")
        (linked / "data.bin").write_bytes(b"x" * 1_500_000)
        runs = {
            "match": arena("match", "3up3down", str(bad), str(RANDOM), ok=False),
            "submit": arena("submit", str(linked), "--registry", str(short / "r"), "--max-file-mb", "1", ok=False),
        }
    finally:
        shutil.rmtree(short)
    said = {label: run.stderr for label, run in runs.items()}
    assert "  - 'name' is 'bad bot'; allowed: 1-64 letters" in said["match"]
    assert "  - shadow: is a symbolic link (to '/etc/shadow'); links are not accepted" in said["submit"]
    wide = {label: lines for label, run in runs.items() if (lines := too_long(run, label))}
    assert not wide, wide
