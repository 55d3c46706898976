"""The `build` step of bot.toml: run in the sandbox the bot will run in, before it plays.

    build = ["cc", "-O2", "-o", "build/bot", "bot.c", "-lcjson"]

Where: `arena submit` runs it on the registry's copy (the author's build/ is never
copied, so what runs is what the sandbox made, and the registry keeps it); `arena match`,
`arena run`, the league and a cluster worker run it when build/ holds no build of the
sources as they are, made in the same place (arena.langs.built: the mark names the
content hash and the sandbox and image): once per content hash. Only `build/`
(BUILD_DIR) of the bot's folder is writable; the content hash
(arena.store.db.content_hash) leaves build/ out and covers the sources, bot.toml and so
the command. What the build made is settled (arena.langs.built.settle) before it is
marked: arena's own build output never trips arena's own vetting.

Docker: a container of the bot's image (its language's, or the base image) with the
folder read-only at /bot and build/ writable at /bot/build, no network, user nobody,
BUILD_MEMORY_MB of memory, a pids limit, a tmpfs /tmp (HOME), BUILD_TIMEOUT_S at most;
removed afterwards. Local: a child process in the folder under rlimits (CPU, data,
file size, no core), in its own session, killed at the time limit; as root it runs as
nobody (build/ is lent to nobody for the build and given back to the folder's owner).
A failed build is a `BuildFailed` whose message is one line plus the output's last lines.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from arena.langs.built import (  # noqa: F401 - BUILD_DIR, is_stale: read from here too
    BUILD_DIR,
    BUILT_MARK,
    BuildOutputRefused,
    held,
    is_stale,
    place_of,
    settle,
    write_mark,
)

BUILD_TIMEOUT_S = 300
BUILD_MEMORY_MB = 2048
BUILD_PIDS = 256
BUILD_FILE_MB = 256
SHOWN_LINES = 15
NOBODY = 65534


class BuildFailed(Exception):
    """The bot's build step failed (its fault); str() is one line, `output` its last lines."""

    def __init__(self, line: str, output: str = ""):
        self.line = line
        self.output = output
        tail = [text[:200] for text in output.splitlines() if text.strip()][-SHOWN_LINES:]
        super().__init__(line + "".join(f"\n    | {text}" for text in tail))


def run_build(spec: Any, box: Any, *, fresh: bool = False, timeout_s: float = BUILD_TIMEOUT_S) -> float | None:
    """Run `spec.build` for the bot in `box` (a Sandbox) when needed (always when `fresh`,
    after clearing build/); the seconds it took, or None when nothing was to be done.
    BuildFailed when the build fails (the bot's fault); SandboxError when arena's does."""
    if not spec.build:
        return None
    folder = Path(spec.folder).resolve()
    where = place_of(box, _image_of(spec, box))
    with held(folder):  # one build of a folder at a time; the next one finds it built
        return _build_held(spec, box, folder, where, fresh, timeout_s)


def _image_of(spec: Any, box: Any) -> str | None:
    """The image a Docker build runs in (None locally); BuildFailed when it cannot be made."""
    if getattr(box, "name", "local") != "docker":
        return None
    from arena.sandbox.base import BotFault

    try:
        return box.image_for(spec)
    except BotFault as fault:
        raise BuildFailed(f"its image cannot be made: {fault.detail}") from None


def _build_held(spec: Any, box: Any, folder: Path, where: str, fresh: bool, timeout_s: float) -> float | None:
    out = folder / BUILD_DIR
    if fresh and (out.exists() or out.is_symlink()):
        if out.is_symlink() or not out.is_dir():
            out.unlink()
        else:
            shutil.rmtree(out)
    if not fresh and not is_stale(folder, where):
        return None
    if out.is_symlink():
        raise BuildFailed(f"{BUILD_DIR} in the bot folder is a link; remove it (arena makes {BUILD_DIR}/)")
    out.mkdir(exist_ok=True)
    mark = out / BUILT_MARK
    if mark.exists() or mark.is_symlink():
        mark.unlink()  # a build that fails leaves none: the next run builds again
    started = time.monotonic()
    if getattr(box, "name", "local") == "docker":
        _build_in_docker(spec, box, folder, timeout_s)
    else:
        _build_locally(spec, folder, timeout_s)
    took = time.monotonic() - started
    if mark.exists() or mark.is_symlink():
        mark.unlink()  # the build's own: only arena says a build succeeded
    try:
        settle(out)
    except BuildOutputRefused as refused:
        raise BuildFailed(str(refused)) from None
    write_mark(folder, where, took)
    return took


def _give_back(out: Path, uid: int, gid: int) -> None:
    """build/ and all it holds to uid:gid (as root, after a build as nobody)."""
    for path in [out, *out.rglob("*")]:
        try:
            os.lchown(path, uid, gid)
        except OSError:
            pass


# The build's child, a program of its own: rlimits, nobody when root, then exec (no preexec_fn).
SHIM = Path(__file__).with_name("build_shim.py")


