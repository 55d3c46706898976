"""What the Docker sandbox's tests share beyond the engine itself (the fixture
`docker_engine`, tests/conftest.py): asking the engine about a container."""

from __future__ import annotations


def exists(engine, container_id: str) -> bool:  # noqa: ANN001 - the docker SDK's client
    """Whether the engine still has the container (running or not)."""
    import docker

    try:
        engine.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True
