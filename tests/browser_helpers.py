"""What the browser tests share: viewports, a page whose dialogs and script errors are
kept (`Watched`), reading the standings and a replay off a page, and axe-core's
accessibility check. Chromium itself is the fixture `browser` (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from tests.needs import missing

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


class Watched:
    """A page whose dialogs (an alert would mean injected script ran) and script errors are kept."""

    def __init__(self, browser, viewport, **options):
        self.page = browser.new_page(viewport=viewport, **options)
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def check(self) -> None:
        assert self.dialogs == [], f"a page opened a dialog: {self.dialogs}"
        assert self.errors == [], f"script errors: {self.errors}"
        self.page.close()


def standings_names(page) -> list[str]:
    return page.locator("#standings tbody tr td:nth-child(2) a").all_inner_texts()


def step_of(page) -> int:
    return int(page.locator("#replay-table").get_attribute("data-step"))


def open_game(browser, tournament: Path, key: str, viewport=DESKTOP, step: int | None = None) -> Watched:
    """A game's page of a tournament's site, its replay drawn (at `step` when given)."""
    watched = Watched(browser, viewport)
    url = (tournament / "site" / "games" / f"{key}.html").as_uri() + ("" if step is None else f"#step={step}")
    watched.page.goto(url)
    watched.page.wait_for_selector("#replay-table")
    return watched


def jump(page, step: int) -> None:
    """Go to `step` with the replay's jump box."""
    page.fill("#replay-jump", str(step))
    page.press("#replay-jump", "Enter")
    assert step_of(page) == step


def axe_checker():  # noqa: ANN201 - axe_playwright_python's Axe
    """axe-core (bundled by axe-playwright-python); skipped without it, or fails under
    ARENA_REQUIRE_BROWSER=1."""
    try:
        from axe_playwright_python.sync_playwright import Axe
    except ImportError:
        missing("axe-playwright-python is not installed (pip install -e '.[test]')", "ARENA_REQUIRE_BROWSER")
    return Axe()


def violations(axe, page) -> list[str]:
    """axe-core's violations on the page as it is now, one readable line per rule."""
    found = axe.run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {len(v['nodes'])} node(s), first {v['nodes'][0]['target']}: "
        f"{v['nodes'][0]['failureSummary'][:300]}"
        for v in found
    ]


def check_accessible_and_fits(axe, page, viewport: dict, label: str, found: dict[str, list[str]]) -> None:
    """The page as it is now: axe-core's violations kept in `found` under `label` (the test
    asserts `found == {}` once it has seen every page, so that one run names them all), and
    nothing but the inner scrolling regions wider than the screen."""
    problems = violations(axe, page)
    if problems:
        found[label] = problems
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], label
