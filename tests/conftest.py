"""What every test folder shares: the fixtures for what a test needs of the machine, the
tiers a developer picks from, and the order the files run in.

The tiers: markers registered in pyproject.toml and put on each test here, at collection,
so that no test file has to say them:
- `docker`: the test needs a Docker engine (it asks for `docker_engine`, itself or
  through another fixture, or a parameter of it says so: `pytest.param(..., marks=pytest.mark.docker)`);
- `browser`: the test drives Chromium (its file ends in `_browser.py`, or it asks for `browser`);
- `slow`: its file is one of the longest (LONGEST_FIRST, below).
`pytest -m "not docker and not browser and not slow"` is the fast tier (README.md, Tests).

The checkout stays clean: a test that writes a door's book into the checkout's own
registry (./bots/.door/) fails.

The order: the README's test command runs the files in two processes, whole files to each
(pytest-xdist, `-n 2 --dist loadfile`), handed out in the order they are collected. A file
that takes minutes handed out last leaves the other process idle while it runs, so the
files that take longest (measured on two cores, `--durations`) go first and the rest
follow in their usual order. In one process (`-n 0`) the order changes nothing else:
every test file stands alone.
"""

from __future__ import annotations

import pathlib

import pytest

from tests import needs
from tests.needs import ARGS, CHROMIUM, need_browser, need_docker

# The files of a minute or more of the suite's time (at load 8-14; 3,200 s in all),
# longest first (a file missing here only starts later; a name that is gone is ignored).
# Each is marked `slow`.
LONGEST_FIRST = (
    "test_journey.py",
    "test_seed_secrecy.py",
    "test_kits.py",
    "test_site_truth_browser.py",
    "test_terminal_width.py",
    "test_report_pages_browser.py",
    "test_league.py",
    "test_replay_browser.py",
    "test_sandbox_docker.py",
    "test_sandbox_docker_engine.py",
    "test_cluster.py",
    "test_run.py",
    "test_play_browser.py",
    "test_terminal.py",
    "test_hostile.py",
)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by the markers put on here
def pytest_collection_modifyitems(session, config, items) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order
    for item in items:
        if item.path.name in rank:
            item.add_marker(pytest.mark.slow)
        if item.path.name.endswith("_browser.py") or "browser" in item.fixturenames:
            item.add_marker(pytest.mark.browser)
        if "docker_engine" in item.fixturenames:
            item.add_marker(pytest.mark.docker)


@pytest.hookimpl(tryfirst=True)  # before its fixtures are set up
def pytest_runtest_setup(item) -> None:
    needs.RUNNING = item  # need_docker and need_browser check the test is marked for the tier


@pytest.fixture(scope="session")
def docker_engine():
    """The Docker engine's client (the docker SDK's); the test is skipped without an engine
    and arena's base image, or fails under ARENA_REQUIRE_DOCKER=1 (tests/needs.py)."""
    need_docker()
    import docker

    return docker.from_env(timeout=30)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium, driven by playwright; skipped without it, or fails under
    ARENA_REQUIRE_BROWSER=1 (tests/needs.py)."""
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield chromium
        chromium.close()


# ---------------------------------------------------------------- the checkout stays clean

_CHECKOUT_REGISTRY_DOOR = pathlib.Path(__file__).resolve().parent.parent / "bots" / ".door"


@pytest.fixture(autouse=True)
def _no_door_book_in_the_checkout():
    """A test that serves a door over the default registry (./bots, the checkout's own
    example bots) writes its book there: every test must give a registry of its own."""
    existed = _CHECKOUT_REGISTRY_DOOR.exists()
    yield
    if not existed and _CHECKOUT_REGISTRY_DOOR.exists():
        import shutil

        shutil.rmtree(_CHECKOUT_REGISTRY_DOOR, ignore_errors=True)
        pytest.fail("this test wrote bots/.door/ into the checkout: give it a registry of its own")
