"""The terminal manners of the `arena` command: --version and -h, the local sandbox's warning
said once per command, no blank line before an error, `match --verbose` in cause-and-effect
order, and tables and the progress bar that fit 80 columns with nothing cut."""

from __future__ import annotations

import functools
import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from tests import command

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random"
LONG_NAMES = ("alphabet-soup-strategist-v2", "bob-the-very-careful-bot", "cat-overthinker-deluxe-edition")
VERY_LONG = "a-really-quite-long-bot-name-for-testing-width-x"  # 48 characters


arena = functools.partial(command.arena, columns=80)


@pytest.fixture(scope="module")
def long_named(tmp_path_factory) -> Path:
    """Copies of the random bot with long names."""
    base = tmp_path_factory.mktemp("long")
    for name in (*LONG_NAMES, VERY_LONG):
        shutil.copytree(RANDOM, base / name, ignore=shutil.ignore_patterns("__pycache__"))
        toml = (base / name / "bot.toml").read_text().replace('name = "random"', f'name = "{name}"')
        (base / name / "bot.toml").write_text(toml)
    return base


def test_version_and_h_as_well_as_help():
    import arena as package

    version = arena("--version")
    assert (version.returncode, version.stdout) == (0, f"arena {package.__version__}\n")
    for args in (["-h"], ["match", "-h"], ["run", "-h"]):
        shown = arena(*args)
        assert shown.returncode == 0 and "Usage:" in shown.stdout and shown.stdout == arena(*args[:-1], "--help").stdout


def test_the_local_sandbox_warning_is_said_once_per_command_with_worker_processes(tmp_path):
    run = arena("run", "--game", "3up3down", "--seats", "2", "--bots", str(RANDOM), "--bots",
                str(ROOT / "bots" / "threeup-heuristic"), "--cycles", "2", "--jobs", "2", "--rule", "max_turns=40",
                "--out", str(tmp_path / "out"), "--quiet")
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("the local sandbox does not isolate untrusted code") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--game", "3up3down", "--seats", "2", "--bots", "/nowhere/at-all"],
        ["run", "--game", "chess", "--seats", "2"],
        ["match", "3up3down", str(RANDOM), "/nowhere/at-all"],
    ],
)
def test_an_error_comes_alone_without_a_blank_line(tmp_path, args):
    run = arena(*args, "--out", str(tmp_path / "out")) if args[0] == "run" else arena(*args)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.startswith("arena: error: ")


def test_verbose_prints_each_action_before_the_events_it_caused():
    run = arena("match", "3up3down", str(RANDOM), str(RANDOM), "--seed", "1", "--rule", "max_turns=8", "--verbose")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    # The deal, then seat 0's choice and its event, then seat 1's and its events.
    assert json.loads(lines[0])["type"] == "deal"
    assert lines[1].startswith('  seat 0: {"type": "choose_up"')
    assert lines[2] == '    {"type": "choose_up", "seat": 0}'
    assert lines[3].startswith('  seat 1: {"type": "choose_up"')
    assert lines[4] == '    {"type": "choose_up", "seat": 1}'
    # Every play event of a seat comes right under that seat's action, never above it.
    for at, line in enumerate(lines):
        if line.startswith('    {"type": "play", "seat": '):
            seat = json.loads(line)["seat"]
            above = next(earlier for earlier in reversed(lines[:at]) if earlier.startswith("  seat "))
            assert above.startswith(f"  seat {seat}")


def test_a_swiss_standings_table_with_long_names_fits_80_columns_whole(tmp_path, long_named):
    run = arena("run", "--game", "3up3down", "--seats", "2", "--format", "swiss", "--rounds", "2",
                "--bots", str(long_named / VERY_LONG), "--bots", str(long_named / LONG_NAMES[0]), "--bots", str(RANDOM),
                "--rule", "max_turns=40",
                "--out", str(tmp_path / "out"), "--quiet")
    assert run.returncode == 0, run.stderr
    table = [line for line in run.stdout.splitlines()[1:] if line.strip()][:5]
    assert table[0].split() == ["#", "band", "bot", "score", "bhz", "mu-3σ", "forf"]
    assert all(len(line.rstrip()) <= 80 and "…" not in line for line in table)
    assert [line.split()[0] for line in table[2:]] == ["1", "2", "3"]
    assert {line.split()[2] for line in table[2:]} == {VERY_LONG, LONG_NAMES[0], "random"}


def test_a_match_with_long_names_fits_80_columns_whole(long_named):
    run = arena("match", "3up3down", *(str(long_named / name) for name in LONG_NAMES), "--games", "2",
                "--rule", "max_turns=30")
    assert run.returncode == 0, run.stderr
    assert "…" not in run.stdout
    lines = run.stdout.splitlines()
    assert [line for line in lines if len(line.rstrip()) > 80] == []
    assert lines[1].split() == ["game", "bot", "1", "bot", "2", "bot", "3", "incidents"]
    assert [line for line in lines if line.startswith("bot ") and ": " in line] == [
        f"bot {number}: {name}" for number, name in enumerate(LONG_NAMES, start=1)
    ]


def test_the_progress_bar_keeps_every_figure_whole_at_80_columns(monkeypatch):
    import arena.cli.progress

    for width, leader in ((80, False), (120, True)):
        screen = Console(width=width, force_terminal=True, file=io.StringIO(), color_system=None)
        monkeypatch.setattr(arena.cli.progress, "console", screen)
        bar = arena.cli.progress.progress_bar(quiet=False)
        task = bar.add_task("arena demo: 3up3down", total=1000, rate="4.6 games/s", leader="threeup-heuristic")
        bar.update(task, completed=48)
        screen.print(bar.make_tasks_table(bar.tasks))
        [line] = screen.file.getvalue().splitlines()
        assert len(line) <= width and "…" not in line
        assert line.startswith("arena demo: 3up3down ")
        assert " 48/1000 4.6 games/s 0:00:00 eta -:--:--" in line
        assert line.endswith("leader: threeup-heuristic") is leader


def test_a_registry_listing_keeps_each_bot_on_one_line_at_80_columns(tmp_path):
    shutil.copytree(RANDOM, tmp_path / "registry" / "random", ignore=shutil.ignore_patterns("__pycache__"))
    run = arena("bots", "--registry", str(tmp_path / "registry"))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    # The first line names the registry: a long temporary path wraps onto more lines.
    header = next(number for number, line in enumerate(lines) if line.split()[:1] == ["name"])
    assert lines[header].split() == ["name", "version", "games", "hash", "date"]
    assert lines[header + 2].split()[:3] == ["random", "1.0", "3up3down,three-thirteen"] and len(lines) == header + 3


def test_a_match_standings_table_with_a_very_long_name_keeps_its_incidents_column(long_named):
    run = arena("match", "3up3down", str(long_named / VERY_LONG), str(RANDOM), "--rule", "max_turns=30")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    header = lines[lines.index("standings") + 1]
    assert header.split() == ["bot", "games", "place", "incidents"]  # wins and game score left out, nothing cut
    assert "…" not in run.stdout and [line for line in lines if len(line.rstrip()) > 80] == []
