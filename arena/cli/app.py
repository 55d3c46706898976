"""The `arena` command. Thin: parse, call the layers, print. Errors a user can cause are
printed as one line (no traceback) and exit with code 2."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from arena.ratings.ledger import SCORE_MEANS, WINS_MEANS
from arena.ratings.sprt import (
    DEFAULT_GAMES as _SPRT_GAMES,  # shown in `arena match --help`
)
from arena.sandbox.base import Limits
from arena.terminal import wrapped
from engine import GameError, all_games, get_game

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
console = Console()
_LIMITS = Limits()  # the defaults shown in --help (one definition: arena.sandbox.Limits)
# The limit flags of a match (and of `arena submit`'s smoke match): None is the default.
DecisionFlag = Annotated[
    Optional[float], typer.Option(help=f"Seconds per decision before the time bank is used (default {_LIMITS.decision_s:g}).")
]
TimeBankFlag = Annotated[
    Optional[float],
    typer.Option(help=f"Extra seconds per bot for the whole match, spent on overruns (default {_LIMITS.time_bank_s:g})."),
]
StartupFlag = Annotated[
    Optional[float], typer.Option(help=f"Seconds from start to the bot's `ready` (default {_LIMITS.startup_s:g}).")
]
MemoryFlag = Annotated[Optional[int], typer.Option(help=f"Memory limit per bot, in MB (default {_LIMITS.memory_mb}).")]
errors = Console(stderr=True)


class UsageError(Exception):
    """A mistake on the command line that the user can fix; printed as one line."""


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


from arena.web.commands import authors_app  # noqa: E402  (light: Typer only)

app.add_typer(authors_app, name="authors")

from arena.langs.commands import images_app, new_command  # noqa: E402  (light: Typer only)

app.add_typer(images_app, name="images")


@app.command("new")
def new_bot_command(
    bot_dir: Annotated[str, typer.Argument(help="The new bot's folder (made; must not hold anything).")],
    language: Annotated[str, typer.Option(
        "--language", "-l", help="c, cpp, rust, go, java, node (or javascript) or python.")] = "python",
) -> None:
    """Start a bot from arena's starter kit for LANGUAGE: a complete bot for both games
    (the protocol, JSON, a legal random move, Three Thirteen's deadwood), one function
    for your strategy, a README; `bot.toml` named after BOT_DIR."""
    new_command(bot_dir, language)


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
            _say(f"      {option['help']}")
        console.print()
    console.print("Set an option with --rule NAME=VALUE (repeatable); `--json` for machines.")


@app.command("demo")
def demo_command(
    game: Annotated[str, typer.Option(help="Game name (see `arena games`).")] = "3up3down",
    cycles: Annotated[int, typer.Option(min=1, help="Complete round-robin cycles (each pair, both seat orders).")] = 8,
    seed: Annotated[int, typer.Option(help="Public tournament seed (schedule and deals): a demo replays exactly.")] = 2026,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Games played at once.")] = 2,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (store and site).")] = Path("arena-demo"),
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """A demo tournament of the example bots (local sandbox): standings, store and site in --out.

    Every example bot that plays the game takes part (the Node.js bot only when `node`
    is installed); two seats, round-robin with duplicate deals. Run it again to resume.
    """
    import shutil

    from arena.config.botfolder import load_bot
    from arena.resources import bots_dir

    get_game(game)
    players = []
    for folder in sorted(path for path in bots_dir().iterdir() if (path / "bot.toml").is_file()):
        manifest = load_bot(folder)
        if game in manifest.games and shutil.which(manifest.command[0]):
            players.append(str(folder))
    run_command(
        None,
        game=game,
        bots=players,
        seats=2,
        tournament_format="round-robin",
        cycles=cycles,
        duplicate=True,
        seed=seed,
        sandbox="local",
        jobs=jobs,
        out=str(out),
        name=f"arena demo: {game}",
        quiet=quiet,
        public_seed_ok=True,  # the example bots do not read arena's code; a demo replays exactly
    )
    _say(f"Open {(out / 'site' / 'index.html').absolute()} in a browser, or run: arena serve {out}")


@app.command("schema")
def schema_command(
    game: Annotated[
        Optional[str],
        typer.Option("--game", help="Print instead what this game's observations and actions look like (see `arena games`)."),
    ] = None,
) -> None:
    """Print the JSON Schema of the bot protocol (both directions), or with --game G, of G's observation and action."""
    from arena.game.protocol import game_json_schema, json_schema

    print(json.dumps(json_schema() if game is None else game_json_schema(get_game(game)), indent=2))


@app.command("match")
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
    from arena.config.tournament import limits_from_flags
    from arena.ratings.sprt import SprtError, SprtSettings
    from arena.run.match import run_match, standings

    settings = None
    if sprt is None:
        given = [flag for flag, value in (("--alpha", alpha), ("--beta", beta), ("--json", as_json or None)) if value is not None]
        if given:
            settings_are = "is an SPRT setting: use it" if len(given) == 1 else "are SPRT settings: use them"
            raise UsageError(f"{', '.join(given)} {settings_are} with --sprt ELO0 ELO1")
        games = 1 if games is None else games
    else:
        try:
            settings = SprtSettings(sprt[0], sprt[1], 0.05 if alpha is None else alpha, 0.05 if beta is None else beta)
        except SprtError as mistake:
            raise UsageError(str(mistake)) from None
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
        _warn_public_seed(seed)
    shown_events = [0]

    def show_step(state, seat, action, chooser) -> None:
        # Called once the action is applied: the action first, then the events it caused.
        public = state.events(None)
        if len(state.history) == 1:  # the game's first action: the deal's events come before it
            shown_events[0] = len(chosen.new_game(state.players, state.options, state.seed).events(None))
            for event in public[: shown_events[0]]:
                _say_json(f"    {json.dumps(event)}")
        marker = " (fallback)" if chooser == "fallback" else ""
        _say_json(f"  seat {seat}{marker}: {json.dumps(action)}")
        for event in public[shown_events[0]:]:
            _say_json(f"    {json.dumps(event)}")
        shown_events[0] = len(public)

    def show_game(result) -> None:
        shown_events[0] = 0
        if verbose:
            _say(f"game {result.game_number} (seed {result.seed}) over: places {result.places}, scores {result.scores}")

    pairs = _SprtProgress(settings, quiet=as_json) if settings is not None else None

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
        names = [bot.name for bot in result.bots]
        rows = []
        for game_result in result.games:
            cells = {"game": str(game_result.game_number), "seed": str(game_result.seed)}
            for seat, name in enumerate(game_result.seats):
                cells[name] = f"{game_result.places[seat]} ({game_result.scores[seat]:g}) s{seat}"
            cells["incidents"] = ", ".join(f"{i.bot}: {i.reason.value}" for i in game_result.incidents) or "-"
            rows.append(cells)
        # The seed is the column to leave out when the table is wider than the terminal
        # (--verbose and --replay give every game's seed); then long names become numbers.
        columns = _fitting(["game", "seed", *names, "incidents"], rows, ("seed",))
        legend = []
        if not _fits(columns, rows):
            for number, name in enumerate(names, start=1):
                for row in rows:
                    row[f"bot {number}"] = row.pop(name)
                legend.append(f"bot {number}: {name}")
            columns = [f"bot {names.index(c) + 1}" if c in names else c for c in columns]
        _say(f"{chosen.title}: {games} games, sandbox {result.sandbox}")
        console.print(_compact_table(columns, rows, left=("incidents",)))
        for line in legend:
            _say(line)
        _say("each cell: place (game score) and seat; 1 = best; forfeits share the last place.")
    if verbose and result.secret is not None:
        _say(f"deals' secret: {result.secret}")

    rows = [
        {
            "bot": row.bot, "games": str(row.games), "wins": str(row.wins), "place": f"{row.mean_place:.2f}",
            "game score": f"{row.mean_score:.2f}",
            "incidents": ", ".join(f"{reason} x{count}" for reason, count in sorted(row.incidents.items())) or "-",
        }
        for row in standings(result)
    ]
    _say("standings")
    columns = _fitting(
        ["bot", "games", "wins", "place", "game score", "incidents"], rows, ("wins", "game score", "games")
    )
    console.print(_compact_table(columns, rows, left=("bot", "incidents")))
    _say(f"wins: {WINS_MEANS}; place: the mean place (1 = best); game score: the mean of the game's own score.")
    _print_incidents(
        [(f"game {incident.game_number}, seat {incident.seat}", incident) for game_result in result.games
         for incident in game_result.incidents],
        result.sandbox,
    )
    if replay is not None:
        _say(f"Results and replays written to {replay}")
    if pairs is not None:
        pairs.finish(result, as_json=False)


def _fits(columns: list[str], rows: list[dict[str, str]]) -> bool:
    """True if a compact table of these columns fits in the terminal."""
    widths = [max([len(column)] + [len(row[column]) for row in rows]) for column in columns]
    return sum(widths) + len(columns) - 1 <= console.width


def _fitting(columns: list[str], rows: list[dict[str, str]], spare: tuple[str, ...]) -> list[str]:
    """`columns` without the `spare` ones (in order) while a compact table of them would be
    wider than the terminal."""
    columns = list(columns)
    for column in spare:
        if _fits(columns, rows):
            break
        columns.remove(column)
    return columns


def _compact_table(columns: list[str], rows: list[dict[str, str]], left: tuple[str, ...] = ()) -> Table:
    """A table with one space between columns, a rule under the header and no frame: the
    most that fits in a terminal; names are never cut."""
    from rich import box

    table = Table(box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False, collapse_padding=True)
    for column in columns:
        table.add_column(column, justify="left" if column in left else "right", no_wrap=True)
    for row in rows:
        table.add_row(*(row[column] for column in columns))
    return table


# Incidents listed one by one under a match's or a run's standings; the rest are counted.
_INCIDENTS_SHOWN = 20


def _print_incidents(incidents, sandbox: str | None) -> None:
    """Each incident on a line (`where`: game and seat), and under the first of each bot and
    reason the end of the bot's stderr and a hint (arena.faults.explain_fault)."""
    explained: set[tuple[str, str]] = set()
    for where, incident in incidents[:_INCIDENTS_SHOWN]:
        _say(f"{where}, {incident.headline()}")
        if (incident.bot, incident.reason.value) not in explained:
            explained.add((incident.bot, incident.reason.value))
            for line in incident.explained(sandbox):
                _say(f"  {line}")
    if len(incidents) > _INCIDENTS_SHOWN:
        _say(f"... and {len(incidents) - _INCIDENTS_SHOWN} more incidents")


def _say_json(line: str) -> None:
    """Print a line that ends in a JSON value (`match --verbose`'s actions and events) or a
    link (`arena play`'s) on one line, unwrapped: a wrapped one could not be read back."""
    console.print(line, highlight=False, markup=False, soft_wrap=True)


def _say(line: str, to=None) -> None:
    """Print a line as it is (no markup, no highlighting), wrapped at the terminal's width."""
    where = to or console
    where.print(wrapped(line, where.width), highlight=False, markup=False, soft_wrap=True)


class _SprtProgress:
    """`arena match --sprt`: the first bot's pairs as pentanomial counts, the test after each pair."""

    def __init__(self, settings, quiet: bool):
        from arena.ratings.sprt import sprt_status

        self.settings = settings
        self.quiet = quiet
        self.counts = [0, 0, 0, 0, 0]
        self.first: str | None = None  # the first bot's name in results: game 1 seats it at seat 0
        self.pending: float | None = None  # its points in the first game of a pair not yet complete
        # Its games placed ahead of the other bot, first together, last together, behind.
        self.outcomes = {"ahead": 0, "shared first": 0, "shared last": 0, "behind": 0}
        self.status = sprt_status(self.counts, settings)

    def add(self, result) -> None:
        """Score a finished game; after the second game of a pair, update the test and maybe print it."""
        from arena.ratings.sprt import game_points, pair_bucket, sprt_status

        if self.first is None:
            self.first = result.seats[0]
            settings, status = self.settings, self.status
            if not self.quiet:
                _say(f"SPRT [{settings.elo0:.2f}, {settings.elo1:.2f}], alpha {settings.alpha:g}, beta "
                     f"{settings.beta:g}: H0 accepted at LLR {status.lower:.2f}, H1 at {status.upper:.2f}")
        seat = result.seats.index(self.first)
        points = game_points(result.places, seat)
        mine, theirs = result.places[seat], result.places[1 - seat]
        shared = "shared first" if mine == 1 else "shared last"
        self.outcomes["ahead" if mine < theirs else "behind" if mine > theirs else shared] += 1
        if self.pending is None:
            self.pending = points
            return
        self.counts[pair_bucket(self.pending + points)] += 1
        self.pending = None
        self.status = sprt_status(self.counts, self.settings)
        pairs = self.status.pairs
        every = 1 if pairs <= 10 else 10 if pairs <= 100 else 100
        if not self.quiet and (pairs % every == 0 or self.status.decision is not None):
            _say(f"pair {pairs}: LLR {self.status.llr:.2f} ({self.status.fraction:.1%}), Ptnml(0-2): {self.counts}")

    def decided(self, _games) -> bool:
        """True once a complete pair has taken the LLR to a bound (the match stops there)."""
        return self.status.decision is not None and self.pending is None

    def _llr_text(self) -> str:
        status, settings = self.status, self.settings
        return (f"LLR {status.llr:.2f} ({status.fraction:.1%}) ({status.lower:.2f}, {status.upper:.2f}) "
                f"[{settings.elo0:.2f}, {settings.elo1:.2f}]")

    def finish(self, result, as_json: bool) -> None:
        """The decision, the Elo difference with its 95% interval and the LOS: as lines, or one JSON object."""
        from arena.ratings.sprt import elo_estimate
        from arena.run.match import standings

        first, second = result.bots[0].name, result.bots[1].name
        status, settings, estimate = self.status, self.settings, elo_estimate(self.counts)
        games = len(result.games)
        outcomes = self.outcomes
        wins = outcomes["ahead"] + outcomes["shared first"]  # WINS_MEANS: shared firsts counted
        points = outcomes["ahead"] + (outcomes["shared first"] + outcomes["shared last"]) / 2
        if as_json:
            print(json.dumps({
                "game": result.game, "first": first, "second": second, "seed": result.seed,
                "elo0": settings.elo0, "elo1": settings.elo1, "alpha": settings.alpha, "beta": settings.beta,
                "decision": status.decision, "games": games, "pairs": status.pairs, "pentanomial": self.counts,
                "llr": status.llr, "lower_bound": status.lower, "upper_bound": status.upper,
                "wins": wins, "shared_wins": outcomes["shared first"], "losses": outcomes["behind"],
                "shared_last": outcomes["shared last"], "points": points, "points_share": estimate.score,
                "elo": estimate.elo, "elo_lower": estimate.lower,
                "elo_upper": estimate.upper, "elo_error": estimate.error, "los": estimate.los, "note": estimate.note,
                "incidents": {row.bot: row.incidents for row in standings(result)},
            }, indent=2))
            return
        tested = f"SPRT [{settings.elo0:.2f}, {settings.elo1:.2f}]"
        played = f"{games} games ({status.pairs} pairs)"
        if status.decision == "H1":
            _say(f"{tested}: H1 accepted after {played}: {first} is more than {settings.elo0:g} Elo stronger "
                      f"than {second} (alpha {settings.alpha:g})")
        elif status.decision == "H0":
            _say(f"{tested}: H0 accepted after {played}: {first} is less than {settings.elo1:g} Elo stronger "
                      f"than {second} (beta {settings.beta:g})")
        else:
            _say(f"{tested}: no decision at {played}")
        if estimate.elo is None:
            elo_text = f"Elo: not estimated ({estimate.note})"
        else:
            low = "unbounded" if estimate.lower is None else f"{estimate.lower:.2f}"
            high = "unbounded" if estimate.upper is None else f"{estimate.upper:.2f}"
            error = "" if estimate.error is None else f" +/- {estimate.error:.2f}"
            elo_text = f"Elo: {estimate.elo:.2f}{error} (95% interval {low} to {high})"
            if estimate.los is not None:
                elo_text += f", LOS: {estimate.los:.2%}"
            if estimate.note is not None:
                elo_text += f" ({estimate.note})"
        _say(f"Results of {first} vs {second}: {elo_text}")
        _say(f"{self._llr_text()}, Ptnml(0-2): {self.counts}")
        share = f" ({points / games:.2%})" if games else ""
        last = f", Shared last: {outcomes['shared last']}" if outcomes["shared last"] else ""
        _say(f"Games: {games}, Wins: {wins} ({outcomes['shared first']} shared), Losses: {outcomes['behind']}{last}, "
             f"Points: {points:g}{share}")
        _say(f"Wins: {WINS_MEANS}. Points: 1 a game placed ahead, 1/2 a shared place.")


# ------------------------------------------------------------------ tournaments



# Standings columns left out, in this order, while the table is wider than the terminal
# (names are never cut); `arena standings --json` has every figure.
# The column the standings are ranked by (score for a Swiss, mu-3σ otherwise), the rank and
# the name always stay.
_SPARE_COLUMNS = ("wins", "sigma", "games", "mu", "place", "score", "bhz", "mu-3σ", "band")


def _standings_table(standings, confidence, title: str, swiss: bool, width: int = 80, marks=None) -> Table:
    """The standings as a rich table, in their order (a Swiss's by score and tie-break), each
    bot's 90% rank interval as its band, and a blank line between groups of bots that are
    separated (arena.ratings.confidence); at most `width` columns wide while spare columns remain."""
    from rich import box

    columns = ["#", "band", "bot"] + (["score", "bhz"] if swiss else [])
    columns += ["mu", "sigma", "mu-3σ", "games", "wins", "place", "forf"] + ([] if swiss else ["score"])
    groups = confidence.groups([line.bot for line in standings])
    rows = []
    for rank, line in enumerate(standings, start=1):
        rows.append({
            "#": str(rank),
            "band": str(confidence.intervals[line.bot]),
            "bot": line.bot + (marks or {}).get(line.bot, ""),
            "score": f"{line.score:.2f}" if swiss else f"{line.score:.1f}",  # a Swiss's ties must show
            "bhz": f"{line.buchholz:.2f}" if line.buchholz is not None else "-",
            "mu": f"{line.mu:.2f}",
            "sigma": f"{line.sigma:.2f}",
            "mu-3σ": f"{line.conservative:.2f}",
            "games": str(line.games),
            "wins": str(line.wins),
            "place": f"{line.average_place:.2f}" if line.games else "-",
            "forf": str(line.forfeits),
        })
    widths = {column: max([len(column)] + [len(row[column]) for row in rows]) for column in columns}
    ranked_by = "score" if swiss else "mu-3σ"
    for spare in _SPARE_COLUMNS:
        if sum(widths[column] for column in columns) + len(columns) - 1 <= width:
            break
        if spare in columns and spare != ranked_by:
            columns.remove(spare)
    # One space between columns and none at the edges.
    shown = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False, collapse_padding=True
    )
    for column in columns:
        shown.add_column(column, justify="left" if column == "bot" else "right", no_wrap=True, min_width=widths[column])
    for at, row in enumerate(rows):
        if at and groups[at] != groups[at - 1]:
            shown.add_section()
        shown.add_row(*(row[column] for column in columns))
    return shown


