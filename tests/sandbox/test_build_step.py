"""bot.toml's `build` step (arena.langs.build): run before `arena match` when build/ is
missing or stale, from scratch at `arena submit`, its failure shown with its output, and
build/ left out of the content hash. Local sandbox here; Docker cases at the end (they
skip without an engine unless ARENA_REQUIRE_DOCKER=1)."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path

import pytest

from arena.botcopy import FolderLimits, vet_bot_folder
from arena.config.botfolder import BotFolderError, load_bot
from arena.langs.build import BuildFailed, is_stale, run_build
from arena.langs.built import read_mark
from arena.play.match import MatchError, run_match
from arena.registry.submit import SubmitRefused, playable_problem, submit_bot
from arena.sandbox import Limits, Sandbox, get_sandbox
from arena.store.db import Store, content_hash

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random"
QUICK = Limits(startup_s=10.0, decision_s=1.0, time_bank_s=2.0)
# The "compiler": copies the random bot into build/ and counts its runs in build/runs.
COPY_BUILD = '["sh", "-c", "cp bot.py arena_bot.py build/ && echo run >> build/runs"]'


def make_bot(folder: Path, build: str = COPY_BUILD, name: str = "built", extra: str = "") -> Path:
    folder.mkdir(parents=True)
    for part in ("bot.py", "arena_bot.py"):
        shutil.copy(RANDOM / part, folder / part)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1.0"\ncommand = ["python3", "build/bot.py"]\n'
        f'games = ["3up3down", "three-thirteen"]\nbuild = {build}\n{extra}'
    )
    os.chmod(folder, 0o755)
    return folder


def runs(folder: Path) -> int:
    path = folder / "build" / "runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


def build_failure(bot: Path, sandbox: Sandbox | None = None) -> BuildFailed:
    """What building `bot` fails with, in `sandbox` (the local one unless told)."""
    with pytest.raises(BuildFailed) as caught:
        run_build(load_bot(bot).spec(), sandbox or get_sandbox("local"))
    return caught.value


def test_match_builds_once_per_content_hash_a_changed_source_again_a_touched_one_not(tmp_path):
    bot = make_bot(tmp_path / "bot")
    assert is_stale(bot)
    match = run_match("3up3down", [bot, RANDOM], games=2, seed=3, limits=QUICK)
    assert [result.incidents for result in match.games] == [[], []]
    assert runs(bot) == 1 and (bot / "build" / "bot.py").read_bytes() == (bot / "bot.py").read_bytes()
    mark = read_mark(bot)
    assert mark["source"] == content_hash(bot) and mark["where"].startswith("local ")
    run_match("3up3down", [bot, RANDOM], games=1, seed=3, limits=QUICK)
    assert runs(bot) == 1  # up to date: not built again
    later = time.time() + 5
    os.utime(bot / "arena_bot.py", (later, later))  # touched, not changed: the same content
    run_match("3up3down", [bot, RANDOM], games=1, seed=3, limits=QUICK)
    assert runs(bot) == 1
    with (bot / "arena_bot.py").open("a") as source:
        source.write("\n# changed\n")
    run_match("3up3down", [bot, RANDOM], games=1, seed=3, limits=QUICK)
    assert runs(bot) == 2 and read_mark(bot)["source"] == content_hash(bot)
    # Built locally, so not reused where the bot runs in Docker's image (nor the reverse).
    assert is_stale(bot, "docker arena-base:bookworm x86_64") and not is_stale(bot, mark["where"])


def test_a_failing_build_stops_the_match_with_its_output(tmp_path):
    bot = make_bot(tmp_path / "bot", '["sh", "-c", "echo bot.c:3: error: expected semicolon >&2; exit 3"]')
    with pytest.raises(MatchError) as caught:
        run_match("3up3down", [bot, RANDOM], games=1, seed=3, limits=QUICK)
    lines = str(caught.value).splitlines()
    assert lines[0] == (
        f"bot built ({bot}): its build (sh -c echo bot.c:3: error: expected semicolon >&2; exit 3) exited with "
        "code 3; its output ends with:"
    )
    assert lines[1:] == ["    | bot.c:3: error: expected semicolon"]


def test_a_build_that_failed_is_run_again_even_when_it_left_files_in_build(tmp_path):
    bot = make_bot(tmp_path / "bot", '["sh", "-c", "echo run >> build/runs; exit 1"]')
    for attempt in (1, 2):
        with pytest.raises(MatchError, match="exited with code 1"):
            run_match("3up3down", [bot, RANDOM], games=1, seed=3, limits=QUICK)
        assert runs(bot) == attempt and is_stale(bot)


def test_a_build_whose_program_is_missing_says_so(tmp_path):
    bot = make_bot(tmp_path / "bot", '["no-such-compiler", "bot.c"]')
    assert build_failure(bot).line == (
        "its build (no-such-compiler bot.c) exited with code 127; its program 'no-such-compiler' was not found: "
        "set `language` in bot.toml to an image that has it"
    )


def test_a_kit_built_here_without_its_toolchain_is_told_to_use_its_image(tmp_path):
    """Issue 34 part 5: a bot with a `language` whose local build cannot find (or run) a
    program, directly or through `sh build.sh`, is told that it builds in its language's
    image with --sandbox docker; never that 'sh' was not found."""
    through_sh = make_bot(tmp_path / "rusty", '["sh", "-c", "no-such-cargo build"]', extra='language = "rust"\n')
    missing = make_bot(tmp_path / "gopher", '["no-such-go", "build"]', name="gopher", extra='language = "go"\n')
    for bot, language in ((through_sh, "rust"), (missing, "go")):
        line = build_failure(bot).line
        assert "was not found: set `language`" not in line, line
        assert (f"a bot with language = \"{language}\" builds in arena's {language} image: run it with --sandbox "
                f"docker (once: arena images build {language})") in line, line


def test_a_build_that_runs_too_long_is_killed(tmp_path):
    bot = make_bot(tmp_path / "bot", '["sh", "-c", "sleep 30 & sleep 30"]')
    started = time.monotonic()
    with pytest.raises(BuildFailed, match=r"did not end within 1 s: make it faster"):
        run_build(load_bot(bot).spec(), get_sandbox("local"), timeout_s=1)
    assert time.monotonic() - started < 10


def test_submit_builds_the_copy_from_scratch_and_hashes_the_sources_only(tmp_path):
    bot = make_bot(tmp_path / "bot")
    (bot / "build").mkdir()
    (bot / "build" / "bot.py").write_text("raise SystemExit('a binary built elsewhere')\n")
    (bot / "build" / "runs").write_text("shipped\nshipped\n")
    done = submit_bot(bot, tmp_path / "registry", limits=QUICK)
    copy = tmp_path / "registry" / "built" / "1.0"
    assert runs(copy) == 1  # what the author shipped in build/ was removed, then built once
    assert (copy / "build" / "bot.py").read_bytes() == (RANDOM / "bot.py").read_bytes()
    assert done.content_hash == content_hash(bot)  # build/ is not part of the bot's content
    (bot / "build" / "bot.py").write_text("changed\n")
    assert content_hash(bot) == done.content_hash
    # ... but the build command is (bot.toml is hashed).
    toml = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(toml.replace("echo run", "echo again"))
    assert content_hash(bot) != done.content_hash


def test_submit_refuses_a_bot_whose_build_fails_and_shows_why(tmp_path):
    bot = make_bot(tmp_path / "bot", '["sh", "-c", "echo undefined reference to main; exit 1"]')
    with pytest.raises(SubmitRefused) as caught:
        submit_bot(bot, tmp_path / "registry", limits=QUICK)
    assert caught.value.reasons == [
        "its build (sh -c echo undefined reference to main; exit 1) exited with code 1; its output ends with:"
        "\n    | undefined reference to main"
    ]
    assert not (tmp_path / "registry").exists()


# Builds as cargo's: a second name for the program (a hard link), a file only its owner reads.
LINKING_BUILD = (
    '["sh", "-c", "cp bot.py arena_bot.py build/ && mkdir build/deps && ln build/bot.py build/deps/bot-1a2b '
    '&& echo run >> build/runs && chmod 600 build/runs"]'
)


def test_arena_s_own_build_output_never_trips_arena_s_own_vetting(tmp_path):
    """A build's hard links become files of their own (times kept: cargo's fingerprints read
    them), everything is readable by the user bots run as: the league's check passes."""
    bot = make_bot(tmp_path / "bot", LINKING_BUILD)
    run_build(load_bot(bot).spec(), get_sandbox("local"))
    program, second = bot / "build" / "bot.py", bot / "build" / "deps" / "bot-1a2b"
    assert program.stat().st_nlink == second.stat().st_nlink == 1 and program.read_bytes() == second.read_bytes()
    assert vet_bot_folder(bot) == []
    assert (bot / "build" / "runs").stat().st_mode & 0o777 == 0o644
    assert playable_problem(bot, docker=True, dockerfile=False, folder_limits=FolderLimits()) is None


