"""Test bot 'sh-spy' (not a game bot; its image is tests/bots/sh-spy/Dockerfile): for each
line it reads (a game's secret), it asks the recorder its image left in place of /bin/sh
for every secret recorded before, records its own, and answers them as one JSON list
(["ECONNREFUSED"] when no recorder runs)."""

import errno
import json
import socket
import sys

for line in sys.stdin:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(b"\0arena-sh-spy")
            client.sendall(line.encode())
            client.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := client.recv(4096):
                answer += chunk
        seen = answer.decode().split()
    except OSError as error:
        seen = [errno.errorcode.get(error.errno, str(error))]
    print(json.dumps(seen), flush=True)
