"""A match: the same bots play N games of one game, seats rotating, one bot process per
bot for the whole match (`arena match`, the bot author's debugging tool).

Game i (1-based) is dealt from the deal seed `key.deal_seed("match-i")` of the match's
`arena.store.seeds.RunKey` (a secret drawn for the match, or the public key of `--seed`), and
seat s is taken by bot (s + i - 1) mod n, so over n games every bot sits in every seat.
A paired match (`paired=True`, what `arena match --sprt` plays) deals each deal once per
seat rotation: game i's deal key is `match-k` with k = (i - 1) // n + 1, so for two bots
games 2k - 1 and 2k are deal k played from both seats. Each bot then has one process per
seat rotation (rotation (i - 1) mod n plays game i), as a duplicate tournament has a slot
per rotation: no process sees one deal twice, nor from two seats (one process for both
games of a pair would hold its opponent's cards the second time). `stop`, asked after
each game, may end a match before its `games` (the SPRT's decision).
Each bot's `hello` seed is `key.bot_seed("match", name)` (a paired match's process for
rotation r > 0: `"match-rotation-r"`): neither seed can be computed from the other without
the key. Each game is played by the executor (`arena.play.executor.play_seats`, the bots
kept for the next game) and its `GameResult` kept; `standings` sums them up per bot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arena.config.botfolder import load_bot
from arena.config.field import unique_names
from arena.errors import ArenaError
from arena.game.protocol import MatchOver
from arena.game.record import GameResult
from arena.game.referee import Step
from arena.game.seats import Seat
from arena.langs.build import BuildFailed, build_bots
from arena.play.executor import play_seats, remote_bot
from arena.sandbox import get_sandbox
from arena.sandbox.base import Limits, Sandbox
from arena.store.seeds import RunKey
from engine.api import Game
from engine.registry import get_game


class MatchError(ArenaError, ValueError):
    """A match cannot be set up as asked (the message says what is allowed)."""


class MatchBot(BaseModel):
    """A bot's part in a match: its name in results, its manifest's version and folder, and
    the processes it ran (a match keeps one process per bot, one per seat rotation when
    paired, restarted after a fault)."""

    name: str
    version: str
    folder: str
    starts: int = Field(0, description="How many processes were started (1 + restarts after faults).")
    log: str = Field("", description="The kept stderr of the last process that played.")


class MatchResult(BaseModel):
    """Every game of a match, and the bots in it."""

    game: str
    seed: int | None = Field(description="The public seed given, or None when the match drew a secret.")
    secret: str | None = Field(
        None, description="The match's secret key (hex) when no seed was given: with it every deal can be re-checked."
    )
    rules: dict[str, Any]
    sandbox: str
    bots: list[MatchBot]
    games: list[GameResult]


class MatchTally(BaseModel):
    """One bot's sums over a match: not a rated standing (a match is not rated; its mean
    score is the game's own score, not the standings' place score), so apart from
    `arena.ratings.standings`."""

    bot: str
    games: int
    wins: int
    mean_place: float
    mean_score: float
    incidents: dict[str, int]


def match_deal(number: int) -> str:
    """The deal key of game `number` (1-based) of a match."""
    return f"match-{number:05d}"


def match_stream(rotation: int) -> str:
    """The key a bot's `hello` seed is drawn for: "match", and per later seat rotation of a
    paired match its own (its process is another one)."""
    return "match" if rotation == 0 else f"match-rotation-{rotation}"


def run_match(
    game: str,
    bot_dirs: Sequence[str | Path],
    games: int = 1,
    seed: int | None = None,
    sandbox: str | Sandbox = "local",
    rules: Mapping[str, Any] | None = None,
    limits: Limits | None = None,
    on_step: Step | None = None,
    on_game: Callable[[GameResult], None] | None = None,
    sandbox_settings: Mapping[str, Any] | None = None,
    paired: bool = False,
    stop: Callable[[list[GameResult]], bool] | None = None,
) -> MatchResult:
    """Play `games` games of `game` between the bots in `bot_dirs` (one seat each).

    `seed=None` (the default) draws a secret key for the match; an integer is a public
    seed: the match is reproducible from it, and its deals predictable by anyone.
    `paired`: every deal is played once from each seat rotation (see the module docstring).
    `stop(games so far)`, asked after each game, ends the match early when it returns True
    (the bots were told `games` in `hello`: the most the match may have)."""
    chosen: Game = get_game(game)
    if games < 1:
        raise MatchError(f"a match has at least 1 game, not {games}")
    manifests = [load_bot(folder) for folder in bot_dirs]
    chosen.check_players(len(manifests))
    for manifest in manifests:
        if not manifest.plays(chosen.name):
            raise MatchError(
                f"bot {manifest.name!r} ({manifest.folder}) does not play {chosen.name!r}; "
                f"its bot.toml lists: {', '.join(manifest.games)}"
            )
    resolved_rules = chosen.resolve_options(rules)
    limits = limits or Limits()
    box = get_sandbox(sandbox, **dict(sandbox_settings or {})) if isinstance(sandbox, str) else sandbox
    box.hide_paths(manifest.folder for manifest in manifests)  # each bot sees only its own folder
    box.cleanup_leftovers()
    try:
        build_bots(box, [(manifest.name, manifest.spec()) for manifest in manifests])
    except BuildFailed as error:
        raise MatchError(str(error)) from None
    key = RunKey.generate() if seed is None else RunKey.from_seed(seed)
    names = unique_names(manifests)
    players = len(manifests)
    rotations = players if paired else 1
    # processes[b][r]: bot b's process for seat rotation r (one rotation unless paired),
    # told in `hello` the games of its rotation.
    processes = [
        [
            remote_bot(
                manifest.spec(name), box, limits, game=chosen.name, players=players, rules=resolved_rules,
                games=len(range(rotation, games, rotations)), seed=key.bot_seed(match_stream(rotation), name),
            )
            for rotation in range(min(rotations, games))
        ]
        for manifest, name in zip(manifests, names)
    ]
    bots = [rotation_bots[0] for rotation_bots in processes]  # each bot's latest, for its log
    results: list[GameResult] = []
    try:
        for number in range(games):
            rotation = number % rotations
            bots = [rotation_bots[rotation] for rotation_bots in processes]
            seats: list[Seat] = [bots[(seat + number) % players] for seat in range(players)]
            deal = match_deal(number // players + 1 if paired else number + 1)
            result = play_seats(
                chosen, seats, resolved_rules, seed=key.deal_seed(deal), game_number=number + 1,
                on_step=on_step, keep=True,
            ).result
            results.append(result)
            if on_game is not None:
                on_game(result)
            if stop is not None and stop(results):
                break
    finally:
        try:
            for rotation_bots in processes:
                for rotation, bot in enumerate(rotation_bots):
                    bot.finish(MatchOver(games=len(range(rotation, len(results), rotations))))
        finally:
            box.close()  # whatever the sandbox keeps for warm slots (a match starts its bots cold)
    return MatchResult(
        game=chosen.name,
        seed=seed,
        secret=key.secret,
        rules=resolved_rules,
        sandbox=box.name,
        bots=[
            MatchBot(
                name=bot.name,
                version=manifest.version,
                folder=str(manifest.folder),
                starts=sum(process.starts for process in rotation_bots),
                log=(bot.logs() or [""])[-1],
            )
            for bot, rotation_bots, manifest in zip(bots, processes, manifests)
        ],
        games=results,
    )


def standings(match: MatchResult) -> list[MatchTally]:
    """Per bot: games, wins (place 1), mean place, mean score and incidents by reason."""
    table = []
    for bot in match.bots:
        places, scores, incidents = [], [], {}
        for result in match.games:
            for seat, name in enumerate(result.seats):
                if name == bot.name:
                    places.append(result.places[seat])
                    scores.append(result.scores[seat])
            for incident in result.incidents:
                if incident.bot == bot.name:
                    incidents[incident.reason.value] = incidents.get(incident.reason.value, 0) + 1
        table.append(
            MatchTally(
                bot=bot.name,
                games=len(places),
                wins=sum(1 for place in places if place == 1),
                mean_place=sum(places) / len(places) if places else 0.0,
                mean_score=sum(scores) / len(scores) if scores else 0.0,
                incidents=incidents,
            )
        )
    return table