def test_a_build_that_makes_a_symbolic_link_fails_with_the_path(tmp_path):
    bot = make_bot(tmp_path / "bot", '["sh", "-c", "cp bot.py arena_bot.py build/ && ln -s /etc/passwd build/pw"]')
    assert build_failure(bot).line == (
        "its build made build/pw, a symbolic link: a bot folder holds files and folders only; copy the file "
        "instead (cp -L)"
    )
    assert is_stale(bot)  # no mark: built again next time


def test_a_folder_built_by_arena_match_is_submitted_and_the_league_plays_it_unbuilt(tmp_path):
    """After a local `arena match` build/ holds hard links: the submission leaves the
    author's build/ out (arena builds it again), the built copy passes the league's own
    check, and the league plays it without building it a second time."""
    from arena.league.ladder import run_league
    from tests.league.test_league import config, members_of, registry_of

    bot = make_bot(tmp_path / "bot", LINKING_BUILD)
    run_match("3up3down", [bot, RANDOM], games=1, seed=3, limits=QUICK)
    os.link(bot / "build" / "bot.py", bot / "build" / "by-hand")  # the author's own, too
    registry = registry_of(tmp_path, ("ann", "bob"))
    done = submit_bot(bot, registry, limits=QUICK)
    assert not done.already_there and runs(done.folder) == 1 and not (done.folder / "build" / "by-hand").exists()
    out = tmp_path / "league"
    run_league(config(out, registry, seats=2, games=4, jobs=1, sandbox="local"), report=False)
    assert members_of(out)["built@1.0"].status == "active"
    assert runs(done.folder) == 1  # built once, at validation: the league reused it