def _build_locally(spec: Any, folder: Path, timeout_s: float) -> None:
    out = folder / BUILD_DIR
    root = os.geteuid() == 0
    owner = folder.stat()
    if root:
        _give_back(out, NOBODY, NOBODY)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(out), "LANG": "C.UTF-8"}
    program = spec.build[0]
    found = shutil.which(program, path=env["PATH"]) if "/" not in program else str(folder / program)
    if found is None or not Path(found).is_file():
        raise BuildFailed(_failed(spec, 127).split("; its output")[0])
    argv = [
        sys.executable, "-I", "-S", str(SHIM), str(int(timeout_s) + 1), str(BUILD_MEMORY_MB << 20),
        str(BUILD_FILE_MB << 20), "1" if root else "0", found, *spec.build,
    ]
    process = subprocess.Popen(
        argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        raise BuildFailed(_timed_out(spec, timeout_s), output.decode("utf-8", "replace")) from None
    finally:
        if root:
            _give_back(out, owner.st_uid, owner.st_gid)
        try:
            os.killpg(process.pid, signal.SIGKILL)  # nothing the build started lives on
        except ProcessLookupError:
            pass
    if process.returncode != 0:
        raise BuildFailed(_failed(spec, process.returncode), output.decode("utf-8", "replace"))


def _timed_out(spec: Any, timeout_s: float) -> str:
    return f"its build ({' '.join(spec.build)}) did not end within {timeout_s:.0f} s: make it faster"


def _failed(spec: Any, code: int) -> str:
    what = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
    hint = (
        f"; its program {spec.build[0]!r} was not found: set `language` in bot.toml to an image that has it"
        if code == 127 else ""
    )
    return f"its build ({' '.join(spec.build)}) {what}{hint}; its output ends with:"


def _build_in_docker(spec: Any, box: Any, folder: Path, timeout_s: float) -> None:
    import docker.errors
    from docker.types import Ulimit

    from arena.sandbox.base import BotFault, SandboxError
    from arena.sandbox.docker.engine import (
        _ENGINE_ERRORS,
        BOT_LABEL,
        BOT_MOUNT,
        LABEL,
        OWNER_LABEL,
        USER,
        _owner_of_this_process,
    )

    try:
        image = box.image_for(spec)
    except BotFault as fault:
        raise BuildFailed(f"its image cannot be made: {fault.detail}") from None
    out = folder / BUILD_DIR
    root = os.geteuid() == 0
    owner = folder.stat()
    if root:
        _give_back(out, NOBODY, NOBODY)
    # As root the build runs as nobody; else as arena's own user, who then owns what it made.
    user = USER if root else f"{os.getuid()}:{os.getgid()}"
    client = box.client
    container = None
    try:
        container = client.containers.create(
            image, list(spec.build), network_mode="none", user=user, working_dir=BOT_MOUNT,
            environment={"HOME": "/tmp", "LANG": "C.UTF-8", "GOCACHE": "/tmp/go-cache", "GOPROXY": "off", "CARGO_HOME": "/tmp/cargo"},
            mem_limit=f"{BUILD_MEMORY_MB}m", memswap_limit=f"{BUILD_MEMORY_MB}m", pids_limit=BUILD_PIDS,
            nano_cpus=10**9, read_only=True, tmpfs={"/tmp": "size=512m,nosuid"}, cap_drop=["ALL"],
            security_opt=["no-new-privileges"], init=True,
            ulimits=[Ulimit(name="core", soft=0, hard=0), Ulimit(name="fsize", soft=BUILD_FILE_MB << 20,
                                                                 hard=BUILD_FILE_MB << 20)],
            log_config={"type": "json-file", "config": {"max-size": "1m", "max-file": "1"}},
            volumes={str(folder): {"bind": BOT_MOUNT, "mode": "ro"},
                     str(out): {"bind": f"{BOT_MOUNT}/{BUILD_DIR}", "mode": "rw"}},
            labels={LABEL: "build", BOT_LABEL: spec.name, OWNER_LABEL: _owner_of_this_process()},
        )
        container.start()
        try:
            status = container.wait(timeout=timeout_s)
        except _ENGINE_ERRORS:
            container.kill()
            output = container.logs().decode("utf-8", "replace")
            raise BuildFailed(_timed_out(spec, timeout_s), output) from None
        output = container.logs().decode("utf-8", "replace")
        code = int(status.get("StatusCode", 1))
        if code != 0:
            if client.api.inspect_container(container.id)["State"].get("OOMKilled"):
                raise BuildFailed(f"its build ({' '.join(spec.build)}) ran out of memory ({BUILD_MEMORY_MB} MB)",
                                  output)
            raise BuildFailed(_failed(spec, code), output)
    except docker.errors.APIError as error:
        if "executable file not found" in str(error) or "no such file" in str(error).lower():
            raise BuildFailed(
                f"its build's program {spec.build[0]!r} is not in its image {image}: set `language` in bot.toml "
                f"to an image that has it (docs/protocol.md, Your language)"
            ) from None
        raise SandboxError(f"the Docker engine failed while building {spec.name}: {error}") from None
    except _ENGINE_ERRORS as error:
        raise SandboxError(f"the Docker engine failed while building {spec.name}: {error}") from None
    finally:
        if container is not None:
            try:
                container.remove(force=True)
            except _ENGINE_ERRORS:
                pass
        if root:
            _give_back(out, owner.st_uid, owner.st_gid)



def build_bots(box: Any, bots: list[tuple[str, Any]]) -> None:
    """Before `arena match`/`run`: build each (name, spec) whose build/ is missing or stale.
    BuildFailed naming the bot when one fails."""
    for name, spec in bots:
        try:
            run_build(spec, box)
        except BuildFailed as failed:
            raise BuildFailed(f"bot {name} ({spec.folder}): {failed.line}", failed.output) from None
