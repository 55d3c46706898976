"""`arena images build|list` (a Typer sub-app arena/cli/app.py adds) and `arena new`
(arena/cli/bots.py's command calls `new_command`). Light at import: Typer only."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from arena.terminal import wrapped

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
            typer.echo(f"error: {unknown_language(language)}", err=True)
            raise typer.Exit(2)
    try:
        client = docker.from_env(timeout=1800)
        client.ping()
    except Exception as error:  # noqa: BLE001 - any failure: no engine here
        typer.echo(f"error: the Docker engine is not reachable ({error}); start it (.ci/docker-up)", err=True)
        raise typer.Exit(1) from None
    base = default_image()
    for language in wanted:
        try:
            tag, built = build_language_image(client, language, base, typer.echo)
        except docker.errors.ImageNotFound:
            typer.echo(f"error: the base image {base} is not present; build it with .ci/docker-up", err=True)
            raise typer.Exit(1) from None
        except RuntimeError as error:
            typer.echo(f"error: {error}", err=True)
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
    from arena.langs.kits import KitError, new_bot

    try:
        made = new_bot(bot_dir, language)
    except KitError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    typer.echo(wrapped(f"made {made} from the {language} kit; read its README.md, then: arena match three-thirteen "
                       f"{bot_dir} RANDOM --sandbox docker"))
