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


def _engine(timeout_s: int):  # noqa: ANN202 - docker's client, imported here only
    """The Docker engine's client; SandboxError (an internal error, one line) when none answers."""
    import docker

    from arena.faults import SandboxError

    try:
        client = docker.from_env(timeout=timeout_s)
        client.ping()
    except Exception as error:  # noqa: BLE001 - any failure: no engine here
        raise SandboxError(f"the Docker engine is not reachable ({error}); start it (.ci/docker-up)") from None
    return client


@images_app.command("build")
def images_build(
    languages: Annotated[Optional[list[str]], typer.Argument(help="Languages to build (default: all).")] = None,
) -> None:
    """Build the images of LANGUAGES that are missing (each takes a minute or two once)."""
    from arena.cli.console import UsageError
    from arena.sandbox.docker.engine import default_image
    from arena.sandbox.languages import (
        LANGUAGES,
        build_language_image,
        unknown_language,
    )

    wanted = languages or list(LANGUAGES)
    for language in wanted:
        if language not in LANGUAGES:
            raise UsageError(unknown_language(language))
    client = _engine(timeout_s=1800)
    base = default_image()
    for language in wanted:
        tag, built = build_language_image(client, language, base, typer.echo)
        typer.echo(f"{language:7} {tag} ({'built' if built else 'present'})")


@images_app.command("list")
def images_list() -> None:
    """Each language, its image, whether it is built here, and what it holds."""
    import docker

    from arena.sandbox.docker.engine import default_image
    from arena.sandbox.languages import LANGUAGES, image_tag

    client = _engine(timeout_s=30)
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
    """Copy a starter kit (what `arena new` does); a `KitError` (one line, exit 2) when it cannot."""
    import shlex

    from arena.langs.kits import new_bot
    from arena.resources import bots_dir

    made = new_bot(bot_dir, language)
    # Commands to copy as they are: the last is the kit README's own line (RANDOM_BOT, ".").
    typer.echo(wrapped(f"made {made} from the {language} kit; read its README.md. Play it against arena's random "
                       "bot, in Docker as a league plays it:", hanging=0))
    typer.echo(f"  RANDOM_BOT={shlex.quote(str(bots_dir() / 'random'))}")
    into = f"  cd {shlex.quote(bot_dir)}"
    # A long path goes alone on its line (the shell joins a line ending in a backslash to the next).
    typer.echo(into if len(into) <= terminal_width() else f"  cd \\\n    {shlex.quote(bot_dir)}")
    typer.echo('  arena match three-thirteen . "$RANDOM_BOT" --sandbox docker')
