"""Test bot 'seer': knows arena's code and tries to compute the hidden deal of its game.

At its first decision of each game it has seen its `hello` seed, its seat, the game
number and its own six setup cards. It then tries every seed below `seeds` (from
seer.json beside it) with every way arena derives seeds, old and new:
- the bot seeds a bot is given in `hello` (the cheap check: an equal seed names the key),
  from which it takes the deal seed;
- the deal seeds themselves, compared with its own six cards (a partial shuffle, so a
  million candidates take seconds, not minutes).
A candidate deal seed counts only if the engine's own deal gives exactly its six cards.
It writes one line to stderr: "SEER PREDICTED deal seed D (how)" or "SEER BLIND after N
seeds", plays the first legal action and goes on. First it tries to read each file listed
under "steal" in seer.json: "SEER STOLE path" or "SEER DENIED path".

Standard library plus arena's `arena.store.seeds` and `engine` (found through seer.json's
"root"), as a bot that read arena's source would have them.
"""

import hashlib
import hmac
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "seer.json")) as source:
    SETTINGS = json.load(source)
sys.path.insert(0, os.path.join(HERE, SETTINGS["root"]))  # relative to the bot folder

from arena.store.seeds import RunKey  # noqa: E402
from engine import get_game  # noqa: E402

NAMES = SETTINGS.get("names", ["seer"])  # the ids arena may have given this bot
TABLES = SETTINGS.get("tables", 2)  # tournament deal keys tried: rounds 1-2, tables 1..TABLES


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


# -- derivations arena used before the run key (kept here: the seer knows old code too) --

def old_deal_seed(seed, deal):
    return int.from_bytes(hashlib.sha256(f"arena/{seed}/{deal}".encode()).digest()[:8], "big") >> 1


def old_hello_seed(deal_seed, bot_id):
    return int.from_bytes(hashlib.sha256(f"arena-bot:{deal_seed}:{bot_id}".encode()).digest()[:6], "big")


def old_match_bot_seed(match_seed, index):
    return int.from_bytes(hashlib.sha256(f"arena-bot:{match_seed}:{index}".encode()).digest()[:6], "big")


# -- the deal --------------------------------------------------------------------------

IPAD = bytes(byte ^ 0x36 for byte in range(256))
OPAD = bytes(byte ^ 0x5C for byte in range(256))


def keyed(key):
    """HMAC-SHA256 under KEY (at most a block long) as a function of the message: the
    key's two padded blocks hashed once for the seven labels a candidate seed is tried
    with (a third of the time of seven `hmac.digest` calls)."""
    block = key.ljust(64, b"\0")
    inner, outer = hashlib.sha256(block.translate(IPAD)), hashlib.sha256(block.translate(OPAD))

    def mac(message):
        first = inner.copy()
        first.update(message)
        second = outer.copy()
        second.update(first.digest())
        return second.digest()

    return mac


def partial_shuffler(deck_size, players, seat):
    """offer(deal_seed, own=None): the seat's six setup cards if the deal seed were
    `deal_seed`. Only the first swaps of Python's shuffle decide the cards popped first
    (three face-down each, then six each). Tried a million times, so as Python's own code,
    inlined: one generator reseeded by the C seed (what `random.Random(deal_seed)` does for
    an int) and `_randbelow` (getrandbits of the bound's length until below it)."""
    import _random
    import random

    rng = random.Random()
    reseed, bits = _random.Random.seed, rng.getrandbits
    wanted_from = 3 * players + 6 * seat
    swaps = [(i, i + 1, (i + 1).bit_length()) for i in range(deck_size - 1, deck_size - 1 - wanted_from - 6, -1)]

    def offer(deal_seed, own=None):
        reseed(rng, deal_seed)
        moved = {}
        cards = []
        for step, (i, bound, width) in enumerate(swaps):
            j = bits(width)
            while j >= bound:
                j = bits(width)
            at_i, at_j = moved.get(i, i), moved.get(j, j)
            moved[j] = at_i
            if step >= wanted_from:
                if own is not None and at_j not in own:
                    return None  # not this deal: no need to finish
                cards.append(at_j)
        return sorted(cards)

    return offer


def engine_offer(game, players, rules, deal_seed, seat):
    state = game.new_game(players, rules, deal_seed)
    return sorted(card["id"] for card in state.observation(seat)["setup_cards"])


