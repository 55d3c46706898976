"""Empty a user's keyring and user session keyring, as that user: run by
`arena.sandbox.keyring.clear_user_keyrings` as `python -I -S keyring_clear.py UID KEYCTL`
(KEYCTL: the keyctl system call's number here); never imported by arena."""

import ctypes
import os
import sys


def main():
    uid, keyctl = int(sys.argv[1]), int(sys.argv[2])
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    libc = ctypes.CDLL(None, use_errno=True)
    for ring in (-4, -5):  # the user's keyring and its user session keyring
        libc.syscall(keyctl, 7, ring)  # KEYCTL_CLEAR


if __name__ == "__main__":
    main()
