"""Running a tournament's games on a Dask distributed cluster (`cluster = "tcp://HOST:PORT"`).

The machine that runs `arena run` still schedules, stores and rates; only the unit of work
moves: each game is one Dask task whose input is the game's `GameSpec` (game, rules, seats
with their bots by content hash, deal seed, limits, sandbox) and whose output is the
`PlayedGame` record. Workers never touch the store.

Bots travel by content hash: `ClusterPool` packs each bot folder into a tarball and
registers a worker plugin (`BotShipment`) holding them; every worker, including one that
joins or is restarted later, unpacks them into `<its local directory>/arena-bots/<hash>/`
and re-hashes what it unpacked before using it. A task names bots by hash only, so a
worker plays exactly the bytes the organiser's machine hashed. Sandboxes run on each
worker's own machine (its processes, or its own Docker engine). A bot with a `build` step
travels with its build/ folder when that holds a build of its sources (arena.langs.built:
the mark names the content hash, the place it was built and a hash of what build/ holds,
checked again on the worker): a worker that runs bots where it was built (the same
sandbox and image, e.g. a registry's bot built at validation) plays it as built, once per
content hash everywhere; any other worker (or a bot shipped unbuilt) builds it, once per
machine, in its own sandbox, before its first game there, as `arena run` builds it before
the first game on one machine; a failed build stops the run.

A game is a pure function of its spec, so running it twice is harmless: Dask runs the
games of a lost worker again elsewhere, exceptions are retried, and the store refuses a
second result for a game key (the runner takes that refusal as "already stored").
"""

from __future__ import annotations

import concurrent.futures as cf
import gzip
import hashlib
import io
import json
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from distributed import Client
from distributed.diagnostics.plugin import WorkerPlugin

import arena
from arena.config.field import BotRef
from arena.config.tournament_file import TournamentError, check_address
from arena.langs.build import BUILD_DIR, BuildFailed, run_build
from arena.langs.built import output_hash, read_mark
from arena.play.executor import (
    GameSpec,
    PlayedGame,
    close_sandboxes,
    close_slots,
    load_spec,
    play_scheduled_game,
    sandbox_named,
)
from arena.faults import BotFault, SandboxError
from arena.store.db import content_hash, hashed_files

CONNECT_TIMEOUT_S = 15.0
# How long a run waits for the first worker before it gives up with a message.
WORKERS_TIMEOUT_S = 60.0
# Exceptions inside a game task (arena's own failures, e.g. a worker's Docker engine) are
# retried this often, possibly elsewhere; a lost worker's games are re-run regardless.
RETRIES = 2
# Games handed to the scheduler per worker thread: enough that no thread waits for the
# next game, few enough that Ctrl-C (which waits for submitted games) stays short.
GAMES_PER_THREAD = 2

# On a worker: content hash -> the unpacked, verified bot folder (filled by BotShipment).
_shipped: dict[str, Path] = {}
_shipped_lock = threading.Lock()
# On a worker: content hashes whose Docker image this process has built (or failed to build).
_images: set[str] = set()
_images_lock = threading.Lock()
# On a worker: content hash -> None when its build step succeeded in this process, else
# the one line saying how it failed (a failed build is not run again for every game).
_builds: dict[str, str | None] = {}
_builds_lock = threading.Lock()


class BotShipmentError(SandboxError):
    """A shipped bot could not be unpacked or does not hash to what was shipped."""


class ClusterFailure(SandboxError):
    """The cluster could not play a game (its worker kept dying, the scheduler went away)."""

    def __init__(self, game_key: str, error: BaseException):
        self.game_key, self.error = game_key, error
        super().__init__(
            f"game {game_key} could not be played on the cluster ({type(error).__name__}: {error}); "
            "every finished game is stored: run the same command to resume"
        )


# ------------------------------------------------------------------ bots by content hash


