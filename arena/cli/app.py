"""The `arena` command: its commands in the order `arena --help` lists them, each from the
module of its group (games, match, tournament, standings, bots, report, league; authors and
images from arena/web and arena/langs). Thin: parse, call the layers, print. Errors a user
can cause (`ArenaError`) are caught once, in `main`: one line (no traceback), its exit code."""

from __future__ import annotations

import inspect
import re

import sqlite3
import sys
from typing import Annotated

import typer

from arena.cli import bots, games, league, match, report, standings, tournament
from arena.cli.authors import authors_app  # light: Typer only
from arena.cli.console import UsageError, errors, say_error
from arena.cli.flags import SeveralAfterOneFlag
from arena.cli.langs import images_app  # light: Typer only
from arena.cli.signals import stop_on_sigterm, stopped_code
from arena.errors import ArenaError
from engine import GameError

app = typer.Typer(
    name="arena",
    help=(
        "Run card-game bot tournaments: 3UP 3DOWN and Three Thirteen.\n\n"
        "Start with `arena demo` (a small tournament of the example bots, with its site), "
        "`arena games` (the games and their rule options) and `arena match GAME BOT_DIR...` "
        "(test your bot against others). Organisers: `arena run`, `arena report`, `arena serve`."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(asked: bool) -> None:
    if asked:
        import arena

        print(f"arena {arena.__version__}")
        raise typer.Exit()


@app.callback()
def _arena(
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="Print arena's version and exit.")
    ] = False,
) -> None:
    """Run card-game bot tournaments: 3UP 3DOWN and Three Thirteen."""


# The order of `arena --help` (groups of subcommands come after the commands).
app.command("new")(bots.new_bot_command)
app.command("games")(games.games_command)
app.command("demo")(tournament.demo_command)
app.command("schema")(games.schema_command)
app.command("match")(match.match_command)
app.command("run", cls=SeveralAfterOneFlag)(tournament.run_command)
app.command("secret")(tournament.secret_command)
app.command("standings")(standings.standings_command)
app.command("submit")(bots.submit_command)
app.command("bots")(bots.bots_command)
app.command("report")(report.report_command)
app.command("serve")(report.serve_command)
app.command("play")(match.play_command)
app.command("league")(league.league_command)
app.add_typer(authors_app, name="authors")
app.add_typer(images_app, name="images")


def _reflowed(doc: str) -> str:
    """A docstring as `--help` shows it: each paragraph's lines joined into one (the terminal
    wraps them to its width; rich keeps a docstring's own line breaks otherwise, so its
    lines came out ragged), a list item ("- ") still on a line of its own."""
    paragraphs = []
    for paragraph in inspect.cleandoc(doc).split("\n\n"):
        lines: list[str] = []
        for line in paragraph.splitlines():
            if lines and not line.lstrip().startswith(("- ", "* ")):
                lines[-1] += " " + line.strip()
            else:
                lines.append(line.strip())
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.;])\s", text.split("\n\n")[0], maxsplit=1)[0].rstrip(".;")


# `arena --help` lists each command by its first sentence; `arena CMD --help` says all.
for _typer in (app, authors_app, images_app):
    for _info in _typer.registered_commands:
        if _info.help is None and _info.callback is not None and _info.callback.__doc__:
            _info.help = _reflowed(_info.callback.__doc__)
            _info.short_help = _first_sentence(_info.help)
for _group in app.registered_groups:
    _group.short_help = _first_sentence(_group.typer_instance.info.help)


def main() -> None:
    """Entry point of the `arena` command: every error a user can cause, and arena's own
    failure, is an `ArenaError` (arena/errors.py), caught here alone: its line, no
    traceback, its exit code (2 for a user's mistake, 1 for an internal error)."""
    stop_on_sigterm()  # systemd, docker stop, Kubernetes: as Ctrl-C
    try:
        app()
    except (ArenaError, GameError) as caught:
        # The games' own errors (an unknown game, a bad rule option) are a user's mistake;
        # engine/ knows nothing of arena, so they are given arena's shape here.
        error = caught if isinstance(caught, ArenaError) else UsageError(str(caught))
        say_error(error.shown())
        sys.exit(error.exit_code)
    except (OSError, sqlite3.OperationalError) as error:
        from arena.diskfull import FULL_LINE, is_full

        if not is_full(error):
            raise
        errors.print(f"arena: error: {FULL_LINE} ({error})", highlight=False, markup=False, soft_wrap=True)
        sys.exit(1)
    except sqlite3.DatabaseError as error:
        from arena.store.db import is_damage

        if not is_damage(error):
            raise
        # Met where no check was made first (a store damaged while it was read).
        errors.print(f"arena: error: a store is damaged ({error}); put back a copy from your backup",
                     highlight=False, markup=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        errors.print("arena: interrupted; finished games are stored: run the same command to resume", highlight=False)
        sys.exit(stopped_code())