def search(hello, start, own_cards):
    """The deal seed of this game if any derivation gives it, else None; and how."""
    game = get_game(hello["game"])
    players, rules, seat, number = hello["players"], hello["rules"], start["seat"], start["game_number"]
    deck_size = len(game.new_game(players, rules, 0).deck)
    hello_seed = hello["seed"]
    offer = partial_shuffler(deck_size, players, seat)
    deals = [f"{r:05d}-{t:05d}" for r in (1, 2) for t in range(1, TABLES + 1)]
    game_keys = [f"{deal}-{rotation}" for deal in deals for rotation in range(players)]

    def confirm(deal_seed):
        return engine_offer(game, players, rules, deal_seed, seat) == own_cards

    own_set = frozenset(own_cards)

    def quick(deal_seed):
        return offer(deal_seed, own_set) == own_cards and confirm(deal_seed)

    # The partial shuffle must agree with the engine, or every "blind" below means nothing.
    for probe in (1, 2, 3, 2**62 + 12345):
        assert offer(probe) == engine_offer(game, players, rules, probe, seat), (
            "the seer's partial shuffle disagrees with the engine"
        )

    # arena.store.seeds derives a bot or deal seed as the top bits of HMAC-SHA256(key, label): the
    # labels are fixed, so they are built once (checked against RunKey itself first).
    sha = hashlib.sha256
    match_deal = f"match-{number:05d}"
    bot_labels = [(f"bot/match/{name}".encode(), "match", name) for name in NAMES]
    bot_labels += [(f"bot/{game_key}/{name}".encode(), game_key, name) for game_key in game_keys for name in NAMES]
    deal_labels = [f"deal/{match_deal}".encode(), b"deal/00001-00001"]
    probe = RunKey.from_seed(7)
    mac = keyed(probe.material)
    assert all(mac(label) == hmac.digest(probe.material, label, "sha256") for label in deal_labels)
    assert all(
        int.from_bytes(mac(label)[:8], "big") >> 16 == probe.bot_seed(scope, name) for label, scope, name in bot_labels
    ), "the seer's bot seeds disagree with arena.store.seeds"
    assert int.from_bytes(mac(deal_labels[0])[:8], "big") >> 1 == probe.deal_seed(match_deal)
    old_deals = [(deal, name) for deal in deals for name in NAMES]

    for s in range(SETTINGS["seeds"]):
        mac = keyed(f"arena-public-seed:{s}".encode())  # RunKey.from_seed(s).material
        # 1. hello seeds: an equal one means s is the run's seed, and names the game.
        for label, scope, name in bot_labels:
            if int.from_bytes(mac(label)[:8], "big") >> 16 == hello_seed:
                key = RunKey.from_seed(s)
                deal_seed = key.deal_seed(match_deal if scope == "match" else scope[:11])
                if confirm(deal_seed):
                    return deal_seed, f"public seed {s} ({scope}), from the hello seed"
        for deal, name in old_deals:
            old = int.from_bytes(sha(f"arena/{s}/{deal}".encode()).digest()[:8], "big") >> 1
            if old_hello_seed(old, name) == hello_seed and confirm(old):
                return old, f"old tournament seed {s}, from the hello seed"
        for index in range(players):
            if old_match_bot_seed(s, index) == hello_seed and confirm(s + number - 1):
                return s + number - 1, f"old match seed {s}, from the hello seed"
        # 2. deal seeds straight from s, without the hello seed (the old schemes' deals were
        # found through their hello seeds above).
        for label, how in zip(deal_labels, ("public match seed", "public tournament seed")):
            deal_seed = int.from_bytes(mac(label)[:8], "big") >> 1
            if quick(deal_seed):
                return deal_seed, f"{how} {s}, from the deal alone"
    return None, None


hello = start = None
searched = set()
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        hello = message
        send({"type": "ready", "name": "seer", "version": "1"})
    elif kind == "start":
        start = message
    elif kind == "request":
        observation = message["observation"]
        if start["game_number"] not in searched and observation.get("setup_cards"):
            searched.add(start["game_number"])
            for path in SETTINGS.get("steal", []):  # files a bot must not read (the store, other bots)
                try:
                    with open(path, "rb") as stolen:
                        stolen.read(1)
                    log(f"SEER STOLE {path}")
                except OSError as error:
                    log(f"SEER DENIED {path} ({error.strerror})")
            own = sorted(card["id"] for card in observation["setup_cards"])
            began = time.monotonic()
            found, how = search(hello, start, own)
            took = time.monotonic() - began
            if found is None:
                log(f"SEER BLIND after {SETTINGS['seeds']} seeds ({took:.1f} s)")
            else:
                log(f"SEER PREDICTED deal seed {found} ({how}; {took:.1f} s)")
        send({"type": "action", "id": message["id"], "index": 0})
    elif kind == "match_over":
        break