def _files(folder: Path) -> list[Path]:
    # What arena.store.db.content_hash hashes, and build/ when it holds a build of exactly
    # those sources (its mark says so): built once, played as built wherever it fits.
    files = [path for path in hashed_files(folder) if path.is_file()]  # a link to a file: its content
    mark = read_mark(folder)
    out = folder / BUILD_DIR
    if mark is not None and files and mark["source"] == content_hash(folder):
        files += sorted(path for path in out.rglob("*") if path.is_file() and not path.is_symlink())
    return files


def pack_bot(folder: str | Path) -> bytes:
    """A gzipped tarball of a bot folder's files: same bytes for the same content."""
    folder = Path(folder)
    buffer = io.BytesIO()
    # mtime=0 in every entry and in the gzip header: the tarball depends on content only.
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in _files(folder):
            data = path.read_bytes()  # follows links, as content_hash does
            entry = tarfile.TarInfo(str(path.relative_to(folder)))
            entry.size = len(data)
            entry.mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            entry.mtime = 0
            tar.addfile(entry, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), compresslevel=6, mtime=0)


def unpack_bot(expected_hash: str, tarball: bytes, cache: str | Path) -> Path:
    """Unpack a shipped bot into `cache/<hash>` (once; safe when workers race) and verify it."""
    cache = Path(cache)
    final = cache / expected_hash
    if final.is_dir():
        if content_hash(final) == expected_hash:
            return final
        shutil.rmtree(final)  # changed since it was unpacked (a bot that writes into its folder)
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=cache))
    try:
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
            # The "data" filter refuses absolute paths, links out of the folder and devices.
            tar.extractall(staging, filter="data")
        got = content_hash(staging)
        if got != expected_hash:
            raise BotShipmentError(f"a shipped bot hashes to {got[:12]}, not {expected_hash[:12]}: refused")
        _check_build(staging, expected_hash)
        # Readable by everyone: the docker sandbox runs bots as another user.
        for path in [staging, *staging.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)
        try:
            staging.rename(final)
        except OSError:
            if not (final.is_dir() and content_hash(final) == expected_hash):
                raise
            # Another worker on this machine unpacked the same bot first: use that one.
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def _check_build(folder: Path, expected_hash: str) -> None:
    """Keep a shipped build/ only when its mark names these sources and what it holds is
    what was built; else remove it (the worker builds the bot itself)."""
    out = folder / BUILD_DIR
    if not out.is_dir():
        return
    mark = read_mark(folder)
    if mark is None or mark["source"] != expected_hash or output_hash(out) != mark.get("output"):
        shutil.rmtree(out)


class BotShipment(WorkerPlugin):
    """Worker plugin: unpack the tournament's bots by content hash on every worker, even late ones."""

    def __init__(self, tarballs: Mapping[str, bytes], sandbox: str):
        self.tarballs = dict(tarballs)
        self.sandbox = sandbox
        self.arena_version = arena.__version__
        shipped = "\n".join([sandbox, *sorted(self.tarballs)])
        self.name = "arena-bots-" + hashlib.sha256(shipped.encode()).hexdigest()[:16]

    def setup(self, worker) -> None:
        """Unpack every bot; remove what a killed predecessor on this machine left behind."""
        if arena.__version__ != self.arena_version:
            # The rules decide the results: a worker with other code would play other games.
            raise BotShipmentError(
                f"worker {worker.address} runs arena {arena.__version__}, the organiser arena "
                f"{self.arena_version}: install the same arena version on every worker"
            )
        cache = Path(worker.local_directory) / "arena-bots"
        with _shipped_lock:
            for expected_hash, tarball in self.tarballs.items():
                _shipped[expected_hash] = unpack_bot(expected_hash, tarball, cache)
        box = sandbox_named(self.sandbox)
        # Bot processes (or containers) of a worker that was killed mid-game are orphans now.
        box.cleanup_leftovers()
        # The shipped bots sit side by side in the cache and Dask's own files beside it: a
        # bot sees only its own folder (a no-op in Docker, which mounts only that).
        box.hide_paths([worker.local_directory])


