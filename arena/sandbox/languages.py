"""One Docker image per language, built from Debian packages on arena's base image.

`language = "c"` in bot.toml runs the bot (and its `build` step) in `arena-lang-c:HASH`,
where HASH is a hash of the recipe below and of the base image's name: an image is built
once per machine (`arena images build [LANG...]`, or `.ci/docker-up`) and reused until its
recipe changes. "python" is the base image itself (it holds python3 and nothing else).

Why one image per language and not one shared "toolchains" image: a bot runs with only
the toolchain it needs (a smaller image to start and to trust), a machine builds only
the languages it hosts, and a change to one language's recipe rebuilds only that one;
the base image's layers are shared on disk by all of them.

No registry is used: the recipe starts FROM the base image (built by .ci/docker-up from
a Debian root file system) and installs with apt-get, which reaches the Debian mirror
the base image was made from (its /etc/apt/sources.list, taken from this machine's apt
settings). These builds are arena's own recipe, so they get the engine's default network;
a bot's own build steps never do.
"""

from __future__ import annotations

import hashlib
import io
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LANG_LABEL = "arena.language"
# Every layer of one `arena images build` carries BUILD_LABEL=<its own id> (see labelled):
# what a failed build made is found by it and removed, and nothing else is.
BUILD_LABEL = "arena.image-build"
BASE_LANGUAGE = "python"  # runs in the base image as it is


@dataclass(frozen=True)
class Language:
    """A language bot.toml may name: its Debian packages and what the docs say of it."""

    name: str
    packages: tuple[str, ...]
    holds: str  # compiler/runtime and JSON library, as docs/protocol.md lists them
    extra: str = ""  # more Dockerfile lines after the install


LANGUAGES: dict[str, Language] = {
    "c": Language("c", ("gcc", "libc6-dev", "make", "libcjson-dev"), "gcc 12.2, make, cJSON 1.7.15"),
    "cpp": Language(
        "cpp", ("g++", "libc6-dev", "make", "nlohmann-json3-dev", "libsimdjson-dev"),
        "g++ 12.2, make, nlohmann/json 3.11.2, simdjson 3.0.1",
    ),
    "rust": Language(
        "rust", ("rustc", "cargo", "librust-serde-json-dev"),
        "rustc 1.63, cargo 0.66, serde_json 1.0.87 (Debian's crates, offline)",
    ),
    "go": Language("go", ("golang-go",), "Go 1.19 (encoding/json)"),
    "java": Language(
        "java", ("default-jdk-headless", "libgoogle-gson-java"),
        "OpenJDK 17, Gson 2.10 (/usr/share/java/gson.jar)",
    ),
    "node": Language("node", ("nodejs",), "Node.js 18.20 (JSON built in)"),
    "python": Language("python", (), "Python 3.11 (json); the base image itself"),
}


def recipe(language: str, base: str) -> str:
    """The Dockerfile of a language's image on `base`."""
    chosen = LANGUAGES[language]
    return (
        f"FROM {base}\n"
        "RUN apt-get update -q \\\n"
        " && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "
        + " ".join(chosen.packages)
        + " \\\n && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin\n"
        + chosen.extra
    )


def image_tag(language: str, base: str) -> str:
    """The image a bot of `language` runs in: the base image for python, else
    arena-lang-LANG:HASH (a hash of the recipe and the base image's name)."""
    if language == BASE_LANGUAGE:
        return base
    digest = hashlib.sha256(recipe(language, base).encode()).hexdigest()[:12]
    return f"arena-lang-{language}:{digest}"


def unknown_language(language: str) -> str:
    """The one line for a language arena has no image for."""
    return f"unknown language {language!r}; allowed: {', '.join(LANGUAGES)}"


def build_language_image(
    client: Any, language: str, base: str, say: Callable[[str], None] = lambda line: None
) -> tuple[str, bool]:
    """Build the language's image if it is not there; (its tag, whether it was built).
    SandboxError when the base image is missing, or with the build's last lines when
    apt-get or the engine fails."""
    import docker.errors

    from arena.faults import SandboxError

    tag = image_tag(language, base)
    try:
        client.images.get(tag)
        return tag, False
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.get(base)
    except docker.errors.ImageNotFound:
        raise SandboxError(f"the base image {base} is not present; build it with .ci/docker-up") from None
    say(f"building {tag} ({' '.join(LANGUAGES[language].packages)})")
    try:
        build_image(client, recipe(language, base), tag, {LANG_LABEL: language, "arena.sandbox": "language"})
    except RuntimeError as error:
        raise SandboxError(f"the {language} image did not build: {error}") from None
    return tag, True


def labelled(dockerfile: str, build_id: str) -> str:
    """The Dockerfile with BUILD_LABEL=build_id set right after its FROM line, so that every
    layer the build makes carries it (the image's tag still hashes the recipe alone)."""
    first, _, rest = dockerfile.partition("\n")
    return f"{first}\nLABEL {BUILD_LABEL}={build_id}\n{rest}"


def build_image(client: Any, dockerfile: str, tag: str, labels: dict[str, str], build_id: str = "") -> None:
    """Build `dockerfile` (no context) as `tag`. When the build fails, every layer it made
    (each labelled with this build's own id) is removed, newest first, and RuntimeError
    says the engine's error and the build's last lines; an image another build made, or
    one that a layer of ours became the parent of, is never removed."""
    import docker.errors

    build_id = build_id or uuid.uuid4().hex
    lines: list[str] = []
    try:
        for chunk in client.api.build(
            fileobj=io.BytesIO(labelled(dockerfile, build_id).encode()), tag=tag, rm=True, forcerm=True,
            pull=False, decode=True, labels=labels,
        ):
            if "stream" in chunk:
                lines.extend(line for line in chunk["stream"].splitlines() if line.strip())
            if "error" in chunk:
                remove_build(client, build_id)
                raise RuntimeError(f"{chunk['error'].strip()} ({' | '.join(lines[-3:])})")
    except docker.errors.APIError as error:
        remove_build(client, build_id)
        raise RuntimeError(str(error)) from None


def remove_build(client: Any, build_id: str) -> int:
    """Remove the images (layers) labelled BUILD_LABEL=build_id, children before parents
    (removing a child also prunes the parents nothing else stands on); how many there were.
    A layer something else stands on stays (the engine refuses)."""
    import docker.errors

    made = len(client.images.list(all=True, filters={"label": f"{BUILD_LABEL}={build_id}"}))
    for _ in range(64):  # a layer can go once its child has gone: a pass per generation
        images = client.images.list(all=True, filters={"label": f"{BUILD_LABEL}={build_id}"})
        progress = False
        for image in images:
            try:
                client.api.remove_image(image.id, noprune=False)
                progress = True
            except docker.errors.APIError:
                pass  # gone with its child already, or a child of it is still there
        if not progress:
            break
    return made


if __name__ == "__main__":  # .ci/docker-up: `python3 -m arena.sandbox.languages tag|recipe LANG BASE [BUILD_ID]`
    import sys

    what, language, base = sys.argv[1:4]
    if what == "tag":
        print(image_tag(language, base))
    else:  # the recipe, its layers labelled with BUILD_ID when one is given
        made = recipe(language, base)
        print(labelled(made, sys.argv[4]) if len(sys.argv) > 4 else made, end="")
