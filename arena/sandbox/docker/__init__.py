"""The `docker` sandbox, for untrusted code: a container per bot per match (cold), or one
per warm slot kept for the run with a fresh process per game (warm, `warm.py`).

A bot runs from the base image (a setting; default `arena-base:bookworm`, built by
`.ci/docker-up`; `python:3.12-slim` works too) with a private copy of its folder mounted
read-only at `/bot` (`arena.sandbox.copies`: made for this container alone, on the host's
/dev/shm, removed with it, so no container reads the page cache of another's files), or
from an image built from its own Dockerfile (cached by a hash of the folder; its files,
like the image's, are read by every container of the image).
Every container gets: no network, memory = memory+swap limit, a CPU quota, a pids limit,
a read-only root with a small tmpfs at /tmp, all capabilities dropped, no-new-privileges,
a uid of its own as root (leased from arena's range for the container's life,
`arena.sandbox.uids`: no process of the host, local bots included, is that uid, so none
may read its memory; else nobody, 65534), an init process, rlimits (open files, file size, CPU, no core), the
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

`start(..., slot=KEY)` names a warm slot: its container is made on the slot's first start
with the same settings, and every start runs a fresh bot process in it (through arena's
own launcher, as the container's uid, in fresh network and IPC namespaces), the container reset in
between; see `warm.py` for how, and why that is as
strong. `slot=None`, `warm=False`, the attach socket, or an engine whose containers this
host cannot see start cold as above. `close()` removes the slots' containers.

`runtime="runsc"` (or $ARENA_DOCKER_RUNTIME) runs the containers on gVisor's kernel instead
of the host's (runc, the default): the same settings, but the memory cgroup gets room for
gVisor itself, the bot's process limit is its RLIMIT_NPROC (gVisor's threads fill the
host's pids cgroup), the pipes' mount is writable (gVisor opens no FIFO for writing on a
read-only one) and slots start cold (RUNSC_COLD). The engine must have runsc registered
(.ci/docker-up does it), else RuntimeMissing says how.

Where things live: `engine.py` (settings, labels, owners, the runtime, the engine's errors), `images.py`
(base and Dockerfile images, cached), `transport.py` (the running bot: pipes or the attach
socket), `warm.py` (warm slots and their reset), and here the sandbox itself: container
settings, start, leftovers.
"""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.types import Ulimit

from arena.faults import SandboxError
from arena.sandbox import UnknownSandbox
from arena.sandbox.base import BotSpec, Limits, Sandbox
from arena.sandbox.copies import FolderCopy
from arena.sandbox.copies import remove_leftovers as remove_copies
from arena.sandbox.uids import UidLease, lease_range
from arena.sandbox.docker.engine import (  # noqa: F401 (also the package's public names)
    ENGINE_ERRORS,
    API_TIMEOUT_S,
    BOT_LABEL,
    BOT_MOUNT,
    DEFAULT_IMAGE,
    ENGINE_PROBE_S,
    IMAGE_ENV,
    IO_LABEL,
    IO_MOUNT,
    IO_PREFIX,
    LABEL,
    OWNER_LABEL,
    RUNTIME_ENV,
    RUNTIMES,
    STDIO_ENV,
    STDIO_MODES,
    USER,
    _is_gone,
    _listed_name,
    _owner_is_gone,
    owner_of_this_process,
    remove_quietly,
    _slug,
    choose_runtime,
    default_image,
    engine_problem,
    engine_runtimes,
    runtime_setting,
    RuntimeMissing,
    UnknownRuntime,
)
from arena.sandbox.docker.images import (  # noqa: F401
    DockerImages,
    _check_readable_by_anyone,
)
from arena.sandbox.docker.transport import (  # noqa: F401
    DockerBotProcess,
    _release,
    _remove_io_dir,
    _StdoutWatch,
    make_fifos,
)
from arena.sandbox.docker.warm import (  # noqa: F401
    LAUNCHER_CAPS,
    LAUNCHER_USER,
    SLOT_LABEL,
    WarmBotProcess,
    WarmSlots,
    _Unsupported,
)


