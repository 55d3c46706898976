"""Test bot 'spinner': busy-waits SPIN_S (3 ms) per decision, measured by itself.

From the moment its read of a request returns until just before it writes the answer it
spins on `time.perf_counter()` (CLOCK_MONOTONIC, the clock arena's `time.monotonic()`
reads), so that interval is at least 3 ms of its own wall and CPU time. Then, before the
answer, it writes one line to stderr: "SPUN <request id> <microseconds, rounded down> <time bank
it was told>". Arena's think time for the decision starts before the request is written
and ends after the answer is read: it can never be less than the bot's own figure.
Always takes the first legal action. Standard library only.
"""

import json
import sys
import time

SPIN_S = 0.003


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


while True:
    line = sys.stdin.readline()
    began = time.perf_counter()
    if not line:
        break
    message = json.loads(line)
    if message["type"] == "hello":
        send({"type": "ready", "name": "spinner", "version": "1"})
    elif message["type"] == "request":
        while time.perf_counter() - began < SPIN_S:
            pass
        spun = time.perf_counter() - began
        # The figure goes first: a line written after the answer may reach arena only
        # after its next request, and be kept with that decision.
        sys.stderr.write(f"SPUN {message['id']} {int(spun * 1e6)} {message['bank_s']}\n")
        sys.stderr.flush()
        send({"type": "action", "id": message["id"], "index": 0})
    elif message["type"] == "match_over":
        break
