"""Each game owns its replay viewer: its table builders and its drawing script live in its
engine folder, the site serves a copy of that script as `replay-<game>.js`, and the generic
parts (arena/report_replay.py, templates/assets/replay.js) name no game."""

from __future__ import annotations

from pathlib import Path

from arena.report import render_site
from arena.resources import templates_dir
from engine import all_games
from report_helpers import build_tournament

ROOT = Path(__file__).resolve().parent.parent
ASSETS = templates_dir() / "assets"


def test_every_game_has_replay_tables_and_a_script_in_its_own_folder():
    for game in all_games():
        tables = game.replay_tables()
        assert tables is not None, game.name
        folder = Path(tables.full.__code__.co_filename).parent
        assert tables.script == folder / "replay.js" and tables.script.is_file(), game.name
        assert folder.parent == ROOT / "engine", game.name


def test_the_site_serves_each_games_own_script_and_no_other(tmp_path):
    # The script has one home (the game's folder); the site gets a copy of it at render time.
    assert not any(path.name.startswith("replay-") for path in ASSETS.iterdir())
    site = render_site(build_tournament(tmp_path / "cup")) / "assets"
    served = sorted(path.name for path in site.iterdir() if path.name.startswith("replay-"))
    assert served == sorted(f"replay-{game.name}.js" for game in all_games())
    for game in all_games():
        assert (site / f"replay-{game.name}.js").read_bytes() == game.replay_tables().script.read_bytes(), game.name


def test_the_generic_replay_code_names_no_game():
    for path in (ROOT / "arena" / "report_replay.py", ASSETS / "replay.js"):
        text = path.read_text().lower()
        for game in all_games():
            for word in (game.name, game.title.lower()):
                assert word not in text, f"{path.name} names {word!r}"
