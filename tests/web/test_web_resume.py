"""Nothing lost: `arena serve --submissions` killed with -9 in the middle of a validation
takes its queue up again when started again: the submission it was checking is checked
again from the start and accepted once; its validation process died with the server
(never two at once); the registry never held half a bot."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from arena.web.client import pack
from tests.polling import wait_until
from tests.web_helpers import ROOT, bot_folder, leftovers, token_for

SLOW_START = "import time\ntime.sleep(4)  # a slow start: the validation is caught in its smoke match\n"


def start_server(tmp_path: Path, registry: Path) -> tuple[subprocess.Popen, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="300")
    server = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", str(tmp_path / "league"), "--submissions", "--registry",
         str(registry), "--validate-sandbox", "local", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    line = server.stdout.readline()
    url = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
    assert url, line
    return server, url.group(1)


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_for(check, timeout_s: float, what: str):  # noqa: ANN001, ANN201
    return wait_until(check, what, timeout_s)


def test_a_server_killed_mid_validation_resumes_its_queue(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    token = token_for(registry, "ann")
    headers = {"Authorization": f"Bearer {token}"}
    server, url = start_server(tmp_path, registry)
    try:
        made = httpx.post(url + "api/submissions", content=pack(bot_folder(tmp_path, "slowbot", extra=SLOW_START)),
                          headers=headers, timeout=60)
        assert made.status_code == 202, made.text
        sub_id = made.json()["id"]
        state = lambda: httpx.get(url + f"api/submissions/{sub_id}", headers=headers, timeout=10).json()["state"]  # noqa: E731
        wait_for(lambda: state() == "smoke match", 120, "the smoke match")
        assert processes_mentioning(sub_id), "the validation runs in a process of its own"
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        wait_for(lambda: not processes_mentioning(sub_id), 10, "the validation to die with the server")
        assert not (registry / "slowbot").exists()  # killed before it landed: not there, not half there
    finally:
        server.kill()
        server.wait(10)

    server, url = start_server(tmp_path, registry)
    try:
        row = wait_for(
            lambda: (r := httpx.get(url + f"api/submissions/{sub_id}", headers=headers, timeout=10).json())["final"]
            and r, 240, "the resumed validation",
        )
        assert row["state"] == "accepted" and row["bot"] == "slowbot@1.0", row
        assert [p.name for p in (registry / "slowbot").iterdir()] == ["1.0"]
        landed = sorted(p.name for p in (registry / "slowbot" / "1.0").iterdir())
        assert landed == ["arena_bot.py", "bot.py", "bot.toml", "submission.json"]
        assert leftovers(registry) == []
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(20)
