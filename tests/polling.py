"""Waiting in a test for what another thread or process does: poll, never sleep blind."""

from __future__ import annotations

import time

import pytest


def wait_until(condition, what: str, timeout_s: float, every_s: float = 0.2):  # noqa: ANN001, ANN201
    """Poll `condition` every `every_s` until it returns something true, and return that;
    fail naming `what` after `timeout_s` seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}; last: {value!r}")
        time.sleep(every_s)
