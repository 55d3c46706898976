"""Test bot 'background': starts a detached background process (new session) at its first decision, then plays well.

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
        send({"type": "ready", "name": "background", "version": "1"})
    elif message["type"] == "request":
        decisions += 1
        if decisions == 1:
            import subprocess
            subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(600)", "arena-hostile-background"],
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
