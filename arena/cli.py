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
            console.print(f"      {option['help']}", highlight=False, markup=False, soft_wrap=True)
        console.print()
    console.print("Set an option with --rule NAME=VALUE (repeatable); `--json` for machines.")


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


@app.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of the bot protocol (both directions)."""
    from arena.protocol import json_schema

    print(json.dumps(json_schema(), indent=2))


@app.command("match")
def match_command(
    game: Annotated[str, typer.Argument(help="Game name (see `arena games`).")],
    bot_dirs: Annotated[list[Path], typer.Argument(help="Bot folders (each with a bot.toml), one per seat.")],
    games: Annotated[int, typer.Option("--games", "-n", min=1, help="How many games (seats rotate).")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the first game; game i is dealt from seed+i.")] = 1,
    sandbox: Annotated[str, typer.Option(help="Where bots run: local (trusted code only) or docker.")] = "local",
    rule: Annotated[
        Optional[list[str]], typer.Option(help="Rule option as key=value; repeatable.")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show every action and public event.")] = False,
    replay: Annotated[
        Optional[Path], typer.Option(help="Write every game's result and replay to this file (JSON lines).")
    ] = None,
    decision_s: Annotated[float, typer.Option(help="Seconds per decision before the time bank is used.")] = 1.0,
    time_bank_s: Annotated[float, typer.Option(help="Extra seconds for the whole match, spent on overruns.")] = 10.0,
    startup_s: Annotated[float, typer.Option(help="Seconds from start to the bot's `ready`.")] = 10.0,
    memory_mb: Annotated[int, typer.Option(help="Memory limit per bot, in MB.")] = 512,
) -> None:
    """Play GAMES games between the bots in BOT_DIRS and print places, scores and incidents."""
    from arena.match import run_match, standings
    from arena.sandbox import Limits

    chosen = get_game(game)
    options = chosen.parse_options(rule or [])
    if decision_s <= 0 or startup_s <= 0 or time_bank_s < 0 or memory_mb < 16:
        raise UsageError(
            "limits: --decision-s and --startup-s must be > 0, --time-bank-s >= 0, --memory-mb >= 16"
        )
    limits = Limits(decision_s=decision_s, time_bank_s=time_bank_s, startup_s=startup_s, memory_mb=memory_mb)
    shown_events = [0]

    def show_step(state, seat, action, chooser) -> None:
        public = state.events(None)
        for event in public[shown_events[0]:]:
            console.print(f"    {json.dumps(event)}", highlight=False, markup=False, soft_wrap=True)
        shown_events[0] = len(public)
        marker = " (fallback)" if chooser == "fallback" else ""
        console.print(f"  seat {seat}{marker}: {json.dumps(action)}", highlight=False, markup=False, soft_wrap=True)

    def show_game(result) -> None:
        shown_events[0] = 0
        if verbose:
            console.print(
                f"game {result.game_number} (seed {result.seed}) over: places {result.places}, "
                f"scores {result.scores}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )

    result = run_match(
        chosen.name,
        bot_dirs,
        games=games,
        seed=seed,
        sandbox=sandbox,
        rules=options,
        limits=limits,
        on_step=show_step if verbose else None,
        on_game=show_game,
    )
    if replay is not None:
        with replay.open("w", encoding="utf-8") as sink:
            for game_result in result.games:
                sink.write(game_result.model_dump_json() + "\n")

    names = [bot.name for bot in result.bots]
    table = Table(
        title=f"{chosen.title}: {games} games, sandbox {result.sandbox}", title_justify="left"
    )
    table.add_column("game", justify="right")
    table.add_column("seed", justify="right")
    for name in names:
        table.add_column(name, justify="center")
    table.add_column("incidents")
    for game_result in result.games:
        cells = {}
        for seat, name in enumerate(game_result.seats):
            cells[name] = f"{game_result.places[seat]} ({game_result.scores[seat]:g}) s{seat}"
        faults = ", ".join(f"{i.bot}: {i.reason.value}" for i in game_result.incidents) or "-"
        table.add_row(
            str(game_result.game_number), str(game_result.seed), *[cells[name] for name in names], faults
        )
    console.print(table)
    console.print("place (score) and seat of each bot per game; 1 = best; forfeits share last place.")

    summary = Table(title="standings", title_justify="left")
    for column in ("bot", "games", "wins", "mean place", "mean score", "incidents"):
        summary.add_column(column, justify="left" if column in ("bot", "incidents") else "right")
    for row in standings(result):
        summary.add_row(
            row.bot,
            str(row.games),
            str(row.wins),
            f"{row.mean_place:.2f}",
            f"{row.mean_score:.2f}",
            ", ".join(f"{reason} x{count}" for reason, count in sorted(row.incidents.items())) or "-",
        )
    console.print(summary)
    for game_result in result.games:
        for incident in game_result.incidents:
            console.print(
                f"game {incident.game_number}, seat {incident.seat}, {incident.bot}: "
                f"{incident.reason.value} at decision {incident.decision}: {incident.detail}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            if verbose and incident.log_tail:
                console.print("  its log ends with:", highlight=False, markup=False, soft_wrap=True)
                for line in incident.log_tail.splitlines()[-10:]:
                    console.print(f"  | {line}", highlight=False, markup=False, soft_wrap=True)
    if replay is not None:
        console.print(f"Results and replays written to {replay}")


def main() -> None:
    """Entry point of the `arena` command."""
    from arena.botfolder import BotFolderError
    from arena.match import MatchError
    from arena.sandbox import SandboxError, UnknownSandbox

    try:
        app()
    except (GameError, UsageError, BotFolderError, MatchError, UnknownSandbox) as mistake:
        errors.print(f"arena: error: {mistake}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(2)
    except SandboxError as failure:
        # arena's own machinery (e.g. the Docker engine) failed: never the bot's fault.
        errors.print(f"arena: internal error: {failure}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(1)
