"""Damage is noticed: a store with 8 KB overwritten, cut short or with a random header; a
secret.key that is empty, garbage, a folder or a link; `output =` naming a file; `arena
run DIR`. Each command says one line of what is wrong and what to do, exits 2, and prints
no traceback; `arena secret` refuses a key that is no key and warns on one that others
can read."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.ladder import LeagueConfig, run_league
from arena.store.db import Store
from tests.league.test_league_stops import put

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
NAMES = ("ann", "bob", "cat")


@pytest.fixture(scope="module")
def sound(tmp_path_factory) -> Path:
    """A league of 40 games of registry bots with a secret (no public seed), its store whole."""
    out = tmp_path_factory.mktemp("sound") / "league"
    registry = out.parent / "registry"
    for name in NAMES:
        put(registry, name)
    config = LeagueConfig(game="3up3down", seats=2, output=str(out), registry=str(registry), games=40,
                          rules={"max_turns": 40}, jobs=2)
    run_league(config, report=False)
    return out


def copy_of(sound: Path, where: Path) -> Path:
    out = where / "league"
    shutil.copytree(sound, out)
    return out


def arena(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], env=ENV, capture_output=True, text=True,
                          timeout=30, cwd=cwd)


def one_error(run: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 2, one line on stderr (no traceback) holding `words`; returns the line."""
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 2 and len(lines) == 1 and lines[0].startswith("arena: error: "), run.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def damage(store: Path, how: str) -> None:
    size = store.stat().st_size
    rng = random.Random(35)
    with store.open("r+b") as file:
        if how == "overwritten":
            file.seek(size // 2)
            file.write(rng.randbytes(8192))
        elif how == "truncated":
            file.truncate(size // 2)
        else:  # a random header
            file.write(rng.randbytes(100))


@pytest.mark.parametrize("how", ["overwritten", "truncated", "header"])
def test_a_damaged_store_is_said_in_one_line_by_every_command(sound, tmp_path, how):
    out = copy_of(sound, tmp_path)
    assert (out / "arena.sqlite").stat().st_size > 64 * 1024
    damage(out / "arena.sqlite", how)
    for command in (["standings", str(out)], ["league", str(out)], ["report", str(out), "--full"],
                    ["report", str(out)], ["secret", str(out)]):
        one_error(arena(*command), f"{out / 'arena.sqlite'} is damaged (", "put back a copy from your backup")


@pytest.mark.parametrize("how", ["empty", "garbage", "folder", "link"])
def test_a_secret_file_that_is_not_one_is_said_in_one_line(sound, tmp_path, how):
    out = copy_of(sound, tmp_path)
    secret = out / "secret.key"
    secret.unlink()
    if how == "empty":
        secret.write_text("")
    elif how == "garbage":
        secret.write_text("not a key at all\n")
    elif how == "folder":
        secret.mkdir()
    else:
        (tmp_path / "elsewhere.key").write_text("ab" * 32 + "\n")
        secret.symlink_to(tmp_path / "elsewhere.key")
    what = {"empty": "is empty", "garbage": "is not a secret", "folder": "is a folder",
            "link": "is a symbolic link"}[how]
    for command in (["league", str(out)], ["secret", str(out)]):
        one_error(arena(*command), f"{secret} {what}", "put back a copy")


def test_arena_secret_prints_a_sound_key_and_warns_when_others_can_read_it(sound, tmp_path):
    out = copy_of(sound, tmp_path)
    (out / "secret.key").chmod(0o600)
    kept = arena("secret", str(out))
    assert kept.returncode == 0 and kept.stderr == "" and len(kept.stdout.strip()) == 64
    (out / "secret.key").chmod(0o644)
    told = arena("secret", str(out))
    assert told.returncode == 0 and told.stdout == kept.stdout
    said = f"arena: warning: {out / 'secret.key'} can be read by others (mode 644); chmod 600 {out / 'secret.key'}"
    assert " ".join(told.stderr.split()) == said


def test_an_output_that_is_a_file_and_a_folder_given_as_the_file_are_said_in_one_line(tmp_path):
    (tmp_path / "taken").write_text("a file")
    (tmp_path / "club.toml").write_text(
        '[league]\ngame = "3up3down"\nseats = 2\nregistry = "registry"\noutput = "taken"\n'
    )
    one_error(arena("league", "club.toml", cwd=tmp_path), f"the output {tmp_path / 'taken'} is a file, not a folder")
    one_error(arena("run", "--game", "3up3down", "--seats", "2", "--out", "taken/inside", "--bots",
                    str(ROOT / "bots" / "random"), "--bots", str(ROOT / "bots" / "threeup-heuristic"), cwd=tmp_path),
              f"would be made in {tmp_path / 'taken'}, a file")
    (tmp_path / "folder").mkdir()
    one_error(arena("run", "folder", cwd=tmp_path), "folder is a folder, not a tournament file (TOML)")


def test_a_league_folder_put_back_elsewhere_plays_there_not_where_it_came_from(sound, tmp_path):
    """A backup put back in another folder: `arena league COPY` once played into the
    folder the league was first run in (its stored `output`)."""
    out = copy_of(sound, tmp_path)
    resumed = arena("league", str(out), "--games", "44")
    assert resumed.returncode == 0, resumed.stderr
    assert f"league {out}:" in " ".join(resumed.stdout.split())
    with Store.open(out) as store:
        assert len(store.done_keys()) == 44
    with Store.open(sound) as store:
        assert len(store.done_keys()) == 40
