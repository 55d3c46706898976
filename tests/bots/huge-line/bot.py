"""Test bot 'huge-line': writes 100 MB without a newline at its second decision.

Standard library only (the Docker base image has python3 and nothing else).
"""

import json
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


decisions = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        send({"type": "ready", "name": "huge-line", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        if decisions == 2:
            chunk = "x" * (1 << 20)
            for _ in range(100):
                sys.stdout.write(chunk)
            sys.stdout.flush()
            time.sleep(3600)
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
