"""Test bot 'early': what a process started ahead of need sees before its `hello`.

Options (argv): sleep=S sleeps S seconds before it looks at its stdin (a slow starter);
wait=S (default 1) waits that long for anything on its stdin, then says on stderr "before
hello: quiet" or "before hello: <what came>"; exit-if-quiet exits (code 5) instead when
nothing came. Then it plays: `ready` to `hello`, the first legal action to each request.
Standard library only.
"""

import json
import select
import sys
import time

options = dict(arg.split("=", 1) if "=" in arg else (arg, "") for arg in sys.argv[1:])
time.sleep(float(options.get("sleep", 0)))
came, _, _ = select.select([sys.stdin], [], [], float(options.get("wait", 1)))
if not came:
    sys.stderr.write("before hello: quiet\n")
    sys.stderr.flush()
    if "exit-if-quiet" in options:
        sys.exit(5)
first = True
for line in sys.stdin:
    if first and came:
        sys.stderr.write("before hello: %r\n" % line[:40])
        sys.stderr.flush()
    first = False
    message = json.loads(line)
    if message["type"] == "hello":
        sys.stdout.write(json.dumps({"type": "ready", "name": "early", "version": "1"}) + "\n")
    elif message["type"] == "request":
        sys.stdout.write(json.dumps({"type": "action", "id": message["id"], "index": 0}) + "\n")
    elif message["type"] == "match_over":
        break
    sys.stdout.flush()
