"""`arena submit` and `arena bots`: a bot is checked, smoke-played against random, then copied."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.registry.submit import SubmitRefused, list_registry, submit_bot
from arena.sandbox import Limits
from arena.store.db import content_hash
from tests.bot_folders import RANDOM, ROOT, random_bot, written_bot

QUICK = Limits(startup_s=10.0, decision_s=1.0, time_bank_s=2.0)


def random_copy(where: Path, name: str = "lucky", version: str = "2.0", games: str = '["3up3down"]') -> Path:
    return random_bot(where / name, name, version, games=games)


def test_a_good_bot_is_copied_under_name_and_version_with_its_hash(tmp_path):
    bot = random_copy(tmp_path)
    registry = tmp_path / "registry"
    done = submit_bot(bot, registry, limits=QUICK)
    target = registry / "lucky" / "2.0"
    assert done.folder == target and not done.already_there
    assert done.smoke_games == {"3up3down": 2}
    assert sorted(p.name for p in target.iterdir()) == ["arena_bot.py", "bot.py", "bot.toml", "submission.json"]
    record = json.loads((target / "submission.json").read_text())
    assert record["content_hash"] == content_hash(bot) == done.content_hash
    assert (record["name"], record["version"], record["games"]) == ("lucky", "2.0", ["3up3down"])
    [entry] = list_registry(registry)
    assert (entry.name, entry.version, entry.games, entry.content_hash, entry.date) == (
        "lucky", "2.0", ("3up3down",), done.content_hash, record["date"]
    )


def test_every_submission_closes_the_sandbox_it_checked_in(tmp_path, monkeypatch):
    """A server validates for months: each submission's sandbox (with a Docker engine's
    pooled connections) is closed once it is done with, accepted or refused at any step
    (here: at its build, before any game)."""
    import arena.registry.submit
    from arena.sandbox import get_sandbox

    made = []

    def recorded(name, **settings):
        box = get_sandbox(name, **settings)
        made.append(box)
        monkeypatch.setattr(box, "close", lambda: made.append("closed"), raising=False)
        return box

    monkeypatch.setattr(arena.registry.submit, "get_sandbox", recorded)
    submit_bot(random_copy(tmp_path), tmp_path / "registry", limits=QUICK)
    builder = random_copy(tmp_path, name="builder")
    with (builder / "bot.toml").open("a") as toml:
        toml.write('build = ["sh", "-c", "exit 3"]\n')
    with pytest.raises(SubmitRefused, match="exit"):
        submit_bot(builder, tmp_path / "registry", limits=QUICK)
    boxes = [n for n, item in enumerate(made) if item != "closed"]
    assert len(boxes) == 2 and made[boxes[1] - 1] == "closed" and made[-1] == "closed", made


def test_the_same_bot_again_is_already_there_and_a_changed_one_needs_a_new_version(tmp_path):
    bot = random_copy(tmp_path)
    registry = tmp_path / "registry"
    submit_bot(bot, registry, limits=QUICK)
    stages: list[str] = []
    again = submit_bot(bot, registry, limits=QUICK, stage=stages.append)
    # Known by its content hash before anything is built or played: no smoke match again.
    assert again.already_there and again.smoke_games == {} and stages == ["checking"]
    assert again.already_line() == "lucky@2.0 is already in the registry with this content: nothing new"
    (bot / "bot.py").write_text((bot / "bot.py").read_text() + "\n# changed\n")
    stages.clear()
    with pytest.raises(SubmitRefused) as refused:
        submit_bot(bot, registry, limits=QUICK, stage=stages.append)
    assert refused.value.reasons == [
        "lucky version 2.0 is already in the registry with other content; raise the version in bot.toml"
    ]
    assert stages == ["checking"]  # refused before its smoke match, not after


def test_an_old_version_again_says_which_version_is_the_newest(tmp_path):
    old = random_copy(tmp_path / "old", version="1.1")
    registry = tmp_path / "registry"
    assert submit_bot(old, registry, limits=QUICK).newest == "1.1"
    newer = submit_bot(random_copy(tmp_path / "new", version="2.0"), registry, limits=QUICK)
    assert (newer.newest, newer.already_there) == ("2.0", False)
    again = submit_bot(old, registry, limits=QUICK)
    assert (again.already_there, again.version, again.newest) == (True, "1.1", "2.0")
    assert again.already_line() == (
        "lucky@1.1 is already in the registry with this content: nothing new; the newest there is lucky@2.0"
    )


def test_a_bad_bot_toml_is_refused_with_every_mistake(tmp_path):
    bot = tmp_path / "bad"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "bad bot"\ngames = ["3up3down", "chess"]\ncolour = 1\n')
    with pytest.raises(SubmitRefused) as refused:
        submit_bot(bot, tmp_path / "registry", limits=QUICK)
    reasons = refused.value.reasons
    assert len(reasons) == 5 and any("unknown key 'colour'" in r for r in reasons)
    assert any("'version' is missing" in r for r in reasons) and any("'command' is missing" in r for r in reasons)
    # The unknown game among them, not after the others are fixed.
    assert any(r.startswith("bot.toml games: unknown game 'chess'; known games: 3up3down, ") for r in reasons)
    assert not (tmp_path / "registry").exists()
    unknown = random_copy(tmp_path, name="chessy", games='["3up3down", "chess"]')
    with pytest.raises(SubmitRefused, match="bot.toml games: unknown game 'chess'"):
        submit_bot(unknown, tmp_path / "registry", limits=QUICK)


def test_a_bot_that_faults_in_the_smoke_match_is_refused_with_the_incident(tmp_path):
    bot = written_bot(tmp_path / "crasher", '["python3", "-c", "import sys; sys.exit(5)"]', version="1")
    with pytest.raises(SubmitRefused) as refused:
        submit_bot(bot, tmp_path / "registry", limits=QUICK)
    assert refused.value.reasons == [
        "smoke match of 3up3down, game 1: CRASH at the start of the game: exited with code 5\n"
        "      it wrote nothing to stderr",
        "smoke match of 3up3down, game 2: CRASH at the start of the game: exited with code 5",
    ]
    assert not (tmp_path / "registry").exists()


def test_the_commands_submit_then_list(tmp_path):
    bot = random_copy(tmp_path, name="cli-bot", version="0.3")
    registry = tmp_path / "registry"
    run = subprocess.run(
        [sys.executable, "-m", "arena", "submit", str(bot), "--registry", str(registry), "--time-bank-s", "2"],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert f"cli-bot 0.3 accepted: {registry / 'cli-bot' / '0.3'}" in " ".join(run.stdout.split())  # wrapped at 80 columns
    listed = subprocess.run(
        [sys.executable, "-m", "arena", "bots", "--registry", str(registry)], check=False, capture_output=True, text=True,
        timeout=60, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert listed.returncode == 0, listed.stderr
    assert "cli-bot" in listed.stdout and "0.3" in listed.stdout and content_hash(bot)[:12] in listed.stdout
    refused = subprocess.run(
        [sys.executable, "-m", "arena", "submit", str(tmp_path / "nowhere"), "--registry", str(registry)],
        check=False, capture_output=True, text=True, timeout=60,
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "is not a folder" in refused.stderr


def test_submit_with_a_tournament_file_smoke_plays_under_that_files_limits_not_the_flags(tmp_path):
    bot = random_copy(tmp_path, name="strict", version="1.0")
    registry = tmp_path / "registry"
    tournament = tmp_path / "cup.toml"
    tournament.write_text(
        f'game = "3up3down"\nseats = 2\nbots = ["{RANDOM}", "{ROOT / "bots" / "threeup-heuristic"}"]\n'
        'sandbox = "local"\n\n[limits]\nstartup_s = 0.001\n'  # no Python bot starts in a millisecond
    )
    run = subprocess.run(
        [sys.executable, "-m", "arena", "submit", str(bot), "--registry", str(registry), "--startup-s", "10",
         "--tournament", str(tournament)],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert f"arena: error: refused {bot}: 2 reason(s):" in run.stderr
    said = " ".join(run.stderr.split())  # the reasons are wrapped at 80 columns
    assert said.count("did not answer 'hello' within the start-up limit of 0.001 s") == 2
    assert not (registry / "strict").exists()


def test_the_shipped_bots_are_listed_in_their_plain_layout():
    names = {entry.name for entry in list_registry(ROOT / "bots")}
    assert {"random", "threeup-heuristic", "three-thirteen-heuristic", "node-simple"} <= names


def test_with_docker_the_bots_image_is_built_first_and_a_failed_build_refuses_it(docker_engine, tmp_path):
    from arena.sandbox.docker import default_image

    base = default_image()
    good = random_copy(tmp_path, name="boxed", version="1.0")
    (good / "Dockerfile").write_text(f"FROM {base}\nWORKDIR /bot\nCOPY . /bot/\n")
    with (good / "bot.toml").open("a") as toml:
        toml.write('dockerfile = "Dockerfile"\n')
    done = submit_bot(good, tmp_path / "registry", sandbox="docker", limits=QUICK)
    assert done.smoke_games == {"3up3down": 2}
    assert (tmp_path / "registry" / "boxed" / "1.0" / "Dockerfile").is_file()

    bad = random_copy(tmp_path, name="unbuildable", version="1.0")
    (bad / "Dockerfile").write_text(f"FROM {base}\nRUN exit 3\n")
    with (bad / "bot.toml").open("a") as toml:
        toml.write('dockerfile = "Dockerfile"\n')
    with pytest.raises(SubmitRefused) as refused:
        submit_bot(bad, tmp_path / "registry", sandbox="docker", limits=QUICK)
    [reason] = refused.value.reasons
    assert reason.startswith("building its Docker image failed: its Dockerfile did not build:")
    assert not (tmp_path / "registry" / "unbuildable").exists()


def test_a_name_taken_by_a_plain_example_folder_is_refused(tmp_path):
    registry = tmp_path / "registry"
    shutil.copytree(RANDOM, registry / "random", ignore=shutil.ignore_patterns("__pycache__"))
    bot = random_copy(tmp_path, name="random", version="9.9")
    with pytest.raises(SubmitRefused) as refused:
        submit_bot(bot, registry, limits=QUICK)
    assert refused.value.reasons == [
        "random is already a bot folder of the registry (one of the examples); choose another name"
    ]  # before its smoke match, and without the server's paths
    assert not (registry / "random" / "9.9").exists()


def arena_in(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The real command, started in `cwd` (not a checkout), with this checkout's arena."""
    import os

    environment = {key: value for key, value in os.environ.items() if key != "ARENA_REGISTRY"}
    environment["PYTHONPATH"] = str(ROOT) + os.pathsep + environment.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=cwd, timeout=180,
        env={**environment, **(env or {})},
    )


