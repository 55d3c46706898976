"""The `docker` sandbox: one container per bot per match, for untrusted code.

A bot runs from the base image (a setting; default `arena-base:bookworm`, built by
`.ci/docker-up`; `python:3.12-slim` works too) with its folder mounted read-only at
`/bot`, or from an image built from its own Dockerfile (cached by a hash of the folder).
Every container gets: no network, memory = memory+swap limit, a CPU quota, a pids limit,
a read-only root with a small tmpfs at /tmp, all capabilities dropped, no-new-privileges,
user nobody (65534), an init process, rlimits (open files, file size, CPU, no core), the
log driver off, and arena's labels. stderr comes over the attach socket, opened before
the container starts (else the first output can be lost), whose frames are demultiplexed
here; its end says the container ended. stdin/stdout go, when the image has /bin/sh and
arena runs as root, through two named pipes on a read-only mount (`/arena-io`), made
the bot's stdin/stdout by `sh -c 'exec "$@" <in >out'` (the shell replaces itself with
the bot): a round trip then costs what local pipes cost, instead of two extra copies
through the engine. Otherwise they
go over the attach socket too (`stdio="attach"` forces that). Both feed the same
`LineBuffer`/`StderrLog` as the local sandbox.

Faults of the bot are `BotFault`s; any failure of the Docker engine is a `SandboxError`,
and no clock of a bot contains the engine's work: `start` returns once the bot's process
runs (RemoteBot starts its start-up clock then), pipes do not pass through the engine,
and over the attach socket a time-out is charged only after the engine has answered a
ping (`check_engine`). A bot that closes its stdout and lives on is a CRASH at once: the
`out` pipe is held read-only here, so its last close is an end of file; over the attach
socket /proc tells, when it can (`_StdoutWatch`).

A container is removed whatever happens (`close`, and at interpreter exit); containers a
killed run left behind are found by their label and removed on the next start. Other
runs share the engine: their containers come and go at any moment, so the engine is
listed without inspecting each entry, and "no such container" means gone, never a failure.
"""

from __future__ import annotations

import atexit
import errno
import hashlib
import math
import os
import re
import select
import shutil
import socket
import struct
import tempfile
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests
from docker.types import Ulimit

from arena.sandbox import UnknownSandbox
from arena.sandbox.base import (
    BotFault,
    BotProcess,
    BotSpec,
    Limits,
    Reason,
    Sandbox,
    SandboxError,
)
from arena.sandbox.common import (
    CLOSED_STDOUT,
    STOPPED_READING,
    LineBuffer,
    StderrLog,
    describe_exit,
    fault_for_exit,
    input_wait_s,
)

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

_FRAME_HEADER = struct.Struct(">BxxxL")  # stream (1 stdout, 2 stderr), 3 pad bytes, length
_STDOUT, _STDERR = 1, 2
_READY_TO_READ = select.POLLIN | select.POLLHUP | select.POLLERR

# What the SDK and requests raise when the engine is gone or misbehaves.
_ENGINE_ERRORS = (docker.errors.DockerException, requests.RequestException, OSError)


def default_image() -> str:
    """The base image: $ARENA_DOCKER_IMAGE, else arena-base:bookworm."""
    return os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE


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


def _owner_of_this_process() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start_time(pid) or '0'}"


def _owner_is_gone(owner: str) -> bool:
    """True if `owner` names a process of this host that no longer runs."""
    host, _, rest = owner.partition(":")
    pid_text, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False  # another machine's run (a shared engine): not ours to judge
    return _process_start_time(int(pid_text)) != started


def folder_digest(folder: Path) -> str:
    """A hash of every file's relative path, executable bit and content under `folder`."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        digest.update(b"x" if path.stat().st_mode & 0o111 else b"-")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _check_readable_by_anyone(folder: Path) -> None:
    """SandboxError if the container's user (nobody) could not read the mounted bot folder."""
    folder = folder.resolve()
    if not folder.is_dir():
        raise SandboxError(f"the bot folder {folder} does not exist")
    for path in [folder, *folder.rglob("*")]:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue  # a dangling link: nothing to read either way
        needed = 0o005 if path.is_dir() else 0o004  # others: r-x on folders, r on files
        if mode & needed != needed:
            raise SandboxError(
                f"{path} is not readable by the container's user (uid 65534); "
                f"make the bot folder readable by everyone: chmod -R a+rX {folder}"
            )


