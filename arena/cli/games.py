"""`arena games` and `arena schema`: what the games are, their rule options, and what a bot
sees and says."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from arena.cli.console import console, say
from engine import all_games, get_game


def games_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """List every game with its seat range and every rule option (type, default, meaning)."""
    described = [game.describe() for game in all_games()]
    if as_json:
        print(json.dumps(described, indent=2))
        return
    for game in described:
        console.print(
            f"[bold]{game['name']}[/bold] — {game['title']}, "
            f"{game['min_players']}–{game['max_players']} seats",
            highlight=False,
        )
        for option in game["options"]:
            kind = option["type"]
            if "choices" in option:
                kind += ": " + " | ".join(str(c) for c in option["choices"])
            elif "min" in option or "max" in option:
                kind += f": {option.get('min', '')}..{option.get('max', '')}"
            console.print(
                f"  [bold]{option['name']}[/bold] = {json.dumps(option['default'])}  ({kind})",
                highlight=False,
            )
            say(f"      {option['help']}")
        console.print()
    console.print("Set an option with --rule NAME=VALUE (repeatable); `--json` for machines.")


def schema_command(
    game: Annotated[
        Optional[str],
        typer.Option("--game", help="Print instead what this game's observations and actions look like (see `arena games`)."),
    ] = None,
) -> None:
    """Print the JSON Schema of the bot protocol (both directions), or with --game G, of G's observation and action."""
    from arena.game.protocol import game_json_schema, json_schema

    print(json.dumps(json_schema() if game is None else game_json_schema(get_game(game)), indent=2))
