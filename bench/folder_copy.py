"""What the private copy of a bot's folder costs (arena.sandbox.copies, issue 33 item 1).

    python -m bench.folder_copy [--repeat N] [--starts N] [--quick] [--json] [--save FILE]

Every local bot process (with namespaces) and every Docker container reads a private copy
of its bot's folder, made by arena before the process starts (a warm container's by its
reset, off the game's path). Printed, per folder: its size, and the median (and max)
wall and CPU milliseconds of making the copy and removing it. Folders: the example bots
(`bots/random`, `bots/threeup-heuristic`), a compiled bot (a 1 MB binary and its
sources), and folders of 20 MB in 200 files and of 200 MB in 2,000 files (the folder
limit). Then, with `--starts N` (default 20; 0 skips), the local sandbox's start to a first line
from a Python bot in bots/random's folder, with the copy and without it (median of N each,
alternated), as root with namespaces. Results: docs/performance.md, "A private copy of
each bot's folder".
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from arena.sandbox import BotSpec, Limits, copies, get_sandbox, local_process
from bench import harness

ROOT = harness.ROOT


def synthetic(into: Path, files: int, each: int) -> Path:
    into.mkdir()
    for number in range(files):
        folder = into / f"part{number // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"file{number}.bin").write_bytes(os.urandom(each))
    return into


def compiled(into: Path) -> Path:
    into.mkdir()
    (into / "bot.c").write_text("int main(void) { return 0; }\n" * 200)
    (into / "bot.toml").write_text('name = "c"\nversion = "1"\ncommand = ["build/bot"]\n')
    (into / "build").mkdir()
    (into / "build" / "bot").write_bytes(os.urandom(1 << 20))
    return into


def folder_size(folder: Path) -> tuple[int, int]:
    paths = list(folder.rglob("*"))
    return sum(path.stat().st_size for path in paths if path.is_file()), len(paths)


def time_copies(folder: Path, repeat: int) -> dict:
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        copy = copies.FolderCopy(folder)
        copy.remove()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    size, entries = folder_size(folder)
    return {
        "folder": folder.name, "mb": round(size / (1 << 20), 2), "entries": entries,
        "wall_ms": round(statistics.median(walls), 2), "wall_max_ms": round(max(walls), 2),
        "cpu_ms": round(statistics.median(cpus), 2),
    }


class _NoCopy:
    """Stands in for FolderCopy: the process binds the folder itself (the old way)."""

    def __init__(self, folder):
        self.path = Path(folder).resolve()

    def remove(self):
        pass


def time_starts(starts: int) -> dict | None:
    box = get_sandbox("local", warn=False)
    if not box.isolate:
        return None
    # bots/random's folder, and a command that only says it is ready: the start alone
    ready = "import sys; print('ready', flush=True); sys.stdin.readline()"
    bot = BotSpec(name="random", folder=ROOT / "bots" / "random", command=("python3", "-c", ready))
    limits = Limits(startup_s=20)
    timings: dict[str, list[float]] = {"with_copy": [], "without": []}
    real = local_process.FolderCopy
    for number in range(starts * 2):
        kind = "with_copy" if number % 2 == 0 else "without"
        local_process.FolderCopy = real if kind == "with_copy" else _NoCopy
        try:
            began = time.perf_counter()
            process = box.start(bot, limits)
            process.receive_line(20)
            timings[kind].append((time.perf_counter() - began) * 1000)
            process.close()
        finally:
            local_process.FolderCopy = real
    return {kind: round(statistics.median(values), 1) for kind, values in timings.items()}


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser(__doc__, quick="2 copies of each folder but the largest, 2 starts")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--starts", type=int, default=20)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.starts = 2, 2
    run = harness.Run()
    work = Path(tempfile.mkdtemp(prefix="arena-bench-copy-"))
    try:
        folders = [
            ROOT / "bots" / "random",
            ROOT / "bots" / "threeup-heuristic",
            compiled(work / "compiled"),
            synthetic(work / "20mb-200-files", 200, 100 << 10),
        ]
        if not args.quick:
            folders.append(synthetic(work / "200mb-2000-files", 2000, 100 << 10))
        rows = [time_copies(folder, args.repeat if folder.name != "200mb-2000-files" else 5) for folder in folders]
        starts = time_starts(args.starts) if args.starts else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    run.finish(args, {"copies": rows, "local_start_ms": starts, "copies_on": str(copies.COPIES)}, show)


def show(figures: dict) -> None:
    print(f"copies in {figures['copies_on']}")
    print(f"{'folder':<20} {'MB':>7} {'entries':>7} {'wall ms':>8} {'max':>7} {'CPU ms':>7}")
    for row in figures["copies"]:
        print(f"{row['folder']:<20} {row['mb']:>7} {row['entries']:>7} {row['wall_ms']:>8} "
              f"{row['wall_max_ms']:>7} {row['cpu_ms']:>7}")
    starts = figures["local_start_ms"]
    if starts:
        print(f"local start to a first line (bots/random's folder, median): with the copy "
              f"{starts['with_copy']} ms, without {starts['without']} ms")


if __name__ == "__main__":
    main()
