"""Test bot 'counter': plays nim-test (always the first legal action) and says on stderr,
once per game, what its process has seen: a token drawn when the process started, how many
games this process has played, its seat and its secret (which tells the deal), and the
`games` of its hello. A bot that carries memory between games, and a witness of which
process saw which deal.

Options (argv): crash=N exits in the N-th game of each process; burn=S spends S seconds of
CPU at the first request of each game. Standard library only.
"""

import json
import os
import sys
import time

options = dict(arg.split("=", 1) for arg in sys.argv[1:] if "=" in arg)
crash_in = int(options.get("crash", 0))
burn_s = float(options.get("burn", 0))
token = os.urandom(6).hex()
games = 0
told = False
hello_games = None


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def burn(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        hello_games = message["games"]
        send({"type": "ready", "name": "counter", "version": "1"})
    elif kind == "start":
        games += 1
        told = False
        seat, game_number, seed = message["seat"], message["game_number"], message.get("seed")
    elif kind == "request":
        if not told:
            told = True
            record = {
                "token": token, "games": games, "game_number": game_number, "seat": seat,
                "secret": message["observation"]["secret"], "hello_games": hello_games, "seed": seed,
            }
            sys.stderr.write("counter " + json.dumps(record) + "\n")
            sys.stderr.flush()
            if crash_in and games == crash_in:
                sys.exit(3)
            burn(burn_s)
        send({"type": "action", "id": message["id"], "index": 0})
    elif kind == "match_over":
        break
