"""The authors' page /door/ in headless Chromium against the real server: sign in with the
token, upload a bot through the form, see it accepted and listed under "my bots", see a
refused one's reasons (its hostile stderr shown as text: no dialog opens), live (no
reload); axe-core finds nothing at 1280 and 390 px. Skipped without Chromium unless
ARENA_REQUIRE_BROWSER=1."""

from __future__ import annotations

import io
import tarfile

import httpx

from tests.browser_helpers import DESKTOP, PHONE, Watched, axe_checker, violations
from tests.web_helpers import bot_folder, door_server, ladder_with_three_states, token_for

HOSTILE = "<img src=x onerror=alert(7)>"


def packed(folder, into) -> str:
    path = into / f"{folder.name}.tar.gz"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for file in sorted(folder.iterdir()):
            if file.is_file():
                tar.add(file, arcname=file.name)
    path.write_bytes(buffer.getvalue())
    return str(path)


def test_an_author_signs_in_submits_and_follows_on_the_page(browser, tmp_path):  # noqa: F811
    good = packed(bot_folder(tmp_path, "pagebot"), tmp_path)
    crash = f"import sys\nprint({HOSTILE!r}, file=sys.stderr)\nsys.exit(3)\n"
    bad = packed(bot_folder(tmp_path, "pagecrash", extra=crash), tmp_path)
    axe = axe_checker()
    with door_server(tmp_path) as (server, door, registry):
        token = token_for(registry, "ann")
        watched = Watched(browser, DESKTOP)
        page = watched.page
        page.goto(server.url + "door/")
        assert page.locator("#submit").is_hidden()
        page.fill("#token", token)
        page.keyboard.press("Enter")  # the form is usable from the keyboard
        page.wait_for_selector("#signin-state:has-text('Signed in as ann')")
        assert page.locator("#token").input_value() == ""  # the token is not left in the box
        page.set_input_files("#bot", good)
        page.click("#submit-form button")
        page.wait_for_selector("#submit-state:has-text('(pagebot 1.0): ')")
        page.wait_for_selector("#submissions td.accepted", timeout=240_000)
        page.wait_for_selector("#submit-state:has-text('accepted as pagebot@1.0.')", timeout=20_000)
        page.wait_for_selector("#bots td:has-text('pagebot@1.0')", timeout=20_000)
        page.set_input_files("#bot", bad)
        page.click("#submit-form button")
        page.wait_for_selector("#submissions td.refused", timeout=240_000)
        reasons = page.inner_text("#submissions tbody tr.reasons-row")
        assert HOSTILE in reasons and "smoke match of 3up3down" in reasons
        assert page.locator("#submissions img").count() == 0
        for viewport in (DESKTOP, PHONE):
            page.set_viewport_size(viewport)
            assert violations(axe, page) == [], viewport
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        page.click("#signout")
        assert page.locator("#submit").is_hidden() and page.evaluate("sessionStorage.length") == 0
        watched.check()


# A bot that fails at its start with a traceback: a long line marked with ^ under it (what
# made the door scroll sideways on a phone) and its file's path on the server.
TRACEBACK = ("settings = {'a': 1}\n"
             "value = settings['depth'] + settings['a'] * 2 + len(str(settings)) + sum(range(10)) + len(settings)\n")


