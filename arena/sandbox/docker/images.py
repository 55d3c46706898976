"""Images for Docker bots: the base image (a bot folder mounted read-only), or one built from
the bot's own Dockerfile, cached by a hash of its folder; and what each image holds that
the container settings depend on (its entrypoint, command, and whether it has /bin/sh).
`DockerImages` is the part of the docker sandbox that deals with images.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any

import docker
import docker.errors

from arena.botcopy import FolderLimits, FolderLimitsError, content_hash, vet_bot_folder
from arena.faults import BotFault, Reason, SandboxError
from arena.sandbox.base import BotSpec
from arena.sandbox.binary import foreign_binary, foreign_line
from arena.sandbox.docker.engine import (
    ENGINE_ERRORS,
    BOT_LABEL,
    BUILD_TIMEOUT_S,
    IMAGE_ENV,
    LABEL,
    OWNER_LABEL,
    owner_of_this_process,
    _slug,
)
from arena.sandbox.languages import (
    BASE_LANGUAGE,
    LANGUAGES,
    image_tag,
    unknown_language,
)

# The network of a bot image's build steps: "none" (the default), or a Docker network the
# organiser allows them (e.g. "bridge"); the bot itself always runs without network.
BUILD_NETWORK_ENV = "ARENA_DOCKER_BUILD_NETWORK"
# Words of a RUN step that most likely downloads (its failure then is most likely the network's).
_DOWNLOADERS = ("apt-get", "apt ", "apk ", "pip", "npm", "yarn", "curl", "wget", "go get", "go install", "cargo", "gem ")
_PATH_FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
_LAYER = re.compile(r"^ ---> ([0-9a-f]{12,64})$", re.M)  # a build step's image in its output
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # colours in a build's output


def build_network() -> str:
    """The network a bot image's build steps get: $ARENA_DOCKER_BUILD_NETWORK, else none."""
    return os.environ.get(BUILD_NETWORK_ENV, "").strip() or "none"


def _check_readable_by_anyone(folder: Path) -> None:
    """SandboxError if the container's user (nobody) could not read the mounted bot folder."""
    folder = folder.resolve()
    if not folder.is_dir():
        raise SandboxError(f"the bot folder {folder} does not exist")
    for path in [folder, *folder.rglob("*")]:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue  # a dangling link: nothing to read either way
        needed = 0o005 if path.is_dir() else 0o004  # others: r-x on folders, r on files
        if mode & needed != needed:
            raise SandboxError(
                f"{path} is not readable by the container's user (uid 65534); "
                f"make the bot folder readable by everyone: chmod -R a+rX {folder}"
            )



