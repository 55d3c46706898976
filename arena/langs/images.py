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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LANG_LABEL = "arena.language"
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
    RuntimeError with the build's last lines when apt-get or the engine fails."""
    import docker.errors

    tag = image_tag(language, base)
    try:
        client.images.get(tag)
        return tag, False
    except docker.errors.ImageNotFound:
        pass
    client.images.get(base)  # ImageNotFound: the caller says to run .ci/docker-up
    say(f"building {tag} ({' '.join(LANGUAGES[language].packages)})")
    lines: list[str] = []
    try:
        for chunk in client.api.build(
            fileobj=io.BytesIO(recipe(language, base).encode()), tag=tag, rm=True, forcerm=True,
            pull=False, decode=True, labels={LANG_LABEL: language, "arena.sandbox": "language"},
        ):
            if "stream" in chunk:
                lines.extend(line for line in chunk["stream"].splitlines() if line.strip())
            if "error" in chunk:
                tail = " | ".join(lines[-3:])
                raise RuntimeError(f"the {language} image did not build: {chunk['error'].strip()} ({tail})")
    except docker.errors.APIError as error:
        raise RuntimeError(f"the {language} image did not build: {error}") from None
    return tag, True


if __name__ == "__main__":  # .ci/docker-up: `python3 -m arena.langs.images tag|recipe LANG BASE`
    import sys

    what, language, base = sys.argv[1:4]
    print(image_tag(language, base) if what == "tag" else recipe(language, base), end="\n" if what == "tag" else "")
