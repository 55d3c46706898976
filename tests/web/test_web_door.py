"""The authors' door end to end, against the real server on a loopback port: an author
submits with `arena submit --to`, follows the stages, owns the name, retires a version;
a refused bot says every reason and the end of its stderr; two uploads of one name at
once; accounts from the shell (arena authors)."""

from __future__ import annotations

import concurrent.futures
import io
import json
import re
import subprocess
import sys
import tarfile

import httpx
import pytest
from typer.testing import CliRunner

from arena.cli.app import app
from arena.web.authors import Book
from arena.web.client import pack, submit_remote
from arena.cli.authors import serve_door
from tests.web_helpers import (
    ROOT,
    bot_folder,
    door_server,
    ladder_with_three_states,
    leftovers,
    states_seen,
    token_for,
)


def follow(client: httpx.Client, sub_id: str, timeout_s: float = 240.0) -> dict:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        row = client.get(f"/api/submissions/{sub_id}").json()
        if row["final"]:
            return row
        time.sleep(0.3)
    raise AssertionError(f"submission {sub_id} not finished: {row}")


def test_an_author_submits_follows_owns_and_retires(tmp_path):
    lines: list[str] = []
    with door_server(tmp_path) as (server, door, registry):
        ann, bob = token_for(registry, "ann"), token_for(registry, "bob")
        code = submit_remote(bot_folder(tmp_path, "annbot"), server.url, ann, say=lines.append, poll_s=0.2)
        assert code == 0, lines
        assert lines[0].startswith("uploaded ") and "(annbot 1.0)" in lines[0]
        assert states_seen(lines) == ["checking", "smoke match", "accepted"], lines
        assert lines[-1].startswith("accepted: annbot@1.0 (sha256 ")
        record = json.loads((registry / "annbot" / "1.0" / "submission.json").read_text())
        assert record["name"] == "annbot" and record["sandbox"] == "local" and record["smoke_games"] == {"3up3down": 2}
        assert leftovers(registry) == []
        # The same again: known by its content hash, not checked again, and said so.
        again: list[str] = []
        assert submit_remote(bot_folder(tmp_path / "again", "annbot"), server.url, ann, say=again.append,
                             poll_s=0.05) == 0
        assert "smoke match" not in states_seen(again), again
        assert again[-1] == "annbot@1.0 is already in the registry with this content: nothing new"

        public = httpx.get(server.url + "api/bots/annbot").json()
        assert public["owner"] == "ann" and [v["version"] for v in public["versions"]] == ["1.0"]
        assert public["versions"][0]["content_hash"] == record["content_hash"]
        assert public["standing"] is None  # no league in that folder yet

        # Another author may neither submit the name nor retire it; nothing of theirs stays.
        theirs = httpx.post(server.url + "api/submissions", content=pack(bot_folder(tmp_path, "annbot", "2.0")),
                            headers={"Authorization": f"Bearer {bob}"})
        assert theirs.status_code == 403
        assert theirs.json() == {"error": "the bot name annbot belongs to another author; choose another name in bot.toml"}
        gone = httpx.delete(server.url + "api/bots/annbot/versions/1.0", headers={"Authorization": f"Bearer {bob}"})
        assert gone.status_code == 403 and (registry / "annbot" / "1.0").is_dir()
        # Nor read ann's submissions.
        mine = httpx.get(server.url + "api/submissions", headers={"Authorization": f"Bearer {ann}"}).json()
        sub_id = mine["submissions"][0]["id"]
        peek = httpx.get(server.url + f"api/submissions/{sub_id}", headers={"Authorization": f"Bearer {bob}"})
        assert peek.status_code == 404
        assert httpx.get(server.url + "api/me", headers={"Authorization": f"Bearer {ann}"}).json() == {
            "author": "ann", "organiser": False, "bots": ["annbot"],
        }

        retired = httpx.delete(server.url + "api/bots/annbot/versions/1.0", headers={"Authorization": f"Bearer {ann}"})
        assert retired.json() == {"retired": "annbot@1.0"}
        assert not (registry / "annbot" / "1.0").exists()
        assert [p.name.split(".")[0] for p in (registry / ".door" / "retired" / "annbot").iterdir()] == ["1"]


