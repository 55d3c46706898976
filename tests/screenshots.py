"""Screenshots of the browser tests, for a person to look at: taken only when asked.

`ARENA_SCREENSHOTS=DIR python3 -m pytest tests/test_*_browser.py` writes each test's
pictures to DIR/<test name>/. Without it none is taken: a picture checks nothing, and a
full-page capture needs Chromium to lay out and paint the whole page at a new size, which
on a busy machine running two test processes each with its own Chromium took over
playwright's 30 seconds once (tests/site/test_replay_browser.py, in a clean-clone CI run) and
failed a test whose every check had passed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path


def keep_screenshot(page, name: str, **options) -> Path | None:
    """Save PAGE as NAME under $ARENA_SCREENSHOTS/<the running test>/, or do nothing."""
    folder = os.environ.get("ARENA_SCREENSHOTS")
    if not folder:
        return None
    test = os.environ.get("PYTEST_CURRENT_TEST", "test").split(" ")[0]
    where = Path(folder) / re.sub(r"[^A-Za-z0-9_.-]+", "_", test)
    where.mkdir(parents=True, exist_ok=True)
    path = where / name
    page.screenshot(path=str(path), **options)
    return path
