"""What the test bot `counter` (tests/bots/counter) said in a stored run, read back from the
store: each process's sightings, in schedule order, and each stored game's result. Shared by
the tournament's and the league's tests of bot sessions (bot_process, warm_start)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from arena.store.db import Store


def sightings(out: Path) -> list[dict]:
    """What each bot's process said in each stored game, in schedule order (with the game's key)."""
    seen = []
    with Store.open(out) as store:
        for game in store.games("done"):
            logs = store.logs(game.key)
            for seat, bot in enumerate(game.bots):
                lines = [line for line in logs.get(seat, "").splitlines() if line.startswith("counter ")]
                for line in lines:
                    seen.append({**json.loads(line.removeprefix("counter ")), "bot": bot, "key": game.key,
                                 "deal": game.deal, "deal_seed": game.seed, "stored_seat": seat})
    return seen


def sightings_by_bot(out: Path) -> dict[str, list[dict]]:
    """The sightings of each bot, in schedule order."""
    by_bot = defaultdict(list)
    for seen in sightings(out):
        by_bot[seen["bot"]].append(seen)
    return dict(by_bot)


def results_of(out: Path) -> dict:
    """Each stored game: seats, places, scores and incidents."""
    with Store.open(out) as store:
        return {
            game.key: (store.game_result(game.key).seats, store.game_result(game.key).places,
                       store.game_result(game.key).scores,
                       [(i.bot, i.reason.value) for _, i in store.incidents(game.key)])
            for game in store.games("done")
        }