def _standings_notes(swiss: bool) -> list[str]:
    """What the standings table's columns and blank lines mean."""
    ranked = (
        "Ranked by score, then bhz (Buchholz: over the bot's games, the sum of its table-mates' average final "
        "score), then mu-3σ."
        if swiss
        else "Ranked by mu-3σ (the conservative rating)."
    )
    return [
        f"{ranked} wins: {WINS_MEANS}; score: {SCORE_MEANS}.",
        "band: the places the bot could hold given the games played (90%); a blank line separates groups: "
        "bots whose bands overlap a neighbour's are not separated, and their order may be luck. "
        "place: average place (1 = best); forf: games forfeited.",
    ]


def _stored_standings(out_dir: Path) -> tuple:
    """A tournament's standings (`RatingTable`), how sure they are (`Confidence`), its settings,
    and how many games are stored of how many scheduled."""
    from arena.ratings.ledger import stored_confidence
    from arena.store.db import Store

    with Store.open(out_dir) as store:
        table, confidence = stored_confidence(store)
        return table, confidence, store.settings() or {}, len(store.done_keys()), len(store.games())


def _print_standings(table, confidence, settings: dict, title: str) -> None:
    """The standings table and what its columns and blank lines mean."""
    from arena.ratings.ledger import is_swiss

    swiss = is_swiss(settings)
    console.print(_standings_table(table.standings, confidence, title, swiss, console.width))
    for note in _standings_notes(swiss):
        _say(note)


