"""The Docker engine as the docker sandbox meets it: its settings and labels, how to tell
whether Docker bots can run here, which run owns a container, and the engine's answers
that mean "gone" (other runs share the engine: their containers come and go at any time).
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from arena.sandbox import UnknownSandbox

DEFAULT_IMAGE = "arena-base:bookworm"
IMAGE_ENV = "ARENA_DOCKER_IMAGE"  # the same variable .ci/docker-up reads
LABEL = "arena.sandbox"  # every container and bot image arena makes carries it
OWNER_LABEL = "arena.owner"  # "host:pid:process start time" of the run that made a container
BOT_LABEL = "arena.bot"
BOT_MOUNT = "/bot"
IO_MOUNT = "/arena-io"  # the bot's stdin/stdout pipes, when used
IO_LABEL = "arena.io"  # where those pipes are on the host (removed with the container)
IO_PREFIX = "arena-io-"
STDIO_MODES = ("auto", "fifo", "attach")
STDIO_ENV = "ARENA_DOCKER_STDIO"
USER = "65534:65534"  # nobody:nogroup, present in Debian and in python:*-slim
API_TIMEOUT_S = 30  # the SDK's default is 60 s; a hung engine should fail sooner
ENGINE_PROBE_S = 2.0  # a healthy engine answers a ping in milliseconds
EXIT_WAIT_S = 5.0  # from a bot's end to its container's end (the attach socket's end)
WATCH_EVERY_S = 0.2  # attach mode: how often a waiting read looks whether stdout is still held
# A bot that ends lets go of its stdout and stdin one after the other (the kernel releases
# them in turn, and may be interrupted in between): a bot seen holding stdin but not stdout
# is taken to live on only when it still does after this long.
SETTLE_S = 0.25
BUILD_TIMEOUT_S = 900
RUNTIMES = ("runc", "runsc")  # the host kernel's namespaces; gVisor's own kernel (a second one)
RUNTIME_ENV = "ARENA_DOCKER_RUNTIME"

# What the SDK and requests raise when the engine is gone or misbehaves.
ENGINE_ERRORS = (docker.errors.DockerException, requests.RequestException, OSError)


def default_image() -> str:
    """The base image: $ARENA_DOCKER_IMAGE, else arena-base:bookworm."""
    return os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE


def runtime_setting(runtime: str | None = None) -> str | None:
    """The runtime asked for: `runtime`, else $ARENA_DOCKER_RUNTIME, else None (the
    default, chosen with the engine: `choose_runtime`); UnknownRuntime if not one of
    RUNTIMES."""
    chosen = runtime or os.environ.get(RUNTIME_ENV) or None
    if chosen is not None and chosen not in RUNTIMES:
        where = "" if runtime else f" (${RUNTIME_ENV})"
        raise UnknownRuntime(
            f"unknown Docker runtime {chosen!r}{where}; allowed: {', '.join(RUNTIMES)}"
        )
    return chosen


def engine_runtimes(info: dict[str, Any]) -> set[str]:
    """The runtimes an engine has registered (its `docker info`)."""
    return set((info.get("Runtimes") or {}).keys())


def choose_runtime(asked: str | None, registered: set[str]) -> str:
    """The runtime containers get: `asked` if the engine has it (else RuntimeMissing, a
    one-line message that says how to install and register it), or the default: runc.

    Why runc by default, even where runsc is registered: a warm game under runsc costs
    4.3 times one under runc (docs/performance.md, "Runtimes"), where the bar for runsc
    as the default was 1.5; runsc is the stronger boundary, one setting away."""
    if asked is None:
        return "runc"
    if asked not in registered and not (asked == "runc" and not registered):
        raise RuntimeMissing(
            f"the Docker engine has no runtime {asked!r} (it has: "
            f"{', '.join(sorted(registered)) or 'none listed'}); "
            + (
                "install gVisor (apt-get install runsc) and register it in "
                "/etc/docker/daemon.json, as .ci/docker-up does"
                if asked == "runsc"
                else "use runc"
            )
        )
    return asked


class UnknownRuntime(UnknownSandbox):
    """A runtime name arena does not know (a user's mistake)."""


class RuntimeMissing(UnknownSandbox):
    """The runtime asked for is not registered with the engine (a user's setup to fix)."""


def engine_problem(image: str | None = None) -> str | None:
    """Why Docker bots cannot run here (no engine reachable, or no `image`), or None if they can."""
    wanted = image or default_image()
    try:
        client = docker.from_env(timeout=10)
        client.ping()
        client.images.get(wanted)
    except Exception as error:  # noqa: BLE001 - any failure means "cannot run here"
        return f"no usable Docker engine / image {wanted}: {error}"
    return None


def _process_start_time(pid: int) -> str | None:
    """The start time of process `pid` (clock ticks since boot), None if it does not exist.

    With the pid it names a process uniquely, so a reused pid is not mistaken for the owner.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ")".
    return stat.rsplit(")", 1)[1].split()[19]


def owner_of_this_process() -> str:
    """The owner label of what this process makes: host, pid and the process's start time
    (a pid used again later is another owner)."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start_time(pid) or '0'}"


def _owner_is_gone(owner: str) -> bool:
    """True if `owner` names a process of this host that no longer runs."""
    host, _, rest = owner.partition(":")
    pid_text, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False  # another machine's run (a shared engine): not ours to judge
    return _process_start_time(int(pid_text)) != started


def remove_quietly(container: Any) -> None:
    try:
        container.remove(force=True)
    except ENGINE_ERRORS:
        pass  # cleanup_leftovers of the next run will find it by its label


def _is_gone(error: docker.errors.APIError) -> bool:
    """True if the engine said the container is gone (404) or already being removed (409)."""
    return error.status_code in (404, 409)


def _listed_name(entry: dict[str, Any]) -> str:
    names = entry.get("Names") or [entry["Id"][:12]]
    return names[0].lstrip("/")


def _slug(name: str) -> str:
    """A Docker-safe lower-case name part (image repositories and container names)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "bot"
