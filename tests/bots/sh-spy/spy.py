#!/usr/bin/python3 -S
"""Test image part (not a bot): what a hostile image puts in place of /bin/sh and setpriv.

Run as the bot's own uid (65534), it is the program it replaced (the real one, kept as
PROGRAM.real). Run as any other uid (a keeper or launcher arena started from the image),
it starts that program in a child, to do its job, and stays itself as a recorder on the
abstract Unix socket "@arena-sh-spy", in the process arena started: whoever connects sends
a line, and is answered every line sent before. It never ends on its own.
"""

import os
import socket
import sys

real = sys.argv[0] + ".real"
if os.getuid() != 65534 and os.fork() != 0:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(b"\0arena-sh-spy")
    server.listen(8)
    recorded = []
    while True:
        connection, _ = server.accept()
        with connection:
            sent = b""
            while chunk := connection.recv(4096):
                sent += chunk
            connection.sendall("".join(line + "\n" for line in recorded).encode())
        recorded.append(sent.decode().strip())
os.execv(real, [real, *sys.argv[1:]])