def play_on_worker(spec: GameSpec) -> PlayedGame:
    """The cluster's task: play one game with the bots this worker unpacked by content hash."""
    bots = []
    for bot in spec.bots:
        if bot.kind != "folder":
            raise TournamentError([f"in-process bot {bot.id!r} cannot play on a cluster worker"])
        folder = _shipped.get(bot.content_hash)
        if folder is None:
            raise BotShipmentError(
                f"bot {bot.id!r} ({bot.content_hash[:12]}) was not shipped to this worker; "
                "its setup failed (see the worker's log) or arena's worker plugin is not registered"
            )
        bots.append(bot.model_copy(update={"folder": str(folder)}))
    if spec.sandbox == "docker":
        _build_images(bots)
    _run_builds(bots, spec.sandbox)
    return play_scheduled_game(spec.model_copy(update={"bots": bots}))


def _run_builds(bots: Sequence[BotRef], sandbox: str) -> None:
    """Run each bot's `build` step once per worker process, before its first game here, in
    the worker's sandbox (arena.langs.build: skipped when build/ is up to date). A failed
    build is a TournamentError naming the bot and the worker, which stops the run."""
    for bot in bots:
        if not bot.build:
            continue
        if bot.content_hash not in _builds:
            with _builds_lock:  # one build at a time: games of one bot wait for it
                if bot.content_hash not in _builds:
                    try:
                        run_build(load_spec(bot), sandbox_named(sandbox))
                        _builds[bot.content_hash] = None
                    except BuildFailed as failed:
                        _builds[bot.content_hash] = f"bot {bot.id}, built on worker {_worker_address()}: {failed}"
        failure = _builds[bot.content_hash]
        if failure is not None:
            raise TournamentError([failure])


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except ValueError:  # not in a worker (a test calling play_on_worker directly)
        return "(none)"


def _build_images(bots: Sequence[BotRef]) -> None:
    """Build each Dockerfile bot's image once per worker process, not in several games at once."""
    # Here, in the first game that needs it, not in the plugin's setup: a build can take
    # minutes, and setup runs on the worker's event loop (its heartbeats would stop).
    for bot in bots:
        if not bot.dockerfile or bot.content_hash in _images:
            continue
        with _images_lock:
            if bot.content_hash in _images:
                continue
            try:
                sandbox_named("docker").image_for(load_spec(bot))
            except BotFault:
                pass  # a failed build is remembered by the sandbox and forfeits that bot's games
            _images.add(bot.content_hash)


def close_run_on_worker(run: str) -> int:
    """On a worker, at the end of a run: end the run's bot sessions, free the sandboxes'
    warm slots. Returns how many sessions ended."""
    ended = close_slots(run)
    close_sandboxes(sessions=False)  # other runs' sessions on this worker go on
    return ended


# ----------------------------------------------------------------- the organiser's side


def _readable(game_key: str, error: BaseException) -> BaseException:
    """arena's own errors as they are; anything from Dask (KilledWorker, a lost scheduler) as
    a ClusterFailure, which `arena run` prints as one line rather than a traceback."""
    if isinstance(error, (SandboxError, TournamentError)):
        return error
    failure = ClusterFailure(game_key, error)
    failure.__cause__ = error
    return failure


def task_key(spec: GameSpec) -> str:
    """The Dask key of a game: its schedule key and a digest of everything that decides it."""
    decided = spec.model_dump(mode="json")
    for bot in decided["bots"]:
        bot.pop("folder")  # where the organiser keeps it does not change the game
    digest = hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()[:16]
    return f"arena-game-{spec.key}-{digest}"


