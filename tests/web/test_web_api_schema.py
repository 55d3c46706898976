"""The API says what it does (issue 35): schemathesis runs every route of the served
arena's OpenAPI document against the real server on a loopback port, without a token, with
an author's and with the organiser's, and finds nothing: no server error, no status or
body the document does not declare, no valid request refused, an Allow header on each 405
that names what the path takes. Before, the document declared no 401/403/404 and no
request body for `POST /api/submissions`, and every 405 said "GET, HEAD".

The uploads schemathesis sends as `application/gzip`, `application/x-tar` and
`application/zip` (and as the form's file) are real archives of bot folders, with names and
versions drawn by hypothesis: a body of random bytes labelled gzip is no gzip, and the
server rightly refuses it (415). The queue is not started: accepted uploads stay queued."""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile

import pytest
from hypothesis import strategies as st

from arena.human.table import PlayHost
from arena.play.tournament import run_tournament, validate_config
from arena.web.app import AppServer
from arena.web.door_pages import door_app
from arena.web.door_play import door_play_router
from arena.web.queue import QueueSettings
from arena.web.submissions import Door
from arena.web.unpack import UploadLimits
from tests.report_helpers import _random_seat, chatty_bot
from tests.web_helpers import RANDOM, token_for

schemathesis = pytest.importorskip("schemathesis")
from schemathesis.config import SchemathesisConfig  # noqa: E402
from schemathesis.engine import Status, events, from_schema  # noqa: E402

EXAMPLES = 40  # per route and phase: the three runs take 20-60 s on two busy cores

bot_names = st.from_regex(r"[a-z][a-z0-9-]{0,11}", fullmatch=True)
versions = st.from_regex(r"[0-9]{1,2}\.[0-9]{1,2}", fullmatch=True)


def bot_files(name: str, version: str) -> dict[str, bytes]:
    return {
        "bot.toml": (f'name = "{name}"\nversion = "{version}"\ncommand = ["python3", "bot.py"]\n'
                     'games = ["3up3down"]\n').encode(),
        "bot.py": (RANDOM / "bot.py").read_bytes(),
        "arena_bot.py": (RANDOM / "arena_bot.py").read_bytes(),
    }


