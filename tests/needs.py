"""What a test needs of the machine: a Docker engine (and arena's base image), Chromium.

Without it a test is skipped, unless CI asked for it (ARENA_REQUIRE_DOCKER=1,
ARENA_REQUIRE_BROWSER=1: .ci/run sets both), where it fails instead: a missing engine or
browser must not pass CI as a row of skips. tests/conftest.py's fixtures `docker_engine`
and `browser` call these; a test whose need depends on a parameter calls them itself
(or asks for the fixture with `request.getfixturevalue`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing(problem: str, required: str) -> None:
    if os.environ.get(required) == "1":
        pytest.fail(f"{required}=1 but {problem}")
    pytest.skip(problem)


def need_docker(image: str | None = None) -> None:
    """Skip (or fail, under ARENA_REQUIRE_DOCKER=1) unless an engine answers and has `image`
    (default: the Docker sandbox's base image)."""
    from arena.sandbox.docker import engine_problem

    problem = engine_problem(image)
    if problem:
        _missing(problem, "ARENA_REQUIRE_DOCKER")


def need_runsc() -> None:
    """Skip (or fail, under ARENA_REQUIRE_DOCKER=1) unless the engine also has gVisor's runsc
    runtime (.ci/docker-up registers it)."""
    need_docker()
    import docker

    if "runsc" not in (docker.from_env(timeout=30).info().get("Runtimes") or {}):
        _missing("the Docker engine has no runsc runtime (.ci/docker-up registers it)", "ARENA_REQUIRE_DOCKER")


def need_browser() -> None:
    """Skip (or fail, under ARENA_REQUIRE_BROWSER=1) unless playwright and Chromium are here."""
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[test]')", "ARENA_REQUIRE_BROWSER")
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium, or .ci/chromium-up)", "ARENA_REQUIRE_BROWSER")
