"""The play tests' bot folders: `bot_dirs`, made once per module from its BOT_DIRS."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot_folders import renamed_copies


@pytest.fixture(scope="module")
def bot_dirs(request, tmp_path_factory) -> list[Path]:
    """Copies of example bots under other names: the module's BOT_DIRS, (name, example bot) pairs."""
    return renamed_copies(tmp_path_factory.mktemp("bots"), request.module.BOT_DIRS)
