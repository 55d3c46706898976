"""`arena report` (render a store's site) and `arena serve` (serve it, and with
--submissions take bots over HTTP)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Optional

import typer

from arena.cli.console import errors, say
from arena.cli.signals import stopped_code, stopped_name


def broken_in_registry(settings: dict) -> list[tuple[str, str]]:
    """What a league's site says of its registry (the site reads no bot folder): the
    folders that cannot join, with their mistakes; none for a tournament."""
    from arena.config.botfolder import broken_folders

    if settings.get("format") != "league" or not settings.get("registry"):
        return []
    return broken_folders(Path(settings["registry"]))


def report_command(
    out_dir: Annotated[Path, typer.Argument(help="A tournament's output folder (with arena.sqlite).")],
    replays: Annotated[
        str, typer.Option(help="all: re-simulate every game not yet rendered into its replay; none: skip replays.")
    ] = "all",
    jobs: Annotated[Optional[int], typer.Option(min=1, help="Processes that render replays (default: up to 4).")] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full", help="Rebuild the site's state and render every page (default: only what the new games change)."
        ),
    ] = False,
) -> None:
    """Render the tournament's HTML site into OUT_DIR/site/ (standings, bots, games, replays).
    It brings the site up to date: a file is written only when it changes (docs/report.md)."""
    from arena.site.model import load_site_data
    from arena.site.writer import SITE_DIR, write_site
    from arena.store.db import check_store

    check_store(out_dir)  # a damaged store is said, not half rendered
    try:
        data = load_site_data(out_dir, background=True)
        counts = write_site(
            data, out_dir / SITE_DIR, replays=replays, jobs=jobs, full=full, broken_bots=broken_in_registry(data.settings),
        )
    except KeyboardInterrupt:
        say(
            f"arena: stopped: the site in {out_dir / SITE_DIR} is incomplete (the games stored in {out_dir} are "
            f"untouched); run arena report {shlex.quote(str(out_dir))} again to finish it",
            errors,
        )
        raise typer.Exit(stopped_code()) from None
    failed = f", {counts['replays_failed']} could not be replayed" if counts["replays_failed"] else ""
    say(
        f"site written to {out_dir / SITE_DIR / 'index.html'}: {counts['pages']} pages rendered, "
        f"{counts['files_written']} files changed, "
        f"{counts['replays_written']} new replays{failed}")


def serve_command(
    ctx: typer.Context,
    out_dir: Annotated[
        Path,
        typer.Argument(
            help="A tournament's or league's folder (its site/ is served), or a league file: its output's site, "
            "and its \\[server] table sets what the flags given do not."
        ),
    ],
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
    validate_runtime: Annotated[
        Optional[str],
        typer.Option(help="Docker's runtime for the checks: runc, or runsc (gVisor; default $ARENA_DOCKER_RUNTIME, else runc)."),
    ] = None,
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
    A league's game pages, game lists and replays come from its store (its site holds no
    file per game; replays are cached in OUT_DIR/.replay-cache/).
    With --submissions it is also the authors' door: they upload bots (`arena submit
    BOT_DIR --to URL`, or the page /door/), each is checked from a queue (bot.toml, the
    image build, a smoke match, in Docker) and lands in the registry, where a running
    `arena league` picks it up (docs/server.md: running a competition from one machine).
    Given a league file, it serves that league, with the door when the file's \\[server]
    table says so (the flags given win over the table)."""
    from arena.site.model import load_site_data
    from arena.site.writer import SITE_DIR, write_site

    limits = None
    if validate_runtime is not None:
        from arena.sandbox.docker.engine import runtime_setting

        runtime_setting(validate_runtime)  # UnknownRuntime: a one-line mistake
    if out_dir.is_file():  # a league file: its [server] table, the flags given on top
        from arena.web.settings import ServerConfig, league_file_server

        # A flag given on the command line (typer's own click: its ParameterSource, by name).
        given = {name: str(value) if isinstance(value, Path) else value for name, value in ctx.params.items()
                 if name in ServerConfig.model_fields
                 and getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"}
        settings, out_dir, league_registry, limits = league_file_server(out_dir, given)
        registry = registry or league_registry
        port, host, submissions, show_stderr = settings.port, settings.host, settings.submissions, settings.show_stderr
        validate_jobs, validate_sandbox = settings.validate_jobs, settings.validate_sandbox
        validate_runtime = settings.validate_runtime
        certfile, keyfile, insecure_http = settings.certfile, settings.keyfile, settings.insecure_http
        max_upload_mb, max_unpacked_mb, max_files = settings.max_upload_mb, settings.max_unpacked_mb, settings.max_files
        uploads_per_hour, upload_s = settings.uploads_per_hour, settings.upload_s
        requests_per_minute = settings.requests_per_minute
    site = out_dir / SITE_DIR
    if not (site / "index.html").is_file() and (out_dir / "arena.sqlite").is_file():
        data = load_site_data(out_dir, background=True)
        write_site(data, site, broken_bots=broken_in_registry(data.settings))
    tls = {"certfile": certfile, "keyfile": keyfile, "insecure_http": insecure_http}
    if not submissions:
        from arena.web.app import serve_site

        server, door = serve_site(site, port, host, **tls), None
    else:
        from arena.cli.authors import serve_door

        server, door = serve_door(
            site, registry=registry, host=host, port=port, league_dir=out_dir, validate_jobs=validate_jobs,
            validate_sandbox=validate_sandbox, validate_runtime=validate_runtime, show_stderr=show_stderr, tls=tls,
            limits=limits,
            upload_limits={
                "packed_mb": max_upload_mb, "unpacked_mb": max_unpacked_mb, "files": max_files,
                "per_hour": uploads_per_hour, "upload_s": upload_s, "per_address": requests_per_minute,
            },
        )
    say(f"serving {site} at {server.url} (Ctrl-C stops)")
    if door is not None:
        say(
            f"taking submissions into {door.registry} (checked {validate_jobs} at a time in the "
            f"{validate_sandbox} sandbox); authors' page: {server.url}door/"
        )
        door.start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # uvicorn stopped cleanly, then passed Ctrl-C (or SIGTERM) on
        if door is not None:
            door.stop()
            door = None
        say(f"arena: stopped ({stopped_name()}): {site} is no longer served", errors)
    finally:
        if door is not None:
            door.stop()
