"""Opening an upload away from the server's event loop: worker processes of their own.

The server receives an upload's body into a file (`arena.web.submissions`: the event
loop only moves bytes) and hands the file to `Intake.open`, which has a worker process
(`python -m arena.web.intake`, at nice 10) do everything that costs CPU: the form's
parsing when the body is a multipart form (Starlette's parser, the same limits as
before), the unpacking and its checks (`arena.web.unpack`), the reading of bot.toml.
Done in the server's own threads, this held the interpreter's lock (the GIL) that the
event loop needs for every page it serves; in processes of their own, it only competes
for a core, at a lower priority than the server. At most WORKERS uploads are opened at
once; the others wait their turn (their bytes are already on disk).

A worker reads one JSON request a line on stdin and answers one JSON line on stdout;
it ends when its stdin closes (the server stopped or died). A worker that dies or takes
longer than OPEN_S fails only the upload it held, and is replaced.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import queue
import select
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from arena.diskfull import FULL_UPLOAD, is_full
from arena.web.unpack import MB, UploadLimits, UploadRefused

WORKERS = 2
NICE = 10
OPEN_S = 300.0  # an upload a worker has not opened in this time is refused (and the worker replaced)
UNPACKED = "unpacked"
PACKED = "packed"


@dataclass(frozen=True)
class Opened:
    """What a worker found in an upload: the bot's name and version."""

    name: str
    version: str
    packed_bytes: int


class _Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena.web.intake"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, env=env,
        )

    def ask(self, request: dict, timeout: float) -> list | None:
        """The worker's answer to `request`, or None when it died or took too long."""
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            ready, _, _ = select.select([self.process.stdout], [], [], timeout)
            line = self.process.stdout.readline() if ready else ""
        except (OSError, ValueError):
            return None
        return json.loads(line) if line else None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass


class Intake:
    """The worker processes that open uploads (each started when first needed)."""

    def __init__(self, workers: int = WORKERS, timeout_s: float = OPEN_S):
        self.timeout_s = timeout_s
        self._idle: queue.Queue[_Worker | None] = queue.Queue()
        for _ in range(workers):
            self._idle.put(None)  # a free place; its process starts with its first upload
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False

    async def open(self, body: Path, work: Path, limits: UploadLimits, content_type: str, run) -> Opened:  # noqa: ANN001
        """Open the upload whose body is `body` (in `work`): the archive ends as
        work/packed, the bot unpacked under work/unpacked. `run(call, *args)` runs a
        blocking call in a thread (the uploads' own). UploadRefused says why not."""
        request = {"body": str(body), "work": str(work), "limits": dataclasses.asdict(limits),
                   "content_type": content_type}
        outcome = await run(self._ask, request)
        if outcome is None:
            raise UploadRefused(500, "the server could not open the upload (its worker stopped); send it again")
        if outcome[0] == "refused":
            raise UploadRefused(outcome[1], outcome[2])
        return Opened(*outcome[1:])

    def _ask(self, request: dict) -> list | None:
        worker = self._idle.get()
        try:
            if self._closed:
                return None
            if worker is not None and worker.process.poll() is not None:  # died while idle
                worker.close()
                with self._lock:
                    self._all.discard(worker)
                worker = None
            if worker is None:
                worker = _Worker()
                with self._lock:
                    self._all.add(worker)
            answer = worker.ask(request, self.timeout_s)
            if answer is None:  # dead or stuck: replaced by the next upload
                worker.close()
                with self._lock:
                    self._all.discard(worker)
                worker = None
            return answer
        finally:
            self._idle.put(worker)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            workers, self._all = list(self._all), set()
        for worker in workers:
            worker.close()


def _open(body: str, work: str, limits: UploadLimits, content_type: str) -> tuple:
    """In a worker: ("opened", name, version, packed bytes) or ("refused", status, line)."""
    from arena.config.botfolder import BotFolderError, load_bot
    from arena.web.unpack import unpack

    packed = Path(work) / PACKED
    try:
        if content_type.startswith("multipart/form-data"):
            _file_of_form(Path(body), content_type, packed)
            Path(body).unlink()
        elif Path(body) != packed:
            os.rename(body, packed)
        size = packed.stat().st_size
        if size > limits.packed_mb * MB:
            raise UploadRefused(413, f"the upload is larger than {limits.packed_mb} MB packed (the limit)")
        if size == 0:
            raise UploadRefused(400, "the upload is empty; send the packed bot folder (.tar.gz or .zip)")
        bot = unpack(packed, Path(work) / UNPACKED, limits)
        try:
            manifest = load_bot(bot)
        except BotFolderError as error:
            # Removed here, at nice 10, rather than by the server (up to --max-files entries).
            shutil.rmtree(Path(work) / UNPACKED, ignore_errors=True)
            raise UploadRefused(400, "bot.toml: " + "; ".join(error.mistakes)) from None
    except UploadRefused as refused:
        return ("refused", refused.status, refused.line)
    return ("opened", manifest.name, manifest.version, size)


def _file_of_form(body: Path, content_type: str, packed: Path) -> None:
    """The form's file field 'bot', written to `packed` (Starlette's multipart parser, at
    most one file and four fields, as the server took forms before)."""
    from python_multipart.exceptions import FormParserError
    from starlette.datastructures import Headers, UploadFile
    from starlette.formparsers import MultiPartException, MultiPartParser

    async def chunks():  # noqa: ANN202
        with open(body, "rb") as source:
            while chunk := source.read(1 << 16):
                yield chunk

    async def parse() -> None:
        parser = MultiPartParser(Headers({"content-type": content_type}), chunks(), max_files=1, max_fields=4)
        try:
            form = await parser.parse()
        except MultiPartException as error:
            raise UploadRefused(400, f"the form cannot be read: {error.message}") from None
        except FormParserError as error:  # python-multipart's own: older Starlettes let it through
            raise UploadRefused(400, f"the form cannot be read: {error}") from None
        try:
            upload = form.get("bot")
            if not isinstance(upload, UploadFile):
                raise UploadRefused(400, "the form has no file field 'bot'; attach the packed bot folder as 'bot'")
            with open(packed, "wb") as sink:
                while chunk := await upload.read(1 << 16):
                    sink.write(chunk)
        finally:
            await form.close()

    asyncio.run(parse())


def main() -> int:
    """A worker: one request a line on stdin, one answer a line on stdout, until EOF."""
    import arena.config.botfolder  # noqa: F401 - imported before the nice: once, at the server's priority

    os.nice(NICE)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer = _open(request["body"], request["work"], UploadLimits(**request["limits"]), request["content_type"])
        except Exception as error:  # noqa: BLE001 - arena's own failure: that upload is refused, the worker lives
            answer = ("refused", 500, f"arena could not open the upload ({type(error).__name__}: {error})")
            if is_full(error):
                answer = ("refused", 507, FULL_UPLOAD)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