# Why slots start cold under gVisor (README, "Where a bot runs"; warm.py).
RUNSC_COLD = (
    "under runsc a bot's processes live in gVisor's kernel, where this host cannot see, "
    "signal or reset them (a warm slot is reset from the host's /proc and cgroups)"
)


RUNSC_MEMORY_MB = 32  # gVisor's own memory in a runsc container's cgroup (measured ~15 MB)


def runsc_host_pids(pids: int) -> int:
    """The host pids cgroup's limit for a runsc container whose bot may have `pids`
    processes: gVisor's own threads (about 50) plus about 5 per process, with room."""
    return 128 + 8 * pids


class DockerSandbox(DockerImages, Sandbox):
    """Runs each bot in its own locked-down container (the sandbox for untrusted code)."""

    name = "docker"

    def __init__(
        self,
        image: str | None = None,
        base_url: str | None = None,
        stdio: str | None = None,
        client: Any = None,
        warm: bool = True,
        runtime: str | None = None,
    ):
        """`image`: the base image; `base_url`: the engine (default: DOCKER_HOST or the local
        socket); `stdio`: "fifo" (pipes, fast), "attach" (the attach socket) or "auto"
        (pipes when the image has /bin/sh and arena runs as root, else attach; the default,
        or $ARENA_DOCKER_STDIO); `warm=False` starts every process cold, slot or not (the
        old design, kept for comparison); `runtime`: "runc" or "runsc" (gVisor), else
        $ARENA_DOCKER_RUNTIME, else the default (`choose_runtime`), checked against the
        engine's registered runtimes when it is first reached (RuntimeMissing if absent)."""
        stdio = stdio or os.environ.get(STDIO_ENV) or "auto"
        if stdio not in STDIO_MODES:
            # A user's mistake (the setting or $ARENA_DOCKER_STDIO): the CLI prints it as such.
            raise UnknownSandbox(f"unknown stdio mode {stdio!r}; allowed: {', '.join(STDIO_MODES)}")
        self.image = image or default_image()
        self.stdio = stdio
        self._asked_runtime = runtime_setting(runtime)  # UnknownRuntime: a user's mistake
        self._runtime: str | None = None  # known once the engine is reached
        self._init_images()
        self._maps_users: bool | None = None
        self._uids: range | None | bool = False  # the bots' range of uids, once known
        self._base_url = base_url
        self._client = client
        self._own_client = client is None  # made here: closed by close(), made again if used after
        self._cleaned = False
        self._lock = threading.Lock()
        self.warm = warm
        self._slots: WarmSlots | None = None

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
                registered = engine_runtimes(client.info())
            except ENGINE_ERRORS as error:
                where = self._base_url or os.environ.get("DOCKER_HOST") or "the default socket"
                raise SandboxError(
                    f"the Docker engine is not reachable at {where} ({error}); start it "
                    "(e.g. .ci/docker-up) or use the local sandbox"
                ) from None
            self._runtime = choose_runtime(self._asked_runtime, registered)
            self._client = client
        return self._client

    @property
    def runtime(self) -> str:
        """The containers' runtime: runc (the host's kernel) or runsc (gVisor's)."""
        if self._runtime is None:
            if self._client is not None:  # a client of the caller's (tests)
                self._runtime = choose_runtime(
                    self._asked_runtime, engine_runtimes(self._client.info())
                )
            else:
                self.client  # noqa: B018 - reaching the engine chooses it
        assert self._runtime is not None
        return self._runtime

    # -- leftovers ---------------------------------------------------------------------------
    def cleanup_leftovers(self) -> int:
        """Remove arena containers (and folder copies) whose run (a process of this host) has
        ended; how many containers."""
        api = self.client.api
        try:
            # The engine's own listing carries the labels. The SDK's containers.list() would
            # inspect every container listed, and fail (404) when another run's container
            # goes between the two, as containers of live runs do all the time.
            listed = api.containers(all=True, filters={"label": LABEL})
        except ENGINE_ERRORS as error:
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
            except ENGINE_ERRORS as error:
                raise SandboxError(
                    f"could not remove leftover container {_listed_name(entry)}: {error}"
                ) from None
            _remove_io_dir(labels.get(IO_LABEL))
        remove_copies()  # the folder copies of runs that have ended (their containers are gone)
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
        except ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine did not answer a ping within {ENGINE_PROBE_S:g} s "
                f"({type(error).__name__}) {while_doing}: it carries the bot's stdin and stdout, "
                "so arena cannot tell whether the bot was late; not the bot's fault"
            ) from None

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

    def lease_uid(self) -> UidLease | None:
        """A uid of its own for a container's bot, held until the container is removed
        (arena.sandbox.uids); None where bots are nobody: not root, `ARENA_LOCAL_UIDS=nobody`,
        or an engine that remaps users (a uid of ours would not be the container's)."""
        if self._uids is False:
            self._uids = lease_range() if os.geteuid() == 0 and not self._engine_maps_users() else None
        return UidLease(self._uids) if self._uids is not None else None

    def _engine_maps_users(self) -> bool:
        if self._maps_users is None:
            try:
                options = self.client.info().get("SecurityOptions") or []
            except ENGINE_ERRORS as error:
                raise SandboxError(
                    f"the Docker engine failed to describe itself: {error}"
                ) from None
            self._maps_users = any("name=userns" in o or "name=rootless" in o for o in options)
        return self._maps_users

    # -- start -------------------------------------------------------------------------------
    def container_settings(
        self, bot: BotSpec, limits: Limits, image: str, io_dir: Path | None = None,
        source: Path | None = None, uid: int | None = None,
    ) -> dict[str, Any]:
        """The keyword arguments of `containers.create` for this bot: every limit in one place.
        `source`: what is mounted at /bot (the container's private copy of the bot's folder,
        arena.sandbox.copies; default the folder itself); `uid`: the bot's user and group
        (a uid leased for this container, arena.sandbox.uids; default nobody)."""
        memory = f"{limits.memory_mb}m"
        labels = {
            LABEL: "docker",
            OWNER_LABEL: owner_of_this_process(),
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
            "user": f"{uid}:{uid}" if uid is not None else USER,
            "runtime": self.runtime,
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
        if self.runtime == "runsc":
            # gVisor's kernel runs as ~50 host threads, and ~5 more per process of the bot
            # (measured: 53 idle, 379 with 64 processes), all in the container's pids cgroup:
            # `pids` there would stop gVisor itself. The bot's own limit is RLIMIT_NPROC,
            # which gVisor counts for the container alone (the host counts it per uid, across
            # containers: not usable under runc); the cgroup only bounds gVisor's threads.
            settings["pids_limit"] = runsc_host_pids(limits.pids)
            # The host's memory cgroup holds gVisor's kernel too (about 15 MB beside an idle
            # Python bot): it gets RUNSC_MEMORY_MB more, so that the bot keeps its limit.
            memory = f"{limits.memory_mb + RUNSC_MEMORY_MB}m"
            settings["mem_limit"] = settings["memswap_limit"] = memory
            settings["ulimits"].append(Ulimit(name="nproc", soft=limits.pids, hard=limits.pids))
        if not bot.dockerfile:
            volumes[str(source or bot.folder.resolve())] = {"bind": BOT_MOUNT, "mode": "ro"}
            settings["working_dir"] = BOT_MOUNT
        if io_dir is not None:
            # stdin/stdout are the pipes in io_dir (a read-only mount: pipes stay usable, nothing
            # else can be written). The shell only redirects and execs itself away, so the bot
            # is init's child as without pipes; the image's own entrypoint still runs first.
            facts = self._image_facts(image)
            # Under runsc the mount is writable: gVisor (2022-12) refuses to open a FIFO for
            # writing on a read-only mount (EROFS; Linux allows it). Nothing else can be
            # written there: the folder is root's (0711), the pipes the bot's own.
            mode = "rw" if self.runtime == "runsc" else "ro"
            volumes[str(io_dir)] = {"bind": IO_MOUNT, "mode": mode}
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

    def start(
        self, bot: BotSpec, limits: Limits, *, slot: str | None = None
    ) -> DockerBotProcess | WarmBotProcess:
        """Start the bot; SandboxError if the engine fails.

        Cold (`slot=None`): create, attach and start a container of its own. Warm: a fresh
        process in the slot's container (see arena/sandbox/docker/warm.py), when this
        engine and image allow it; else cold.
        """
        with self._lock:
            if not self._cleaned:
                self.cleanup_leftovers()
                self._cleaned = True
        image = self.image_for(bot)
        self.check_program(bot, image)
        if slot is not None and self.warm_reason(image) is None:
            try:
                return self._warm_slots().start(bot, limits, slot, image)
            except _Unsupported as why:
                self._slots.unsupported = str(why)  # this engine cannot: from now on, cold
        return self._start_cold(bot, limits, image)

    def prepare(self, bot: BotSpec, limits: Limits, *, slot: str) -> None:
        """Make a warm slot's container ahead of its first start, in the background (a
        caller that knows the coming games' slots calls it while games play). Does
        nothing where slots start cold; a failure shows at the slot's first start."""
        with self._lock:
            if not self._cleaned:
                self.cleanup_leftovers()
                self._cleaned = True
        image = self.image_for(bot)
        if self.warm_reason(image) is None:
            self._warm_slots().prepare(bot, limits, slot, image)

    def warm_reason(self, image: str | None = None) -> str | None:
        """Why slots start cold here (None if they start warm)."""
        if not self.warm:
            return "warm slots are switched off (warm=False)"
        if self.runtime == "runsc":
            return RUNSC_COLD
        if self._slots is not None and self._slots.unsupported:
            return self._slots.unsupported
        if image is not None and not self._uses_fifos(image):
            return f"stdin/stdout cannot travel over pipes for {image!r} (needs /bin/sh, root)"
        return None

    def _warm_slots(self) -> WarmSlots:
        with self._lock:
            if self._slots is None:
                self._slots = WarmSlots(self)
            return self._slots

    def close(self) -> None:
        """Kill the slots' processes and remove their containers, and close the engine
        client this sandbox made: its pooled connections (up to one per thread that used
        it) would stay open until the garbage collector found them (idempotent; a later
        use connects again)."""
        with self._lock:
            slots, self._slots = self._slots, None
        if slots is not None:
            slots.close()
        with self._lock:
            client = self._client if self._own_client else None
            if client is not None:
                self._client = None
        if client is not None:
            client.close()

    def _start_cold(self, bot: BotSpec, limits: Limits, image: str) -> DockerBotProcess:
        # The container reads a private copy of the bot's folder (arena.sandbox.copies): the
        # page cache of its files is its own. A Dockerfile's image holds the folder itself.
        # And its bot is a uid of its own, which no process of this host is (arena.sandbox.uids).
        copy = None if bot.dockerfile else FolderCopy(bot.folder)
        held: list[Any] = [copy] if copy else []
        try:
            lease = self.lease_uid()
            if lease is not None:
                held.append(lease)
            io_dir = make_fifos(lease.uid if lease else None) if self._uses_fifos(image) else None
        except BaseException:
            _release(held)
            raise
        settings = self.container_settings(
            bot, limits, image, io_dir, copy.path if copy else None, lease.uid if lease else None
        )
        container = process = None
        try:
            container = self.client.containers.create(**settings)
            streams = {"stdout": 1, "stderr": 1, "stream": 1}
            if io_dir is None:
                streams["stdin"] = 1
            attached = self.client.api.attach_socket(container.id, params=streams)
            process = DockerBotProcess(self, container, attached, limits, io_dir, held)
            container.start()
            if io_dir is None:
                container.reload()  # its init's pid on this host: see _StdoutWatch
                process.watch = _StdoutWatch.find(container.id, container.attrs["State"].get("Pid"))
        except ENGINE_ERRORS as error:
            if process is not None:
                process.discard()
            else:
                if container is not None:
                    remove_quietly(container)
                _remove_io_dir(io_dir)
                _release(held)
            raise SandboxError(
                f"the Docker engine could not start a container for {bot.name}: {error}"
            ) from None
        return process
