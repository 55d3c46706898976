"""Test bot 'memory-hog': allocates (and touches) memory without bound at its first decision.

Standard library only (the Docker base image has python3 and nothing else).
"""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


decisions = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        send({"type": "ready", "name": "memory-hog", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        if decisions == 1:
            hoard = []
            while True:
                hoard.append(b"x" * (1 << 20))
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
