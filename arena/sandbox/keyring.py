"""The kernel keyring, closed to local bots: a seccomp filter and a session keyring of
their own.

The keyring is kernel memory outside every namespace the local sandbox makes: keys live
in a user's keyring (@u, one per uid: every local bot is user nobody when arena runs as
root) or in a session keyring a process inherits (arena's own, or nobody's shared
"user session" keyring). A bot that stores its cards there in one game reads them in the
next, and one process of a duplicate deal tells its twin at the other seat. So, in the
child before it runs the bot (the exec shim of `arena.sandbox.local`):
1. it joins a fresh anonymous session keyring (KEYCTL_JOIN_SESSION_KEYRING with no
   name), so that it holds no keyring of arena's or of another bot;
2. it installs a seccomp filter (after no_new_privs) that refuses `add_key`,
   `request_key` and `keyctl` with EPERM, as Docker's default profile does, for every
   ABI of the machine (x86_64, its x32 and i386 numbers; aarch64 and arm). Nothing can
   be stored or read: there is nothing to clear at its end.
`filter_program()` is the filter as BPF instructions for the shim; None on a machine
whose numbers arena does not know (the local sandbox then says so).
`clear_user_keyrings(uid)` empties what an older arena let the bots' user leave behind.
"""

from __future__ import annotations

import errno
import platform
import subprocess
import sys
from pathlib import Path

# (AUDIT_ARCH_*, the numbers of add_key, request_key, keyctl, a mask for the ABI's flag bit)
ABIS = {
    "x86_64": [(0xC000003E, (248, 249, 250), 0xBFFFFFFF), (0x40000003, (286, 287, 288), None)],
    "aarch64": [(0xC00000B7, (217, 218, 219), None), (0x40000028, (309, 310, 311), None)],
}
# keyctl(2) of the machine, for the session keyring
KEYCTL = {"x86_64": 250, "aarch64": 219}
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR = 1, 7
KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -4, -5

# BPF (<linux/filter.h>, <linux/seccomp.h>)
LOAD_WORD, AND, JUMP_IF_EQUAL, RETURN = 0x20, 0x54, 0x15, 0x06
ARCH_OFFSET, NUMBER_OFFSET = 4, 0  # in struct seccomp_data
ALLOW = 0x7FFF0000
REFUSE = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO


def machine() -> str:
    return platform.machine()


def keyctl_number() -> int | None:
    """keyctl(2)'s number here (None: unknown)."""
    return KEYCTL.get(machine())


def filter_program() -> list[tuple[int, int, int, int]] | None:
    """The seccomp filter refusing the keyring calls of every ABI of this machine, as
    (code, jt, jf, k) BPF instructions; None when this machine's numbers are unknown."""
    abis = ABIS.get(machine())
    if abis is None:
        return None
    program: list[tuple[int, int, int, int]] = []
    for arch, numbers, mask in abis:
        block: list[tuple[int, int, int, int]] = [(LOAD_WORD, 0, 0, NUMBER_OFFSET)]
        if mask is not None:
            block.append((AND, 0, 0, mask))  # x32 numbers are x86_64's with a flag bit
        for number in numbers:
            block += [(JUMP_IF_EQUAL, 0, 1, number), (RETURN, 0, 0, REFUSE)]
        block.append((RETURN, 0, 0, ALLOW))
        program += [(LOAD_WORD, 0, 0, ARCH_OFFSET), (JUMP_IF_EQUAL, 0, len(block), arch), *block]
    program.append((RETURN, 0, 0, ALLOW))  # another ABI this kernel may run: none known
    return program


CLEAR = Path(__file__).with_name("keyring_clear.py")  # a program of its own, run as the user


def clear_user_keyrings(uid: int, python: str | None = None) -> bool:
    """Empty the user keyring and the user session keyring of `uid` (as that user, in a
    child; arena must be root). True if the child ran."""
    number = keyctl_number()
    if number is None:
        return False
    try:
        done = subprocess.run(
            [python or sys.executable, "-I", "-S", str(CLEAR), str(uid), str(number)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
