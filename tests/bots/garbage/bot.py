"""Test bot 'garbage': answers its second request with a line that is not JSON.

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
        send({"type": "ready", "name": "garbage", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        if decisions == 2:
            print("this is not json {", flush=True)
            continue
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