def _stored_gauntlet(out_dir: Path, settings: dict) -> list:
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


def _print_gauntlet(lines) -> None:
    """The gauntlet's result: each challenger against each field bot, hardest first."""
    from rich import box

    if not lines:
        return
    shown = Table(
        title="gauntlet: each challenger against each field bot it met", title_justify="left",
        box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False, collapse_padding=True,
    )
    for column in ("challenger", "opponent", "games", "ahead", "tied", "behind", "score", "place", "theirs"):
        shown.add_column(column, justify="left" if column in ("challenger", "opponent") else "right", no_wrap=True)
    for line in lines:
        shown.add_row(
            line.challenger, line.opponent, str(line.games), str(line.ahead), str(line.tied), str(line.behind),
            f"{line.score:.2f}", f"{line.place:.2f}", f"{line.opponent_place:.2f}",
        )
    console.print(shown)
    _say("ahead/tied/behind: games the challenger placed better than, as well as, worse than that opponent at "
         "one table; score: its share (1 ahead, 0.5 tied); place, theirs: the mean places (1 = best) in those games.")


def _print_stored_incidents(out_dir: Path, sandbox: str | None) -> None:
    """A run's incidents, under its standings: per bot and reason how many, and the first of
    each with the end of the bot's stderr and a hint (the site's bot pages list them all)."""
    from arena.store.db import Store

    with Store.open(out_dir) as store:
        incidents = store.incidents()
    if not incidents:
        return
    groups: dict[tuple[str, str], list] = {}
    for key, incident in incidents:
        groups.setdefault((incident.bot, incident.reason.value), []).append((key, incident))
    forfeits = sum(1 for _, incident in incidents if incident.forfeit)
    _say(f"incidents: {len(incidents)} ({forfeits} forfeits); the first of each bot and reason:")
    for (bot, reason), listed in groups.items():
        key, incident = listed[0]
        more = f" ({len(listed)} {reason} in all)" if len(listed) > 1 else ""
        _say(f"game {key}, seat {incident.seat}, {incident.headline()}{more}")
        for line in incident.explained(sandbox):
            _say(f"  {line}")