def _slug(name: str) -> str:
    """A Docker-safe lower-case name part (image repositories and container names)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "bot"


class DockerSandbox(Sandbox):
    """Runs each bot in its own locked-down container (the sandbox for untrusted code)."""

    name = "docker"

    def __init__(
        self,
        image: str | None = None,
        base_url: str | None = None,
        stdio: str | None = None,
        client: Any = None,
    ):
        """`image`: the base image; `base_url`: the engine (default: DOCKER_HOST or the local
        socket); `stdio`: "fifo" (pipes, fast), "attach" (the attach socket) or "auto"
        (pipes when the image has /bin/sh and arena runs as root, else attach; the default,
        or $ARENA_DOCKER_STDIO)."""
        stdio = stdio or os.environ.get(STDIO_ENV) or "auto"
        if stdio not in STDIO_MODES:
            # A user's mistake (the setting or $ARENA_DOCKER_STDIO): the CLI prints it as such.
            raise UnknownSandbox(f"unknown stdio mode {stdio!r}; allowed: {', '.join(STDIO_MODES)}")
        self.image = image or default_image()
        self.stdio = stdio
        self._facts: dict[str, dict[str, Any]] = {}
        self._failed_builds: dict[str, BotFault] = {}
        self._maps_users: bool | None = None
        self._base_url = base_url
        self._client = client
        self._checked_image = False
        self._cleaned = False
        self._lock = threading.Lock()
        self._facts_lock = threading.Lock()

    # -- engine ------------------------------------------------------------------------------
    @property
    def client(self) -> docker.DockerClient:
        """The engine client, connected and pinged on first use (SandboxError if unreachable)."""
        if self._client is None:
            try:
                if self._base_url:
                    client = docker.DockerClient(base_url=self._base_url, timeout=API_TIMEOUT_S)
                else:
                    client = docker.from_env(timeout=API_TIMEOUT_S)
                client.ping()
            except _ENGINE_ERRORS as error:
                where = self._base_url or os.environ.get("DOCKER_HOST") or "the default socket"
                raise SandboxError(
                    f"the Docker engine is not reachable at {where} ({error}); start it "
                    "(e.g. .ci/docker-up) or use the local sandbox"
                ) from None
            self._client = client
        return self._client

    def _check_base_image(self) -> None:
        if self._checked_image:
            return
        try:
            self.client.images.get(self.image)
        except docker.errors.ImageNotFound:
            raise SandboxError(
                f"the Docker base image {self.image!r} is not present; build it with "
                f".ci/docker-up, or `docker pull python:3.12-slim` and set {IMAGE_ENV}="
                "python:3.12-slim"
            ) from None
        except _ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine failed while looking up {self.image!r}: {error}"
            ) from None
        self._checked_image = True

    # -- leftovers ---------------------------------------------------------------------------
    def cleanup_leftovers(self) -> int:
        """Remove arena containers whose run (a process of this host) has ended; how many."""
        api = self.client.api
        try:
            # The engine's own listing carries the labels. The SDK's containers.list() would
            # inspect every container listed, and fail (404) when another run's container
            # goes between the two, as containers of live runs do all the time.
            listed = api.containers(all=True, filters={"label": LABEL})
        except _ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine failed while listing containers: {error}"
            ) from None
        removed = 0
        for entry in listed:
            labels = entry.get("Labels") or {}
            if not _owner_is_gone(labels.get(OWNER_LABEL, "")):
                continue  # a live match, maybe of another process: leave it alone
            try:
                api.remove_container(entry["Id"], force=True)
                removed += 1
            except docker.errors.APIError as error:
                if not _is_gone(error):
                    raise SandboxError(
                        f"could not remove leftover container {_listed_name(entry)}: {error}"
                    ) from None
            except _ENGINE_ERRORS as error:
                raise SandboxError(
                    f"could not remove leftover container {_listed_name(entry)}: {error}"
                ) from None
            _remove_io_dir(labels.get(IO_LABEL))
        return removed

    def check_engine(self, while_doing: str) -> None:
        """SandboxError if the engine does not answer a ping within ENGINE_PROBE_S.

        Asked before a bot is charged for a time-out that the engine may have caused (over
        the attach socket the engine carries the bot's stdin and stdout).
        """
        api = self.client.api
        try:
            # The SDK's ping() waits as long as any call (API_TIMEOUT_S); a stall is shorter.
            api._raise_for_status(api._get(api._url("/_ping"), timeout=ENGINE_PROBE_S))
        except _ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine did not answer a ping within {ENGINE_PROBE_S:g} s "
                f"({type(error).__name__}) {while_doing}: it carries the bot's stdin and stdout, "
                "so arena cannot tell whether the bot was late; not the bot's fault"
            ) from None

    # -- images ------------------------------------------------------------------------------
    def image_for(self, bot: BotSpec) -> str:
        """The image the bot runs in: the base image, or its own, built once per content."""
        if not bot.dockerfile:
            self._check_base_image()
            _check_readable_by_anyone(bot.folder)
            return self.image
        folder = bot.folder.resolve()
        dockerfile = (folder / bot.dockerfile).resolve()
        if not dockerfile.is_relative_to(folder) or not dockerfile.is_file():
            raise BotFault(
                Reason.CRASH,
                f"its Dockerfile {bot.dockerfile!r} is not a file inside its folder {folder}",
            )
        tag = f"arena-bot-{_slug(bot.name)}:{folder_digest(folder)[:16]}"
        # A bot restarted after a fault must not pay for (or retry) a failed build again.
        if tag in self._failed_builds:
            raise self._failed_builds[tag]
        try:
            self.client.images.get(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        except _ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine failed while looking up {tag}: {error}"
            ) from None
        try:
            # Build steps are the bot author's code too: no network, and a memory cap.
            self.client.images.build(
                path=str(folder),
                dockerfile=str(dockerfile.relative_to(folder)),
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                network_mode="none",
                labels={LABEL: "docker", BOT_LABEL: bot.name},
                container_limits={"memory": 2 << 30, "memswap": 2 << 30},
                timeout=BUILD_TIMEOUT_S,
            )
        except docker.errors.BuildError as error:
            last = next(
                (
                    str(step.get("error") or step.get("stream", "")).strip()
                    for step in reversed(list(error.build_log))
                    if str(step.get("error") or step.get("stream", "")).strip()
                ),
                str(error),
            )
            self._failed_builds[tag] = BotFault(
                Reason.CRASH, f"its Dockerfile did not build: {last}"
            )
            raise self._failed_builds[tag] from None
        except _ENGINE_ERRORS as error:
            raise SandboxError(f"the Docker engine failed while building {tag}: {error}") from None
        return tag

    # -- how the bot's stdin/stdout travel --------------------------------------------------
    def _image_facts(self, image: str) -> dict[str, Any]:
        """Entrypoint, command and whether /bin/sh exists, per image (looked up once)."""
        with self._facts_lock:  # bots starting side by side: one probe, not one each
            facts = self._facts.get(image)
            if facts is None:
                facts = self._facts[image] = self._probe_image(image)
            return facts

    def _probe_image(self, image: str) -> dict[str, Any]:
        """Read the image's config, and look for /bin/sh in a container that never starts."""
        try:
            config = self.client.images.get(image).attrs.get("Config") or {}
            probe = self.client.containers.create(
                image,
                ["true"],
                network_mode="none",
                labels={LABEL: "probe", OWNER_LABEL: _owner_of_this_process()},
            )
            try:
                chunks, _ = probe.get_archive("/bin/sh")
                # Read the (tiny) answer so that the connection is free again.
                for _ in chunks:
                    pass
                has_shell = True
            except docker.errors.NotFound:
                has_shell = False
            finally:
                probe.remove(force=True)
        except _ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine failed while inspecting {image!r}: {error}"
            ) from None
        return {
            "entrypoint": list(config.get("Entrypoint") or []),
            "cmd": list(config.get("Cmd") or []),
            "has_shell": has_shell,
        }

    def _uses_fifos(self, image: str) -> bool:
        if self.stdio == "attach":
            return False
        shell = self._image_facts(image)["has_shell"]
        # The pipes are handed to uid 65534 by chown: that needs root here, and an engine
        # that maps users (rootless, userns-remap) would give the bot another uid.
        root = os.geteuid() == 0 and not self._engine_maps_users()
        if self.stdio == "fifo" and not (shell and root):
            raise SandboxError(
                f"stdio='fifo' needs /bin/sh in the image ({image!r} has "
                f"{'it' if shell else 'none'}) and arena running as root with an engine "
                f"that does not remap users ({'so it is' if root else 'it is not'}); "
                "use stdio='auto' or 'attach'"
            )
        return shell and root

    def _engine_maps_users(self) -> bool:
        if self._maps_users is None:
            try:
                options = self.client.info().get("SecurityOptions") or []
            except _ENGINE_ERRORS as error:
                raise SandboxError(
                    f"the Docker engine failed to describe itself: {error}"
                ) from None
            self._maps_users = any("name=userns" in o or "name=rootless" in o for o in options)
        return self._maps_users

    @staticmethod
    def _make_fifos() -> Path:
        """A private folder with the two pipes `in` and `out`, openable only by the bot's user."""
        folder = Path(tempfile.mkdtemp(prefix=IO_PREFIX))
        # The container's user must reach the pipes; nobody may list the folder.
        folder.chmod(0o711)
        uid, gid = (int(part) for part in USER.split(":"))
        for name in ("in", "out"):
            os.mkfifo(folder / name, 0o600)
            os.chown(folder / name, uid, gid)
        return folder

    # -- start -------------------------------------------------------------------------------
    def container_settings(
        self, bot: BotSpec, limits: Limits, image: str, io_dir: Path | None = None
    ) -> dict[str, Any]:
        """The keyword arguments of `containers.create` for this bot: every limit in one place."""
        memory = f"{limits.memory_mb}m"
        labels = {
            LABEL: "docker",
            OWNER_LABEL: _owner_of_this_process(),
            BOT_LABEL: bot.name,
        }
        volumes: dict[str, dict[str, str]] = {}
        settings: dict[str, Any] = {
            "image": image,
            "command": list(bot.command) or None,
            "name": f"arena-{_slug(bot.name)}-{uuid.uuid4().hex[:12]}",
            "stdin_open": True,  # sets StdinOnce: closing our side reaches the bot as EOF
            "tty": False,  # stdout and stderr stay apart (multiplexed frames)
            "network_mode": "none",
            "mem_limit": memory,
            "memswap_limit": memory,  # equal: no swap on top of the memory limit
            "nano_cpus": int(limits.cpus * 1e9),
            "pids_limit": limits.pids,
            "read_only": True,
            "tmpfs": {"/tmp": f"size={limits.file_size_mb}m,noexec,nosuid,nodev"},
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "user": USER,
            "init": True,  # PID 1 reaps children and dies with the bot, taking everything with it
            "oom_score_adj": 1000,  # if the host runs short, the bot goes first, not arena
            "ulimits": [
                Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
                Ulimit(
                    name="fsize",
                    soft=limits.file_size_mb << 20,
                    hard=limits.file_size_mb << 20,
                ),
                Ulimit(name="cpu", soft=limits.cpu_s, hard=limits.cpu_s),
                Ulimit(name="core", soft=0, hard=0),
            ],
            # A flood of output must not fill the host's disk.
            "log_config": {"type": "none"},
            "environment": {"HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"},
            "labels": labels,
            "volumes": volumes,
        }
        if not bot.dockerfile:
            volumes[str(bot.folder.resolve())] = {"bind": BOT_MOUNT, "mode": "ro"}
            settings["working_dir"] = BOT_MOUNT
        if io_dir is not None:
            # stdin/stdout are the pipes in io_dir (a read-only mount: pipes stay usable, nothing
            # else can be written). The shell only redirects and execs itself away, so the bot
            # is init's child as without pipes; the image's own entrypoint still runs first.
            facts = self._image_facts(image)
            volumes[str(io_dir)] = {"bind": IO_MOUNT, "mode": "ro"}
            labels[IO_LABEL] = str(io_dir)
            settings["stdin_open"] = False
            settings["entrypoint"] = [
                "/bin/sh",
                "-c",
                f'exec "$@" <{IO_MOUNT}/in >{IO_MOUNT}/out',
                "arena-stdio",
            ]
            settings["command"] = facts["entrypoint"] + (list(bot.command) or facts["cmd"])
        return settings

    def start(self, bot: BotSpec, limits: Limits) -> DockerBotProcess:
        """Create, attach and start the bot's container; SandboxError if the engine fails."""
        with self._lock:
            if not self._cleaned:
                self.cleanup_leftovers()
                self._cleaned = True
        image = self.image_for(bot)
        io_dir = self._make_fifos() if self._uses_fifos(image) else None
        settings = self.container_settings(bot, limits, image, io_dir)
        container = process = None
        try:
            container = self.client.containers.create(**settings)
            streams = {"stdout": 1, "stderr": 1, "stream": 1}
            if io_dir is None:
                streams["stdin"] = 1
            attached = self.client.api.attach_socket(container.id, params=streams)
            process = DockerBotProcess(self, container, attached, limits, io_dir)
            container.start()
            if io_dir is None:
                container.reload()  # its init's pid on this host: see _StdoutWatch
                process.watch = _StdoutWatch.find(container.id, container.attrs["State"].get("Pid"))
        except _ENGINE_ERRORS as error:
            if process is not None:
                process.discard()
            else:
                if container is not None:
                    _remove_quietly(container)
                _remove_io_dir(io_dir)
            raise SandboxError(
                f"the Docker engine could not start a container for {bot.name}: {error}"
            ) from None
        return process


