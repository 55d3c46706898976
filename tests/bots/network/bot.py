"""Test bot 'network': tries to connect to the addresses in targets.json; exits with code 42 if any connection works.

Standard library only (the Docker base image has python3 and nothing else).
"""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def probe() -> None:
    # Before `ready`, under the generous start-up limit: on a loaded machine three connection
    # attempts could overrun a short per-decision limit and blur what is being tested.
    import socket

    with open("targets.json") as source:
        targets = json.load(source)
    for host, port in targets:
        try:
            socket.create_connection((host, port), timeout=1).close()
        except OSError as error:
            print("no network to", host, port, error, file=sys.stderr, flush=True)
        else:
            print("REACHED", host, port, file=sys.stderr, flush=True)
            sys.exit(42)


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        probe()
        send({"type": "ready", "name": "network", "version": "1"})
    elif message["type"] == "request":
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