def test_outside_a_checkout_the_default_registry_is_the_current_folders_bots(tmp_path):
    bot = random_copy(tmp_path / "src")
    work = tmp_path / "work"
    work.mkdir()
    before = sorted(path.name for path in (ROOT / "bots").iterdir())
    run = arena_in(work, "submit", str(bot), "--decision-s", "2")
    assert run.returncode == 0, run.stderr
    assert (work / "bots" / "lucky" / "2.0" / "submission.json").is_file()
    assert f"lucky 2.0 accepted: {work / 'bots' / 'lucky' / '2.0'}" in " ".join(run.stdout.split())  # wrapped at 80 columns
    assert sorted(path.name for path in (ROOT / "bots").iterdir()) == before  # arena's own bots untouched
    listed = arena_in(work, "bots")
    assert listed.returncode == 0 and "lucky" in listed.stdout


def test_the_registry_can_be_set_for_every_command_with_arena_registry(tmp_path):
    bot = random_copy(tmp_path / "src")
    shared = tmp_path / "shared-registry"
    run = arena_in(tmp_path, "submit", str(bot), env={"ARENA_REGISTRY": str(shared)})
    assert run.returncode == 0, run.stderr
    assert (shared / "lucky" / "2.0" / "bot.toml").is_file() and not (tmp_path / "bots").exists()


