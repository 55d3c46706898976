"""What the sandbox tests share beyond the engine itself (the fixture `docker_engine`,
tests/conftest.py): asking the engine about a container, and a sandbox that keeps the
processes it starts; and the check that a bot's closed pipe is a crash at once."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from arena.faults import BotFault, Reason


def exists(engine, container_id: str) -> bool:  # noqa: ANN001 - the docker SDK's client
    """Whether the engine still has the container (running or not)."""
    import docker

    try:
        engine.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


def crashes_at_once(act: Callable[[], object], detail: str, within: float) -> BotFault:
    """Calls `act` (a read from or a write to a bot's process), which must fail with a
    CRASH fault saying `detail` in less than `within` seconds; returns the fault."""
    began = time.monotonic()
    with pytest.raises(BotFault) as fault:
        act()
    waited = time.monotonic() - began
    assert (fault.value.reason, fault.value.detail) == (Reason.CRASH, detail)
    assert waited < within
    return fault.value


class RecordingSandbox:
    """A sandbox that keeps every process it starts (bot name, process), to read each
    one's whole stderr at the end; anything else is the wrapped sandbox's."""

    def __init__(self, sandbox):  # noqa: ANN001 - any Sandbox
        self.sandbox = sandbox
        self.processes = []

    def __getattr__(self, name):  # noqa: ANN001, ANN204
        return getattr(self.sandbox, name)

    def start(self, bot, limits, **kwargs):  # noqa: ANN001, ANN201
        process = self.sandbox.start(bot, limits, **kwargs)
        self.processes.append((bot.name, process))
        return process