@app.command("run")
def run_command(
    tournament_file: Annotated[
        Optional[Path], typer.Argument(help="Tournament file (TOML); without it, the flags describe the tournament.")
    ] = None,
    game: Annotated[Optional[str], typer.Option(help="Game name (see `arena games`).")] = None,
    bots: Annotated[
        Optional[list[str]], typer.Option("--bots", "--bot", help="Bot folder or glob; repeatable.")
    ] = None,
    seats: Annotated[Optional[int], typer.Option(help="Seats per table (2-6).")] = None,
    tournament_format: Annotated[
        Optional[str], typer.Option("--format", help="round-robin, swiss or gauntlet.")
    ] = None,
    rounds: Annotated[Optional[int], typer.Option(help="Rounds (Swiss: required; round-robin: design rounds).")] = None,
    cycles: Annotated[Optional[int], typer.Option(help="Round-robin: how many complete cycles.")] = None,
    challengers: Annotated[
        Optional[list[str]], typer.Option("--challenger", help="Gauntlet challenger folder or glob; repeatable.")
    ] = None,
    duplicate: Annotated[
        Optional[bool], typer.Option("--duplicate/--no-duplicate", help="Play each deal in every seat rotation.")
    ] = None,
    seed: Annotated[
        Optional[int],
        typer.Option(
            help="Public seed (schedule and deals): reproducible, and predictable by any bot that guesses it. "
            "Default: a secret key is drawn and stored with the results (`arena secret DIR`)."
        ),
    ] = None,
    rule: Annotated[Optional[list[str]], typer.Option(help="Rule option as key=value; repeatable.")] = None,
    sandbox: Annotated[Optional[str], typer.Option(help="local (trusted code only) or docker.")] = None,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Games played at once (above 1: each in its own worker process, so the referee uses every core).")] = None,
    cluster: Annotated[
        Optional[str],
        typer.Option(help="Dask scheduler tcp://HOST:PORT: play the games on its workers (docs/cluster.md)."),
    ] = None,
    bot_process: Annotated[
        Optional[str],
        typer.Option(
            "--bot-process",
            help="per-game: a fresh process per bot per game; per-slot: one process per bot slot for the whole "
            "run, so a bot may carry memory between games (default: per-slot for local, per-game for docker).",
        ),
    ] = None,
    warm_start: Annotated[
        Optional[bool],
        typer.Option(
            "--warm-start/--no-warm-start",
            help="Start bot processes (docker: containers) ahead of need (the default); --no-warm-start starts "
            "each one when its game needs it.",
        ),
    ] = None,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="Output folder (store, site).")] = None,
    name: Annotated[Optional[str], typer.Option(help="Tournament name.")] = None,
    decision_s: Annotated[Optional[float], typer.Option(help="Seconds per decision.")] = None,
    time_bank_s: Annotated[Optional[float], typer.Option(help="Time bank per bot per game, seconds.")] = None,
    startup_s: Annotated[Optional[float], typer.Option(help="Seconds from start to `ready`.")] = None,
    memory_mb: Annotated[Optional[int], typer.Option(help="Memory per bot, MB.")] = None,
    cpu_s: Annotated[Optional[int], typer.Option(help="CPU seconds per bot per game.")] = None,
    allow_changes: Annotated[
        bool, typer.Option("--allow-changes", help="Resume even though the settings changed (finished games are kept).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    public_seed_ok: Annotated[bool, typer.Option(hidden=True)] = False,
) -> None:
    """Run (or resume) a tournament: schedule, play, store each game, print the standings."""
    from arena.run.tournament import (
        SiteInterrupted,
        TournamentInterrupted,
        load_tournament,
        run_tournament,
    )

    overrides = {
        key: value
        for key, value in {
            "game": game, "bots": bots, "seats": seats, "format": tournament_format, "rounds": rounds,
            "cycles": cycles, "challengers": challengers, "duplicate": duplicate, "seed": seed,
            "sandbox": sandbox, "jobs": jobs, "cluster": cluster, "output": out, "name": name,
            "bot_process": bot_process, "warm_start": warm_start,
        }.items()
        if value is not None
    }
    if out is not None:
        overrides["output"] = str(Path(out).absolute())
    limits = {
        key: value
        for key, value in {
            "decision_s": decision_s, "time_bank_s": time_bank_s, "startup_s": startup_s,
            "memory_mb": memory_mb, "cpu_s": cpu_s,
        }.items()
        if value is not None
    }
    if limits:
        overrides["limits"] = limits
    for key in ("bots", "challengers"):  # a flag's path is relative to where it is typed
        if key in overrides:
            overrides[key] = [str(Path(bot).expanduser().absolute()) for bot in overrides[key]]
    config = load_tournament(tournament_file, overrides, rule or [])
    if config.seed is not None and not public_seed_ok:
        _warn_public_seed(config.seed)
    again = "arena " + shlex.join(sys.argv[1:])
    bar = _progress_bar(quiet)
    task = bar.add_task(config.name, total=None, rate="", leader="-")

    def show(update) -> None:
        if not bar.live.is_started:
            bar.start()  # only once games run: a mistake found before is printed alone
        rate = update.played / update.elapsed_s if update.elapsed_s > 0 else 0.0
        bar.update(
            task, completed=update.done, total=update.total, rate=f"{rate:.1f} games/s", leader=update.leader or "-"
        )

    try:
        outcome = run_tournament(config, progress=show, allow_changes=allow_changes)
    except TournamentInterrupted as stopped:
        _stop(bar)
        _say(
            f"arena: stopped: {stopped.done} of {stopped.total} games are stored in {stopped.output}; "
            f"run the same command to resume: {again}", errors)
        raise typer.Exit(130) from None
    except SiteInterrupted as stopped:
        _stop(bar)
        _say(
            f"arena: stopped while writing the site. The games are safe: {stopped.done} of {stopped.total} are stored "
            f"in {stopped.output}. The site in {stopped.output / 'site'} is incomplete: finish it with "
            f"arena report {shlex.quote(str(stopped.output))}",
            errors,
        )
        raise typer.Exit(130) from None
    finally:
        _stop(bar)
    # outcome.standings again, with how sure they are: a pass over the store that keeps every update.
    table, confidence, settings, _, _ = _stored_standings(outcome.output)
    _print_standings(table, confidence, settings, f"{config.name}: {outcome.done} of {outcome.total} games")
    _print_gauntlet(_stored_gauntlet(outcome.output, settings))
    _print_stored_incidents(outcome.output, config.sandbox)
    share = outcome.startup_s / outcome.game_s if outcome.game_s else 0.0
    _say(
        f"{outcome.played} games played now, {outcome.resumed} were stored before; {outcome.wall_s:.1f} s; "
        f"waiting for bot processes to start took {share:.0%} of game time. Store: {outcome.output / 'arena.sqlite'}")
    for note in outcome.notes:
        _say(note)


def _progress_bar(quiet: bool):
    """The run's progress display: name, bar, games done, games/s, elapsed, eta, and (in a
    terminal of 110 columns or more) the leader. Every figure is whole at 80 columns: the
    bar takes what is left, the name is cut first."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Column

    def whole() -> Column:
        return Column(no_wrap=True)

    columns = [
        TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis", max_width=24)),
        BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=10)),
        MofNCompleteColumn(table_column=whole()),
        TextColumn("{task.fields[rate]}", table_column=whole()),
        TimeElapsedColumn(table_column=whole()),
        TextColumn("eta", table_column=whole()),
        TimeRemainingColumn(table_column=whole()),
    ]
    if console.width >= 110:
        columns.append(TextColumn("leader: {task.fields[leader]}", table_column=Column(no_wrap=True, overflow="ellipsis")))
    return Progress(*columns, console=console, disable=quiet)


def _stop(bar) -> None:
    """Stop a progress display that was started (stopping one that never was prints a blank line)."""
    if bar.live.is_started:
        bar.stop()


def _warn_public_seed(seed: int) -> None:
    from arena.store.seeds import PUBLIC_SEED_WARNING

    _say("arena: " + PUBLIC_SEED_WARNING.format(seed=seed), errors)


@app.command("secret")
def secret_command(
    out_dir: Annotated[Path, typer.Argument(help="A tournament's output folder.")],
    check: Annotated[
        Optional[str],
        typer.Option(help="A published secret (hex): recompute every stored game's deal seed from it and compare."),
    ] = None,
) -> None:
    """Print a tournament's secret key, or check the stored deals against a published one.

    Every deal seed is HMAC-SHA256(secret, "deal/" + deal key) (arena/store/seeds.py). Publish
    the secret only once the tournament is over: with it, anyone can compute every deal.
    The secret is kept in DIR/secret.key (mode 0600), or in $ARENA_SECRET_DIR when the
    tournament ran with it set; never in DIR/arena.sqlite.
    """
    from arena.store.db import Store
    from arena.store.seeds import RunKey, SeedError

    with Store.open(out_dir) as store:
        settings = store.settings() or {}
        stored = store.secret()
        games = store.games()
    if check is None:
        if stored is None:
            seed = settings.get("seed")
            raise UsageError(
                f"{out_dir} has no secret: its deals come from the public seed {seed}"
                if seed is not None
                else f"{out_dir} has no secret yet (no game was scheduled)"
            )
        print(stored)
        return
    try:
        key = RunKey.from_secret(check)
    except SeedError as error:
        raise UsageError(str(error)) from None
    wrong = [game.key for game in games if key.deal_seed(game.deal) != game.seed]
    if wrong:
        _say(f"arena: {len(wrong)} of {len(games)} games do not have the deal seed this secret gives: "
            + ", ".join(wrong[:10]) + (" ..." if len(wrong) > 10 else ""), errors)
        raise typer.Exit(1)
    _say(
        f"{'the one game was' if len(games) == 1 else f'all {len(games)} games were'} dealt from this secret (deal seed = HMAC-SHA256(secret, 'deal/' + deal key)); "
        "`arena report` replays each stored game from its seed and checks its actions")


@app.command("standings")
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

    table, confidence, settings, done, total = _stored_standings(out_dir)
    if settings.get("format") == "league" and not as_json:
        _print_league(out_dir, hide_retired)
        return
    gauntlet = _stored_gauntlet(out_dir, settings)
    if as_json:
        groups = confidence.groups([line.bot for line in table.standings])
        lines = []
        league = _league_states(out_dir, table, confidence) if settings.get("format") == "league" else {}
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
    _print_standings(table, confidence, settings, f"{settings.get('name', 'tournament')}: {done} of {total} scheduled games stored")
    _print_gauntlet(gauntlet)


@app.command("submit")
def submit_command(
    bot_dir: Annotated[Path, typer.Argument(help="The bot's folder (with its bot.toml).")],
    registry: Annotated[
        Optional[Path],
        typer.Option(help="Registry folder (default: $ARENA_REGISTRY, else ./bots in the current folder, made if missing)."),
    ] = None,
    sandbox: Annotated[str, typer.Option(help="local or docker (builds the bot's image if it has a Dockerfile).")] = "local",
    decision_s: DecisionFlag = None,
    time_bank_s: TimeBankFlag = None,
    startup_s: StartupFlag = None,
    memory_mb: MemoryFlag = None,
    tournament: Annotated[
        Optional[Path], typer.Option(help="Take the limits and sandbox from this tournament file instead.")
    ] = None,
    league: Annotated[
        Optional[Path],
        typer.Option(
            help="A league's folder: submit to its registry with its limits and sandbox, then say where the bot "
            "stands there (games, provisional rank and interval, settled or not)."
        ),
    ] = None,
    wait_s: Annotated[
        float, typer.Option(help="With --league: seconds to wait for the bot's first games before saying where it stands.")
    ] = 30.0,
    max_bot_mb: Annotated[
        Optional[int], typer.Option(help="Most MB a bot folder may hold in all (default: $ARENA_BOT_MAX_MB, else 200).")
    ] = None,
    max_bot_files: Annotated[
        Optional[int],
        typer.Option(help="Most files and folders in a bot folder (default: $ARENA_BOT_MAX_FILES, else 10000)."),
    ] = None,
    max_file_mb: Annotated[
        Optional[int], typer.Option(help="Most MB of one file of a bot (default: $ARENA_BOT_MAX_FILE_MB, else 50).")
    ] = None,
    to: Annotated[
        Optional[str],
        typer.Option(
            help="A served arena's address (https://...): upload the bot there instead, follow its checks and "
            "print each stage; exit 0 accepted, 1 refused, 2 usage or connection error. The token comes from "
            "$ARENA_TOKEN or --token-file; with --to, --league (any value) says where it stands there."
        ),
    ] = None,
    token_file: Annotated[Optional[Path], typer.Option(help="With --to: a file holding your token.")] = None,
) -> None:
    """Check a bot (its folder, bot.toml, sandbox, a smoke match against random) and copy it
    into the registry. The folder may hold only files and folders (no link of any kind, no
    device, fifo or socket), within the size limits; as root, it is read with its owner's
    rights. With --to URL the same checks run on a served arena instead (`arena serve
    --submissions`): ARENA_TOKEN=... arena submit my-bot --to https://arena.example.org"""
    if to is not None:
        from arena.web.client import read_token, submit_remote

        raise typer.Exit(
            submit_remote(bot_dir, to, read_token(token_file), say=_say, league=league is not None, wait_s=wait_s)
        )
    from arena.config.botcopy import FolderLimits, FolderLimitsError
    from arena.config.tournament import limits_from_flags
    from arena.run.tournament import load_tournament
    from arena.store.registry import submit_bot

    try:
        folder_limits = FolderLimits.from_env(total_mb=max_bot_mb, files=max_bot_files, file_mb=max_file_mb)
    except FolderLimitsError as error:
        raise UsageError(str(error)) from None
    limits = limits_from_flags(decision_s=decision_s, time_bank_s=time_bank_s, startup_s=startup_s, memory_mb=memory_mb)
    if tournament is not None:
        config = load_tournament(tournament)
        limits, sandbox = config.limits.limits(), config.sandbox
    if league is not None:
        from arena.run.league import load_league

        joined = load_league(league)
        limits, sandbox, registry = joined.limits.limits(), joined.sandbox, registry or joined.registry_dir()
    done = submit_bot(bot_dir, registry, sandbox=sandbox, limits=limits, folder_limits=folder_limits)
    smoke = ", ".join(f"{game}: {count} games" for game, count in done.smoke_games.items())
    verb = "already in the registry" if done.already_there else "accepted"
    _say(f"{done.name} {done.version} {verb}: {done.folder} (sha256 {done.content_hash[:16]}; smoke match {smoke})")
    if league is not None:
        from arena.run.league import where_it_stands

        _say(where_it_stands(league, done.name, done.version, wait_s))


@app.command("bots")
def bots_command(
    registry: Annotated[
        Optional[Path], typer.Option(help="Registry folder (default: $ARENA_REGISTRY, else ./bots in the current folder).")
    ] = None,
) -> None:
    """List the bots of a registry: name, version, games, content hash, date."""
    from arena.resources import bots_dir
    from arena.store.registry import REGISTRY_ENV, default_registry, list_registry

    where = registry or default_registry()
    if not where.is_dir():
        raise UsageError(
            f"registry {where} is not a folder"
            + ("" if registry else f" (`arena submit BOT_DIR` makes it; or give --registry DIR, or set {REGISTRY_ENV}); "
               f"arena's example bots are in {bots_dir()}")
        )
    broken: list = []
    rows = [
        {"name": entry.name, "version": entry.version, "games": ",".join(entry.games), "hash": entry.content_hash[:12],
         "date": entry.date[:16].replace("T", " ")}
        for entry in list_registry(where, broken)
    ]
    _say(f"bots in {where}")
    columns = ["name", "version", "games", "hash", "date"]
    console.print(_compact_table(_fitting(columns, rows, ("date", "hash")), rows, left=tuple(columns)))
    for error in broken:
        _say(f"not listed: {error.folder}: its bot.toml is wrong: {'; '.join(error.mistakes)}")


@app.command("report")
def report_command(
    out_dir: Annotated[Path, typer.Argument(help="A tournament's output folder (with arena.sqlite).")],
    replays: Annotated[
        str, typer.Option(help="all: re-simulate every game not yet rendered into its replay; none: skip replays.")
    ] = "all",
    jobs: Annotated[Optional[int], typer.Option(min=1, help="Processes that render replays (default: up to 4).")] = None,
) -> None:
    """Render the tournament's HTML site into OUT_DIR/site/ (standings, bots, games, replays)."""
    from arena.site.writer import SITE_DIR, load_site_data, write_site

    try:
        data = load_site_data(out_dir, background=True)
        counts = write_site(data, out_dir / SITE_DIR, replays=replays, jobs=jobs)
    except KeyboardInterrupt:
        _say(
            f"arena: stopped: the site in {out_dir / SITE_DIR} is incomplete (the games stored in {out_dir} are "
            f"untouched); run arena report {shlex.quote(str(out_dir))} again to finish it",
            errors,
        )
        raise typer.Exit(130) from None
    failed = f", {counts['replays_failed']} could not be replayed" if counts["replays_failed"] else ""
    _say(
        f"site written to {out_dir / SITE_DIR / 'index.html'}: {counts['pages']} pages, "
        f"{counts['replays_written']} new replays{failed}")


@app.command("serve")
def serve_command(
    out_dir: Annotated[Path, typer.Argument(help="A tournament's or league's folder (its site/ is served).")],
    port: Annotated[int, typer.Option(help="TCP port; 0 picks a free one.")] = 8000,
    host: Annotated[
        str,
        typer.Option(
            help="Address to listen on. 127.0.0.1 (the default): this machine only, e.g. behind a TLS reverse "
            "proxy (docs/server.md); any other needs --certfile/--keyfile or --insecure-http."
        ),
    ] = "127.0.0.1",
    certfile: Annotated[Optional[Path], typer.Option(help="TLS certificate (PEM): serve HTTPS itself.")] = None,
    keyfile: Annotated[Optional[Path], typer.Option(help="TLS private key (PEM) of --certfile.")] = None,
    insecure_http: Annotated[
        bool,
        typer.Option(
            "--insecure-http", help="Allow a public --host without TLS (tokens and uploads cross the network in clear)."
        ),
    ] = False,
    submissions: Annotated[
        bool,
        typer.Option(
            "--submissions",
            help="Also take bots over HTTP: the API (/api/docs) and the authors' page (/door/); accounts with "
            "`arena authors add`.",
        ),
    ] = False,
    registry: Annotated[
        Optional[Path], typer.Option(help="With --submissions: where accepted bots land (default as `arena submit`).")
    ] = None,
    validate_jobs: Annotated[int, typer.Option(min=1, help="Submissions checked at once.")] = 1,
    validate_sandbox: Annotated[
        str,
        typer.Option(
            help="Where uploads' smoke matches run: docker (the default), or local, which runs the uploaded "
            "code as you: only for authors you trust."
        ),
    ] = "docker",
    max_upload_mb: Annotated[int, typer.Option(min=1, help="Packed upload limit, MB.")] = 50,
    max_unpacked_mb: Annotated[int, typer.Option(min=1, help="Unpacked bot limit, MB.")] = 200,
    max_files: Annotated[int, typer.Option(min=1, help="Files and folders a bot may hold.")] = 10_000,
    uploads_per_hour: Annotated[int, typer.Option(min=1, help="Submissions per author per hour.")] = 10,
    upload_s: Annotated[float, typer.Option(min=1, help="Seconds an upload may take to arrive.")] = 120.0,
    requests_per_minute: Annotated[int, typer.Option(min=1, help="Requests per client address per minute.")] = 600,
    show_stderr: Annotated[
        bool, typer.Option("--show-stderr", help="Show bots' stderr lines in replays to everyone (default: hidden).")
    ] = False,
) -> None:
    """Serve OUT_DIR/site/ over HTTP (renders it first if it is missing); Ctrl-C stops.
    Pages showing standings reload themselves when a running league re-renders the site.
    With --submissions it is also the authors' door: they upload bots (`arena submit
    BOT_DIR --to URL`, or the page /door/), each is checked from a queue (bot.toml, the
    image build, a smoke match, in Docker) and lands in the registry, where a running
    `arena league` picks it up (docs/server.md: running a competition from one machine)."""
    from arena.site.writer import SITE_DIR, render_site

    site = out_dir / SITE_DIR
    if not (site / "index.html").is_file() and (out_dir / "arena.sqlite").is_file():
        render_site(out_dir)
    tls = {"certfile": certfile, "keyfile": keyfile, "insecure_http": insecure_http}
    if not submissions:
        from arena.web.app import serve_site

        server, door = serve_site(site, port, host, **tls), None
    else:
        from arena.web.commands import serve_door

        server, door = serve_door(
            site, registry=registry, host=host, port=port, league_dir=out_dir, validate_jobs=validate_jobs,
            validate_sandbox=validate_sandbox, show_stderr=show_stderr, tls=tls,
            upload_limits={
                "packed_mb": max_upload_mb, "unpacked_mb": max_unpacked_mb, "files": max_files,
                "per_hour": uploads_per_hour, "upload_s": upload_s, "per_address": requests_per_minute,
            },
        )
    _say(f"serving {site} at {server.url} (Ctrl-C stops)")
    if door is not None:
        _say(
            f"taking submissions into {door.registry} (checked {validate_jobs} at a time in the "
            f"{validate_sandbox} sandbox); authors' page: {server.url}door/"
        )
        door.start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass  # uvicorn stopped cleanly, then passed Ctrl-C on
    finally:
        if door is not None:
            door.stop()


@app.command("play")
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
    from arena.config.tournament import limits_from_flags
    from arena.human.serve import run_play
    from arena.human.table import PlayError, TableConfig

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
        run_play(config, port=port, open_browser=not no_open, say=_say_json)
    except PlayError as mistake:
        raise UsageError(str(mistake)) from None
    except KeyboardInterrupt:
        console.print("stopped; every finished game is stored", highlight=False)


@app.command("league")
def league_command(
    target: Annotated[
        Path,
        typer.Argument(
            help="The league's folder (store, site; made on the first run, resumed after), or a TOML file "
            "with a \\[league] table."
        ),
    ],
    game: Annotated[Optional[str], typer.Option(help="Game name (see `arena games`).")] = None,
    seats: Annotated[Optional[int], typer.Option(help="Seats per table (2-6).")] = None,
    registry: Annotated[
        Optional[Path], typer.Option(help="The registry to watch (where `arena submit` puts bots); default as `arena submit`'s.")
    ] = None,
    sandbox: Annotated[Optional[str], typer.Option(help="local (trusted code only) or docker.")] = None,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Games played at once.")] = None,
    cluster: Annotated[
        Optional[str], typer.Option(help="Dask scheduler tcp://HOST:PORT: play the games on its workers (docs/cluster.md).")
    ] = None,
    rule: Annotated[Optional[list[str]], typer.Option(help="Rule option as key=value; repeatable.")] = None,
    games: Annotated[
        Optional[int], typer.Option(help="Stop once the league holds this many games (default: run until Ctrl-C).")
    ] = None,
    until_stable: Annotated[
        bool, typer.Option("--until-stable", help="Stop once every bot being matched is settled.")
    ] = False,
    duplicate: Annotated[
        Optional[bool], typer.Option("--duplicate/--no-duplicate", help="Play each deal in every seat rotation.")
    ] = None,
    seed: Annotated[
        Optional[int], typer.Option(help="Public seed (tests and demos: any bot that guesses it can compute the deals).")
    ] = None,
    batch: Annotated[
        Optional[int], typer.Option(help="Tables per batch (default: one per SEATS bots, about a game each).")
    ] = None,
    name: Annotated[Optional[str], typer.Option(help="The league's name (its site's title).")] = None,
    inherit_rating: Annotated[
        bool,
        typer.Option(
            "--inherit-rating",
            help="A new version of a bot starts from its predecessor's rating (mu) with the wide prior sigma, "
            "instead of from scratch (set on a league's first run; docs/league.md).",
        ),
    ] = False,
    decision_s: Annotated[Optional[float], typer.Option(help="Seconds per decision.")] = None,
    time_bank_s: Annotated[Optional[float], typer.Option(help="Time bank per bot per game, seconds.")] = None,
    startup_s: Annotated[Optional[float], typer.Option(help="Seconds from start to `ready`.")] = None,
    memory_mb: Annotated[Optional[int], typer.Option(help="Memory per bot, MB.")] = None,
    public_seed_ok: Annotated[bool, typer.Option(hidden=True)] = False,
    serve: Annotated[
        Optional[int],
        typer.Option(
            help="Also serve the site and the authors' door on this port (0: any) while the league runs, as "
            "`arena serve --submissions` does (a [server] table in the league file sets it too; docs/server.md).",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="With --serve: the address (127.0.0.1 unless TLS is in front).")] = "",
    validate_sandbox: Annotated[
        str, typer.Option(help="With --serve: where uploads are checked: docker, or local (trusted authors only).")
    ] = "",
    insecure_http: Annotated[
        bool, typer.Option("--insecure-http", help="With --serve: allow a public --host without TLS.")
    ] = False,
) -> None:
    """Run a league (a ladder) in TARGET: it watches the registry, so a bot submitted with
    `arena submit` (or a new version of one) joins within seconds, without a restart; the
    matchmaker plays batches of games, the site is re-rendered after each, and `arena
    standings TARGET` or `arena serve TARGET` show it at any time. Runs until Ctrl-C,
    --games or --until-stable; the same command resumes it (docs/league.md)."""
    from arena.run.league import (
        LeagueInterrupted,
        check_league,
        load_league,
        run_league,
    )

    overrides = {
        key: value
        for key, value in {
            "game": game, "seats": seats, "sandbox": sandbox, "jobs": jobs, "cluster": cluster, "games": games,
            "duplicate": duplicate, "seed": seed, "batch": batch, "name": name,
            "registry": str(registry.expanduser().absolute()) if registry is not None else None,
            "until_stable": until_stable or None, "inherit_rating": inherit_rating or None,
        }.items()
        if value is not None
    }
    limits = {
        key: value
        for key, value in {
            "decision_s": decision_s, "time_bank_s": time_bank_s, "startup_s": startup_s, "memory_mb": memory_mb,
        }.items()
        if value is not None
    }
    if limits:
        overrides["limits"] = limits
    config = load_league(target, overrides, rule or [])
    check_league(config)  # a mistake is said alone, before the banner
    if config.seed is not None and not public_seed_ok:
        _warn_public_seed(config.seed)
    say = _say
    served = _league_server(target, config, serve, host, validate_sandbox, insecure_http, say)
    say(
        f"league {config.output_dir()}: {config.game}, {config.seats} seats; watching {config.registry_dir()} "
        "(it plays once enough bots are there); Ctrl-C stops, the same command resumes"
    )

    def show(update) -> None:
        for event in update.events:
            say(f"  {event}")
        changed = [f"{label}: {', '.join(bots)}" for label, bots in
                   (("now settled", update.now_settled), ("no longer settled", update.unsettled)) if bots]
        say(
            f"batch {update.batch}: {update.done} games ({update.played} by this run), "
            f"{update.active} bots playing, {update.settled} settled"
            + (f" ({'; '.join(changed)})" if changed else "") + f"; leader: {update.leader or '-'}"
        )

    try:
        outcome = run_league(config, progress=show, notice=lambda line: say(f"  {line}"))
    except LeagueInterrupted as stopped:
        _say(
            f"arena: stopped: {stopped.done} games are stored in {stopped.output}; run the same command to resume: "
            f"arena {shlex.join(sys.argv[1:])}", errors)
        raise typer.Exit(130) from None
    finally:
        if served is not None:
            served[0].shutdown()
            served[1].stop()
    _print_league(outcome.output)
    say(f"{outcome.played} games played now; {outcome.done} in the league" + ("; every bot settled" if outcome.stable else ""))
    for note in outcome.notes:
        say(note)


def _league_server(target: Path, config, port, host: str, validate_sandbox: str, insecure_http: bool, say):  # noqa: ANN001, ANN202
    """The site and the authors' door of a league (--serve or its file's [server] table),
    started in the background; None when neither asks for it."""
    from arena.web.settings import server_config, server_table

    table = server_table(target)
    if port is None and table is None:
        return None
    overrides = {"port": port, "host": host or None, "validate_sandbox": validate_sandbox or None,
                 "insecure_http": insecure_http or None}
    settings = server_config(table, {key: value for key, value in overrides.items() if value is not None})
    from arena.web.commands import serve_door

    server, door = serve_door(
        config.output_dir() / "site", registry=config.registry_dir(), host=settings.host, port=settings.port,
        league_dir=config.output_dir(), validate_jobs=settings.validate_jobs,
        validate_sandbox=settings.validate_sandbox, limits=config.limits.limits(),
        upload_limits=settings.upload_limits(), show_stderr=settings.show_stderr,
        tls={"certfile": settings.certfile, "keyfile": settings.keyfile, "insecure_http": settings.insecure_http},
        submissions=settings.submissions,
    )
    door.start()
    server.start()
    say(f"serving the league at {server.url}" + (f" (authors: {server.url}door/)" if settings.submissions else ""))
    return server, door


def _league_states(out_dir: Path, table, confidence) -> dict:
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


def _print_league(out_dir: Path, hide_retired: bool = False) -> None:
    """A league's standings, each bot marked retired, suspended, settled or provisional."""
    from arena.run.league import league_marks

    table, confidence, settings, done, total = _stored_standings(out_dir)
    marks, notes, hidden = league_marks(out_dir, hide_retired)
    shown = [line for line in table.standings if line.bot not in hidden]
    if hidden:  # ranks and bands among the bots shown
        from arena.ratings.confidence import Confidence

        confidence = Confidence.of({line.bot: confidence.skills[line.bot] for line in shown}, confidence.beta)
    console.print(
        _standings_table(shown, confidence, f"{settings.get('name', 'league')}: {done} games", False, console.width, marks)
    )
    for note in _standings_notes(False) + notes:
        _say(note)


def main() -> None:
    """Entry point of the `arena` command."""
    from arena.config.botfolder import BotFolderError
    from arena.run.match import MatchError
    from arena.run.tournament import TournamentError
    from arena.sandbox import SandboxError, UnknownSandbox
    from arena.site.writer import ReportError
    from arena.store.db import StoreError
    from arena.store.registry import SubmitRefused
    from arena.web.errors import WebError

    try:
        app()
    except (
        GameError, UsageError, BotFolderError, MatchError, UnknownSandbox, TournamentError, StoreError, SubmitRefused,
        ReportError, WebError,
    ) as mistake:
        errors.print(f"arena: error: {mistake}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        errors.print("arena: interrupted; finished games are stored: run the same command to resume", highlight=False)
        sys.exit(130)
    except SandboxError as failure:
        # arena's own machinery (e.g. the Docker engine) failed: never the bot's fault.
        errors.print(f"arena: internal error: {failure}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(1)