def test_the_door_tells_each_bots_true_state_and_keeps_every_refusal(browser, tmp_path):  # noqa: F811
    """Issue 34 parts 3 and 7: "my bots" shows each version as the league has it (playing,
    suspended with its reason, retired with its reason; it showed "accepted" in green for a
    suspended bot); a refused submission's status line says refused (it kept "queued"); a
    name whose only submission was refused stays with its reasons, asked for once (it was
    dropped), and a name with nothing left in the registry is not asked for every 3 s (it
    polled the 404); an upload refused at the door stays
    listed after the next upload; no server path in any refusal; the door is styled like
    the site, has an icon, and neither width scrolls sideways (a traceback's ^ line did)."""
    import time

    from arena.web.authors import Book

    registry = ladder_with_three_states(tmp_path)
    broken = packed(bot_folder(tmp_path, "brokenbot", extra=TRACEBACK), tmp_path)
    good = packed(bot_folder(tmp_path, "newbot"), tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a bot")
    axe = axe_checker()
    with door_server(tmp_path) as (server, door, registry):
        token = token_for(registry, "ann")
        for name in ("crashy", "steady"):
            Book(registry).claim("ann", name)
        watched = Watched(browser, DESKTOP)
        page = watched.page
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        page.goto(server.url + "door/")
        page.set_viewport_size(PHONE)  # the sign-in form on a phone: its token field fits
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        page.set_viewport_size(DESKTOP)
        page.fill("#token", token)
        page.keyboard.press("Enter")
        page.wait_for_selector("#bots table")

        def state_of(bot: str) -> str:
            return page.inner_text(f"#bots tr:has(td:text-is('{bot}')) td.state")

        assert state_of("crashy@1").startswith("suspended from batch ")
        assert "2 forfeits in a row; the last: CRASH" in state_of("crashy@1")
        assert state_of("steady@1.0").startswith("retired from batch ") and "replaced by steady@2.0" in state_of("steady@1.0")
        assert state_of("steady@2.0") in ("playing, provisional", "playing, settled")

        page.set_input_files("#bot", broken)
        page.click("#submit-form button")
        page.wait_for_selector("#submit-state:has-text('refused: 2 reasons below.')", timeout=240_000)
        assert "queued" not in page.inner_text("#submit-state")
        page.wait_for_selector("#bots h3:text-is('brokenbot')")
        kept = page.inner_text("#bots")
        assert "not in the league: its last submission (1.0) was refused:" in kept and "KeyError: 'depth'" in kept
        assert 'File "bot.py", line 2' in kept  # the author's own path, not the server's

        page.set_input_files("#bot", str(notes))
        page.click("#submit-form button")
        page.wait_for_selector("#submit-state:has-text('notes.txt was refused: ')")
        page.set_input_files("#bot", good)
        page.click("#submit-form button")
        page.wait_for_selector("#submit-state:has-text('accepted as newbot@1.0.')", timeout=240_000)
        page.wait_for_selector("#bots tr:has(td:text-is('newbot@1.0')) td.state:has-text('waiting to join')")
        time.sleep(7)  # two refreshes and more
        listed = page.inner_text("#submissions")
        assert "refused at upload (415)" in listed and "notes.txt" in listed  # kept after the next upload
        assert "brokenbot 1.0" in listed and "KeyError: 'depth'" in page.inner_text("#bots")
        assert not any("/api/bots/brokenbot" in url for url in asked)  # never accepted: never asked
        retired = httpx.delete(server.url + "api/bots/newbot/versions/1.0", headers={"Authorization": f"Bearer {token}"})
        assert retired.status_code == 200
        page.wait_for_selector("#bots p:has-text('Accepted as newbot@1.0; no longer in the registry (retired).')")
        asked.clear()
        time.sleep(7)  # two refreshes and more: its 404 is not asked for again
        assert sum("/api/bots/newbot" in url for url in asked) == 0
        said = page.inner_text("body")
        for path in (str(registry), str(tmp_path), ".incoming-", "quarantine"):
            assert path not in said, path

        header = page.evaluate("getComputedStyle(document.querySelector('header.top')).backgroundColor")
        assert header == "rgb(27, 34, 51)"  # the site's header, from the site's own stylesheet
        icon = page.get_attribute("link[rel=icon]", "href")
        assert httpx.get(server.url.rstrip("/") + icon).headers["content-type"] == "image/svg+xml"
        for viewport in (DESKTOP, PHONE):
            page.set_viewport_size(viewport)
            assert violations(axe, page) == [], viewport
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], viewport
        watched.check()


def test_the_site_links_to_its_door_and_the_api_page_works_offline(browser, tmp_path):  # noqa: F811
    """Issue 34 part 7: the league's site never linked to the door; /api/docs was blank
    without the internet (Swagger UI from a CDN); a missing page answered raw JSON."""
    from arena.site.writer import slug
    from arena.web.app import serve_site

    ladder_with_three_states(tmp_path)
    axe = axe_checker()
    with door_server(tmp_path) as (server, door, registry):
        watched = Watched(browser, PHONE)
        page = watched.page
        outside: list[str] = []

        def local_only(route):  # as on a machine without the internet
            if route.request.url.startswith(server.url):
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        page.route("**/*", local_only)
        for path in ("index.html", f"bots/{slug('ann')}.html", "h2h.html"):
            page.goto(server.url + path)
            link = page.locator("header.top a.door-link")
            link.wait_for(state="visible")
            assert link.inner_text() == "Submit a bot"
        link.click()
        page.wait_for_selector("#signin-form")
        assert page.url == server.url + "door/"
        page.goto(server.url + "api/docs")
        page.wait_for_selector("code:text-is('/api/submissions')")
        assert "Upload a bot folder (.tar.gz, .tar or .zip)" in page.inner_text("main")
        assert violations(axe, page) == []
        page.goto(server.url + "no-such-page.html")
        assert page.inner_text("h1") == "Not found"
        page.click("a:text-is('The standings')")
        page.wait_for_selector("#standings")
        assert outside == []
        watched.check()
    alone = serve_site(tmp_path / "league" / "site", 0).start()  # the site without a door: no link
    try:
        watched = Watched(browser, DESKTOP)
        watched.page.goto(alone.url + "index.html")
        watched.page.wait_for_load_state("networkidle")
        assert watched.page.locator("header.top a.door-link").is_hidden()
        watched.check()
    finally:
        alone.shutdown()
