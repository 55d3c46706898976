"""The served arena's app (arena/web/app.py): the site's files behind the routers given, on
127.0.0.1 unless told otherwise, and never a public address in clear unless the organiser
says so."""

from __future__ import annotations

import json

import httpx
import pytest
from fastapi import APIRouter

from arena.web.app import AppServer, check_address, create_app
from arena.web.errors import WebError
from tests.web_helpers import files_at


@pytest.fixture()
def site(tmp_path):
    files_at(tmp_path / "out", {"arena.sqlite": "the store: never served"})
    return files_at(tmp_path / "out" / "site", {
        "index.html": "<h1>Standings</h1>", "assets/live.js": "/* live */",
        "live.json": json.dumps({"version": "abc", "games": 3}),
    })


def test_the_site_is_served_behind_the_routers_given(site):
    router = APIRouter()

    @router.get("/api/ping")
    def ping() -> dict:
        return {"pong": True}

    server = AppServer(create_app(site, routers=[router]), "127.0.0.1", 0).start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            assert client.get("/").text == "<h1>Standings</h1>"
            assert client.get("/api/ping").json() == {"pong": True}
            script = client.get("/assets/live.js")
            assert script.headers["content-type"].startswith("text/javascript")
            assert script.headers["x-content-type-options"] == "nosniff"
            live = client.get("/live.json")
            assert live.json() == {"version": "abc", "games": 3} and live.headers["cache-control"] == "no-store"
            assert client.get("/api/openapi.json").json()["paths"].keys() == {"/api/ping"}
            assert client.get("/api/docs").status_code == 200
            for outside in ("/../arena.sqlite", "/..%2farena.sqlite", "/assets/..%2f..%2farena.sqlite"):
                assert client.get(outside).status_code == 404, outside
    finally:
        server.shutdown()


def test_a_site_not_rendered_yet_says_so(tmp_path):
    server = AppServer(create_app(tmp_path / "later"), "127.0.0.1", 0).start()
    try:
        answer = httpx.get(server.url, timeout=10)
        assert answer.status_code == 503 and "not rendered yet" in answer.text
    finally:
        server.shutdown()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_addresses_need_nothing(host):
    check_address(host, tls=False, insecure_http=False)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", "arena.example"])
def test_a_public_address_needs_tls_or_insecure_http(host):
    with pytest.raises(WebError, match=f"--host {host} is reachable from other machines.*--insecure-http"):
        check_address(host, tls=False, insecure_http=False)
    check_address(host, tls=True, insecure_http=False)
    check_address(host, tls=False, insecure_http=True)


def test_serve_refuses_a_public_address_and_a_taken_port(site, tmp_path):
    with pytest.raises(WebError, match="reachable from other machines"):
        AppServer(create_app(site), "0.0.0.0", 0)
    with pytest.raises(WebError, match="TLS needs both --certfile and --keyfile"):
        AppServer(create_app(site), "0.0.0.0", 0, certfile=tmp_path / "cert.pem")
    taken = AppServer(create_app(site), "127.0.0.1", 0)
    try:
        with pytest.raises(WebError, match=f"cannot listen on 127.0.0.1:{taken.port} .*choose another --port"):
            AppServer(create_app(site), "127.0.0.1", taken.port)
    finally:
        taken.server_close()


def test_the_api_page_needs_no_internet_and_a_browser_gets_a_page_for_a_missing_one(site):
    """Issue 34 part 7: /api/docs was Swagger UI from a CDN (blank without the internet);
    a path the server does not have answered raw JSON to a browser."""
    import re

    router = APIRouter()

    @router.get("/api/ping", summary="Is the server there")
    def ping() -> dict:
        return {"pong": True}

    server = AppServer(create_app(site, routers=[router]), "127.0.0.1", 0).start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            docs = client.get("/api/docs")
            assert docs.status_code == 200 and docs.headers["content-type"].startswith("text/html")
            assert "<code>/api/ping</code>" in docs.text and "Is the server there" in docs.text
            fetched = re.findall(r'(?:src|href)="([^"]*)"', docs.text)
            assert all(url.startswith("/") for url in fetched), fetched  # nothing from another host
            page = client.get("/no/such/page.html", headers={"Accept": "text/html,application/xhtml+xml"})
            assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
            assert "<h1>Not found</h1>" in page.text and "<code>/no/such/page.html</code>" in page.text
            assert client.get("/no/such/page.html").json() == {"detail": "Not Found"}  # an API client: JSON
            api = client.get("/api/nothing", headers={"Accept": "text/html"})
            assert api.status_code == 404 and api.json() == {"detail": "Not Found"}
            posted = client.post("/index.html", headers={"Accept": "text/html"})
            assert posted.status_code == 405 and "<h1>Not allowed</h1>" in posted.text
            assert posted.headers["allow"] == "GET, HEAD"
    finally:
        server.shutdown()