class ClusterPool:
    """Plays games on a Dask cluster; `submit` and `shutdown` like a concurrent.futures pool."""

    def __init__(
        self,
        address: str,
        bots: Sequence[BotRef],
        sandbox: str,
        *,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        workers_timeout_s: float = WORKERS_TIMEOUT_S,
        retries: int = RETRIES,
        run: str = "",
    ):
        in_process = [bot.id for bot in bots if bot.kind != "folder"]
        if in_process:
            refusal = f"in-process bots ({', '.join(in_process)}) play only in the local pool; a cluster plays bot folders"
            raise TournamentError([refusal])
        self.address = check_address(address)
        self.retries = retries
        self.sandbox = sandbox
        self.run = run  # the run whose slots the workers free at `close`
        try:
            self.client = Client(self.address, timeout=connect_timeout_s, set_as_default=False)
        except (OSError, TimeoutError) as error:
            unreachable = (
                f"cluster = {address!r}: no Dask scheduler answers there ({error}); "
                "start one with `dask scheduler` (see docs/cluster.md) or leave out --cluster"
            )
            raise TournamentError([unreachable]) from None
        self._futures: dict[str, object] = {}
        self._capacity = (0, 0.0)
        try:
            try:
                self.client.wait_for_workers(1, timeout=workers_timeout_s)
            except TimeoutError:
                no_workers = (
                    f"cluster = {address!r}: no worker joined the scheduler within {workers_timeout_s:.0f} s; "
                    f"start workers with `dask worker {self.address}`"
                )
                raise TournamentError([no_workers]) from None
            tarballs = {bot.content_hash: pack_bot(bot.folder) for bot in bots}
            self._register(BotShipment(tarballs, sandbox))
        except BaseException:
            self.client.close()
            raise

    def ship(self, bots: Sequence[BotRef]) -> None:
        """Ship more bots to every worker (a league's newcomers), as the first ones were."""
        folders = [bot for bot in bots if bot.kind == "folder"]
        if folders:
            self._register(BotShipment({bot.content_hash: pack_bot(bot.folder) for bot in folders}, self.sandbox))

    def _register(self, plugin: BotShipment) -> None:
        # Registered plugins are also set up on workers that join (or restart) later. A setup
        # that fails on a worker raises its error here (BotShipmentError, the sandbox's).
        self.client.register_plugin(plugin, name=plugin.name)

    def capacity(self) -> int:
        """Games to keep submitted: GAMES_PER_THREAD per worker thread (rechecked every 2 s)."""
        value, at = self._capacity
        if time.monotonic() - at > 2.0:
            threads = sum(self.client.nthreads().values())
            value = max(1, GAMES_PER_THREAD * threads)
            self._capacity = (value, time.monotonic())
        return value

    def submit(self, fn, spec: GameSpec, in_process=None, sandbox=None) -> cf.Future:
        """Submit one game (`fn` must be play_scheduled_game: workers run play_on_worker)."""
        if fn is not play_scheduled_game or in_process or sandbox is not None:
            raise TypeError("a cluster plays play_scheduled_game(spec) with the worker's own sandbox only")
        outcome: cf.Future = cf.Future()
        outcome.set_running_or_notify_cancel()
        key = task_key(spec)
        future = self.client.submit(play_on_worker, spec, key=key, pure=False, retries=self.retries)
        self._futures[key] = future

        def settle(done) -> None:
            # Runs on a client thread once the task is finished, failed or cancelled.
            self._futures.pop(key, None)
            try:
                if done.status == "finished":
                    outcome.set_result(done.result())
                elif done.status == "cancelled":
                    outcome.set_exception(_readable(spec.key, cf.CancelledError("cancelled on the scheduler")))
                else:
                    outcome.set_exception(_readable(spec.key, done.exception()))
            except BaseException as error:  # noqa: BLE001 - whatever it is, the runner must hear of it
                if not outcome.done():
                    outcome.set_exception(_readable(spec.key, error))

        future.add_done_callback(settle)
        return outcome

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """End of a batch: cancel the games still submitted if asked; the client stays connected."""
        if cancel_futures and self._futures:
            self.client.cancel(list(self._futures.values()))
        self._futures.clear()

    def close(self) -> None:
        """End the run's bot sessions and warm slots on every worker, then disconnect from the
        scheduler (the cluster keeps running)."""
        self.shutdown(cancel_futures=True)
        try:
            self.client.run(close_run_on_worker, self.run)
        except Exception:  # noqa: BLE001, S110 - a worker gone is a worker whose bots went with it
            pass
        self.client.close()

    def workers(self) -> dict[str, int]:
        """Worker address -> threads (for messages and tests)."""
        return dict(self.client.nthreads())
