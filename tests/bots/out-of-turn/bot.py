"""Test bot 'out-of-turn': answers its first request twice (the second line is unasked).

Both answers go out in one write, so the unasked line is there before the referee's next
request in every sandbox and on every machine (written a moment later, it could arrive
after that request and read as a late answer to the first one instead).

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
        send({"type": "ready", "name": "out-of-turn", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        answer = json.dumps({"type": "action", "id": message["id"], "index": 0}) + "\n"
        sys.stdout.write(answer * 2 if decisions == 1 else answer)
        sys.stdout.flush()
    elif message["type"] == "match_over":
        break
