"""`arena run` (run or resume a tournament), `arena demo` (the example bots' tournament) and
`arena secret` (a tournament's secret key, or a check of its deals against a published one)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli.console import UsageError, errors, say, say_stopped, warn_public_seed
from arena.cli.signals import stopped_code
from arena.cli.flags import (
    BotProcessFlag,
    FileCpuFlag,
    FileDecisionFlag,
    FileMemoryFlag,
    FileStartupFlag,
    FileTimeBankFlag,
    RuntimeFlag,
    WarmStartFlag,
    overrides_of,
)
from arena.cli.incidents import print_stored_incidents
from arena.cli.progress import progress_bar, stop_bar
from arena.cli.standings import (
    print_gauntlet,
    print_standings,
    stored_gauntlet,
    stored_standings,
)
from engine import get_game


def run_command(
    tournament_file: Annotated[
        Optional[Path], typer.Argument(help="Tournament file (TOML); without it, the flags describe the tournament.")
    ] = None,
    game: Annotated[Optional[str], typer.Option(help="Game name (see `arena games`).")] = None,
    bots: Annotated[
        Optional[list[str]], typer.Option("--bots", "--bot", help="Bot folders or globs, several after one --bots (or the flag again).")
    ] = None,
    seats: Annotated[Optional[int], typer.Option(help="Seats per table (2-6).")] = None,
    tournament_format: Annotated[
        Optional[str], typer.Option("--format", help="round-robin, swiss or gauntlet.")
    ] = None,
    rounds: Annotated[Optional[int], typer.Option(help="Rounds (Swiss: required; round-robin: design rounds).")] = None,
    cycles: Annotated[Optional[int], typer.Option(help="Round-robin: how many complete cycles.")] = None,
    challengers: Annotated[
        Optional[list[str]], typer.Option("--challenger", help="Gauntlet challenger folders or globs, several after one flag (or the flag again).")
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
    bot_process: BotProcessFlag = None,
    warm_start: WarmStartFlag = None,
    runtime: RuntimeFlag = None,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="Output folder (store, site).")] = None,
    name: Annotated[Optional[str], typer.Option(help="Tournament name.")] = None,
    decision_s: FileDecisionFlag = None,
    time_bank_s: FileTimeBankFlag = None,
    startup_s: FileStartupFlag = None,
    memory_mb: FileMemoryFlag = None,
    cpu_s: FileCpuFlag = None,
    allow_changes: Annotated[
        bool, typer.Option("--allow-changes", help="Resume even though the settings changed (finished games are kept).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    public_seed_ok: Annotated[bool, typer.Option(hidden=True)] = False,
) -> None:
    """Run (or resume) a tournament: schedule, play, store each game, print the standings."""
    from arena.play.tournament import (
        SiteInterrupted,
        TournamentInterrupted,
        load_tournament,
        run_tournament,
    )

    overrides = overrides_of(
        {
            "game": game, "bots": bots, "seats": seats, "format": tournament_format, "rounds": rounds,
            "cycles": cycles, "challengers": challengers, "duplicate": duplicate, "seed": seed,
            "sandbox": sandbox, "jobs": jobs, "cluster": cluster,
            "output": str(Path(out).absolute()) if out is not None else None, "name": name,
            "bot_process": bot_process, "warm_start": warm_start, "runtime": runtime,
        },
        {"decision_s": decision_s, "time_bank_s": time_bank_s, "startup_s": startup_s, "memory_mb": memory_mb,
         "cpu_s": cpu_s},
    )
    for key in ("bots", "challengers"):  # a flag's path is relative to where it is typed
        if key in overrides:
            overrides[key] = [str(Path(bot).expanduser().absolute()) for bot in overrides[key]]
    config = load_tournament(tournament_file, overrides, rule or [])
    if config.seed is not None and not public_seed_ok:
        warn_public_seed(config.seed)
    bar = progress_bar(quiet)
    task = bar.add_task(config.name, total=None, rate="", leader="-")

    def show(update) -> None:
        if not bar.live.is_started:
            bar.start()  # only once games run: a mistake found before is printed alone
        rate = update.played / update.elapsed_s if update.elapsed_s > 0 else 0.0
        bar.update(
            task, completed=update.done, total=update.total, rate=f"{rate:.1f} games/s", leader=update.leader or "-"
        )

    try:
        # Said before the bar starts: what the games will be other than the settings say.
        outcome = run_tournament(config, progress=show, allow_changes=allow_changes,
                                 notice=lambda note: say(f"arena: {note}", errors))
    except TournamentInterrupted as stopped:
        stop_bar(bar)
        say_stopped(f"{stopped.done} of {stopped.total} games are stored in {stopped.output}")
        raise typer.Exit(stopped_code()) from None
    except SiteInterrupted as stopped:
        stop_bar(bar)
        say(
            f"arena: stopped while writing the site. The games are safe: {stopped.done} of {stopped.total} are stored "
            f"in {stopped.output}. The site in {stopped.output / 'site'} is incomplete: finish it with "
            f"arena report {shlex.quote(str(stopped.output))}",
            errors,
        )
        raise typer.Exit(stopped_code()) from None
    finally:
        stop_bar(bar)
    # outcome.standings again, with how sure they are: a pass over the store that keeps every update.
    standings, settings, _, _ = stored_standings(outcome.output)
    print_standings(standings, settings, f"{config.name}: {outcome.done} of {outcome.total} games")
    print_gauntlet(stored_gauntlet(outcome.output, settings))
    print_stored_incidents(outcome.output, config.sandbox)
    share = outcome.startup_s / outcome.game_s if outcome.game_s else 0.0
    say(
        f"{outcome.played} games played now, {outcome.resumed} were stored before; {outcome.wall_s:.1f} s; "
        f"waiting for bot processes to start took {share:.0%} of game time. Store: {outcome.output / 'arena.sqlite'}")
    for note in outcome.notes:
        say(note)


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
    say(f"Open {(out / 'site' / 'index.html').absolute()} in a browser, or run: arena serve {out}")


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
    from arena.store.seeds import RunKey

    with Store.open(out_dir) as store:
        store.check()
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
        kept = store.secret_file
        if kept is not None and kept.stat().st_mode & 0o077:
            say(f"arena: warning: {kept} can be read by others (mode {kept.stat().st_mode & 0o777:o}); "
                f"chmod 600 {kept}", errors)
        print(stored)
        return
    key = RunKey.from_secret(check)
    wrong = [game.key for game in games if key.deal_seed(game.deal) != game.seed]
    if wrong:
        say(f"arena: {len(wrong)} of {len(games)} games do not have the deal seed this secret gives: "
            + ", ".join(wrong[:10]) + (" ..." if len(wrong) > 10 else ""), errors)
        raise typer.Exit(1)
    say(
        f"{'the one game was' if len(games) == 1 else f'all {len(games)} games were'} dealt from this secret (deal seed = HMAC-SHA256(secret, 'deal/' + deal key)); "
        "`arena report` replays each stored game from its seed and checks its actions")
