"""What every bench shares: its command line, the machine it ran on, and how it prints.

Every bench is a module run from the checkout's top folder with arena installed
(`python -m bench.NAME [--quick] [--json] [--save FILE]`) and built the same way:

    args = harness.parser(__doc__, quick="...").parse_args(argv)   # plus its own flags
    run = harness.Run()                                            # the load before it
    ... measure ...
    run.finish(args, figures, show)                                # the figures, once

`--quick` is a smoke run (the smallest sizes: it proves the bench works, its figures are
not quoted; tests/project/test_bench_smoke.py runs every bench so); `--json` prints one JSON
object, the figures with the machine under "machine"; `--save FILE` also writes that
object to FILE. Without `--json`, `show(figures)` prints the bench's own table and the
machine follows in one line. docs/performance.md quotes the figures, each with the command
that gives it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parser(doc: str | None, quick: str = "a smoke run: the smallest sizes (not figures to quote)") -> argparse.ArgumentParser:
    """The bench's argument parser: its docstring as the help, and the shared flags."""
    name = Path(sys.argv[0]).stem if sys.argv and sys.argv[0] else "bench"
    parts = (doc or "").strip().split("\n\n", 1)
    made = argparse.ArgumentParser(
        prog=f"python -m bench.{name}", description=parts[0],
        epilog=parts[1] if len(parts) > 1 else None, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    made.add_argument("--quick", action="store_true", help=quick)
    made.add_argument("--json", action="store_true", help="print one JSON object: the figures, and the machine")
    made.add_argument("--save", metavar="FILE", type=Path, help="also write that JSON object to FILE")
    return made


def commit() -> str | None:
    """The checkout's commit (with `+` when it has changes), or None without git."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode:
        return None
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


class Run:
    """One run of a bench: when it began and the machine's load then, for the record."""

    def __init__(self) -> None:
        self.began = time.time()
        self.wall = time.perf_counter()
        self.load_before = os.getloadavg()[0]

    def machine(self) -> dict:
        """The machine the figures were measured on: shared machines are noisy, so every
        figure travels with the load around it."""
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = resource.getrusage(resource.RUSAGE_SELF)
        return {
            "cpus": os.cpu_count(),
            "load_1min_before": round(self.load_before, 2),
            "load_1min_after": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
            "commit": commit(),
            "began_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.began)),
            "wall_s": round(time.perf_counter() - self.wall, 2),
            "cpu_s": round(own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime, 2),
        }

    def finish(self, args: argparse.Namespace, figures: dict, show: Callable[[dict], None] | None = None) -> dict:
        """Print the figures (a table by `show`, or JSON with `--json`), save them with
        `--save`; returns the whole object."""
        whole = {**figures, "machine": self.machine()}
        if getattr(args, "save", None):
            Path(args.save).write_text(json.dumps(whole, indent=1) + "\n", encoding="utf-8")
        if getattr(args, "json", False) or show is None:
            print(json.dumps(whole, indent=1))
        else:
            show(figures)
            machine = whole["machine"]
            print(f"machine: {machine['cpus']} CPUs, load {machine['load_1min_before']} -> {machine['load_1min_after']}, "
                  f"Python {machine['python']}, commit {machine['commit']}, {machine['wall_s']} s wall, "
                  f"{machine['cpu_s']} CPU-s")
        return whole