def test_bot_toml_mistakes_of_language_and_build_are_listed_together(tmp_path):
    bot = make_bot(tmp_path / "bot", "[]", extra='language = "cobol"\ndockerfile = "Dockerfile"\n')
    (bot / "Dockerfile").write_text("FROM arena-base:bookworm\n")
    with pytest.raises(BotFolderError) as caught:
        load_bot(bot)
    assert caught.value.mistakes == [
        "'language' is 'cobol'; allowed: c, cpp, rust, go, java, node, python",
        "'build' is []; allowed: a non-empty list of non-empty strings, or a string",
    ]
    (bot / "bot.toml").write_text((bot / "bot.toml").read_text().replace("build = []", 'build = "make all"'))
    with pytest.raises(BotFolderError) as caught:
        load_bot(bot)
    assert caught.value.mistakes[-1] == "'build' and 'dockerfile' together: put the build in the Dockerfile's RUN steps"


# ---------------------------------------------------------------- Docker

@pytest.fixture(scope="module")
def docker_box(docker_engine):
    from arena.sandbox.docker import DockerSandbox

    box = DockerSandbox()
    yield box
    box.close()


def test_a_docker_build_writes_only_build_and_has_no_network(docker_box, tmp_path):
    bot = make_bot(tmp_path / "bot", '["sh", "-c", "cp bot.py arena_bot.py build/ && touch /bot/evil"]')
    failed = build_failure(bot, docker_box)
    assert "exited with code 1" in failed.line
    assert "Read-only file system" in failed.output
    assert not (bot / "evil").exists()
    probe = "import socket; socket.create_connection(('192.0.2.1', 80), timeout=2)"
    bot = make_bot(tmp_path / "net", f'["python3", "-c", "{probe}"]')
    assert "Network is unreachable" in build_failure(bot, docker_box).output


