"""The `arena` command. Thin: parse, call the layers, print. Errors a user can cause are
printed as one line (no traceback) and exit with code 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from engine import GameError, all_games, get_game

app = typer.Typer(
    name="arena",
    help=(
        "Run card-game bot tournaments: 3UP 3DOWN and Three Thirteen.\n\n"
        "Start with `arena games` to see the games and their rule options, and "
        "`arena demo` to watch built-in random players play."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)


class UsageError(Exception):
    """A mistake on the command line that the user can fix; printed as one line."""


@app.command("games")
def games_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """List every game with its seat range and every rule option (type, default, meaning)."""
    described = [game.describe() for game in all_games()]
    if as_json:
        print(json.dumps(described, indent=2))
        return
    for game in described:
        table = Table(
            title=f"{game['name']} — {game['title']} ({game['min_players']}–{game['max_players']} seats)",
            title_justify="left",
        )
        table.add_column("option", style="bold")
        table.add_column("type")
        table.add_column("default")
        table.add_column("meaning")
        for option in game["options"]:
            kind = option["type"]
            if "choices" in option:
                kind += " (" + "|".join(str(c) for c in option["choices"]) + ")"
            elif "min" in option or "max" in option:
                kind += f" ({option.get('min', '')}..{option.get('max', '')})"
            table.add_row(option["name"], kind, json.dumps(option["default"]), option["help"])
        console.print(table)
        console.print(f"  use: --rule {game['options'][0]['name']}=VALUE" if game["options"] else "")


@app.command("demo")
def demo_command(
    game: Annotated[str, typer.Option(help="Game name (see `arena games`).")] = "3up3down",
    players: Annotated[int, typer.Option(help="Seats at the table.")] = 4,
    games: Annotated[int, typer.Option("--games", "-n", min=1, help="How many games.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the first game; game i uses seed+i.")] = 1,
    rule: Annotated[
        Optional[list[str]], typer.Option(help="Rule option as key=value; repeatable.")
    ] = None,
    out: Annotated[
        Path, typer.Option(help="Folder for the results (one JSON line per game).")
    ] = Path("arena-demo"),
) -> None:
    """Play games between built-in random players and print the places."""
    from engine.players import play_random_game

    chosen = get_game(game)
    options = chosen.parse_options(rule or [])
    chosen.check_players(players)
    out.mkdir(parents=True, exist_ok=True)
    results_file = out / "results.jsonl"
    table = Table(title=f"{chosen.title}: {games} games, {players} random players", title_justify="left")
    table.add_column("game seed", justify="right")
    table.add_column("decisions", justify="right")
    for seat in range(players):
        table.add_column(f"seat {seat}", justify="center")
    with results_file.open("w", encoding="utf-8") as sink:
        for index in range(games):
            state = play_random_game(game, players, options, seed + index)
            places, scores = state.places(), state.scores()
            sink.write(
                json.dumps(
                    {
                        "game": game,
                        "seed": seed + index,
                        "players": players,
                        "rules": state.options,
                        "places": places,
                        "scores": scores,
                        "actions": state.actions,
                    }
                )
                + "\n"
            )
            table.add_row(
                str(seed + index),
                str(len(state.history)),
                *[f"{place} ({score:g})" for place, score in zip(places, scores)],
            )
    console.print(table)
    console.print("place (score) per seat; 1 = best.")
    console.print(f"Results written to {results_file}")


def main() -> None:
    """Entry point of the `arena` command."""
    try:
        app()
    except (GameError, UsageError) as mistake:
        errors.print(f"arena: error: {mistake}", highlight=False, markup=False)
        sys.exit(2)
