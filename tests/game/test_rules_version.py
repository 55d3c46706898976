"""Every stored game records the engine's rules version, so a rule fix does not make old
replays fail verification silently: the record, the store, verification and the site."""

from __future__ import annotations

import sqlite3

import pytest
from report_helpers import build_tournament

from arena.game.referee import ReplayMismatch, verify_replay
from arena.site.replay import ReplayUnavailable, replay_frames
from arena.site.state import STATE_FILE
from arena.site.writer import render_site
from arena.store.db import Store
from engine.registry import get_game


@pytest.fixture()
def cup(tmp_path):
    return build_tournament(tmp_path / "cup")


def test_every_stored_game_records_its_rules_version(cup):
    version = get_game("3up3down").rules_version
    assert version == "1"
    with Store.open(cup) as store:
        games = store.games()
        assert [game.rules_version for game in games] == [version] * 4
        result = store.game_result(games[0].key)
    assert result.rules_version == version
    verify_replay(result)
    page = (cup / "site" / "games" / f"{games[0].key}.html").read_text()
    assert f"rules version {version}" in page


def test_a_game_of_another_rules_version_says_so_instead_of_failing_to_replay(cup):
    with Store.open(cup) as store:
        key = store.games()[0].key
    with sqlite3.connect(cup / "arena.sqlite") as db:
        db.execute("UPDATE games SET rules_version = '0' WHERE key = ?", (key,))
    with Store.open(cup) as store:
        result = store.game_result(key)
    with pytest.raises(ReplayMismatch, match="played under 3up3down rules version 0; this arena plays version 1"):
        verify_replay(result)
    with pytest.raises(ReplayUnavailable, match="played under rules version 0; this arena plays version 1"):
        replay_frames(result)
    for script in (cup / "site" / "replays").glob(f"{key}.*"):
        script.unlink()  # a stored result never changes, so the site keeps replays it made
    # The game was stored so when it was played, before this arena rendered any site of it:
    # no site state (DIR/.site-state.sqlite) of this arena holds it yet.
    (cup / STATE_FILE).unlink()
    render_site(cup)
    page = (cup / "site" / "games" / f"{key}.html").read_text()
    assert "rules version 0" in page
    replay = next((cup / "site" / "replays").glob(f"{key}.*")).read_text()
    assert "played under rules version 0" in replay


def test_a_store_from_before_the_rules_version_opens_and_shows_it_unknown(cup):
    with sqlite3.connect(cup / "arena.sqlite") as db:
        db.execute("ALTER TABLE games DROP COLUMN rules_version")
    with Store.open(cup) as store:  # the column comes back, empty
        games = store.games()
        assert [game.rules_version for game in games] == [None] * 4
        result = store.game_result(games[0].key)
    assert result.rules_version is None
    verify_replay(result)  # unknown: checked by re-simulation alone, as before
    (cup / STATE_FILE).unlink()  # the site of a store that old was rendered by an arena without one
    render_site(cup)
    assert "rules version unknown" in (cup / "site" / "games" / f"{games[0].key}.html").read_text()
