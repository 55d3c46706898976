"""`arena match` (a match between bots, or an SPRT between two) and `arena play` (a person
against bots, in a browser)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli.console import UsageError, console, say, say_json, warn_public_seed
from arena.cli.flags import DecisionFlag, MemoryFlag, RuntimeFlag, StartupFlag, TimeBankFlag, sandbox_settings
from arena.cli.incidents import print_incidents
from arena.cli.progress import SprtProgress
from arena.cli.tables import compact_table, fitting, match_games_table
from arena.ratings.ledger import WINS_MEANS
from arena.ratings.sprt import (
    DEFAULT_GAMES as _SPRT_GAMES,  # shown in `arena match --help`
)
from engine import get_game


def match_command(
    game: Annotated[str, typer.Argument(help="Game name (see `arena games`).")],
    bot_dirs: Annotated[list[Path], typer.Argument(help="Bot folders (each with a bot.toml), one per seat.")],
    games: Annotated[
        Optional[int],
        typer.Option(
            "--games", "-n", min=1,
            help=f"How many games (seats rotate); with --sprt the most to play (default 1, with --sprt {_SPRT_GAMES:,}).",
        ),
    ] = None,
    seed: Annotated[
        Optional[int],
        typer.Option(
            help="Public seed: the match replays exactly, and any bot that guesses the seed can compute "
            "the deals. Default: a secret key drawn for this match (shown with --verbose)."
        ),
    ] = None,
    sandbox: Annotated[str, typer.Option(help="Where bots run: local (trusted code only) or docker.")] = "local",
    rule: Annotated[
        Optional[list[str]], typer.Option(help="Rule option as key=value; repeatable.")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show every action and public event.")] = False,
    replay: Annotated[
        Optional[Path], typer.Option(help="Write every game's result and replay to this file (JSON lines).")
    ] = None,
    decision_s: DecisionFlag = None,
    time_bank_s: TimeBankFlag = None,
    startup_s: StartupFlag = None,
    memory_mb: MemoryFlag = None,
    runtime: RuntimeFlag = None,
    sprt: Annotated[
        Optional[tuple[float, float]],
        typer.Option(
            metavar="ELO0 ELO1",
            help="Is the first bot better than the second? Play pairs of games (each deal from both seats) until "
            "the sequential probability ratio test accepts H0 (at most ELO0 Elo stronger) or H1 (at least ELO1), "
            "or --games; see docs/confidence.md.",
        ),
    ] = None,
    alpha: Annotated[
        Optional[float], typer.Option(help="With --sprt: how often it may accept H1 when H0 is true (default 0.05).")
    ] = None,
    beta: Annotated[
        Optional[float], typer.Option(help="With --sprt: how often it may accept H0 when H1 is true (default 0.05).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --sprt: print only the final figures, as one JSON object.")
    ] = False,
) -> None:
    """Play GAMES games between the bots in BOT_DIRS and print places, scores and incidents."""
    from arena.limits import limits_from_flags
    from arena.ratings.sprt import SprtSettings
    from arena.play.match import run_match, standings

    settings = None
    if sprt is None:
        given = [flag for flag, value in (("--alpha", alpha), ("--beta", beta), ("--json", as_json or None)) if value is not None]
        if given:
            settings_are = "is an SPRT setting: use it" if len(given) == 1 else "are SPRT settings: use them"
            raise UsageError(f"{', '.join(given)} {settings_are} with --sprt ELO0 ELO1")
        games = 1 if games is None else games
    else:
        settings = SprtSettings(sprt[0], sprt[1], 0.05 if alpha is None else alpha, 0.05 if beta is None else beta)
        if len(bot_dirs) != 2:
            raise UsageError(
                f"--sprt compares exactly two bots (the first, e.g. your new version, against the second); "
                f"got {len(bot_dirs)} bot folders"
            )
        games = _SPRT_GAMES if games is None else games
        if games % 2:
            raise UsageError(f"--sprt plays each deal twice, seats swapped: --games must be even, not {games}")
    chosen = get_game(game)
    options = chosen.parse_options(rule or [])
    limits = limits_from_flags(decision_s=decision_s, time_bank_s=time_bank_s, startup_s=startup_s, memory_mb=memory_mb)
    if seed is not None:
        warn_public_seed(seed)
    shown_events = [0]

    def show_step(state, seat, action, chooser) -> None:
        # Called once the action is applied: the action first, then the events it caused.
        public = state.events(None)
        if len(state.history) == 1:  # the game's first action: the deal's events come before it
            shown_events[0] = len(chosen.new_game(state.players, state.options, state.seed).events(None))
            for event in public[: shown_events[0]]:
                say_json(f"    {json.dumps(event)}")
        marker = " (fallback)" if chooser == "fallback" else ""
        say_json(f"  seat {seat}{marker}: {json.dumps(action)}")
        for event in public[shown_events[0]:]:
            say_json(f"    {json.dumps(event)}")
        shown_events[0] = len(public)

    def show_game(result) -> None:
        shown_events[0] = 0
        if verbose:
            say(f"game {result.game_number} (seed {result.seed}) over: places {result.places}, scores {result.scores}")

    pairs = SprtProgress(settings, quiet=as_json) if settings is not None else None

    def after_game(result) -> None:
        show_game(result)
        if pairs is not None:
            pairs.add(result)

    result = run_match(
        chosen.name,
        bot_dirs,
        games=games,
        seed=seed,
        sandbox=sandbox,
        sandbox_settings=sandbox_settings(sandbox, runtime),
        rules=options,
        limits=limits,
        on_step=show_step if verbose else None,
        on_game=after_game,
        paired=pairs is not None,
        stop=pairs.decided if pairs is not None else None,
    )
    if replay is not None:
        with replay.open("w", encoding="utf-8") as sink:
            for game_result in result.games:
                sink.write(game_result.model_dump_json() + "\n")
    if pairs is not None and as_json:
        pairs.finish(result, as_json=True)
        return

    if pairs is None:  # an SPRT's games are too many to list: its pairs were shown as they came
        table, legend = match_games_table(result)
        say(f"{chosen.title}: {games} games, sandbox {result.sandbox}")
        console.print(table)
        for line in legend:
            say(line)
        say("each cell: place (game score) and seat; 1 = best; forfeits share the last place.")
        say(f"game score: {chosen.game_score}.")
    if verbose and result.secret is not None:
        say(f"deals' secret: {result.secret}")

    rows = [
        {
            "bot": row.bot, "games": str(row.games), "wins": str(row.wins), "place": f"{row.mean_place:.2f}",
            "game score": f"{row.mean_score:.2f}",
            "incidents": ", ".join(f"{reason} x{count}" for reason, count in sorted(row.incidents.items())) or "-",
        }
        for row in standings(result)
    ]
    say("standings")
    columns = fitting(
        ["bot", "games", "wins", "place", "game score", "incidents"], rows, ("wins", "game score", "games")
    )
    console.print(compact_table(columns, rows, left=("bot", "incidents")))
    say(f"wins: {WINS_MEANS}; place: the mean place (1 = best); game score: the mean of the game's own score.")
    print_incidents(
        [(f"game {incident.game_number}, seat {incident.seat}", incident) for game_result in result.games
         for incident in game_result.incidents],
        result.sandbox,
    )
    if replay is not None:
        say(f"Results and replays written to {replay}")
    if pairs is not None:
        pairs.finish(result, as_json=False)


def play_command(
    game: Annotated[str, typer.Argument(help="Game name (see `arena games`).")],
    bot_dirs: Annotated[
        Optional[list[Path]], typer.Argument(help="Bot folders for the other seats, in seat order (default bots/random).")
    ] = None,
    seats: Annotated[int, typer.Option(help="Seats at the table, people and bots (2-6).")] = 2,
    seat: Annotated[int, typer.Option(help="Your seat, 0-based (a second person takes the next one).")] = 0,
    humans: Annotated[int, typer.Option(help="People at the table, each in a browser tab of their own.")] = 1,
    rule: Annotated[Optional[list[str]], typer.Option(help="Rule option as key=value; repeatable.")] = None,
    sandbox: Annotated[str, typer.Option(help="Where bots run: local (trusted code only) or docker.")] = "local",
    port: Annotated[int, typer.Option(help="TCP port on 127.0.0.1; 0 picks a free one.")] = 0,
    no_open: Annotated[bool, typer.Option("--no-open", help="Print the links; do not open a browser.")] = False,
    out: Annotated[Path, typer.Option("--out", "-o", help="Where every game is stored (a store the site shows).")] = Path(
        "arena-play"
    ),
    human_time_s: Annotated[
        Optional[float], typer.Option(help="Seconds a person has per move (default: no limit); over it, a forfeit.")
    ] = None,
    decision_s: DecisionFlag = None,
    time_bank_s: TimeBankFlag = None,
    startup_s: StartupFlag = None,
    memory_mb: MemoryFlag = None,
) -> None:
    """Play GAME against bots in your browser: a page on 127.0.0.1 (opened for you) shows
    exactly what your seat may see and offers your legal moves; each finished game is stored
    in --out (`arena report OUT` draws its replays); Ctrl-C stops.
    """
    from arena.human.table import TableConfig
    from arena.limits import limits_from_flags
    from arena.web.play_server import run_play

    try:
        rules = get_game(game).parse_options(rule or [])
        config = TableConfig(
            game=game, bots=list(bot_dirs or []), seats=seats, first_seat=seat, humans=humans, rules=rules,
            sandbox=sandbox, out=out, human_time_s=human_time_s,
            limits=limits_from_flags(
                decision_s=decision_s, time_bank_s=time_bank_s, startup_s=startup_s, memory_mb=memory_mb
            ),
        )
        # Unwrapped: its lines end in links (a seat's holds its token), each whole on its line.
        run_play(config, port=port, open_browser=not no_open, say=say_json)
    except KeyboardInterrupt:
        console.print("stopped; every finished game is stored", highlight=False)
