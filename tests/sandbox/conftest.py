"""The sandbox tests' fixtures: the Docker engine by the name these tests give it, the
sandbox a test of warm slots gets (files with sandboxes of their own define `sandbox`),
and a folder other users may read (`place`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def engine(docker_engine):
    """The Docker engine's client (tests/conftest.py's `docker_engine`: skipped without one)."""
    return docker_engine


@pytest.fixture(scope="module")
def warm_engine(engine):
    """The engine, where warm slots can run: arena runs as root (their pipes, the reset)."""
    if os.geteuid() != 0:
        pytest.skip("warm slots need arena to run as root (the pipes, the reset)")
    return engine


@pytest.fixture
def sandbox(engine):
    """A docker sandbox (runc: warm slots) whose slots are all removed after the test."""
    from arena.sandbox.docker import DockerSandbox

    sandbox = DockerSandbox(runtime="runc")
    yield sandbox
    sandbox.close()


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder outside /tmp, open to others; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="arena-test-", dir="/var/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)
