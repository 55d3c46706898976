"""The sandbox tests' fixtures: the Docker engine by the name these tests give it, the
sandbox a test of warm slots gets (files with sandboxes of their own define `sandbox`),
and folders other users may read (`place`, `open_tmp`)."""

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


def _open_folder(under: str | None) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="arena-test-", dir=under))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder outside /tmp, open to others; removed afterwards."""
    yield from _open_folder("/var/tmp")


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A scratch folder user nobody can reach (pytest's own sits in a folder of mode 700),
    so that a bot or a build run as nobody under root runs here as it does anywhere."""
    yield from _open_folder(None)
