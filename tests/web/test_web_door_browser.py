"""The authors' page /door/ in headless Chromium against the real server: sign in with the
token, upload a bot through the form, see it accepted and listed under "my bots", see a
refused one's reasons (its hostile stderr shown as text: no dialog opens), live (no
reload); axe-core finds nothing at 1280 and 390 px. Skipped without Chromium unless
ARENA_REQUIRE_BROWSER=1."""

from __future__ import annotations

import io
import tarfile

from tests.site.test_report_browser import DESKTOP, PHONE, Watched, browser  # noqa: F401  (a fixture)
from tests.site.test_report_pages_browser import _axe, violations
from tests.web_helpers import bot_folder, door_server, token_for

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
    axe = _axe()
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
        page.wait_for_selector("#submit-state:has-text('queued')")
        page.wait_for_selector("#submissions td.accepted", timeout=240_000)
        page.wait_for_selector("#bots p:has-text('pagebot: versions 1.0')", timeout=20_000)
        page.set_input_files("#bot", bad)
        page.click("#submit-form button")
        page.wait_for_selector("#submissions td.refused", timeout=240_000)
        reasons = page.inner_text("#submissions tbody tr:first-child pre")
        assert HOSTILE in reasons and "smoke match of 3up3down" in reasons
        assert page.locator("#submissions img").count() == 0
        for viewport in (DESKTOP, PHONE):
            page.set_viewport_size(viewport)
            assert violations(axe, page) == [], viewport
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        page.click("#signout")
        assert page.locator("#submit").is_hidden() and page.evaluate("sessionStorage.length") == 0
        watched.check()