def test_a_registry_inside_arenas_installation_is_refused(tmp_path):
    import arena

    inside = Path(arena.__file__).resolve().parent / "_shipped" / "bots"
    with pytest.raises(SubmitRefused, match="is inside arena's installation, which is never a registry"):
        submit_bot(random_copy(tmp_path), inside, limits=QUICK)
    assert not (inside / "lucky").exists()


def test_bots_without_a_registry_says_how_one_is_made(tmp_path):
    run = arena_in(tmp_path, "bots")
    assert run.returncode == 2
    assert f"arena: error: registry {tmp_path / 'bots'} is not a folder (`arena submit BOT_DIR` makes it" in run.stderr


# ------------------------------------------------- a hostile folder brings nothing in


def test_a_folder_linking_to_the_hosts_files_is_refused_and_nothing_of_them_lands(tmp_path):
    """Links to a league's store, to /etc/passwd and to a folder of another bot's private
    file: each is refused by name, and the registry gets nothing (it is not even made)."""
    league = tmp_path / "league"
    league.mkdir()
    (league / "arena.sqlite").write_text("deal secret 0123abcd")
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "private.txt").write_text("their strategy")
    (other / "private.txt").chmod(0o600)
    bot = random_copy(tmp_path)
    (bot / "arena.sqlite").symlink_to(league / "arena.sqlite")
    (bot / "passwd").symlink_to("/etc/passwd")
    (bot / "theirs").symlink_to(other)
    registry = tmp_path / "registry"
    with pytest.raises(SubmitRefused) as refused:
        submit_bot(bot, registry, limits=QUICK)
    link = "links are not accepted: put the file itself in the folder"
    assert refused.value.reasons == [
        f"arena.sqlite: is a symbolic link (to '{league / 'arena.sqlite'}'); {link}",
        f"passwd: is a symbolic link (to '/etc/passwd'); {link}",
        f"theirs: is a symbolic link (to '{other}'); {link}",
    ]
    assert not registry.exists()


