"""Test bot 'illegal': answers its first request with an action that is not legal.

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
        send({"type": "ready", "name": "illegal", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        if decisions == 1:
            send({"type": "action", "id": message["id"], "action": {"take": 99}})
            continue
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
