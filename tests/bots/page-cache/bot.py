"""Test bot 'page-cache': carries a message from one of its processes to the next through
the page cache of a file of its own folder (issue 33, item 1).

The file is `padding.bin` in its folder (PAGES pages, made by the test). Each page is a
bit: cached or not. At the start of each game the bot
1. reads the bits: one byte of each page with preadv2(RWF_NOWAIT), which fails with
   EAGAIN when the page is not in the page cache (and reads nothing from the disk);
   under POSIX_FADV_RANDOM, so that no read brings in a neighbour;
2. says on stderr what it read: "PAGE-CACHE got HEX" when the bits are a message (a
   PAYLOAD-byte payload followed by the first CHECK bytes of its SHA-256), else
   "PAGE-CACHE none CACHED/PAGES" (how many pages were cached), or "PAGE-CACHE none
   (ERRNO)" when the state cannot be read (a file on a tmpfs: EOPNOTSUPP);
3. writes a new random message: every page out of the cache (POSIX_FADV_DONTNEED, after
   reading the whole file once so that no read still in flight brings one back), then
   a plain read of each page whose bit is 1; and says "PAGE-CACHE put HEX".
A message read by another process than the one that put it carried PAYLOAD * 8 bits from
one game to another. Plays the first legal action. Standard library only.
"""

import errno
import hashlib
import json
import os
import sys
import time

PAGE = 4096
PAYLOAD, CHECK = 24, 8
PAGES = (PAYLOAD + CHECK) * 8
PADDING = "padding.bin"


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def cached(fd, page):
    try:
        return os.preadv(fd, [bytearray(1)], page * PAGE, os.RWF_NOWAIT) == 1
    except BlockingIOError:
        return False  # EAGAIN: not in the page cache


def to_bits(data):
    return [(byte >> shift) & 1 for byte in data for shift in range(7, -1, -1)]


def to_bytes(bits):
    return bytes(sum(bit << (7 - place) for place, bit in enumerate(bits[at:at + 8]))
                 for at in range(0, len(bits), 8))


def read_message(fd):
    bits = [int(cached(fd, page)) for page in range(PAGES)]
    data = to_bytes(bits)
    payload, check = data[:PAYLOAD], data[PAYLOAD:]
    if hashlib.sha256(payload).digest()[:CHECK] == check:
        return payload.hex(), sum(bits)
    return None, sum(bits)


def put_message(fd):
    payload = os.urandom(PAYLOAD)
    bits = to_bits(payload + hashlib.sha256(payload).digest()[:CHECK])
    os.pread(fd, PAGES * PAGE, 0)  # every read in flight done: none lands after the drop
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    time.sleep(0.01)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    for page, bit in enumerate(bits):
        if bit:
            os.pread(fd, 1, page * PAGE)
    return payload.hex()


def channel():
    try:
        fd = os.open(PADDING, os.O_RDONLY)
    except OSError as error:
        log(f"PAGE-CACHE error {error}")
        return
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        try:
            got, count = read_message(fd)
            log(f"PAGE-CACHE got {got}" if got else f"PAGE-CACHE none {count}/{PAGES}")
        except OSError as error:  # e.g. EOPNOTSUPP: a tmpfs has no RWF_NOWAIT (nothing to wait for)
            log(f"PAGE-CACHE none ({errno.errorcode.get(error.errno, error.errno)})")
        log(f"PAGE-CACHE put {put_message(fd)}")
    except OSError as error:
        log(f"PAGE-CACHE error {error}")
    finally:
        os.close(fd)


for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        send({"type": "ready", "name": "page-cache", "version": "1"})
    elif kind == "start":
        channel()
    elif kind == "request":
        send({"type": "action", "id": message["id"], "index": 0})
    elif kind == "match_over":
        break
