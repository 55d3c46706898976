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

    table, confidence, settings, done, total = stored_standings(out_dir)
    if settings.get("format") == "league" and not as_json:
        print_league(out_dir, hide_retired)
        return
    gauntlet = stored_gauntlet(out_dir, settings)
    if as_json:
        groups = confidence.groups([line.bot for line in table.standings])
        lines = []
        league = league_states(out_dir, table, confidence) if settings.get("format") == "league" else {}
        for line, group in zip(table.standings, groups):
            interval = confidence.intervals[line.bot]
            lines.append({
                **dataclasses.asdict(line), "rank_interval": [interval.low, interval.high], "group": group + 1,
                **league.get(line.bot, {}),
            })
            if any(met.challenger == line.bot for met in gauntlet):  # a gauntlet's challenger: its opponents
                lines[-1]["gauntlet"] = [
                    {**dataclasses.asdict(met), "score": met.score} for met in gauntlet if met.challenger == line.bot
                ]
        print(json.dumps(lines, indent=2))
        return
    print_standings(table, confidence, settings, f"{settings.get('name', 'tournament')}: {done} of {total} scheduled games stored")
    print_gauntlet(gauntlet)


def stored_standings(out_dir: Path) -> tuple:
    """A tournament's standings (`RatingTable`), how sure they are (`Confidence`), its settings,
    and how many games are stored of how many scheduled."""
    from arena.ratings.ledger import stored_confidence
    from arena.store.db import Store

    with Store.open(out_dir) as store:
        table, confidence = stored_confidence(store)
        return table, confidence, store.settings() or {}, len(store.done_keys()), len(store.games())


def print_standings(table, confidence, settings: dict, title: str) -> None:
    """The standings table and what its columns and blank lines mean."""
    from arena.ratings.ledger import is_swiss

    swiss = is_swiss(settings)
    console.print(standings_table(table.standings, confidence, title, swiss, console.width))
    for note in standings_notes(swiss):
        say(note)


def stored_gauntlet(out_dir: Path, settings: dict) -> list:
    """A gauntlet's challenger-against-each-opponent lines (arena.run.schedule.GauntletLine); [] for other formats."""
    from arena.run.schedule import gauntlet_results
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


def league_states(out_dir: Path, table, confidence) -> dict:
    """A league's bots for `arena standings --json`: status, reason, settled."""
    from arena.store.db import Store

    with Store.open(out_dir) as store:
        members = {member.bot: member for member in store.members()}
    return {
        line.bot: {
            "status": members[line.bot].status if line.bot in members else "active",
            "reason": members[line.bot].reason if line.bot in members else "",
            "settled": bool(line.games) and confidence.settled(line.bot),
        }
        for line in table.standings
    }


def print_league(out_dir: Path, hide_retired: bool = False) -> None:
    """A league's standings, each bot marked retired, suspended, settled or provisional."""
    from arena.run.league import league_marks

    table, confidence, settings, done, total = stored_standings(out_dir)
    marks, notes, hidden = league_marks(out_dir, hide_retired)
    shown = [line for line in table.standings if line.bot not in hidden]
    if hidden:  # ranks and bands among the bots shown
        from arena.ratings.confidence import Confidence

        confidence = Confidence.of({line.bot: confidence.skills[line.bot] for line in shown}, confidence.beta)
    console.print(
        standings_table(shown, confidence, f"{settings.get('name', 'league')}: {done} games", False, console.width, marks)
    )
    for note in standings_notes(False) + notes:
        say(note)
