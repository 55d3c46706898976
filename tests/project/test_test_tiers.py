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


# A plugin that prints each collected test with the tier markers tests/conftest.py put on it.
SHOW_MARKERS = """
def pytest_collection_finish(session):
    for item in session.items:
        marks = sorted({mark.name for mark in item.iter_markers()} & {"docker", "browser", "slow"})
        print("TIER", item.nodeid, ",".join(marks))
"""


@pytest.fixture(scope="module")
def tiers(tmp_path_factory) -> dict[str, set[str]]:
    """Each test of FILES (its file and name, parameters left out) -> its tier markers."""
    plugin = tmp_path_factory.mktemp("plugin")
    (plugin / "show_markers.py").write_text(SHOW_MARKERS)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "show_markers", "--collect-only", *FILES],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])},
    )
    assert done.returncode == 0, done.stdout[-2000:]
    found: dict[str, set[str]] = {}
    for line in done.stdout.splitlines():
        if line.startswith("TIER "):
            _, test, *marks = line.split(" ")
            found[test] = set(marks[0].split(",")) - {""} if marks else set()
    return found


def test_the_fast_tier_holds_no_docker_browser_or_slow_test(tiers):
    fast = {test for test, marks in tiers.items() if not marks}
    assert {test.split("::")[0] for test in fast} == {"tests/sandbox/test_think_time.py", "tests/ratings/test_sprt.py"}
    assert any("[docker]" in test for test in tiers) and not any("[docker]" in test for test in fast)


def test_each_marker_names_its_tests(tiers):
    docker = {test for test, marks in tiers.items() if "docker" in marks}
    assert "tests/web/test_web_docker.py::test_an_upload_with_a_dockerfile_is_built_and_smoke_tested_in_docker" in docker
    assert any(test.startswith("tests/sandbox/test_think_time.py::") and "[docker]" in test for test in docker)
    assert any(test.startswith("tests/play/test_cluster.py::test_docker_games") for test in docker)
    browser = {test.split("::")[0] for test, marks in tiers.items() if "browser" in marks}
    assert browser == {"tests/site/test_report_browser.py"}
    assert {test.split("::")[0] for test, marks in tiers.items() if "slow" in marks} == {"tests/play/test_cluster.py"}


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
