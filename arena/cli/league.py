"""`arena league`: a league (a ladder) that watches a registry, plays batches and, with
--serve, serves its site and the authors' door."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli.console import say, say_stopped, warn_public_seed
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
from arena.cli.standings import print_league


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
    decision_s: FileDecisionFlag = None,
    time_bank_s: FileTimeBankFlag = None,
    startup_s: FileStartupFlag = None,
    memory_mb: FileMemoryFlag = None,
    cpu_s: FileCpuFlag = None,
    bot_process: BotProcessFlag = None,
    warm_start: WarmStartFlag = None,
    runtime: RuntimeFlag = None,
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
    from arena.league.ladder import (
        LeagueInterrupted,
        check_league,
        load_league,
        run_league,
    )

    overrides = overrides_of(
        {
            "game": game, "seats": seats, "sandbox": sandbox, "jobs": jobs, "cluster": cluster, "games": games,
            "duplicate": duplicate, "seed": seed, "batch": batch, "name": name,
            "registry": str(registry.expanduser().absolute()) if registry is not None else None,
            "until_stable": until_stable or None, "inherit_rating": inherit_rating or None,
            "bot_process": bot_process, "warm_start": warm_start, "runtime": runtime,
        },
        {"decision_s": decision_s, "time_bank_s": time_bank_s, "startup_s": startup_s, "memory_mb": memory_mb,
         "cpu_s": cpu_s},
    )
    config = load_league(target, overrides, rule or [])
    check_league(config)  # a mistake is said alone, before the banner
    if config.seed is not None and not public_seed_ok:
        warn_public_seed(config.seed)
    settings = _server_settings(target, serve, host, validate_sandbox, insecure_http)
    waiting = _waiting_for(config, uploads=settings is not None and settings.submissions)
    served = _league_server(config, settings, say) if settings is not None else None
    say(
        f"league {config.output_dir()}: {config.game}, {config.seats} seats; watching {config.registry_dir()} "
        "(it plays once enough bots are there); Ctrl-C stops, the same command resumes"
    )
    if waiting:
        say(waiting)

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
        say_stopped(f"{stopped.done} games are stored in {stopped.output}")
        raise typer.Exit(stopped_code()) from None
    finally:
        if served is not None:
            served[0].shutdown()
            served[1].stop()
    print_league(outcome.output)
    say(f"{outcome.played} games played now; {outcome.done} in the league" + ("; every bot settled" if outcome.stable else ""))
    for note in outcome.notes:
        say(note)


def _server_settings(target: Path, port, host: str, validate_sandbox: str, insecure_http: bool):  # noqa: ANN001, ANN202
    """The server's settings when the league serves itself (--serve or its file's [server]
    table), else None."""
    from arena.web.settings import server_config, server_table

    table = server_table(target)
    if port is None and table is None:
        return None
    overrides = {"port": port, "host": host or None, "validate_sandbox": validate_sandbox or None,
                 "insecure_http": insecure_http or None}
    return server_config(table, {key: value for key, value in overrides.items() if value is not None})


def _waiting_for(config, uploads: bool) -> str | None:  # noqa: ANN001
    """What the league waits for before its first game, in one line (None: nothing). A
    registry that is not there is a mistake (a typo waited for ever, silently), unless the
    league takes uploads, which make it."""
    from arena.cli.console import UsageError
    from arena.config.botfolder import BotFolderError, load_bot, registry_folders

    registry = config.registry_dir()
    if not registry.is_dir() and not uploads:
        what = "is a file, not a folder" if registry.exists() else "is not there"
        raise UsageError(f"the registry {registry} {what}: give --registry the folder bots are submitted to, or "
                         f"submit one there first (arena submit BOT --registry {registry})")
    names = set()
    for folder in registry_folders(registry) if registry.is_dir() else []:
        try:
            manifest = load_bot(folder)
        except BotFolderError:
            continue  # the league says which, when it looks
        if config.game in manifest.games:
            names.add(manifest.name)
    playing = len(names)
    if playing >= config.seats:
        return None
    how = "uploads at /door/ or `arena submit`" if uploads else f"`arena submit BOT --registry {registry}`"
    return (f"waiting for bots: {playing} in the registry play {config.game} and a game needs {config.seats} "
            f"({how})")


def _league_server(config, settings, say):  # noqa: ANN001, ANN202
    """The site and the authors' door of a league, started in the background."""
    from arena.cli.authors import serve_door

    server, door = serve_door(
        config.output_dir() / "site", registry=config.registry_dir(), host=settings.host, port=settings.port,
        league_dir=config.output_dir(), validate_jobs=settings.validate_jobs,
        validate_sandbox=settings.validate_sandbox, validate_runtime=settings.validate_runtime,
        limits=config.limits.limits(),
        upload_limits=settings.upload_limits(), show_stderr=settings.show_stderr,
        tls={"certfile": settings.certfile, "keyfile": settings.keyfile, "insecure_http": settings.insecure_http},
        submissions=settings.submissions,
    )
    door.start()
    server.start()
    say(f"serving the league at {server.url}" + (f" (authors: {server.url}door/)" if settings.submissions else ""))
    return server, door
