"""Test bot 'read-other': tries to read the files in victims.json (another bot's folder); exits with code 42 if it can.

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
        send({"type": "ready", "name": "read-other", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        if decisions == 1:
            with open("victims.json") as source:
                victims = json.load(source)
            for path in victims:
                try:
                    with open(path) as stolen:
                        stolen.read()
                except OSError as error:
                    print("cannot read", path, error, file=sys.stderr, flush=True)
                else:
                    print("READ", path, file=sys.stderr, flush=True)
                    sys.exit(42)
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
