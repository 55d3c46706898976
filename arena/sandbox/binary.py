"""Is a bot's program a binary for another system? (a Mach-O or Windows program, or an
ELF program for another processor): read from its first bytes, standard library only.
Both sandboxes ask before they start a bot (the local one: `program_problem`), so the
author reads one line saying what to do rather than an exec error."""

from __future__ import annotations

import platform
from pathlib import Path

# ELF e_machine numbers and this machine's.
_ELF_MACHINES = {3: "x86 (32-bit)", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 22: "IBM Z", 40: "ARM (32-bit)",
                 62: "x86-64", 183: "ARM64", 243: "RISC-V"}
_HOST_MACHINES = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183, "i386": 3, "i686": 3, "armv7l": 40,
                  "riscv64": 243, "s390x": 22, "ppc64le": 21, "ppc64": 21}
_MACH_O = (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe")


def foreign_binary(path: Path, machine: str | None = None) -> str | None:
    """What kind of foreign program `path` is ("a Mach-O program (macOS)"...), or None
    when it may run here (a script, an ELF program for this processor, unreadable)."""
    try:
        with open(path, "rb") as file:
            head = file.read(64)
    except OSError:
        return None
    machine = (machine or platform.machine()).lower()
    if head[:4] == b"\x7fELF" and len(head) >= 20:
        order = "little" if head[5] == 1 else "big"
        e_machine = int.from_bytes(head[18:20], order)
        host = _HOST_MACHINES.get(machine)
        if host is not None and e_machine != host:
            kind = _ELF_MACHINES.get(e_machine, f"processor {e_machine}")
            return f"a Linux program for {kind}, not for this machine's {_ELF_MACHINES.get(host, machine)}"
        return None
    if head[:4] in _MACH_O or (head[:4] == b"\xca\xfe\xba\xbe" and int.from_bytes(head[4:8], "big") < 40):
        return "a Mach-O program (macOS)"  # 0xcafebabe with a small count: a universal binary, not Java
    if head[:2] == b"MZ":
        return "a Windows program"
    return None


def foreign_line(program: str, kind: str) -> str:
    """The one line for a bot whose program was built for another system."""
    return (
        f"its program {program} is {kind}: it cannot run here; build it in the sandbox instead, with "
        f"language and build in bot.toml (docs/protocol.md, Your language)"
    )


def program_problem(folder: str | Path, command: tuple[str, ...] | list[str]) -> str | None:
    """The one line for a bot whose program (a path in its folder, or an absolute path) is
    a program for another system, else None (a name looked up on PATH is the machine's)."""
    program = command[0] if command else ""
    if "/" not in program:
        return None
    path = Path(program) if program.startswith("/") else Path(folder).resolve() / program
    kind = foreign_binary(path) if path.is_file() else None
    return foreign_line(program, kind) if kind else None
