"""Test bot 'fork-bomb': forks without end at its first decision (every child forks too) and never answers.

Standard library only (the Docker base image has python3 and nothing else).
"""

import json
import os
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


decisions = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        send({"type": "ready", "name": "fork-bomb", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        if decisions == 1:
            while True:
                try:
                    os.fork()
                except OSError:
                    time.sleep(0.01)
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