def test_a_refused_bot_gets_every_reason_and_the_end_of_its_stderr(tmp_path):
    crash = "import sys\nprint('my bot is broken here', file=sys.stderr)\nsys.exit(3)\n"
    lines: list[str] = []
    with door_server(tmp_path) as (server, door, registry):
        token = token_for(registry, "ann")
        code = submit_remote(bot_folder(tmp_path, "crasher", extra=crash), server.url, token, say=lines.append,
                             poll_s=0.2)
        assert code == 1, lines
        assert "refused: " in "\n".join(lines) and "my bot is broken here" in "\n".join(lines)
        row = httpx.get(server.url + "api/submissions", headers={"Authorization": f"Bearer {token}"}).json()
        row = row["submissions"][0]
        assert row["state"] == "refused" and row["bot"] is None
        assert all(reason.startswith("smoke match of 3up3down, game ") for reason in row["reasons"])
        assert "my bot is broken here" in row["stderr"]
        assert not (registry / "crasher").exists() and leftovers(registry) == []
        assert Book(registry).owner_of("crasher") is None  # a refused bot takes nobody's name (issue 33)


def test_two_uploads_of_one_name_at_once_are_two_versions_or_one_clear_refusal(tmp_path):
    with door_server(tmp_path) as (server, door, registry):
        token = token_for(registry, "ann")
        headers = {"Authorization": f"Bearer {token}"}
        one = bot_folder(tmp_path / "a", "twin", "1.0")
        two = bot_folder(tmp_path / "b", "twin", "2.0")
        other = bot_folder(tmp_path / "c", "twin", "1.0", extra="# other content")
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
            with concurrent.futures.ThreadPoolExecutor(3) as pool:
                made = list(pool.map(lambda f: client.post("/api/submissions", content=pack(f)), (one, two, other)))
            assert [answer.status_code for answer in made] == [202, 202, 202]
            rows = [follow(client, answer.json()["id"]) for answer in made]
        states = sorted((row["version"], row["state"]) for row in rows)
        assert states == [("1.0", "accepted"), ("1.0", "refused"), ("2.0", "accepted")]
        refused = next(row for row in rows if row["state"] == "refused")
        assert refused["reasons"] == [  # the registry's place on the server is not said (issue 34 part 3)
            "twin version 1.0 is already in the registry with other content; raise the version in bot.toml"
        ]
        assert sorted(p.name for p in (registry / "twin").iterdir()) == ["1.0", "2.0"]
        assert leftovers(registry) == []


def test_authors_commands_print_a_token_once_and_store_only_a_hash(tmp_path):
    runner = CliRunner()
    registry = str(tmp_path / "reg")
    added = runner.invoke(app, ["authors", "add", "ann", "--registry", registry])
    assert added.exit_code == 0, added.output
    token = added.output.splitlines()[1]
    book = Book(tmp_path / "reg")
    assert book.authenticate(token) == ("ann", False)
    stored = (tmp_path / "reg" / ".door" / "door.sqlite").read_bytes()
    assert token.encode() not in stored and token.split("_", 2)[2].encode() not in stored  # the secret may hold "_"
    listed = runner.invoke(app, ["authors", "list", "--registry", registry])
    assert listed.output.startswith("ann: since ") and token.split("_")[1] in listed.output
    assert token not in listed.output
    rotated = runner.invoke(app, ["authors", "rotate", "ann", "--registry", registry]).output.splitlines()[1]
    assert book.authenticate(token) is None and book.authenticate(rotated) == ("ann", False)
    runner.invoke(app, ["authors", "revoke", "ann", "--registry", registry])
    assert book.authenticate(rotated) is None
    again = runner.invoke(app, ["authors", "add", "ann", "--registry", registry])
    assert isinstance(again.exception, ValueError) and "author ann exists" in str(again.exception)
    bad = runner.invoke(app, ["authors", "add", "../x", "--registry", registry])
    assert "author name '../x' is not allowed" in str(bad.exception)


