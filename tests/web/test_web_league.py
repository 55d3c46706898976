"""`arena league ... --serve PORT`: one command runs the ladder and serves its site and the
authors' door; a bot submitted over HTTP with `arena submit --to URL --league` is checked,
lands in the registry, joins the running league and is told where it stands."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys

import httpx

from tests.web_helpers import ROOT, bot_folder, token_for


def test_league_serve_takes_a_bot_over_http_into_the_running_league(tmp_path):
    registry = tmp_path / "registry"
    for name in ("alpha", "beta"):
        (registry / name).mkdir(parents=True)
        shutil.move(bot_folder(tmp_path, name), registry / name / "1.0")
    token = token_for(registry, "ann")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="300")
    league = subprocess.Popen(
        [sys.executable, "-m", "arena", "league", str(tmp_path / "ladder"), "--game", "3up3down", "--seats", "2",
         "--registry", str(registry), "--sandbox", "local", "--games", "100000", "--seed", "7", "--public-seed-ok",
         "--serve", "0", "--validate-sandbox", "local"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    try:
        url = None
        for line in league.stdout:
            found = re.search(r"serving the league at (http://127\.0\.0\.1:\d+/) \(authors: \S+door/\)", line)
            if found:
                url = found.group(1)
                break
        assert url, "no serving line"
        mine = bot_folder(tmp_path, "annbot")
        done = subprocess.run(
            [sys.executable, "-m", "arena", "submit", str(mine), "--to", url, "--league", "x", "--wait-s", "60"],
            capture_output=True, text=True, env=dict(env, ARENA_TOKEN=token), timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        said = done.stdout.splitlines()
        assert said[-2].startswith("accepted: annbot@1.0 (sha256 ")
        # Provisional or settled, by how many games it had when it answered: in a field of 3,
        # a 95% rank interval of 2 places is settled (arena.ratings.confidence.settled_span),
        # so a settled bot's 90% interval (within its 95% one) spans at most 2 places.
        where = re.fullmatch(r"annbot@1\.0: \d+ games so far, rank [123] of 3(?:, 90% interval (\d)-(\d))?; "
                             r"(provisional|settled)", said[-1])
        assert where, said[-1]
        low, high, state = where.groups()
        assert state == "provisional" or (low and int(high) - int(low) + 1 <= 2), said[-1]
        standing = httpx.get(url + "api/bots/annbot", timeout=10).json()["standing"]
        assert standing["joined"] and standing["bot"] == "annbot@1.0" and standing["of"] == 3
        page = httpx.get(url + "door/", timeout=10)
        assert page.status_code == 200 and "Submit a bot" in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
    finally:
        league.send_signal(signal.SIGINT)
        league.wait(60)


def test_serve_alone_reads_a_league_files_server_table(tmp_path):
    """`arena serve LEAGUE_FILE`: the door as the file's [server] table says (its limits on
    uploads, its validation settings), the league's registry; a flag given wins."""
    registry = tmp_path / "registry"
    registry.mkdir()
    token = token_for(registry, "ann")
    league_file = tmp_path / "ladder.toml"
    league_file.write_text(
        '[league]\nname = "Winter"\ngame = "3up3down"\nseats = 2\nsandbox = "local"\nregistry = "registry"\n'
        'output = "ladder"\n\n[server]\nport = 0\nvalidate_sandbox = "local"\nvalidate_jobs = 2\nmax_upload_mb = 1\n'
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="300")
    for flags, jobs in (([], 2), (["--validate-jobs", "3"], 3)):
        server = subprocess.Popen([sys.executable, "-m", "arena", "serve", str(league_file), *flags],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        try:
            first, second = server.stdout.readline(), server.stdout.readline()
            url = re.search(r"serving \S+ladder/site at (http://127\.0\.0\.1:\d+/) ", first).group(1)
            assert second.startswith(f"taking submissions into {registry} (checked {jobs} at a time in the local "
                                     "sandbox)"), second
            answer = httpx.post(url + "api/submissions", content=os.urandom(1_200_000), timeout=60,
                                headers={"Authorization": f"Bearer {token}"})
            assert answer.status_code == 413 and answer.json() == {
                "error": "the upload is larger than 1 MB packed (the limit)"}
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(60)
