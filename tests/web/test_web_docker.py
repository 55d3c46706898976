"""Uploads are checked in the Docker sandbox (the default): a bot with its own Dockerfile
is built (the 'building' stage) and smoke-tested in containers, then lands in the
registry. Skipped without a Docker engine unless ARENA_REQUIRE_DOCKER=1."""

from __future__ import annotations

import json
import uuid

from arena.sandbox.docker import default_image
from arena.web.client import submit_remote
from tests.web_helpers import bot_folder, door_server, leftovers, states_seen, token_for


def test_an_upload_with_a_dockerfile_is_built_and_smoke_tested_in_docker(docker_engine, tmp_path):
    import docker

    run = uuid.uuid4().hex  # this test's own image and layers: removed at the end, shared with nobody
    folder = bot_folder(tmp_path, "boxedbot")
    (folder / "bot.toml").write_text((folder / "bot.toml").read_text() + 'dockerfile = "Dockerfile"\n')
    (folder / "Dockerfile").write_text(
        f"FROM {default_image()}\nLABEL arena.test-run={run}\nCOPY bot.py arena_bot.py /app/\nWORKDIR /app\nUSER 65534\n"
    )
    for path in [tmp_path, folder, *folder.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    lines: list[str] = []
    try:
        with door_server(tmp_path, sandbox="docker") as (server, door, registry):
            registry.chmod(0o755)
            code = submit_remote(folder, server.url, token_for(registry, "ann"), say=lines.append, poll_s=0.3)
            assert code == 0, lines
            assert states_seen(lines) == ["checking", "building", "smoke match", "accepted"], lines
            record = json.loads((registry / "boxedbot" / "1.0" / "submission.json").read_text())
            assert record["sandbox"] == "docker" and record["smoke_games"] == {"3up3down": 2}
            assert leftovers(registry) == []
    finally:
        client = docker.from_env(timeout=60)
        for image in client.images.list(filters={"label": f"arena.test-run={run}"}):
            client.images.remove(image.id, force=True)