def test_names_and_versions_follow_one_pattern_checked_with_the_rest_of_bot_toml(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    allowed = "allowed: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
    for version in ("../up", "a/b", ".", "..", "1.0\n", "-1", "x" * 65):
        bot = random_copy(tmp_path / f"v{len(list(tmp_path.iterdir()))}", version="1")
        (bot / "bot.toml").write_text(
            f'name = "../evil"\nversion = {json.dumps(version)}\ncommand = ["python3", "bot.py"]\n'
            'games = ["3up3down"]\ncolour = 1\n'
        )
        with pytest.raises(SubmitRefused) as refused:
            submit_bot(bot, registry, limits=QUICK)
        assert refused.value.reasons == [
            "unknown key 'colour'; allowed keys: name, version, command, games, dockerfile, language, build",
            f"'name' is '../evil'; {allowed} (e.g. \"my-bot\")",
            f"'version' is {version!r}; {allowed} (e.g. \"1.0\")",
        ]
        assert list(registry.iterdir()) == [] and not (tmp_path / "evil").exists()


def test_the_staging_copy_never_stays_behind(tmp_path, monkeypatch):
    import arena.registry.submit

    bot = random_copy(tmp_path)
    registry = tmp_path / "registry"
    registry.mkdir()

    def broken_match(*args, **kwargs):
        # While it is checked, the copy is in the registry but no reader lists it.
        assert [path.name[:10] for path in registry.iterdir()] == [".incoming-"]
        assert list_registry(registry) == []
        raise RuntimeError("the machine broke mid-match")

    monkeypatch.setattr(arena.registry.submit, "run_match", broken_match)
    with pytest.raises(RuntimeError, match="the machine broke mid-match"):
        submit_bot(bot, registry, limits=QUICK)
    assert list(registry.iterdir()) == []


def test_the_sandbox_prepares_and_plays_only_the_vetted_copy(tmp_path, monkeypatch):
    """The Docker image is built from the copy in the registry's staging folder, never
    from the submitter's folder (which may change after it was vetted)."""
    import arena.registry.submit
    from arena.faults import BotFault, Reason

    seen = []

    class Recorder:
        name = "docker"

        def hide_paths(self, paths):
            pass

        def image_for(self, spec):
            seen.append((spec.folder, sorted(p.name for p in spec.folder.iterdir())))
            raise BotFault(Reason.CRASH, "stopped here by the test")

        def close(self):
            seen.append("closed")  # what it holds (a Docker engine's connections) freed, refused or not

    monkeypatch.setattr(arena.registry.submit, "get_sandbox", lambda name: Recorder())
    bot = random_copy(tmp_path)
    (bot / "Dockerfile").write_text("FROM scratch\nCOPY . /bot\n")
    (bot / "__pycache__").mkdir()
    with (bot / "bot.toml").open("a") as toml:
        toml.write('dockerfile = "Dockerfile"\n')
    registry = tmp_path / "registry"
    with pytest.raises(SubmitRefused, match="building its Docker image failed: stopped here by the test"):
        submit_bot(bot, registry, sandbox="docker", limits=QUICK)
    [(folder, names), closed] = seen
    assert closed == "closed"
    assert folder.parent.parent == registry and folder.parent.name.startswith(".incoming-")
    assert names == ["Dockerfile", "arena_bot.py", "bot.py", "bot.toml"]
    assert not registry.exists()


def test_the_command_refuses_a_link_to_etc_shadow_and_a_big_file_in_one_line_each(tmp_path):
    bot = random_copy(tmp_path)
    (bot / "shadow").symlink_to("/etc/shadow")
    (bot / "data.bin").write_bytes(b"x" * 1_500_000)
    run = subprocess.run(
        [sys.executable, "-m", "arena", "submit", str(bot), "--registry", str(tmp_path / "registry"),
         "--max-file-mb", "1"],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 2 and "internal error" not in run.stderr and "Traceback" not in run.stderr
    assert run.stderr == (  # each reason a bullet, wrapped at 80 columns (no $COLUMNS, no terminal)
        f"arena: error: refused {bot}: 2 reason(s):\n"
        "  - data.bin: is 1.4 MB; a file may hold at most 1 MB (the limit)\n"
        "  - shadow: is a symbolic link (to '/etc/shadow'); links are not accepted: put\n"
        "    the file itself in the folder\n"
    )
    bad = subprocess.run(
        [sys.executable, "-m", "arena", "submit", str(bot), "--max-bot-files", "0"],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stderr == "arena: error: the bot folder limit files is 0; it is a whole number of at least 1\n"


def test_a_bot_toml_that_is_a_link_is_never_read_nor_listed(tmp_path):
    from arena.config.botfolder import BotFolderError, load_bot

    elsewhere = random_copy(tmp_path, name="real")
    registry = tmp_path / "registry"
    linked = registry / "linked" / "1.0"
    shutil.copytree(elsewhere, linked)
    (linked / "bot.toml").unlink()
    (linked / "bot.toml").symlink_to(elsewhere / "bot.toml")
    with pytest.raises(BotFolderError) as refused:
        load_bot(linked)
    assert refused.value.mistakes == ["bot.toml is a symbolic link; put the file itself in the folder"]
    assert list_registry(registry) == []
