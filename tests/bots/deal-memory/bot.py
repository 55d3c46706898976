"""Test bot 'deal-memory': tries to recognise a deal it saw before from another seat.

Two seats of 3UP 3DOWN. At the setup of each game it records its seat and its six setup
cards (private: the opponent's are never shown). Once play begins, the opponent's three
face-up cards are public: if all three are among the setup cards of a record from another
seat, this game is that deal seen from the other side, and the bot now knows its
opponent's whole setup (the recorded six). It says so on stderr, before its answer:
"DEAL-MEMORY MATCH game G seat S: opponent's setup cards [...] (recorded from seat S'
via WHERE)"; else "DEAL-MEMORY NONE game G seat S (N records via WHERE)".

Where the records are kept is the last word of its command line:
- `memory`: in the process (a process that plays both seats of one deal sees it);
- `keyring`: in the kernel keyring, nothing in the process: a "user" key named
  "deal-memory" in the user keyring (@u) and another in the session keyring (@s),
  written at each setup, read by every later process (add_key/keyctl through ctypes,
  as a bot without keyutils would). Each attempt is said on stderr: "DEAL-MEMORY
  KEYRING add @u: ok" (or the errno name), "... read @s: 3 records".
Always plays the first legal action. Standard library only.
"""

import ctypes
import errno
import json
import os
import platform
import sys

WHERE = sys.argv[-1]
RECORDS = []  # [game tag, seat, [card ids]] (memory mode)
TAG = os.urandom(4).hex()  # this process; a record is "game N of process TAG"
# x86_64 and aarch64 numbers of add_key and keyctl
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(platform.machine(), (248, 250))
KEYCTL_SEARCH, KEYCTL_READ = 10, 11
RINGS = {"@u": -4, "@s": -3}  # KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def failure():
    number = ctypes.get_errno()
    return errno.errorcode.get(number, str(number))


def keyring_store(records):
    data = json.dumps(records).encode()
    for name, ring in RINGS.items():
        key = libc.syscall(ADD_KEY, b"user", b"deal-memory", data, ctypes.c_size_t(len(data)), ring)
        log(f"DEAL-MEMORY KEYRING add {name}: {'ok' if key >= 0 else failure()}")


def keyring_load():
    found = []
    for name, ring in RINGS.items():
        key = libc.syscall(KEYCTL, KEYCTL_SEARCH, ring, b"user", b"deal-memory", 0)
        if key < 0:
            log(f"DEAL-MEMORY KEYRING read {name}: {failure()}")
            continue
        buffer = ctypes.create_string_buffer(1 << 16)
        size = libc.syscall(KEYCTL, KEYCTL_READ, key, buffer, ctypes.c_size_t(len(buffer)))
        if size < 0:
            log(f"DEAL-MEMORY KEYRING read {name}: {failure()}")
            continue
        records = json.loads(buffer.raw[:size])
        log(f"DEAL-MEMORY KEYRING read {name}: {len(records)} records")
        found += [record for record in records if record not in found]
    return found


def records():
    return keyring_load() if WHERE == "keyring" else RECORDS


def remember(tag, seat, cards):
    if WHERE == "keyring":
        kept = keyring_load()
        keyring_store(kept + [[tag, seat, cards]])
    else:
        RECORDS.append([tag, seat, cards])


game_number = 0
setup_seen = checked = False
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        send({"type": "ready", "name": "deal-memory", "version": "1"})
    elif kind == "start":
        game_number += 1
        setup_seen = checked = False
    elif kind == "request":
        seen = message["observation"]
        seat = seen["seat"]
        tag = f"{TAG}-{game_number}"
        if seen.get("setup_cards") and not setup_seen:
            setup_seen = True
            remember(tag, seat, sorted(card["id"] for card in seen["setup_cards"]))
        up = seen.get("up")
        if seen["phase"] == "play" and up and not checked:
            checked = True
            opponent = {card["id"] for card in up[1 - seat]}
            known = records()
            matches = [record for record in known
                       if record[0] != tag and record[1] != seat and opponent <= set(record[2])]
            if matches:
                tag_seen, seat_seen, cards = matches[0]
                log(f"DEAL-MEMORY MATCH game {game_number} seat {seat}: opponent's setup cards "
                    f"{cards} (recorded from seat {seat_seen} via {WHERE})")
            else:
                log(f"DEAL-MEMORY NONE game {game_number} seat {seat} ({len(known)} records via {WHERE})")
        send({"type": "action", "id": message["id"], "index": 0})
    elif kind == "match_over":
        break
