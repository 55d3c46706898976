"""Starter kits (kits/<lang>/, `arena new`): each is submitted in the Docker sandbox (its
build step runs there, in its language's image) and plays a match of each game against
bots/random from the registry's copy. Needs a Docker engine with the base image; the
language image is built once per machine when missing (ARENA_REQUIRE_DOCKER=1: a missing
engine fails instead of skipping)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.botcopy import FolderLimits
from arena.config.botfolder import load_bot
from arena.langs.built import is_stale, place_of
from arena.langs.kits import KitError, available, new_bot
from arena.play.match import run_match
from arena.registry.submit import playable_problem, submit_bot
from arena.sandbox import Limits
from arena.store.db import content_hash
from tests.command import arena

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random"
KITS = ["c", "cpp", "rust", "go", "java", "node", "python"]
# Generous start-up: a JVM under a loaded CI machine.
LIMITS = Limits(startup_s=20.0, decision_s=2.0, time_bank_s=20.0)


@pytest.fixture(scope="module")
def docker_client(docker_engine):
    """A client that waits for a language image's build (a minute or two, once per machine)."""
    import docker

    return docker.from_env(timeout=1800)


def language_image(client, language: str) -> str:
    """The language's image, built when missing (a minute or two, once per machine)."""
    from arena.sandbox.docker.engine import default_image
    from arena.sandbox.languages import build_language_image

    return build_language_image(client, language, default_image())[0]


def test_every_language_of_the_tests_has_a_kit_and_arena_new_copies_it(tmp_path):
    assert set(KITS) <= set(available())
    made = new_bot(tmp_path / "my bot!", "c")
    manifest = load_bot(made)
    assert manifest.name == "my-bot"  # the folder's name, made a legal bot name
    assert manifest.language == "c" and manifest.build and not (made / "build").exists()
    assert len((made / "README.md").read_text().splitlines()) <= 20
    with pytest.raises(KitError, match="already exists and is not an empty folder"):
        new_bot(made, "c")
    with pytest.raises(KitError, match="no starter kit for 'cobol'; kits: "):
        new_bot(tmp_path / "other", "cobol")


def test_arena_new_prints_the_command_its_kit_readme_writes(tmp_path, monkeypatch):
    """Issue 34 part 8: `arena new` and the kit's README name the random bot alike
    (RANDOM_BOT, a real folder), and `arena new`'s mistakes start with "arena: error:"."""
    from typer.testing import CliRunner

    from arena.cli.app import app

    monkeypatch.chdir(tmp_path)
    for language in KITS:
        run = CliRunner().invoke(app, ["new", f"my-{language}", "--language", language], env={"COLUMNS": "80"})
        assert run.exit_code == 0, run.output
        said = run.stdout.splitlines()
        assert all(len(line) <= 80 or " " not in line.strip() for line in said), said  # a long path alone
        assert said[-3].startswith("  RANDOM_BOT=") and said[-2] == f"  cd my-{language}"
        assert said[-1] == '  arena match three-thirteen . "$RANDOM_BOT" --sandbox docker'
        random_bot = Path(said[-3].split("=", 1)[1])
        assert load_bot(random_bot).name == "random"
        readme = " ".join((tmp_path / f"my-{language}" / "README.md").read_text().split())
        assert "set RANDOM_BOT as `arena new` printed" in readme
        assert 'arena match three-thirteen . "$RANDOM_BOT" --sandbox docker' in readme
        assert "RANDOM_BOT " not in readme.replace("set RANDOM_BOT as", "")  # no other spelling of it
    wrong = arena("new", "x", "--language", "python3", cwd=tmp_path)  # through main, which catches ArenaError
    assert wrong.returncode == 2 and wrong.stderr.startswith("arena: error: no starter kit for 'python3'; kits: ")


def test_every_kit_says_the_name_of_its_bot_toml(tmp_path):
    """Issue 34 part 8: a kit's `ready` names the bot as its bot.toml does, not "rust-kit"."""
    import subprocess
    import sys

    for language in KITS:
        made = new_bot(tmp_path / f"ann-{language}", language)
        assert load_bot(made).name == f"ann-{language}"
        sources = [path for path in made.rglob("*") if path.is_file() and path.name not in ("bot.toml", "README.md")]
        said = [path for path in sources if f'"ann-{language}"' in path.read_text(errors="replace")]
        assert len(said) == 1, (language, said)
        assert not any(f'"{language}-kit"' in path.read_text(errors="replace") for path in sources)
    hello = {"type": "hello", "protocol": 1, "game": "3up3down", "players": 2, "rules": {}, "games": 1, "seed": 1,
             "seat": 0}
    answer = subprocess.run([sys.executable, "bot.py"], cwd=tmp_path / "ann-python", input=json.dumps(hello) + "\n",
                            capture_output=True, text=True, timeout=60)
    assert json.loads(answer.stdout.splitlines()[0])["name"] == "ann-python"