def test_arena_submit_to_exits_2_without_a_token_or_a_server(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    folder = bot_folder(tmp_path, "lonely")
    no_token = subprocess.run([sys.executable, "-m", "arena", "submit", str(folder), "--to", "http://127.0.0.1:9"],
                              capture_output=True, text=True, env=env, timeout=60)
    assert no_token.returncode == 2 and "no token: set ARENA_TOKEN" in no_token.stderr
    nobody = subprocess.run([sys.executable, "-m", "arena", "submit", str(folder), "--to", "http://127.0.0.1:9"],
                            capture_output=True, text=True, env=dict(env, ARENA_TOKEN="arena_x"), timeout=60)
    assert nobody.returncode == 2 and "cannot reach http://127.0.0.1:9" in nobody.stdout


def test_submit_to_a_page_or_to_a_server_without_the_door_says_which_address_and_exits_2(tmp_path):
    """Issue 34 part 5: `--to` the /door/ page the server prints, or a server started
    without --submissions, said "refused (405): {'detail': 'Method Not Allowed'}" with exit
    1; it says which address to give, exit 2."""
    folder = bot_folder(tmp_path, "lost")
    lines: list[str] = []
    with door_server(tmp_path) as (server, door, registry):
        token = token_for(registry, "ann")
        assert submit_remote(folder, server.url + "door/", token, say=lines.append) == 2
    assert lines == [f"--to {server.url}door/ is a page of the arena, not its address: give the server's address "
                     f"alone, --to {server.url}"]
    site = tmp_path / "plain" / "site"
    site.mkdir(parents=True)
    (site / "index.html").write_text("<!doctype html><title>standings</title>")
    plain, _ = serve_door(site, registry=None, host="127.0.0.1", port=0, submissions=False)
    plain.start()
    try:
        lines.clear()
        assert submit_remote(folder, plain.url, token, say=lines.append) == 2
    finally:
        plain.shutdown()
    assert lines == [f"{plain.url} takes no submissions: it serves a site only; ask the organiser for the address of "
                     "an arena started with --submissions (arena serve --submissions, or arena league --serve)"]


def test_a_tar_with_one_top_folder_is_that_folder(tmp_path):
    folder = bot_folder(tmp_path, "topped")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname="topped")
    with door_server(tmp_path) as (server, door, registry):
        token = token_for(registry, "ann")
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            answer = client.post("/api/submissions", files={"bot": ("topped.tar.gz", buffer.getvalue())})
            assert answer.status_code == 202, answer.text
            assert follow(client, answer.json()["id"])["state"] == "accepted"
    assert (registry / "topped" / "1.0" / "bot.toml").is_file()


@pytest.mark.parametrize("host", ["0.0.0.0"])
def test_serve_with_submissions_refuses_a_public_address_in_clear(tmp_path, host):
    done = subprocess.run(
        [sys.executable, "-m", "arena", "serve", str(tmp_path), "--submissions", "--host", host],
        capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "COLUMNS": "300"},
        timeout=60, cwd=tmp_path,
    )
    assert done.returncode == 2 and f"--host {host} is reachable from other machines" in done.stderr
    assert not (tmp_path / "bots").exists()  # refused before the default registry's door book is made


def test_submit_league_says_the_versions_true_state_in_the_league(tmp_path):
    """Issue 34 part 3: `arena submit --to --league` says this very version's state:
    playing with its rank, suspended or retired with the batch and the reason (it said
    "suspended" without why, or an older version's rank)."""
    from arena.web.client import _where

    ladder_with_three_states(tmp_path)
    with door_server(tmp_path) as (server, door, registry):
        with httpx.Client(base_url=server.url, timeout=30) as client:
            said = {bot: _where(client, *bot.split("@"), wait_s=0, poll_s=0.1)
                    for bot in ("crashy@1", "steady@1.0", "steady@2.0", "steady@3.0")}
    assert re.fullmatch(r"crashy@1: \d+ games; suspended from batch \d+: 2 forfeits in a row; the last: CRASH: "
                        r"exited with code 3", said["crashy@1"]), said
    assert re.fullmatch(r"steady@1\.0: \d+ games; retired from batch \d+: replaced by steady@2\.0", said["steady@1.0"])
    assert re.fullmatch(r"steady@2\.0: \d+ games so far, rank \d of 6(, 90% interval \d-\d)?; (provisional|settled)",
                        said["steady@2.0"]), said
    assert said["steady@3.0"] == "steady@3.0 has not joined the league yet: it joins within seconds"
