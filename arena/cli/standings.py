"""`arena standings`, and the standings every command prints (a tournament's, a gauntlet's,
a league's) read from a store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from arena.cli.console import console, say
from arena.cli.tables import gauntlet_table, standings_notes, standings_table


def standings_command(
    out_dir: Annotated[Path, typer.Argument(help="A tournament's output folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    hide_retired: Annotated[
        bool, typer.Option("--hide-retired", help="A league: leave out versions replaced by a newer one.")
    ] = False,
) -> None:
    """Print the standings of a tournament or a league (finished or not) from its store, with
    each bot's 90% rank interval (its band) and the groups of bots that are not separated;
    a league's bots are marked settled, provisional, retired or suspended."""
    import dataclasses

    from arena.store.db import check_store

    check_store(out_dir)  # a damaged store is said, not half read
    standings, settings, done, total = stored_standings(out_dir)
    if standings.league and not as_json:
        print_league(out_dir, hide_retired, (standings, settings, done))
        return
    gauntlet = stored_gauntlet(out_dir, settings)
    if as_json:
        lines = standings.to_json()
        for line in lines:
            if any(met.challenger == line["bot"] for met in gauntlet):  # a gauntlet's challenger: its opponents
                line["gauntlet"] = [
                    {**dataclasses.asdict(met), "score": met.score} for met in gauntlet if met.challenger == line["bot"]
                ]
        print(json.dumps(lines, indent=2))
        return
    print_standings(standings, settings, f"{settings.get('name', 'tournament')}: {done} of {total} scheduled games stored")
    print_gauntlet(gauntlet)


def stored_standings(out_dir: Path) -> tuple:
    """A tournament's or a league's standings (`arena.ratings.standings.Standings`), its
    settings, and how many games are stored of how many scheduled."""
    from arena.ratings.standings import of_store
    from arena.store.db import Store

    with Store.open(out_dir) as store:
        return of_store(store), store.settings() or {}, len(store.done_keys()), len(store.games())


def print_standings(standings, settings: dict, title: str, marks=None, notes: list[str] | None = None) -> None:
    """The standings table (`marks`: text after a bot's name) and what its columns and blank
    lines mean, then `notes`."""
    from arena.ratings.results import is_swiss

    swiss = is_swiss(settings)
    console.print(standings_table(standings.lines, title, swiss, console.width, marks))
    for note in standings_notes(swiss) + (notes or []):
        say(note)


def stored_gauntlet(out_dir: Path, settings: dict) -> list:
    """A gauntlet's challenger-against-each-opponent lines (arena.schedule.formats.GauntletLine); [] for other formats."""
    from arena.schedule.formats import gauntlet_results
    from arena.store.db import Store

    if settings.get("format") != "gauntlet":
        return []
    with Store.open(out_dir) as store:
        tables: dict[str, list[tuple[str, int]]] = {}
        for seat in store.seats():
            tables.setdefault(seat.game_key, []).append((seat.bot, seat.place))
    return gauntlet_results([bot["id"] for bot in settings.get("challengers") or []], tables.values())


def print_gauntlet(lines) -> None:
    """The gauntlet's result: each challenger against each field bot, hardest first."""
    if not lines:
        return
    console.print(gauntlet_table(lines))
    say("ahead/tied/behind: games the challenger placed better than, as well as, worse than that opponent at "
         "one table; score: its share (1 ahead, 0.5 tied); place, theirs: the mean places (1 = best) in those games.")


def print_league(out_dir: Path, hide_retired: bool = False, stored: tuple | None = None) -> None:
    """A league's standings, each bot marked retired, suspended, settled or provisional
    (`stored`: what `stored_standings` gave, when read already)."""
    standings, settings, done = stored or stored_standings(out_dir)[:3]
    shown = standings.without(standings.retired() if hide_retired else ())  # ranks and bands among the bots shown
    print_standings(
        shown, settings, f"{settings.get('name', 'league')}: {done} games", standings.terminal_marks(),
        standings.league_notes(),
    )
