""".ci/docker-up: the apt mirror comes from the machine's own sources (deb822 or one-line),
no host name is written in it, and a second run with everything there is silent and
rebuilds nothing. Split from tests/sandbox/test_sandbox_docker.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.sandbox.docker import default_image
from tests.sandbox.test_sandbox_docker import REPO

# --- .ci/docker-up: the mirror comes from the machine's own apt sources ------------------


def print_mirror(apt_dir: Path, suite: str = "bookworm") -> str:
    run = subprocess.run(
        [str(REPO / ".ci" / "docker-up"), "--print-mirror"],
        env={**os.environ, "ARENA_APT_DIR": str(apt_dir), "ARENA_BASE_SUITE": suite},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return run.stdout.strip()


def test_docker_up_reads_the_mirror_from_deb822_sources(tmp_path):
    (tmp_path / "sources.list.d").mkdir(parents=True)
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://security.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n\n"
        "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nEnabled: no\n\n"
        "Types: deb-src deb\nURIs: http://mirror.example/debian http://second.example/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n"
    )
    (tmp_path / "sources.list.d" / "other.list.disabled").write_text(
        "deb http://ignored.example/debian bookworm main\n"
    )
    assert print_mirror(tmp_path) == "http://mirror.example/debian"
    assert print_mirror(tmp_path, "bookworm-security") == "http://security.example/debian-security"
    assert print_mirror(tmp_path, "trixie") == ""


def test_docker_up_reads_the_mirror_from_one_line_sources(tmp_path):
    (tmp_path / "sources.list").write_text(
        "# deb http://commented.example/debian bookworm main\n"
        "deb-src http://source.example/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://mirror.example/debian bookworm main\n"
    )
    assert print_mirror(tmp_path) == "http://mirror.example/debian"


def test_docker_up_writes_no_host_name():
    script = (REPO / ".ci" / "docker-up").read_text()
    assert "debian.org" not in script and "docker.io/" not in script and "http://" not in script


def test_docker_up_is_quiet_and_does_nothing_when_all_is_there(docker_engine):
    engine = docker_engine
    if not (shutil.which("dockerd") and shutil.which("debootstrap")):
        pytest.skip("docker-up would install packages here")
    image_id = engine.images.get(default_image()).id
    run = subprocess.run(
        [str(REPO / ".ci" / "docker-up")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert engine.images.get(default_image()).id == image_id  # not rebuilt


# --- .ci/docker-up: runsc merged into the engine's daemon.json -------------------------

def merge_runtime(path: Path) -> int:
    return subprocess.run(
        [str(REPO / ".ci" / "docker-up"), "--merge-runtime", str(path)],
        capture_output=True, text=True, timeout=30, check=False,
    ).returncode


def test_docker_up_adds_runsc_to_daemon_json_keeping_everything_else_once(tmp_path):
    import json

    daemon = tmp_path / "daemon.json"
    daemon.write_text(json.dumps({"log-level": "warn", "runtimes": {"other": {"path": "/x"}}}))
    assert merge_runtime(daemon) == 0
    runsc = {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none", "--host-fifo=open"]}
    assert json.loads(daemon.read_text()) == {
        "log-level": "warn", "runtimes": {"other": {"path": "/x"}, "runsc": runsc}
    }
    written = daemon.read_bytes()
    assert merge_runtime(daemon) == 3 and daemon.read_bytes() == written  # already there
    # an older registration (without --host-fifo=open) is brought up to date
    daemon.write_text(json.dumps({"runtimes": {"runsc": {"path": "/usr/bin/runsc"}}}))
    assert merge_runtime(daemon) == 0 and json.loads(daemon.read_text()) == {"runtimes": {"runsc": runsc}}
    assert merge_runtime(tmp_path / "new" / "daemon.json") == 0  # no file yet: made
    assert json.loads((tmp_path / "new" / "daemon.json").read_text()) == {"runtimes": {"runsc": runsc}}