class DockerImages:
    """Image lookup, building and probing, for a sandbox with `client` and `image`."""

    client: Any
    image: str

    def _init_images(self) -> None:
        self._facts: dict[str, dict[str, Any]] = {}
        self._failed_builds: dict[str, BotFault] = {}
        self._checked_image = False
        self._present: set[str] = set()  # language images seen on the engine
        self._programs_ok: set[tuple] = set()  # (image, program, folder, dockerfile) found
        self._facts_lock = threading.Lock()

    def _check_base_image(self) -> None:
        if self._checked_image:
            return
        try:
            self.client.images.get(self.image)
        except docker.errors.ImageNotFound:
            raise SandboxError(
                f"the Docker base image {self.image!r} is not present; build it with "
                f".ci/docker-up, or `docker pull python:3.12-slim` and set {IMAGE_ENV}="
                "python:3.12-slim"
            ) from None
        except ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine failed while looking up {self.image!r}: {error}"
            ) from None
        self._checked_image = True

    # -- images ------------------------------------------------------------------------------
    def image_for(self, bot: BotSpec) -> str:
        """The image the bot runs in: the base image, or its own, built once per content."""
        if not bot.dockerfile:
            self._check_base_image()
            _check_readable_by_anyone(bot.folder)
            if bot.language and bot.language != BASE_LANGUAGE:
                return self._language_image(bot.language)
            return self.image
        folder = bot.folder.resolve()
        dockerfile = (folder / bot.dockerfile).resolve()
        if not dockerfile.is_relative_to(folder) or not dockerfile.is_file():
            raise BotFault(
                Reason.CRASH,
                f"its Dockerfile {bot.dockerfile!r} is not a file inside its folder {folder}",
            )
        tag = f"arena-bot-{_slug(bot.name)}:{content_hash(folder)[:16]}"
        # A bot restarted after a fault must not pay for (or retry) a failed build again.
        if tag in self._failed_builds:
            raise self._failed_builds[tag]
        try:
            self.client.images.get(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        except ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine failed while looking up {tag}: {error}"
            ) from None
        # The build context is the folder as it is: only a folder that `arena submit` would
        # take in (no link, device, fifo or socket, readable by its owner, within the limits)
        # is built, so no image ever holds anything from outside it.
        try:
            problems = vet_bot_folder(folder, FolderLimits.from_env())
        except FolderLimitsError as error:
            raise SandboxError(str(error)) from None
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            self._failed_builds[tag] = BotFault(Reason.CRASH, f"its folder cannot be built from: {problems[0]}{more}")
            raise self._failed_builds[tag]
        network = build_network()
        try:
            # Build steps are the bot author's code too: no network (unless the organiser
            # allows it for builds), and a memory cap.
            self.client.images.build(
                path=str(folder),
                dockerfile=str(dockerfile.relative_to(folder)),
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                network_mode=network,
                labels={LABEL: "docker", BOT_LABEL: bot.name},
                container_limits={"memory": 2 << 30, "memswap": 2 << 30},
                timeout=BUILD_TIMEOUT_S,
            )
        except docker.errors.BuildError as error:
            steps = list(error.build_log)
            last = next((str(step["error"]).strip() for step in reversed(steps) if step.get("error")), str(error))
            output = _ANSI.sub("", "".join(str(step.get("stream", "")) for step in steps))
            before = [
                line.strip() for line in output.splitlines()
                if line.strip() and not line.strip().startswith(("Step ", "--->", "Removing", "Sending build context"))
            ][-3:]
            detail = f"its Dockerfile did not build: {last}"
            if before:
                detail += " (the build's last words: " + " | ".join(line[:200] for line in before) + ")"
            if network == "none" and "returned a non-zero code" in last and any(
                word in last for word in _DOWNLOADERS
            ):
                detail += (
                    f". Bot images are built without network: a RUN step that downloads (apt-get install, pip "
                    f"install, npm install) fails; put what the bot needs in its folder, or the organiser may allow "
                    f"network for build steps only: {BUILD_NETWORK_ENV}=bridge (the bot still runs without network)"
                )
            self._remove_layers(output)
            self._failed_builds[tag] = BotFault(Reason.CRASH, detail)
            raise self._failed_builds[tag] from None
        except ENGINE_ERRORS as error:
            raise SandboxError(f"the Docker engine failed while building {tag}: {error}") from None
        return tag

    def check_program(self, bot: BotSpec, image: str) -> None:
        """BotFault (one line: what is wrong, what to do) when the bot's program is not where
        its command says, or is a program for another system; looked up once per bot."""
        program = bot.command[0] if bot.command else ""
        key = (image, program, str(bot.folder), bool(bot.dockerfile))
        if not program or key in self._programs_ok:
            return
        if not bot.dockerfile and "/" in program and not program.startswith("/"):
            path = bot.folder.resolve() / program
            if not path.is_file():
                made = " (its `build` should make it: only build/ is kept)" if bot.build else ""
                raise BotFault(Reason.CRASH, f"its program {program} is not in its folder{made}")
            kind = foreign_binary(path)
            if kind:
                raise BotFault(Reason.CRASH, foreign_line(program, kind))
        elif not self._in_image(image, program):
            if bot.dockerfile:
                where = program if program.startswith("/") else f"{program!r} in its working folder"
                if "/" not in program:
                    where = f"{program!r} on its PATH"
                raise BotFault(
                    Reason.CRASH,
                    f"its image, built from its Dockerfile, has no {where}: the bot's folder is not mounted for a "
                    f"Dockerfile bot, so COPY the program in (e.g. WORKDIR /bot and COPY . /bot), or install it in a "
                    f"RUN step",
                )
            which = f"arena's image for {bot.language}" if bot.language else "arena's base image (python3 only)"
            raise BotFault(
                Reason.CRASH,
                f"its program {program!r} is not in its image {image} ({which}): set language in bot.toml to one "
                f"that has it ({', '.join(LANGUAGES)}; docs/protocol.md, Your language), or bring a Dockerfile",
            )
        self._programs_ok.add(key)

    def _in_image(self, image: str, program: str) -> bool:
        """Whether `program` is in the image: a path (relative to its working folder), or a
        word found in the usual PATH folders."""
        if program.startswith("/"):
            paths: tuple[str, ...] = (program,)
        elif "/" in program:
            workdir = self._image_facts(image)["workdir"]
            paths = (f"{workdir.rstrip('/')}/{program}",)
        else:
            paths = tuple(f"{folder}/{program}" for folder in _PATH_FOLDERS)
        found = self._image_facts(image, paths)["found"]
        return any(found[path] for path in paths)

    def _remove_layers(self, output: str) -> None:
        """Remove the layers a failed build made (its steps' images, newest first), so that
        nothing of it is left behind; a layer another image stands on stays (the engine
        refuses), and so does the base image."""
        made = _LAYER.findall(output)
        for layer in reversed(made[1:]):  # the first is the FROM image
            try:
                self.client.api.remove_image(layer, noprune=False)
            except ENGINE_ERRORS:
                pass

    def _language_image(self, language: str) -> str:
        """arena's image for `language` (built by `arena images build`); SandboxError if absent."""
        if language not in LANGUAGES:
            raise SandboxError(unknown_language(language))
        tag = image_tag(language, self.image)
        if tag in self._present:
            return tag
        try:
            self.client.images.get(tag)
        except docker.errors.ImageNotFound:
            raise SandboxError(
                f"the image for language {language!r} ({tag}) is not built on this machine; build it once with "
                f"`arena images build {language}` (or .ci/docker-up)"
            ) from None
        except ENGINE_ERRORS as error:
            raise SandboxError(f"the Docker engine failed while looking up {tag}: {error}") from None
        self._present.add(tag)
        return tag

    # -- how the bot's stdin/stdout travel --------------------------------------------------
    def _image_facts(self, image: str, paths: tuple[str, ...] = ()) -> dict[str, Any]:
        """Entrypoint, command and whether /bin/sh exists, per image (looked up once), and
        whether each of `paths` exists (`found`; looked up in the same probe when asked
        first, a path asked later takes a probe of its own)."""
        with self._facts_lock:  # bots starting side by side: one probe, not one each
            facts = self._facts.get(image)
            if facts is None:
                facts = self._facts[image] = self._probe_image(image, paths)
            elif any(path not in facts["found"] for path in paths):
                facts["found"].update(self._probe_image(image, paths)["found"])
            return facts

    def _probe_image(self, image: str, paths: tuple[str, ...] = ()) -> dict[str, Any]:
        """Read the image's config, and look for /bin/sh (and `paths`) in a container that
        never starts."""
        found: dict[str, bool] = {}
        try:
            config = self.client.images.get(image).attrs.get("Config") or {}
            probe = self.client.containers.create(
                image,
                ["true"],
                network_mode="none",
                labels={LABEL: "probe", OWNER_LABEL: owner_of_this_process()},
            )
            try:
                try:
                    chunks, _ = probe.get_archive("/bin/sh")
                    # Read the (tiny) answer so that the connection is free again.
                    for _ in chunks:
                        pass
                    has_shell = True
                except docker.errors.NotFound:
                    has_shell = False
                api = self.client.api
                for path in paths:  # HEAD: the file's stat only, never its content
                    answer = api.head(api._url("/containers/{0}/archive", probe.id), params={"path": path})
                    if answer.status_code not in (200, 404):
                        answer.raise_for_status()
                    found[path] = answer.status_code == 200
            finally:
                probe.remove(force=True)
        except ENGINE_ERRORS as error:
            raise SandboxError(
                f"the Docker engine failed while inspecting {image!r}: {error}"
            ) from None
        return {
            "entrypoint": list(config.get("Entrypoint") or []),
            "cmd": list(config.get("Cmd") or []),
            "has_shell": has_shell,
            "workdir": config.get("WorkingDir") or "/",
            "found": found,
        }
