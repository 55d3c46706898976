"""What a test needs of the machine: a Docker engine (and arena's base image), Chromium.

Without it a test is skipped, unless CI asked for it (ARENA_REQUIRE_DOCKER=1,
ARENA_REQUIRE_BROWSER=1: .ci/run sets both), where it fails instead: a missing engine or
browser must not pass CI as a row of skips. tests/conftest.py's fixtures `docker_engine`
and `browser` call these; a test whose need depends on a parameter calls them itself.
Either way the test must carry the marker (`docker`, `browser`) that keeps it out of the
fast tier: a test that needs one without it fails, saying so, engine or not.
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


RUNNING = None  # the test item being set up or run (tests/conftest.py sets it)


def _marked(marker: str, what: str) -> None:
    if RUNNING is not None and RUNNING.get_closest_marker(marker) is None:
        pytest.fail(
            f"{RUNNING.nodeid} needs {what} but is not marked `{marker}` (ask for the fixture "
            f"`{'docker_engine' if marker == 'docker' else 'browser'}`, or mark its parameter: "
            f"pytest.param(..., marks=pytest.mark.{marker}))"
        )


def missing(problem: str, required: str) -> None:
    """Skip for `problem`, or fail when the environment variable `required` is 1 (CI)."""
    if os.environ.get(required) == "1":
        pytest.fail(f"{required}=1 but {problem}")
    pytest.skip(problem)


def need_docker(image: str | None = None) -> None:
    """Skip (or fail, under ARENA_REQUIRE_DOCKER=1) unless an engine answers and has `image`
    (default: the Docker sandbox's base image)."""
    from arena.sandbox.docker import engine_problem

    _marked("docker", "a Docker engine")

    problem = engine_problem(image)
    if problem:
        missing(problem, "ARENA_REQUIRE_DOCKER")


def need_runsc() -> None:
    """Skip (or fail, under ARENA_REQUIRE_DOCKER=1) unless the engine also has gVisor's runsc
    runtime (.ci/docker-up registers it)."""
    need_docker()
    import docker

    if "runsc" not in (docker.from_env(timeout=30).info().get("Runtimes") or {}):
        missing("the Docker engine has no runsc runtime (.ci/docker-up registers it)", "ARENA_REQUIRE_DOCKER")


def need_browser() -> None:
    """Skip (or fail, under ARENA_REQUIRE_BROWSER=1) unless playwright and Chromium are here."""
    _marked("browser", "Chromium")
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError:
        missing("the playwright package is not installed (pip install -e '.[test]')", "ARENA_REQUIRE_BROWSER")
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        missing(f"no Chromium at {CHROMIUM} (apt-get install chromium, or .ci/chromium-up)", "ARENA_REQUIRE_BROWSER")


def sandbox_named(name: str, **settings):  # noqa: ANN201 - a Sandbox
    """arena's sandbox `local` (without its warning for a trusted run) or `docker` (after
    need_docker: skipped, or failed under ARENA_REQUIRE_DOCKER=1, without an engine),
    made with `settings` (a docker sandbox's runtime)."""
    from arena.sandbox import get_sandbox

    if name == "docker":
        need_docker()
        return get_sandbox("docker", **settings)
    return get_sandbox("local", warn=False, **settings)
