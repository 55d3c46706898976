"""`arena images build|list` (a Typer sub-app arena/cli/app.py adds) and `arena new`
(arena/cli/bots.py's command calls `new_command`). Light at import: Typer only."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from arena.terminal import terminal_width, wrapped

images_app = typer.Typer(
    help="arena's images per language (bot.toml: language = \"c\"), built from Debian packages on the base "
    "image, once per machine; see docs/protocol.md, Your language.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@images_app.command("build")
def images_build(
    languages: Annotated[Optional[list[str]], typer.Argument(help="Languages to build (default: all).")] = None,
) -> None:
    """Build the images of LANGUAGES that are missing (each takes a minute or two once)."""
    import docker

    from arena.sandbox.docker.engine import default_image
    from arena.sandbox.languages import (
        LANGUAGES,
        build_language_image,
        unknown_language,
    )

    wanted = languages or list(LANGUAGES)
    for language in wanted:
        if language not in LANGUAGES:
            typer.echo(wrapped(f"arena: error: {unknown_language(language)}"), err=True)
            raise typer.Exit(2)
    try:
        client = docker.from_env(timeout=1800)
        client.ping()
    except Exception as error:  # noqa: BLE001 - any failure: no engine here
        typer.echo(wrapped(f"arena: error: the Docker engine is not reachable ({error}); start it (.ci/docker-up)"),
                   err=True)
        raise typer.Exit(1) from None
    base = default_image()
    for language in wanted:
        try:
            tag, built = build_language_image(client, language, base, typer.echo)
        except docker.errors.ImageNotFound:
            typer.echo(wrapped(f"arena: error: the base image {base} is not present; build it with .ci/docker-up"),
                       err=True)
            raise typer.Exit(1) from None
        except RuntimeError as error:
            typer.echo(wrapped(f"arena: error: {error}"), err=True)
            raise typer.Exit(1) from None
        typer.echo(f"{language:7} {tag} ({'built' if built else 'present'})")


@images_app.command("list")
def images_list() -> None:
    """Each language, its image, whether it is built here, and what it holds."""
    import docker

    from arena.sandbox.docker.engine import default_image
    from arena.sandbox.languages import LANGUAGES, image_tag

    client = docker.from_env(timeout=30)
    base = default_image()
    for language, chosen in LANGUAGES.items():
        tag = image_tag(language, base)
        try:
            client.images.get(tag)
            state = "built"
        except docker.errors.ImageNotFound:
            state = "missing"
        typer.echo(f"{language:7} {tag:29} {state}")
        typer.echo(f"        {chosen.holds}")


def new_command(bot_dir: str, language: str) -> None:
    """Copy a starter kit (what `arena new` does); exit 2 with one line when it cannot."""
    import shlex

    from arena.langs.kits import KitError, new_bot
    from arena.resources import bots_dir

    try:
        made = new_bot(bot_dir, language)
    except KitError as error:
        typer.echo(wrapped(f"arena: error: {error}"), err=True)
        raise typer.Exit(2) from None
    # Commands to copy as they are: the last is the kit README's own line (RANDOM_BOT, ".").
    typer.echo(wrapped(f"made {made} from the {language} kit; read its README.md. Play it against arena's random "
                       "bot, in Docker as a league plays it:", hanging=0))
    typer.echo(f"  RANDOM_BOT={shlex.quote(str(bots_dir() / 'random'))}")
    into = f"  cd {shlex.quote(bot_dir)}"
    # A long path goes alone on its line (the shell joins a line ending in a backslash to the next).
    typer.echo(into if len(into) <= terminal_width() else f"  cd \\\n    {shlex.quote(bot_dir)}")
    typer.echo('  arena match three-thirteen . "$RANDOM_BOT" --sandbox docker')
