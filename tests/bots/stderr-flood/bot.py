"""Test bot 'stderr-flood': writes 2 MB to stderr before every answer; otherwise plays well.

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
        send({"type": "ready", "name": "stderr-flood", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        block = ("flood " * 1000 + "\n") * 350
        sys.stderr.write(block)
        sys.stderr.flush()
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
