"""What the sandbox tests share beyond the engine itself (the fixture `docker_engine`,
tests/conftest.py): asking the engine about a container, and a sandbox that keeps the
processes it starts."""

from __future__ import annotations


def exists(engine, container_id: str) -> bool:  # noqa: ANN001 - the docker SDK's client
    """Whether the engine still has the container (running or not)."""
    import docker

    try:
        engine.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


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
