"""The order the test files run in: the longest first.

The README's test command runs the files in two processes, whole files to each
(pytest-xdist, `-n 2 --dist loadfile`), handed out in the order they are collected. A file
that takes minutes handed out last leaves the other process idle while it runs, so the
files that take longest (measured on two cores, `--durations`) go first and the rest
follow in their usual order. In one process (`-n 0`) the order changes nothing else:
every test file stands alone.
"""

from __future__ import annotations

# The files of a minute or more of the suite's time (at load 8-14; 3,200 s in all),
# longest first (a file missing here only starts later; a name that is gone is ignored).
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


def pytest_collection_modifyitems(session, config, items) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


# ---------------------------------------------------------------- the checkout stays clean

import pathlib  # noqa: E402

import pytest  # noqa: E402

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