def packed(kind: str, files: dict[str, bytes], top: str) -> bytes:
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in files.items():
                archive.writestr(top + name, data)
        return buffer.getvalue()
    with tarfile.open(fileobj=buffer, mode="w:gz" if kind == "gz" else "w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(top + name)
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def archives(kind: str) -> st.SearchStrategy[bytes]:
    """Bot folders packed as `kind`: at the archive's top or in one folder."""
    return st.builds(lambda name, version, top: packed(kind, bot_files(name, version), top),
                     bot_names, versions, st.sampled_from(["", "bot/", "./"]))


schemathesis.openapi.media_type("application/gzip", archives("gz"))
schemathesis.openapi.media_type("application/x-tar", archives("tar"))
schemathesis.openapi.media_type("application/zip", archives("zip"))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The door over a league's store (a small tournament: games with stderr to ask for)
    and a registry holding a submitted bot and a plain folder."""
    base = tmp_path_factory.mktemp("schema")
    data = {"name": "cup", "game": "3up3down", "seats": 3, "bots": [str(chatty_bot(base))], "seed": 3, "cycles": 1,
            "output": str(base / "cup"), "limits": {"decision_s": 5.0}, "rules": {"max_turns": 40}}
    run_tournament(validate_config(data), in_process={"steady": _random_seat("steady", 2),
                                                      "plain": _random_seat("plain", 3)})
    registry = base / "registry"
    shutil.copytree(RANDOM, registry / "random", ignore=shutil.ignore_patterns("__pycache__"))
    renamed = shutil.copytree(RANDOM, registry / "odd-folder", ignore=shutil.ignore_patterns("__pycache__"))
    (renamed / "bot.toml").write_text((renamed / "bot.toml").read_text().replace('name = "random"', 'name = "renamed"'))
    shutil.copytree(base / "chatty", registry / "chatty" / "1.0")  # the organiser's runs may retire it
    kept = shutil.copytree(RANDOM, registry / "kept" / "1.0", ignore=shutil.ignore_patterns("__pycache__"))
    (kept / "bot.toml").write_text((kept / "bot.toml").read_text().replace('name = "random"', 'name = "kept"'))
    tokens = {"none": None, "author": token_for(registry, "ann"), "organiser": token_for(registry, "org", True)}
    # The per-address limit is for floods: these runs are thousands of requests from 127.0.0.1.
    door = Door(registry=registry, league_dir=base / "cup", queue_settings=QueueSettings(sandbox="local"),
                limits=UploadLimits(per_address=1_000_000))
    tables = PlayHost()  # schemathesis opens tables too (it links GET /play/bots to POST /play/tables)
    play = door_play_router(door, sandbox="local", out=base / "human", host=tables)
    server = AppServer(door_app(base / "cup" / "site", door, routers=[play]), "127.0.0.1", 0).start()
    games = sorted(path.name.split(".")[0] for path in (base / "cup" / "site" / "replays").glob("*.js"))
    try:
        yield server.url, tokens, games
    finally:
        server.shutdown()
        tables.close()
        door.stop()


def failures_of(url: str, token: str | None, games: list[str]) -> list[str]:
    """Every check schemathesis failed (and every error it met), one line each."""
    config = SchemathesisConfig.from_dict({
        "seed": 35,
        "headers": {"Authorization": f"Bearer {token}"} if token else {},
        "checks": {"enabled": True},
        "generation": {"max-examples": EXAMPLES},
        # Half the time, names and keys that exist (the rest: anything).
        "dictionaries": {"bots": {"values": ["random", "chatty", "steady", "nobody"]},
                         "games": {"values": games[:3] + ["1", "0-0"]}},
        "parameters": {"path.name": {"dictionary": "bots", "probability": 0.5},
                       "path.key": {"dictionary": "games", "probability": 0.5}},
    })
    schema = schemathesis.openapi.from_url(url + "api/openapi.json", config=config)
    found = []
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for case_id, checks in event.recorder.checks.items():
                for check in checks:
                    if check.status == Status.FAILURE:
                        detail = check.failure_info.failure if check.failure_info else None
                        case = event.recorder.cases.get(case_id)
                        request = f"{case.value.method} {case.value.formatted_path}" if case else "?"
                        answer = event.recorder.interactions.get(case_id)
                        body = answer.response.content[:300] if answer and answer.response else b""
                        found.append(f"{event.label or request}: {check.name}: {getattr(detail, 'title', '')} "
                                     f"{getattr(detail, 'message', '')} {body!r}".strip())
        elif isinstance(event, (events.NonFatalError, events.FatalError)):
            found.append(f"error: {getattr(event, 'label', '')} {getattr(event, 'info', event)}")
    return sorted(set(found))


@pytest.mark.parametrize("who", ["none", "author", "organiser"])
def test_every_route_does_what_the_openapi_document_says(served, who):
    url, tokens, games = served
    assert failures_of(url, tokens[who], games) == []


def test_a_plain_folder_bot_the_league_plays_is_answered_by_its_name(served):
    """`GET /api/bots/NAME` was a 404 for REGISTRY/NAME/bot.toml (the organiser's plain
    folders, which the league plays as it plays submitted bots): it named only
    REGISTRY/NAME/VERSION folders. A plain folder is found by its bot.toml's name."""
    import httpx

    url, _, _ = served
    plain = httpx.get(url + "api/bots/random", timeout=30)
    assert plain.status_code == 200, plain.text
    body = plain.json()
    assert (body["name"], body["owner"]) == ("random", None)
    assert [(v["version"], v["submitted"], v["content_hash"], v["games"]) for v in body["versions"]] == [
        ("1.0", False, None, ["3up3down", "three-thirteen"])]
    assert httpx.get(url + "api/bots/renamed", timeout=30).json()["versions"][0]["version"] == "1.0"
    assert httpx.get(url + "api/bots/odd-folder", timeout=30).status_code == 404  # the folder's name is not the bot's
    kept = httpx.get(url + "api/bots/kept", timeout=30).json()["versions"]
    assert [(v["version"], v["submitted"]) for v in kept] == [("1.0", True)]


def test_a_bot_the_league_played_is_answered_after_it_left_the_registry(tmp_path):
    """Its versions are gone from the registry (retired, or moved away), its standing stays."""
    import httpx

    from arena.league.ladder import run_league
    from tests.league.test_league import config, in_process, registry_of

    registry = registry_of(tmp_path, ("ann", "bob"))
    run_league(config(tmp_path / "league", registry, seats=2, games=4), in_process=in_process(("ann", "bob")),
               report=False)
    shutil.rmtree(registry / "bob")
    door = Door(registry=registry, league_dir=tmp_path / "league", queue_settings=QueueSettings(sandbox="local"))
    server = AppServer(door_app(tmp_path / "league" / "site", door), "127.0.0.1", 0).start()
    try:
        gone = httpx.get(server.url + "api/bots/bob", timeout=30)
        nobody = httpx.get(server.url + "api/bots/cat", timeout=30)
    finally:
        server.shutdown()
        door.stop()
    assert gone.status_code == 200, gone.text
    assert gone.json()["versions"] == [] and gone.json()["standing"]["bot"] == "bob@1.0"
    assert nobody.status_code == 404 and nobody.json() == {"error": "no bot cat in the registry or the league"}
