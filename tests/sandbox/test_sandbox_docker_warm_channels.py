"""What a warm slot's process could learn from the slot's earlier ones (issue 21, parts 3
and 4), tried by hostile probes over four per-game starts of one slot:

- an image made by a bot's own Dockerfile whose /bin/sh and setpriv are recorders
  (tests/bots/sh-spy): nothing of the image runs between games, so nothing records a
  game's secret; after each reset only arena's two keepers run (docker-init and arena's
  launcher), read from the host;
- counters (tests/bots/warm-counters): loopback packet counts, SysV IPC ids, pids, inode
  numbers and the names of the process's pipes read the same in every game whatever the
  game before counted up;
- the launcher is arena's own binary, built once in a folder of root's alone; without a
  compiler, or where a game's namespaces cannot be made, slots start cold and say why;
- without the launcher's own seccomp filter a bot would make a user namespace (the
  control of the confinement test).

Tests need an engine and root; they skip without, unless ARENA_REQUIRE_DOCKER=1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from pathlib import Path

import pytest

from arena.sandbox import BotSpec, Limits
from arena.sandbox.docker import DockerSandbox, default_image
from arena.sandbox.docker import warm as warm_module

BOTS = Path(__file__).parents[1] / "bots"
LIMITS = Limits(startup_s=20, memory_mb=96, cpus=0.5, pids=32, file_size_mb=4, open_files=48)
GAMES = 4


@pytest.fixture(scope="module")
def engine(warm_engine):  # every test here has warm slots (tests/sandbox/conftest.py)
    return warm_engine


def copy_bot(name: str, into: Path) -> Path:
    folder = into / name
    shutil.copytree(BOTS / name, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def programs(home) -> list[str]:
    """What each process of the container runs, read on the host: "docker-init" for the
    host's own (the very file), else its executable's path in the container."""
    host_init = os.stat(shutil.which("docker-init") or "/usr/bin/docker-init")
    found = []
    for pid in home.cgroup.pids():
        try:
            path, info = os.readlink(f"/proc/{pid}/exe"), os.stat(f"/proc/{pid}/exe")
        except OSError:
            continue  # ended meanwhile
        same = (info.st_dev, info.st_ino) == (host_init.st_dev, host_init.st_ino)
        found.append("docker-init" if same else path)
    return sorted(found)


def test_an_image_whose_sh_and_setpriv_record_learns_nothing_of_earlier_games(
    engine, sandbox, tmp_path, monkeypatch
):
    folder = copy_bot("sh-spy", tmp_path)
    dockerfile = (folder / "Dockerfile").read_text()
    (folder / "Dockerfile").write_text(
        dockerfile.replace("FROM arena-base:bookworm", f"FROM {default_image()}")
        + f"LABEL arena.test-run={uuid.uuid4().hex}\n"
    )
    bot = BotSpec(name="sh-spy", folder=folder, command=("python3", "bot.py"), dockerfile="Dockerfile")
    tag = sandbox.image_for(bot)
    after_resets: list[list[str]] = []
    real_reset = warm_module.WarmContainer.reset

    def reset_then_list(self, names=None):
        real_reset(self, names)
        # Before the slot's next process starts: every process of the container's cgroup,
        # and every pid of its pid namespace, as its own /proc lists them.
        init = next(iter(self.keepers))
        inside = sorted(int(name) for name in os.listdir(f"/proc/{init}/root/proc") if name.isdigit())
        after_resets.append([*programs(self), len(inside)])

    monkeypatch.setattr(warm_module.WarmContainer, "reset", reset_then_list)
    secrets = [f"seed-{game}-{uuid.uuid4().hex[:8]}" for game in range(1, GAMES + 1)]
    answers, during, containers = [], [], set()
    try:
        for secret in secrets:
            process = sandbox.start(bot, LIMITS, slot="spy")
            try:
                process.send_line(secret.encode())
                answers.append(json.loads(process.receive_line(LIMITS.startup_s)))
                during.append(programs(process.home))
                bot_program = os.readlink(f"/proc/{process.pid}/exe")
            finally:
                process.close()
            containers.add(process.id)
            sandbox._slots._slots["spy"].pending.result(timeout=30)  # this game's reset
    finally:
        sandbox.close()
        engine.images.remove(tag, force=True)
    assert len(containers) == 1  # four games in one warm container
    # No game reached a recorder, let alone an earlier game's secret.
    for game, seen in enumerate(answers):
        assert not set(secrets[:game]) & set(seen), f"game {game + 1} read {seen}"
    assert answers == [["ECONNREFUSED"]] * GAMES
    # While a game plays: docker-init (the host's binary), arena's launcher and the bot's
    # monitor (the launcher's fork), and the bot; nothing else, nothing of the image's own.
    keepers = ["/arena-io/arena-launcher", "docker-init"]
    assert during == [sorted([*keepers, "/arena-io/arena-launcher", bot_program])] * GAMES
    # After each reset, only arena's two keepers, in the cgroup and in the pid namespace.
    assert after_resets == [[*keepers, 2]] * GAMES


def test_no_counter_carries_a_value_from_one_game_to_the_next(sandbox, tmp_path):
    bot = BotSpec(name="counters", folder=copy_bot("warm-counters", tmp_path), command=("python3", "bot.py"))
    pushed = [0, 37, 5, 211]  # what each game counts up for the next to read
    looks = []
    for value in pushed:
        process = sandbox.start(bot, LIMITS, slot="counters")
        try:
            process.send_line(str(value).encode())
            looks.append(json.loads(process.receive_line(LIMITS.startup_s)))
        finally:
            process.close()
    names = [look.pop("fd names") for look in looks]
    # Every game reads what the first process of a fresh container read, whatever the
    # game before it counted up.
    first = looks[0]
    assert looks == [first] * GAMES
    # The pipes' names count nothing: a random token of its own for every process.
    tokens = []
    for stdin, stdout, stderr in names:
        token = re.fullmatch(r"/arena-io/([0-9a-f]{16})\.in", stdin).group(1)
        assert (stdout, stderr) == (f"/arena-io/{token}.out", f"/arena-io/{token}.err")
        tokens.append(token)
    assert len(set(tokens)) == GAMES
    # ... which is nothing counted yet: a fresh loopback, fresh IPC ids, and no other process.
    assert {name: first["lo"][name] for name in ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes")} == {
        "rx_packets": 0, "tx_packets": 0, "rx_bytes": 0, "tx_bytes": 0}
    assert first["lo"]["udp"]["InDatagrams"] == first["lo"]["udp"]["OutDatagrams"] == "0"
    assert first["sysv"] == {"msg": [0], "sem": [0], "shm": [0]}
    assert first["processes"] == [first["pid"]]


def test_without_a_compiler_slots_start_cold_and_say_why(engine, tmp_path, monkeypatch):
    from arena.sandbox.docker import DockerBotProcess
    from arena.sandbox.docker import launcher as launcher_module

    monkeypatch.setattr(launcher_module, "_built", {})
    monkeypatch.setenv(launcher_module.DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv("CC", "no-such-cc")
    monkeypatch.setattr(launcher_module.shutil, "which", lambda name: None)
    bot = BotSpec(name="counters", folder=copy_bot("warm-counters", tmp_path), command=("python3", "bot.py"))
    sandbox = DockerSandbox()
    try:
        process = sandbox.start(bot, LIMITS, slot="s")
        try:
            assert isinstance(process, DockerBotProcess)  # cold: a container of its own
        finally:
            process.close()
        assert sandbox.warm_reason() == (
            "no C compiler to build arena's warm launcher (install gcc and libc6-dev, "
            "as .ci/docker-up does)"
        )
    finally:
        sandbox.close()


def test_the_launcher_is_kept_only_in_a_folder_nobody_else_may_write(engine, tmp_path, monkeypatch):
    from arena.sandbox.docker import launcher as launcher_module

    monkeypatch.setattr(launcher_module, "_built", {})
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    monkeypatch.setenv(launcher_module.DIR_ENV, str(cache))
    with pytest.raises(launcher_module.LauncherUnavailable, match="must be a folder of root's"):
        launcher_module.launcher_binary()
    cache.chmod(0o755)
    built = launcher_module.launcher_binary()  # built here, once
    assert built.parent == cache and built.stat().st_mode & 0o777 == 0o755
    assert launcher_module.launcher_binary() == built
    built.unlink()  # the cache cleaned during a run: built again
    assert launcher_module.launcher_binary() == built and built.exists()
    monkeypatch.setattr(launcher_module, "_built", {})
    built.chmod(0o777)  # someone else could have replaced it: refused, never run
    with pytest.raises(launcher_module.LauncherUnavailable, match="is not root's alone"):
        launcher_module.launcher_binary()


def test_where_a_games_namespaces_cannot_be_made_slots_start_cold_and_say_why(engine, tmp_path, monkeypatch):
    """An engine that forbids them (here: the container lacks CAP_SYS_ADMIN) is found when
    the slot's container starts, by the launcher's trial; no game is charged, none fails."""
    from arena.sandbox.docker import DockerBotProcess, warm_container

    monkeypatch.setattr(warm_container, "LAUNCHER_CAPS", ["SETUID", "SETGID", "SETPCAP", "NET_ADMIN"])
    bot = BotSpec(name="counters", folder=copy_bot("warm-counters", tmp_path), command=("python3", "bot.py"))
    sandbox = DockerSandbox()
    try:
        process = sandbox.start(bot, LIMITS, slot="s")
        try:
            assert isinstance(process, DockerBotProcess)
            process.send_line(b"0")
            assert json.loads(process.receive_line(LIMITS.startup_s))["pid"] > 0
        finally:
            process.close()
        assert sandbox.warm_reason() == (
            "arena's launcher cannot make a game's network and IPC namespaces in this "
            "engine's containers (Operation not permitted)"
        )
    finally:
        sandbox.close()


def test_without_the_launchers_own_filter_a_bot_would_get_what_sys_admin_opens(engine, tmp_path, monkeypatch):
    """The control of the confinement test (test_sandbox_docker_warm.py): the same launcher
    without its stacked seccomp filter lets the bot make a user namespace (capabilities of
    its own) and call clone3, which the engine's filter allows once the container holds
    CAP_SYS_ADMIN."""
    from arena.sandbox.docker import launcher as launcher_module

    text = launcher_module.SOURCE.read_text()
    assert text.count(" || stack_filter() != 0") == 1
    source = tmp_path / "launcher.c"
    source.write_text(text.replace(" || stack_filter() != 0", ""))
    cache = tmp_path / "cache"
    monkeypatch.setattr(launcher_module, "SOURCE", source)
    monkeypatch.setattr(launcher_module, "_built", {})
    monkeypatch.setenv(launcher_module.DIR_ENV, str(cache))
    bot = BotSpec(name="residue", folder=copy_bot("residue", tmp_path), command=("python3", "bot.py"))
    sandbox = DockerSandbox()
    try:
        process = sandbox.start(bot, LIMITS, slot="s")
        try:
            process.send_line(json.dumps(["confinement"]).encode())
            inside = json.loads(process.receive_line(LIMITS.startup_s))
        finally:
            process.close()
    finally:
        sandbox.close()
    assert inside["status"]["CapEff"] == ["0000000000000000"]  # still nobody, no capability
    # A user namespace made, and clone3 reaching the kernel (EINVAL: no arguments given)
    # where the filter says ENOSYS, as the engine's does without CAP_SYS_ADMIN.
    assert (inside["new user namespace"], inside["clone3"]) == ("ok", "EINVAL")
