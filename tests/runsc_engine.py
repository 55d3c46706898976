"""The Docker tests' second kernel: gVisor's runsc, registered with the engine by
.ci/docker-up. A test of a runsc case skips where the engine has no runsc, unless
ARENA_REQUIRE_DOCKER=1 (set by .ci/run, whose docker-up registers it): then it fails.
"""

from __future__ import annotations

import os

import pytest

from arena.sandbox.docker import engine_problem


def runsc_problem() -> str | None:
    """Why runsc containers cannot run here (no engine, image or runtime), or None."""
    problem = engine_problem()
    if problem:
        return problem
    import docker

    runtimes = (docker.from_env(timeout=30).info().get("Runtimes") or {}).keys()
    if "runsc" not in runtimes:
        return "the Docker engine has no runsc runtime (.ci/docker-up registers it)"
    return None


def require_runsc() -> None:
    """Skip the test without runsc; fail instead under ARENA_REQUIRE_DOCKER=1."""
    problem = runsc_problem()
    if problem:
        if os.environ.get("ARENA_REQUIRE_DOCKER") == "1":
            pytest.fail(f"ARENA_REQUIRE_DOCKER=1 but {problem}")
        pytest.skip(problem)
