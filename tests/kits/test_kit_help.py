"""Help that fits a bot in another language (issue 26 part 4): one line saying what is
wrong and what to do, for a program built for another system (read from its first
bytes), a command its image lacks, a Dockerfile-only bot, and a build output that is
missing. The Docker cases skip without an engine unless ARENA_REQUIRE_DOCKER=1."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.faults import fault_hint
from arena.play.match import run_match
from arena.sandbox.binary import foreign_binary

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random"


def elf(machine: int) -> bytes:
    """The first 64 bytes of a little-endian 64-bit ELF program for `machine`."""
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    header[18:20] = machine.to_bytes(2, "little")
    return bytes(header)


@pytest.mark.parametrize(
    "head, machine, kind",
    [
        (elf(183), "x86_64", "a Linux program for ARM64, not for this machine's x86-64"),
        (elf(62), "aarch64", "a Linux program for x86-64, not for this machine's ARM64"),
        (elf(62), "x86_64", None),
        (b"\xcf\xfa\xed\xfe\x07\x00\x00\x01" + bytes(56), "x86_64", "a Mach-O program (macOS)"),
        (b"\xca\xfe\xba\xbe\x00\x00\x00\x02" + bytes(56), "x86_64", "a Mach-O program (macOS)"),  # universal
        (b"\xca\xfe\xba\xbe\x00\x00\x00\x3d" + bytes(56), "x86_64", None),  # a Java class (major 61)
        (b"MZ\x90\x00" + bytes(60), "x86_64", "a Windows program"),
        (b"#!/bin/sh\necho hi\n", "x86_64", None),
    ],
    ids=["arm64-on-x86", "x86-on-arm64", "native", "mach-o", "universal", "java-class", "exe", "script"],
)
def test_a_program_for_another_system_is_recognised_from_its_first_bytes(tmp_path, head, machine, kind):
    program = tmp_path / "bot"
    program.write_bytes(head)
    assert foreign_binary(program, machine) == kind


def test_the_local_sandbox_exec_format_error_gets_its_hint():
    hint = fault_hint("CRASH", "exited with code 126", "./bot: cannot execute binary file: Exec format error")
    assert hint.startswith("the program in bot.toml's `command` was built for another system")


def test_the_local_sandbox_reads_a_program_for_another_processor_before_it_starts_it(tmp_path):
    import platform

    other = 183 if platform.machine().lower() not in ("aarch64", "arm64") else 62  # ARM64, or x86-64 there
    folder = bot(tmp_path / "arm", '["./build/bot"]')
    (folder / "build").mkdir()
    (folder / "build" / "bot").write_bytes(elf(other) + bytes(4096))
    os.chmod(folder / "build" / "bot", 0o755)
    match = run_match("3up3down", [folder, RANDOM], games=1, seed=2, sandbox="local")
    [incident] = match.games[0].incidents
    kind = "ARM64, not for this machine's x86-64" if other == 183 else "x86-64, not for this machine's ARM64"
    assert (incident.bot, incident.reason.value, incident.detail) == (
        "arm", "CRASH",
        f"its program ./build/bot is a Linux program for {kind}: it cannot run here; build it in the sandbox "
        "instead, with language and build in bot.toml (docs/protocol.md, Your language)",
    )


def bot(folder: Path, command: str, extra: str = "") -> Path:
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "{folder.name}"\nversion = "1.0"\ncommand = {command}\ngames = ["3up3down"]\n{extra}'
    )
    os.chmod(folder, 0o755)
    return folder


def crash_line(folder: Path) -> str:
    match = run_match("3up3down", [folder, RANDOM], games=1, seed=2, sandbox="docker")
    [incident] = match.games[0].incidents
    assert incident.reason.value == "CRASH" and incident.bot == folder.name
    return incident.detail


def test_docker_says_what_is_wrong_and_what_to_do_in_one_line(docker_engine, tmp_path):
    from arena.sandbox.docker.engine import default_image

    base = default_image()
    node = bot(tmp_path / "node-on-base", '["node", "bot.js"]')
    assert crash_line(node) == (
        f"its program 'node' is not in its image {base} (arena's base image (python3 only)): set language in "
        "bot.toml to one that has it (c, cpp, rust, go, java, node, python; docs/protocol.md, Your language), or "
        "bring a Dockerfile"
    )
    only_from = bot(tmp_path / "only-from", '["./bot"]', 'dockerfile = "Dockerfile"\n')
    (only_from / "Dockerfile").write_text(f"FROM {base}\n")
    (only_from / "bot").write_text("#!/bin/sh\n")
    assert crash_line(only_from) == (
        "its image, built from its Dockerfile, has no './bot' in its working folder: the bot's folder is not "
        "mounted for a Dockerfile bot, so COPY the program in (e.g. WORKDIR /bot and COPY . /bot), or install it "
        "in a RUN step"
    )
    mac = bot(tmp_path / "mac", '["./bot"]')
    (mac / "bot").write_bytes(b"\xcf\xfa\xed\xfe\x07\x00\x00\x01" + bytes(56))
    os.chmod(mac / "bot", 0o755)
    assert crash_line(mac) == (
        "its program ./bot is a Mach-O program (macOS): it cannot run here; build it in the sandbox instead, with "
        "language and build in bot.toml (docs/protocol.md, Your language)"
    )
    unbuilt = bot(tmp_path / "unbuilt", '["./build/bot"]', 'build = ["true"]\n')
    assert crash_line(unbuilt) == (
        "its program ./build/bot is not in its folder (its `build` should make it: only build/ is kept)"
    )