def _remove_quietly(container: Any) -> None:
    try:
        container.remove(force=True)
    except _ENGINE_ERRORS:
        pass  # cleanup_leftovers of the next run will find it by its label


def _is_gone(error: docker.errors.APIError) -> bool:
    """True if the engine said the container is gone (404) or already being removed (409)."""
    return error.status_code in (404, 409)


def _listed_name(entry: dict[str, Any]) -> str:
    names = entry.get("Names") or [entry["Id"][:12]]
    return names[0].lstrip("/")


class _StdoutWatch:
    """Whether a bot still holds its container's stdout, from /proc (attach mode only).

    Over the attach socket the engine cannot tell a bot that closed its stdout: the
    container's init keeps its own copy open, and the engine's copy of the stream ends only
    with the container. /proc can: the bot closed it when the container has processes
    besides init and none of them holds that pipe. Works when the engine runs on this host
    in arena's view of /proc and arena may read other users' /proc entries (root); else
    `find` gives None and such a bot times out instead.
    """

    def __init__(self, init_pid: int, pipe: str, namespace: str):
        self.init_pid, self.pipe, self.namespace = init_pid, pipe, namespace

    @classmethod
    def find(cls, container_id: str, init_pid: int | None) -> _StdoutWatch | None:
        """The watch of the container whose init has host pid `init_pid`; None if not possible."""
        if not init_pid:
            return None
        try:
            if container_id not in Path(f"/proc/{init_pid}/cgroup").read_text():
                return None  # not this host's pid, or not our view of it
            pipe = os.readlink(f"/proc/{init_pid}/fd/1")
            namespace = os.readlink(f"/proc/{init_pid}/ns/pid")
        except OSError:
            return None
        return cls(init_pid, pipe, namespace) if pipe.startswith("pipe:") else None

    def closed(self) -> bool:
        """True if processes besides init run in the container and none holds its stdout."""
        others = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == self.init_pid:
                continue
            try:
                if os.readlink(f"/proc/{entry.name}/ns/pid") != self.namespace:
                    continue
                state = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state in ("Z", "X"):
                    continue  # ended, not reaped yet: it holds nothing
                others = True
                for fd in os.listdir(f"/proc/{entry.name}/fd"):
                    if os.readlink(f"/proc/{entry.name}/fd/{fd}") == self.pipe:
                        return False
            except OSError:
                continue  # it ended while we looked
        return others


