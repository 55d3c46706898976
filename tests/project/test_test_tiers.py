"""The tiers a developer picks from (tests/conftest.py, tests/README.md): the markers land
on the tests that need Docker or Chromium or sit in the longest files, so the fast tier
holds none of them; and a Docker test without an engine skips, or fails under CI's
ARENA_REQUIRE_DOCKER=1."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.bot_folders import ROOT

FILES = ["tests/sandbox/test_think_time.py", "tests/web/test_web_docker.py", "tests/site/test_report_browser.py",
         "tests/play/test_cluster.py", "tests/ratings/test_sprt.py"]


def collected(marks: str, *files: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "-m", marks, *files],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode in (0, 5), done.stdout[-2000:]  # 5: nothing selected
    return {line.split("::")[0] + "::" + line.split("::")[1] for line in done.stdout.splitlines() if "::" in line}


def test_the_fast_tier_holds_no_docker_browser_or_slow_test():
    fast = collected("not docker and not browser and not slow", *FILES)
    files = {test.split("::")[0] for test in fast}
    assert files == {"tests/sandbox/test_think_time.py", "tests/ratings/test_sprt.py"}
    every = collected("docker or not docker", *FILES)
    assert {test for test in every if "[docker]" in test} and not {test for test in fast if "[docker]" in test}


def test_each_marker_names_its_tests():
    docker = collected("docker", *FILES)
    assert "tests/web/test_web_docker.py::test_an_upload_with_a_dockerfile_is_built_and_smoke_tested_in_docker" in docker
    assert any(test.startswith("tests/sandbox/test_think_time.py::") and "[docker]" in test for test in docker)
    assert any(test.startswith("tests/play/test_cluster.py::test_docker_games") for test in docker)
    assert {test.split("::")[0] for test in collected("browser", *FILES)} == {"tests/site/test_report_browser.py"}
    assert {test.split("::")[0] for test in collected("slow", *FILES)} == {"tests/play/test_cluster.py"}


@pytest.mark.parametrize("required, outcome", [("1", "1 error"), ("", "1 skipped")])
def test_docker_tests_skip_without_an_engine_unless_required(tmp_path, required, outcome):
    env = dict(os.environ, DOCKER_HOST=f"unix://{tmp_path / 'no-engine.sock'}", ARENA_REQUIRE_DOCKER=required)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/web/test_web_docker.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert outcome in done.stdout, done.stdout[-2000:]
    assert (done.returncode != 0) == bool(required)
    if required:
        assert "ARENA_REQUIRE_DOCKER=1 but no usable Docker engine" in done.stdout
