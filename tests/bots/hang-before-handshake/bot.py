"""Test bot 'hang-before-handshake': never answers `hello` (sleeps before reading anything).

Standard library only (the Docker base image has python3 and nothing else).
"""

import json
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


time.sleep(3600)

decisions = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        send({"type": "ready", "name": "hang-before-handshake", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