def test_a_compiled_kits_readme_says_how_to_submit_and_what_becomes_of_build(tmp_path):
    """Issue 34 part 8: "submit it" says where to (--to URL, or a registry) and what
    becomes of build/."""
    for language in KITS:
        readme = " ".join((ROOT / "kits" / language / "README.md").read_text().split())
        assert "`arena submit . --to URL` (a served arena;" in readme
        if load_bot(ROOT / "kits" / language).build:
            assert "build/ may stay or go: arena builds the bot again from your sources, in the sandbox." in readme


@pytest.mark.parametrize("language", KITS)
def test_kit_is_submitted_in_docker_and_plays_both_games_against_random(docker_client, tmp_path, language):
    from arena.sandbox.docker import DockerSandbox

    language_image(docker_client, language)
    bot = new_bot(tmp_path / f"{language}-kit", language)
    registry = tmp_path / "registry"
    done = submit_bot(bot, registry, sandbox="docker", limits=LIMITS)
    copy = registry / done.name / "1.0"
    assert done.folder == copy and done.smoke_games == {"3up3down": 2, "three-thirteen": 2}
    # The registry keeps what the build made; the hash covers the sources, not build/.
    if load_bot(copy).build:  # the compiled kits
        assert (copy / "build" / ".arena-built").is_file() and len(list((copy / "build").iterdir())) > 1
    assert json.loads((copy / "submission.json").read_text())["content_hash"] == done.content_hash
    assert content_hash(bot) == done.content_hash  # the author's folder, never built, hashes the same
    # Accepted means the league can play it: its own check passes on what arena's build
    # made (cargo's hard links included), and a league in Docker plays it as built.
    assert playable_problem(copy, docker=True, dockerfile=False, folder_limits=FolderLimits()) is None
    if load_bot(copy).build:
        box = DockerSandbox()
        try:
            assert not is_stale(copy, place_of(box, box.image_for(load_bot(copy).spec())))
        finally:
            box.close()
    # The smoke match of the submission played both games against random without an
    # incident; from the registry's copy, the kit keeps its least deadwood at Three
    # Thirteen: it beats random in every game.
    match = run_match("three-thirteen", [copy, RANDOM], games=2, seed=11, sandbox="docker", limits=LIMITS)
    assert [result.incidents for result in match.games] == [[], []]
    assert [result.places[result.seats.index(done.name)] for result in match.games] == [1, 1]


def test_a_failed_image_build_leaves_none_of_its_layers_and_removes_nothing_else(docker_client, monkeypatch):
    import uuid

    import arena.sandbox.languages as images
    from arena.sandbox.docker.engine import default_image

    base, run = default_image(), uuid.uuid4().hex[:12]
    other = f"arena-test-images:{run}-kept"  # another build of ours, before: it stays
    images.build_image(docker_client, f"FROM {base}\nRUN echo kept > /kept\n", other, {"arena.test": run},
                       build_id=f"{run}-kept")
    original, removed = images.remove_build, []

    def counting(client, build_id: str) -> int:
        removed.append(original(client, build_id))
        return removed[-1]

    monkeypatch.setattr(images, "remove_build", counting)
    failing = f"FROM {base}\nRUN echo made > /made\nRUN echo more > /more\nRUN exit 3\n"
    try:
        with pytest.raises(RuntimeError, match="returned a non-zero code: 3"):
            images.build_image(docker_client, failing, f"arena-test-images:{run}-failed", {"arena.test": run},
                               build_id=f"{run}-failed")
        # Its LABEL step and both RUN steps each made a layer; all three are gone.
        assert removed == [3]
        label = f"{images.BUILD_LABEL}={run}-failed"
        assert docker_client.images.list(all=True, filters={"label": label}) == []
        assert docker_client.images.get(other).labels[images.BUILD_LABEL] == f"{run}-kept"
    finally:
        docker_client.images.remove(other)
        original(docker_client, f"{run}-kept")


def test_the_kits_ship_in_the_wheel_without_build_output():
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]["kits"] == "arena/_shipped/kits"
    assert "kits" in pyproject["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    for language in KITS:
        kit = ROOT / "kits" / language
        assert not (kit / "build").exists() and not (kit / "target").exists()
        assert load_bot(kit).games == ("3up3down", "three-thirteen")