def _remove_io_dir(io_dir: Path | str | None) -> None:
    """Delete a folder of pipes made by `_make_fifos` (and nothing else)."""
    if not io_dir:
        return
    io_dir = Path(io_dir)
    if io_dir.name.startswith(IO_PREFIX) and io_dir.parent == Path(tempfile.gettempdir()):
        shutil.rmtree(io_dir, ignore_errors=True)


# Containers still open when the interpreter exits (e.g. on an uncaught exception) are removed.
_OPEN: weakref.WeakSet[DockerBotProcess] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for process in list(_OPEN):
        try:
            process.close()
        except SandboxError:
            pass


class DockerBotProcess(BotProcess):
    """A bot running in a container: stdin/stdout over two pipes or the attach socket.

    The attach socket is always there: it brings the bot's stderr (and, without pipes, its
    stdout and stdin), and its end tells that the container has ended.
    """

    def __init__(
        self,
        sandbox: DockerSandbox,
        container: Any,
        attached: Any,
        limits: Limits,
        io_dir: Path | None = None,
    ):
        self.sandbox = sandbox
        self.container = container
        self.limits = limits
        self.io_dir = io_dir
        self._attached = attached  # keeps the HTTP response (and with it the socket) alive
        self._sock: socket.socket = getattr(attached, "_sock", attached)
        self._sock.setblocking(False)
        # stdin is opened read-write: that never blocks, the bot's own open of it does not
        # either, and the bot sees EOF exactly when we close our end. stdout is opened
        # read-only, which does not block either and lets the bot's open succeed at once;
        # and once the bot has opened it, its last close of it is an end of file here (while
        # no writer has come yet, the kernel reports nothing), whether or not it keeps running.
        self._in_fd = self._out_fd = None
        self._in_read_too = False  # stdin is still opened read-write (see _still_running)
        if io_dir is not None:
            self._in_fd = os.open(io_dir / "in", os.O_RDWR | os.O_NONBLOCK)
            self._in_read_too = True
            self._out_fd = os.open(io_dir / "out", os.O_RDONLY | os.O_NONBLOCK)
        self.watch: _StdoutWatch | None = None  # attach mode, when /proc can tell (set by start)
        # poll, not select: a tournament process may hold more than 1024 descriptors.
        self._sock_fd = self._sock.fileno()
        self._reading = select.poll()  # what brings output: the socket, and the pipe
        self._writing = select.poll()  # the same, plus where stdin goes
        for poller in (self._reading, self._writing):
            poller.register(self._sock_fd, select.POLLIN)
            if self._out_fd is not None:
                poller.register(self._out_fd, select.POLLIN)
        if self._in_fd is not None:
            self._writing.register(self._in_fd, select.POLLOUT)
        else:
            self._writing.register(self._sock_fd, select.POLLIN | select.POLLOUT)
        self._header = bytearray()  # the part of a frame header read so far
        self._frame_stream = 0  # stream of the frame being read: 1 stdout, 2 stderr
        self._frame_left = 0  # payload bytes of that frame still to come (0: a header is next)
        self._stdout = LineBuffer.from_limits(limits)
        self._stderr = StderrLog(limits.stderr_keep_bytes)
        self._eof = False  # the container's output has ended (and was all read)
        self._stdout_closed = False  # the bot closed its stdout; its container may still run
        self._fault: BotFault | None = (
            None  # a fault that ends the bot: raised again if asked again
        )
        self._closed = False
        self._oom: bool | None = None
        _OPEN.add(self)

    @property
    def id(self) -> str:
        """The container's id."""
        return self.container.id

    @property
    def stdio(self) -> str:
        """How stdin/stdout travel: "fifo" or "attach"."""
        return "attach" if self._in_fd is None else "fifo"

    # -- reading -----------------------------------------------------------------------------
    def _pump(self, wait_s: float) -> None:
        """Read what is ready (waiting at most `wait_s` for something) and route it."""
        if self._eof:
            return
        ready = {fd for fd, _ in self._reading.poll(_milliseconds(wait_s))}
        if self._out_fd is not None and self._out_fd in ready:
            self._read_pipe()
        if self._sock_fd in ready:  # data, or the end (POLLHUP): recv tells which
            self._read_socket()
            if self._eof and self._out_fd is not None:
                # The container has ended: what it wrote is all in the pipe now.
                while self._read_pipe():
                    pass

    def _read_pipe(self) -> bool:
        """Read from the stdout pipe (at most 1 MiB); True if the pipe may hold more."""
        for _ in range(16):  # bounded, so a flooding bot cannot keep us past a deadline
            try:
                chunk = os.read(self._out_fd, 1 << 16)
            except BlockingIOError:
                return False
            if not chunk:
                # Every writer has closed it: the bot closed its stdout or ended.
                if not self._stdout_closed:
                    self._stdout_closed = True
                    for poller in (self._reading, self._writing):
                        poller.unregister(self._out_fd)  # else it is "ready" forever
                return False
            self._stdout.feed(chunk)
            if len(chunk) < (1 << 16):
                return False
        return True

    def _read_socket(self) -> None:
        for _ in range(16):  # at most 1 MiB per call, so a stderr flood cannot keep us here
            try:
                chunk = self._sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                if error.errno not in (errno.ECONNRESET, errno.EPIPE):
                    raise SandboxError(
                        f"the attach socket of {self.container.name} failed: {error}"
                    ) from None
                chunk = b""
            if not chunk:
                self._eof = True
                return
            self._demux(chunk)
            if len(chunk) < (1 << 16):
                return

    def _demux(self, chunk: bytes) -> None:
        """Route the payload of the multiplexed stream to stdout lines and the stderr log.

        Frames are followed incrementally (header, then payload as it comes), so a frame
        split across reads costs nothing and a huge frame is never held whole.
        """
        position, size = 0, len(chunk)
        while position < size:
            if self._frame_left == 0:
                needed = _FRAME_HEADER.size - len(self._header)
                self._header += chunk[position : position + needed]
                position += needed
                if len(self._header) < _FRAME_HEADER.size:
                    return
                self._frame_stream, self._frame_left = _FRAME_HEADER.unpack(self._header)
                self._header.clear()
                continue
            take = min(self._frame_left, size - position)
            payload = chunk[position : position + take]
            position += take
            self._frame_left -= take
            if self._frame_stream == _STDOUT and self._out_fd is None:
                self._stdout.feed(payload)  # may raise OUTPUT_LIMIT: the bot is done for anyway
            else:
                # stderr (with pipes, the container's own stdout only carries init's words)
                self._stderr.append(payload)

    def receive_line(self, timeout_s: float) -> bytes:
        """The bot's next stdout line, waiting at most `timeout_s` (see BotProcess)."""
        self._check_open()
        if self._fault is not None:
            raise self._fault
        began = time.monotonic()
        deadline = began + max(0.0, timeout_s)
        # Attach mode: a wait that lasts looks now and then whether the bot still holds its
        # stdout (answers come sooner than the first look, so they cost nothing).
        next_look = began + WATCH_EVERY_S if self.watch is not None else math.inf
        try:
            while True:
                line = self._stdout.next_line()
                if line is not None:
                    return line
                if self._eof or self._stdout_closed:
                    raise self._end_fault()
                now = time.monotonic()
                self._pump(min(deadline, next_look) - now)
                if self._stdout.has_line() or self._eof or self._stdout_closed:
                    continue
                now = time.monotonic()
                if now >= next_look and now < deadline:
                    next_look = now + WATCH_EVERY_S
                    self._look_at_stdout()
                    continue
                if now >= deadline:
                    raise self._timeout(f"did not answer within {timeout_s:.3g} s", timeout_s > 0)
        except BotFault as fault:
            if fault.reason is not Reason.TIMEOUT:
                self._fault = fault
            raise

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError(
                f"the container {self.container.name} was already closed (arena's mistake)"
            )

    def _look_at_stdout(self) -> None:
        """Attach mode: note a bot that closed its stdout (see _StdoutWatch)."""
        if self.watch is None or not self.watch.closed():
            return
        # A bot that is ending lets go of everything an instant before it is a zombie: look
        # again a moment later; by then its end (if it is that) is on the socket.
        self._pump(SETTLE_S)
        if not (self._eof or self._stdout.has_line()) and self.watch.closed():
            self._stdout_closed = True

    def _timeout(self, detail: str, waited: bool = True) -> BotFault:
        """TIMEOUT with `detail`, after making sure the engine did not cause it.

        Over the attach socket the engine carries stdin and stdout: if it does not answer
        now, arena cannot judge the bot, and raises SandboxError instead (not the bot's
        fault). Over pipes the engine plays no part in any clock.
        """
        if waited and self._in_fd is None:
            self.sandbox.check_engine(f"when {self.container.name} {detail}")
        return BotFault(Reason.TIMEOUT, detail)

    def _end_fault(self) -> BotFault:
        """Why the bot's output ended: OUT_OF_MEMORY, CRASH with its exit code / signal, or
        CRASH because it closed its stdout and kept running."""
        if not self._eof:
            # Its stdout has ended but its container has not (yet).
            if self._still_running():
                return BotFault(Reason.CRASH, CLOSED_STDOUT)
            deadline = time.monotonic() + EXIT_WAIT_S
            while not self._eof and time.monotonic() < deadline:
                self._pump(deadline - time.monotonic())
            if not self._eof:
                return BotFault(Reason.CRASH, describe_exit(None))
        try:
            status = self.container.wait(timeout=API_TIMEOUT_S)["StatusCode"]
            self.container.reload()
            self._oom = bool(self.container.attrs["State"].get("OOMKilled"))
        except docker.errors.NotFound:
            raise SandboxError(
                f"the container {self.container.name} was removed by someone else before arena "
                "learnt how it ended; not the bot's fault"
            ) from None
        except _ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine failed while reading how {self.container.name} ended: {error}"
            ) from None
        return fault_for_exit(_as_returncode(status), self.limits, oom=self._oom)

    def _still_running(self) -> bool:
        """After its stdout ended: does the bot live on (does anything still read its stdin)?"""
        if self._in_fd is None:
            return self._stdout_closed  # only _StdoutWatch, which saw it run, says so here
        if self._in_fd < 0:
            return False
        if self._in_read_too:
            # Drop our own read end of stdin: a write-only end tells whether anyone reads it.
            # The bot's shell opened stdin before stdout, so it has it (if it still runs).
            try:
                write_only = os.open(self.io_dir / "in", os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                return False
            os.dup2(write_only, self._in_fd)
            os.close(write_only)
            self._in_read_too = False
        # Wait (at most SETTLE_S) for the last reader of stdin to go: POLLERR comes whatever
        # is asked for, and the socket's end says the container has ended.
        poller = select.poll()
        poller.register(self._in_fd, 0)
        poller.register(self._sock_fd, select.POLLIN)
        deadline = time.monotonic() + SETTLE_S
        while True:
            events = dict(poller.poll(_milliseconds(deadline - time.monotonic())))
            if events.get(self._in_fd, 0) & select.POLLERR:
                return False
            if self._sock_fd in events:
                self._pump(0.0)
                if self._eof:
                    return False
            if time.monotonic() >= deadline:
                return True

    def stderr_text(self) -> str:
        """The kept part of the bot's stderr."""
        return self._stderr.text()

    # -- writing -----------------------------------------------------------------------------
    def send_line(self, line: bytes) -> None:
        """Write one line to the bot's stdin; output arriving meanwhile is read, not lost."""
        self._check_open()
        if self._fault is not None:
            raise self._fault
        self._stdout.start_decision()
        try:
            self._send(line + b"\n")
        except BotFault as fault:
            if fault.reason is not Reason.TIMEOUT:
                self._fault = fault
            raise

    def _send(self, data: bytes) -> None:
        # JSON never holds raw control bytes, so Docker's detach keys (ctrl-p ctrl-q) cannot occur.
        target_fd = self._sock_fd if self._in_fd is None else self._in_fd
        if self._in_fd is not None:
            try:  # the common case: the pipe has room, one call, no poll
                data = data[os.write(self._in_fd, data) :]
            except BlockingIOError:
                pass
        view = memoryview(data)
        deadline = time.monotonic() + input_wait_s(self.limits)
        while view:
            if self._eof or self._stdout_closed:
                raise self._end_fault()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timeout(STOPPED_READING)
            events = dict(self._writing.poll(_milliseconds(remaining)))
            if any(mask & _READY_TO_READ for mask in events.values()):
                # A bot blocked on writing output cannot read: drain it to avoid a deadlock.
                self._pump(0.0)
            if not events.get(target_fd, 0) & select.POLLOUT:
                continue
            try:
                if self._in_fd is not None:
                    sent = os.write(self._in_fd, view)
                else:
                    sent = self._sock.send(view)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as error:
                if error.errno in (errno.EPIPE, errno.ECONNRESET):
                    # The socket's end is the container's; a pipe's, only that nobody reads it.
                    self._eof = self._eof or self._in_fd is None
                    raise self._end_fault() from None
                raise SandboxError(
                    f"the attach socket of {self.container.name} failed: {error}"
                ) from None
            view = view[sent:]

    # -- end ---------------------------------------------------------------------------------
    def close(self) -> Reason | None:
        """Kill and remove the container (idempotent); OUT_OF_MEMORY if it was killed for memory."""
        if self._closed:
            return Reason.OUT_OF_MEMORY if self._oom else None
        self._closed = True
        _OPEN.discard(self)
        failure: Exception | None = None
        try:
            self._close_input()
            try:
                self._pump(0.0)  # keep the last words of its log
            except (OSError, BotFault, SandboxError):
                pass
            # Close our end before the kill: the engine will not finish a container whose
            # output it is still trying to hand to a full socket.
            self._close_streams()
            if self._oom is None:
                try:
                    self.container.kill()
                except docker.errors.APIError as error:
                    if not _is_gone(error):  # 409: it is not running any more
                        raise
                self.container.wait(timeout=API_TIMEOUT_S)
                self.container.reload()
                self._oom = bool(self.container.attrs["State"].get("OOMKilled"))
        except docker.errors.NotFound:
            pass  # removed by someone else meanwhile: nothing left to ask or to remove
        except _ENGINE_ERRORS as error:
            failure = error
        finally:
            self._close_streams()
            try:
                self.container.remove(force=True)
            except docker.errors.APIError as error:
                if not _is_gone(error):
                    failure = failure or error
            except _ENGINE_ERRORS as error:
                failure = failure or error
            _remove_io_dir(self.io_dir)
        if failure is not None:
            raise SandboxError(
                f"the Docker engine failed while removing {self.container.name}: {failure}"
            )
        return Reason.OUT_OF_MEMORY if self._oom else None

    def discard(self) -> None:
        """Remove the container without asking how it ended (after a failed start)."""
        self._closed = True
        _OPEN.discard(self)
        self._close_streams()
        _remove_quietly(self.container)
        _remove_io_dir(self.io_dir)

    def _close_input(self) -> None:
        """EOF on the bot's stdin."""
        if self._in_fd is not None:
            os.close(self._in_fd)
            self._in_fd = -1  # not None: the mode stays "fifo"
        elif not self._eof:
            try:
                self._sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def _close_streams(self) -> None:
        self._eof = True
        for fd_name in ("_in_fd", "_out_fd"):
            fd = getattr(self, fd_name)
            if fd is not None and fd >= 0:
                os.close(fd)
                setattr(self, fd_name, -1)
        try:
            self._sock.close()
            self._attached.close()
        except OSError:
            pass

    def __del__(self) -> None:
        # Last resort for a process dropped without close(): never leave a container behind.
        if not getattr(self, "_closed", True):
            try:
                self.close()
            except Exception:  # noqa: BLE001, S110 - nothing may escape a finaliser
                pass


def _milliseconds(seconds: float) -> int:
    """A poll timeout: `seconds` rounded up to whole milliseconds, never negative."""
    return max(0, math.ceil(seconds * 1000))


def _as_returncode(status: int) -> int:
    """Docker's exit status as Popen.returncode: 128+N from the init process is signal N."""
    if status > 128 and status - 128 < 65:
        return -(status - 128)
    return status
