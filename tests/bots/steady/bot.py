"""Test bot 'steady': plays well-formed answers (always the first legal action); the partner of every hostile bot.

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
        send({"type": "ready", "name": "steady", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
