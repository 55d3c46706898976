"""Test probe (not a game bot): tries what a bot must not do and says what happened.

It reads one JSON request per line, [operation, argument...], and answers one JSON line:
the result, or the name of the error (errno's name, e.g. "ENOENT", "EROFS"). It never
ends on its own, so tests can look at it from another bot while it runs. Operations:
id, getcwd, pids (the numeric entries of /proc), list PATH, read PATH, write PATH TEXT,
readlink PATH, connect PATH (a Unix socket), inotify N (make N inotify instances and keep
them: how many it made before its user's limit), inotify_room (how many more it could make
now; they are closed again). Standard library only.
"""

import ctypes
import errno
import json
import os
import socket
import sys

HELD = []  # inotify instances kept


def inotify_instances(most):
    made = []
    libc = ctypes.CDLL(None, use_errno=True)
    while len(made) < most:
        fd = libc.inotify_init()
        if fd < 0:
            break
        made.append(fd)
    return made


def attempt(operation, *args):
    if operation == "id":
        return [os.getuid(), os.getgid(), os.getgroups()]
    if operation == "getcwd":
        return os.getcwd()
    if operation == "pids":
        return sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
    if operation == "list":
        return sorted(os.listdir(args[0]))
    if operation == "read":
        with open(args[0]) as source:
            return source.read()
    if operation == "write":
        with open(args[0], "w") as sink:
            sink.write(args[1])
        return "ok"
    if operation == "readlink":
        return os.readlink(args[0])
    if operation == "connect":
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(args[0])
        return "ok"
    if operation == "inotify":
        HELD.extend(inotify_instances(args[0]))
        return len(HELD)
    if operation == "inotify_room":
        made = inotify_instances(10_000)
        for fd in made:
            os.close(fd)
        return len(made)
    raise ValueError(f"unknown operation {operation!r}")


for line in sys.stdin:
    try:
        answer = attempt(*json.loads(line))
    except OSError as error:
        answer = errno.errorcode.get(error.errno, str(error))
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