def test_a_failed_dockerfile_build_leaves_no_image_behind(docker_box, tmp_path):
    from arena.faults import BotFault

    marker = f"arena-langs-{uuid.uuid4().hex}"
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'name = "broken"\nversion = "1.0"\ncommand = ["python3", "bot.py"]\ngames = ["3up3down"]\n'
        'dockerfile = "Dockerfile"\n'
    )
    (bot / "Dockerfile").write_text(f"FROM {docker_box.image}\nRUN echo {marker} > /marker\nRUN false\n")
    with pytest.raises(BotFault, match="its Dockerfile did not build"):
        docker_box.image_for(load_bot(bot).spec())
    client = docker_box.client
    recent = [image for image in client.images.list(all=True)
              if image.attrs.get("Created", "") >= time.strftime("%Y-%m-%d", time.gmtime(time.time() - 86400))]
    left = [image.id for image in recent
            if any(marker in (step.get("CreatedBy") or "") for step in image.history())]
    assert left == []


def test_arena_run_builds_a_bot_before_its_games_and_stops_on_a_failed_build(tmp_path):
    from arena.config.tournament_file import validate_config
    from arena.play.tournament import TournamentError, run_tournament

    bot = make_bot(tmp_path / "bot")

    def config(out: str):
        return validate_config({
            "game": "3up3down", "seats": 2, "bots": [str(bot), str(RANDOM)], "seed": 7, "output": str(tmp_path / out),
            "limits": {"decision_s": 1.0, "time_bank_s": 2.0},
        })

    outcome = run_tournament(config("ok"), report=False)
    assert runs(bot) == 1 and outcome.played == outcome.total == 1  # the bot built once, before its game
    with Store.open(tmp_path / "ok") as store:
        assert [store.game_result(game.key).incidents for game in store.games("done")] == [[]]
    (bot / "bot.toml").write_text((bot / "bot.toml").read_text().replace(COPY_BUILD, '["sh", "-c", "exit 4"]'))
    with pytest.raises(TournamentError) as caught:
        run_tournament(config("failed"), report=False)
    assert str(caught.value).count("its build (sh -c exit 4) exited with code 4") == 1


def test_a_league_builds_a_bot_copied_into_its_registry_and_suspends_one_whose_build_fails(tmp_path):
    """As `arena run` does, a league runs a bot's build step before its first game when its
    build/ is missing or stale (a bot `arena submit` put in is built already; one copied in
    by hand is not); a build that fails suspends that bot, with the build's line, and the
    league goes on."""
    from arena.league.ladder import run_league
    from tests.league.test_league import config, members_of, registry_of

    registry = registry_of(tmp_path, ("ann", "bob"))
    built = make_bot(registry / "built" / "1.0", name="built")
    make_bot(registry / "broken" / "1.0", '["sh", "-c", "echo no compiler here >&2; exit 2"]', name="broken")
    out = tmp_path / "league"
    run_league(config(out, registry, seats=2, games=6, jobs=1, sandbox="local"), report=False)
    assert runs(built) == 1 and not is_stale(built)
    members = members_of(out)
    assert members["built@1.0"].status == "active"
    broken = members["broken@1.0"]
    assert broken.status == "suspended" and broken.reason == (
        "its build failed: its build (sh -c echo no compiler here >&2; exit 2) exited with code 2; "
        "its output ends with:"
    )
    with Store.open(out) as store:
        played = {seat.bot for seat in store.seats()}
    assert "built@1.0" in played and "broken@1.0" not in played
