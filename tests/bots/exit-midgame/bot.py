"""Test bot 'exit-midgame': exits with code 3 at its second decision.

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
        send({"type": "ready", "name": "exit-midgame", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        if decisions == 2:
            sys.exit(3)
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
