"""What `arena run` and `arena standings` print: a gauntlet's challenger-against-each-opponent
table, the run's incidents with their reasons under the standings, the end-of-run site
interrupted by Ctrl-C, and output that fits 80 columns (the real command, in a subprocess)."""

from __future__ import annotations

import functools
import json
import re
import shutil
from pathlib import Path

import pytest
from tests import command

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random"


arena = functools.partial(command.arena, columns=80)


@pytest.fixture(scope="module")
def field(tmp_path_factory) -> Path:
    """ann, bob and cat (copies of the random bot) and crasher (exits at once, after a word on stderr)."""
    base = tmp_path_factory.mktemp("field")
    for name in ("ann", "bob", "cat"):
        shutil.copytree(RANDOM, base / name, ignore=shutil.ignore_patterns("__pycache__"))
        toml = (base / name / "bot.toml").read_text().replace('name = "random"', f'name = "{name}"')
        (base / name / "bot.toml").write_text(toml)
    (base / "crasher").mkdir()
    (base / "crasher" / "bot.toml").write_text(
        'name = "crasher"\nversion = "0.1"\ngames = ["3up3down"]\n'
        'command = ["python3", "-c", "import sys; print(\'bye\', file=sys.stderr); sys.exit(5)"]\n'
    )
    return base


def test_a_gauntlet_takes_its_challenger_out_of_the_field_glob_and_prints_it_against_each_opponent(tmp_path, field):
    out = tmp_path / "out"
    run = arena("run", "--game", "3up3down", "--seats", "2", "--format", "gauntlet", "--bots", str(field / "*"),
                "--challenger", str(field / "crasher"), "--rounds", "2", "--seed", "3", "--rule", "max_turns=60",
                "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    assert "listed more than once" not in run.stderr
    table = run.stdout[run.stdout.index("gauntlet: each challenger"):].splitlines()
    assert [line.split() for line in table[1:6]] == [
        ["challenger", "opponent", "games", "ahead", "tied", "behind", "score", "place", "theirs"],
        [re.sub(".", "─", line) for line in table[2].split()],
        ["crasher", "ann", "2", "0", "0", "2", "0.00", "2.00", "1.00"],
        ["crasher", "bob", "2", "0", "0", "2", "0.00", "2.00", "1.00"],
        ["crasher", "cat", "2", "0", "0", "2", "0.00", "2.00", "1.00"],
    ]
    standings = json.loads(arena("standings", str(out), "--json").stdout)
    [crasher] = [line for line in standings if line["bot"] == "crasher"]
    assert crasher["gauntlet"][0] == {
        "challenger": "crasher", "opponent": "ann", "games": 2, "ahead": 0, "tied": 0, "behind": 2,
        "place": 2.0, "opponent_place": 1.0, "score": 0.0,
    }
    assert all("gauntlet" not in line for line in standings if line["bot"] != "crasher")
    again = arena("standings", str(out))
    assert "crasher    cat          2     0    0      2  0.00  2.00   1.00" in again.stdout


def test_run_lists_the_incidents_with_their_reasons_under_the_standings(tmp_path, field):
    out = tmp_path / "out"
    run = arena("run", "--game", "3up3down", "--seats", "2", "--bots", str(field / "*"), "--seed", "3",
                "--rule", "max_turns=60", "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    after = run.stdout[run.stdout.index("place: average place"):]
    assert "\nincidents: 3 (3 forfeits); the first of each bot and reason:\ngame " in after
    assert re.search(  # wrapped at 80 columns: compared word by word
        r" game \d{5}-\d{5}-0, seat [01], crasher: CRASH at the start of the game: exited with code 5 "
        r"\(3 CRASH in all\) its stderr ends with: \| bye ", " ".join(after.split()) + " "
    ), after


def test_ctrl_c_while_the_site_is_written_says_the_games_are_safe_and_how_to_finish_it(tmp_path, field, monkeypatch):
    from typer.testing import CliRunner

    import arena.play.tournament
    import arena.site.writer
    from arena.cli.app import app

    def interrupted(*args, **kwargs):
        (tmp_path / "out" / "site").mkdir(parents=True, exist_ok=True)  # half written
        raise KeyboardInterrupt

    monkeypatch.setattr(arena.play.tournament, "render_report", interrupted)
    run = CliRunner().invoke(app, ["run", "--game", "3up3down", "--seats", "2", "--bots", str(field / "ann"),
                                   "--bots", str(field / "bob"), "--rule", "max_turns=60", "--out",
                                   str(tmp_path / "out"), "--quiet"])
    out = tmp_path / "out"
    assert run.exit_code == 130
    said = run.output[run.output.index("arena: stopped"):]  # wrapped at 80 columns: compared word by word
    assert " ".join(said.split()) == (
        f"arena: stopped while writing the site. The games are safe: 1 of 1 are stored in {out}. "
        f"The site in {out / 'site'} is incomplete: finish it with arena report {out}"
    )
    monkeypatch.setattr(arena.site.writer, "write_site", interrupted)
    again = CliRunner().invoke(app, ["report", str(out)])
    assert again.exit_code == 130
    said = again.output[again.output.index("arena: stopped"):]
    assert " ".join(said.split()) == (
        f"arena: stopped: the site in {out / 'site'} is incomplete (the games stored in {out} are untouched); "
        f"run arena report {out} again to finish it"
    )
