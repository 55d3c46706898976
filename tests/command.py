"""The `arena` command as the tests run it: `python -m arena ARGS` in a child process (this
checkout's arena), its output captured as text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def arena(*args: str, cwd: Path | None = ROOT, columns: int | None = None, env: dict | None = None,
          timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `arena ARGS` in `cwd`; `columns` sets the terminal's width ($COLUMNS), `env` adds
    to the environment. Never raises for the command's exit code: the test reads it."""
    extra = {**({"COLUMNS": str(columns)} if columns is not None else {}), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
        env={**os.environ, **extra}, check=False,
    )
