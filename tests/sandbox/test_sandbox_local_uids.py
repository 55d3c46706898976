"""A uid of its own per local bot process (ARENA_LOCAL_UIDS), as root.

Per-user kernel counters are common to every process of a uid: with every bot user nobody,
one bot's inotify instances leave fewer for another, a number one can set and the other
read while both run (a per-slot process of one seat rotation and its twin of the other
live for the whole run). With a range of uids each bot process has its own user and its
own counters, no two running bots share one, and a uid is given back when its bot ends.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.faults import SandboxError
from arena.sandbox.local import LocalSandbox, unshare_works
from arena.sandbox.uids import DEFAULT, VARIABLE, configured_range

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not unshare_works(), reason="bots get uids of their own only as root with namespaces"
)

sys.path.insert(0, str(Path(__file__).parents[1]))
from test_sandbox_local_root import LIMITS, Probe, install  # noqa: E402

# Room for more inotify instances than a user may have (max_user_instances, 128 by default).
OPEN = dataclasses.replace(LIMITS, open_files=1024)


@contextmanager
def running(sandbox: LocalSandbox, spec) -> Iterator[Probe]:
    process = sandbox.start(spec, OPEN)
    try:
        yield Probe(process)
    finally:
        process.close()

RANGE = "200000-200002"  # no account has these (checked by the lease)


def test_a_per_user_counter_is_no_channel_between_two_running_bots(place, monkeypatch):
    monkeypatch.setenv(VARIABLE, "nobody")
    nobody = LocalSandbox(warn=False)
    spec = install(place / "bots" / "probe")
    # Both nobody: what one holds, the other lacks.
    with running(nobody, spec) as first, running(nobody, spec) as second:
        assert second.ask("inotify_room") > 0
        assert first.ask("inotify", 10_000) > 0  # all there is of nobody's
        assert second.ask("inotify_room") == 0
    monkeypatch.setenv(VARIABLE, RANGE)
    own = LocalSandbox(warn=False)
    with running(own, spec) as first, running(own, spec) as second:
        assert first.ask("id") == [200000, 200000, []] and second.ask("id") == [200001, 200001, []]
        limit = int(Path("/proc/sys/fs/inotify/max_user_instances").read_text())
        assert first.ask("inotify", limit) == limit  # all of its own uid's
        assert second.ask("inotify_room") == limit  # untouched
    # Given back at the end: the next bot has the first uid again.
    with running(own, spec) as again:
        assert again.ask("id")[0] == 200000


def test_every_uid_of_the_range_in_use_is_one_clear_error(place, monkeypatch):
    monkeypatch.setenv(VARIABLE, "200000-200000")
    own = LocalSandbox(warn=False)
    spec = install(place / "bots" / "probe")
    with running(own, spec):
        with pytest.raises(SandboxError, match=r"every uid of ARENA_LOCAL_UIDS \(200000-200000\) is held"):
            own.start(spec, OPEN)


@pytest.mark.parametrize("text", ["200000", "5-10", "200010-200000", "a-b", "0-4294967295"])
def test_a_bad_range_says_what_is_allowed(text):
    with pytest.raises(SandboxError, match="is not a range of uids FIRST-LAST"):
        configured_range(text)


def test_unset_means_arenas_own_range_and_nobody_means_nobody(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert configured_range() == DEFAULT == range(1879048192, 1879048192 + 65536)
    assert LocalSandbox(warn=False).uids == DEFAULT
    monkeypatch.setenv(VARIABLE, "nobody")
    assert configured_range() is None
    assert LocalSandbox(warn=False).uids is None
