"""The example bots in bots/: valid folders, separate programs, real matches without
incidents, heuristic bots that beat random, and their decisions in exact positions.

The Python bots are loaded here as modules (their folders on sys.path, as when they run)
to test single decisions; matches start them as real processes in the local sandbox.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import random
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from arena.config.botfolder import load_bot
from arena.play.match import run_match
from engine.registry import get_game
from engine.three_thirteen.melds import min_penalty

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
BOT_FOLDERS = sorted(path for path in BOTS.iterdir() if path.is_dir() and not path.name.startswith("."))
HAS_NODE = shutil.which("node") is not None


def load_module(folder: Path, module: str = "bot") -> types.ModuleType:
    """Import `folder/module.py` under a unique name, its folder first on sys.path."""
    name = f"example_{folder.name.replace('-', '_')}_{module}"
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location(name, folder / f"{module}.py")
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded
        spec.loader.exec_module(loaded)
    finally:
        sys.path.remove(str(folder))
    return loaded


def ctx(seed: int = 0) -> types.SimpleNamespace:
    """The part of arena_bot.Context the example bots use."""
    return types.SimpleNamespace(rng=random.Random(seed))


def decision(module: types.ModuleType, state, seat: int | None = None) -> dict:
    """The action the bot picks in a real engine state (observation and legal actions as sent)."""
    seat = state.current_player if seat is None else seat
    legal = state.legal_actions()
    choice = module.decide(state.observation(seat), legal, ctx())
    return legal[choice] if isinstance(choice, int) else choice


# -- folders -------------------------------------------------------------------------------


def test_there_are_example_bots_for_every_game_and_one_not_in_python():
    manifests = [load_bot(folder) for folder in BOT_FOLDERS]
    names = {manifest.name for manifest in manifests}
    assert {"random", "threeup-heuristic", "three-thirteen-heuristic", "node-simple"} <= names
    assert any(manifest.command[0] == "node" for manifest in manifests)


@pytest.mark.parametrize("folder", BOT_FOLDERS, ids=lambda folder: folder.name)
def test_every_bot_folder_passes_the_manifest_check(folder):
    manifest = load_bot(folder)
    assert manifest.folder == folder.resolve()
    for game in manifest.games:
        get_game(game)  # every declared game exists
    assert any((folder / word).is_file() for word in manifest.command), "the program is in the folder"


@pytest.mark.parametrize("folder", BOT_FOLDERS, ids=lambda folder: folder.name)
def test_python_bots_carry_the_helper_and_import_nothing_of_arena(folder):
    sources = list(folder.glob("*.py"))
    imported: set[str] = set()
    for source in sources:
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    # In Docker only the folder is mounted, with a plain python3: no engine, no arena.
    assert not imported & {"engine", "arena"}, f"{folder.name} imports {imported & {'engine', 'arena'}}"
    local = {source.stem for source in sources}
    outside_stdlib = imported - local - set(sys.stdlib_module_names)
    assert not outside_stdlib, f"{folder.name} needs {outside_stdlib}, which the base image lacks"
    if "arena_bot" in imported:
        assert (folder / "arena_bot.py").read_bytes() == (ROOT / "bots" / "arena_bot.py").read_bytes()


# -- real matches (local sandbox) ----------------------------------------------------------

MATCHES = [
    (folder, game)
    for folder in BOT_FOLDERS
    for game in load_bot(folder).games
]


@pytest.mark.parametrize("folder, game", MATCHES, ids=lambda value: getattr(value, "name", value))
def test_each_example_bot_plays_each_of_its_games_without_incidents(folder, game):
    if load_bot(folder).command[0] == "node" and not HAS_NODE:
        pytest.skip("node is not installed")
    seats = [folder, BOTS / "random", BOTS / "random"]
    games = 3 if game == "3up3down" else 1
    match = run_match(game, seats, games=games, seed=11)
    assert len(match.games) == games
    for result in match.games:
        assert result.incidents == []
        assert min(result.places) == 1 and len(result.places) == 3
    assert [bot.starts for bot in match.bots] == [1, 1, 1]  # no restart after a fault


def wins(match, bot_name: str) -> int:
    """Games the bot won (place 1, shared or not)."""
    return sum(
        1
        for result in match.games
        for seat, name in enumerate(result.seats)
        if name == bot_name and result.places[seat] == 1
    )


def test_threeup_heuristic_beats_random_clearly():
    # Deals and the bots' own seeds both come from the match seed: the outcome is fixed.
    # Measured over 200 games it wins about 90% (bots/README.md); 40 games, threshold 70%.
    match = run_match("3up3down", [BOTS / "threeup-heuristic", BOTS / "random"], games=40, seed=1)
    assert not any(result.incidents for result in match.games)
    assert wins(match, "threeup-heuristic") >= 28


def test_three_thirteen_heuristic_beats_random_clearly():
    match = run_match("three-thirteen", [BOTS / "three-thirteen-heuristic", BOTS / "random"], games=4, seed=1)
    assert not any(result.incidents for result in match.games)
    assert wins(match, "three-thirteen-heuristic") == 4
    heuristic = [result.scores[result.seats.index("three-thirteen-heuristic")] for result in match.games]
    rival = [result.scores[result.seats.index("random")] for result in match.games]
    assert sum(heuristic) * 3 < sum(rival)


# -- 3UP 3DOWN decisions -------------------------------------------------------------------

THREEUP = get_game("3up3down")


@pytest.fixture(scope="module")
def threeup_bot():
    return load_module(BOTS / "threeup-heuristic")


def deck_id(kind: str, value: int | None, colour: str, copy: int = 0) -> int:
    """A card id of the box deck (three colours)."""
    return THREEUP.new_game(2, seed=0).deck.ids(kind, value, colour)[copy]


def threeup_position(hand: list[int], discard_pile: list[int], draw_pile: list[int]):
    """Seat 0 to play from `hand`; seat 1 holds a 3DOWN card so the game is on."""
    return THREEUP.from_position(
        2,
        hands=[hand, []],
        up=[[], []],
        down=[[deck_id("number", 1, "red")], [deck_id("number", 1, "blue")]],
        draw_pile=draw_pile,
        discard_pile=discard_pile,
    )


def test_threeup_plays_the_lowest_value_with_all_its_copies(threeup_bot):
    fours = [deck_id("number", 4, "red"), deck_id("number", 4, "blue")]
    state = threeup_position(
        hand=fours + [deck_id("number", 9, "red"), deck_id("clear", None, "red")],
        discard_pile=[deck_id("number", 3, "red")],
        draw_pile=[deck_id("number", 8, "red")],
    )
    assert decision(threeup_bot, state) == {"type": "play", "cards": sorted(fours)}


def test_threeup_keeps_a_clear_while_a_number_can_be_played(threeup_bot):
    ten = deck_id("number", 10, "green")
    state = threeup_position(
        hand=[ten, deck_id("clear", None, "red"), deck_id("number", 2, "red")],
        discard_pile=[deck_id("number", 9, "red")],
        draw_pile=[deck_id("number", 8, "red")],
    )
    assert decision(threeup_bot, state) == {"type": "play", "cards": [ten]}


def test_threeup_spends_a_plain_clear_rather_than_pick_up_while_cards_are_left_to_draw(threeup_bot):
    clear = deck_id("clear", None, "red")
    state = threeup_position(
        hand=[deck_id("number", 2, "red"), clear, deck_id("clear1", None, "red")],
        discard_pile=[deck_id("number", 9, "red")],
        draw_pile=[deck_id("number", 8, "red")],
    )
    assert decision(threeup_bot, state) == {"type": "play", "cards": [clear]}


def test_threeup_spends_a_clear_plus_one_when_the_draw_pile_is_empty(threeup_bot):
    clear1 = deck_id("clear1", None, "red")
    state = threeup_position(
        hand=[deck_id("number", 2, "red"), deck_id("clear", None, "red"), clear1],
        discard_pile=[deck_id("number", 9, "red")],
        draw_pile=[],
    )
    assert decision(threeup_bot, state) == {"type": "play", "cards": [clear1]}


def test_threeup_makes_a_next_player_on_its_3up_pick_up(threeup_bot):
    nine = deck_id("number", 9, "red")
    hand = [deck_id("number", 5, "red"), nine, deck_id("number", 10, "red")]
    state = THREEUP.from_position(
        2,
        hands=[hand, []],
        up=[[], [deck_id("number", 7, "red"), deck_id("number", 8, "red")]],
        down=[[deck_id("number", 1, "red")], [deck_id("number", 1, "blue")]],
        discard_pile=[deck_id("number", 4, "red")],
    )
    # Seat 1 has no hand and nothing to draw: it plays from its 3UP (7, 8), so a 9 beats it.
    assert decision(threeup_bot, state) == {"type": "play", "cards": [nine]}


def test_threeup_plays_low_when_the_next_player_could_answer_anything(threeup_bot):
    five = deck_id("number", 5, "red")
    hand = [five, deck_id("number", 9, "red")]
    state = THREEUP.from_position(
        2,
        hands=[hand, []],
        up=[[], [deck_id("number", 7, "red"), deck_id("clear", None, "red")]],
        down=[[deck_id("number", 1, "red")], [deck_id("number", 1, "blue")]],
        discard_pile=[deck_id("number", 4, "red")],
    )
    assert decision(threeup_bot, state) == {"type": "play", "cards": [five]}


def test_threeup_refills_before_the_extra_action(threeup_bot):
    clear1 = deck_id("clear1", None, "red")
    state = threeup_position(
        hand=[deck_id("number", 2, "red"), clear1],
        discard_pile=[deck_id("number", 9, "red")],
        draw_pile=[deck_id("number", 8, "red"), deck_id("number", 7, "red")],
    )
    state.apply({"type": "play", "cards": [clear1]})
    assert {"type": "refill"} in state.legal_actions()
    assert decision(threeup_bot, state) == {"type": "refill"}


def setup_request(cards: list[dict], choose_for_others: bool = False) -> tuple[dict, list[dict]]:
    """A setup observation (the parts a bot reads) and every trio as a legal action."""
    observation = {
        "game": "3up3down",
        "phase": "setup",
        "players": 2,
        "seat": 0,
        "rules": {"choose_for_others": choose_for_others},
        "setup_cards": cards,
        "hand": [],
    }
    trios = itertools.combinations(sorted(card["id"] for card in cards), 3)
    return observation, [{"type": "choose_up", "cards": list(trio)} for trio in trios]


SIX = [
    {"id": 4, "kind": "number", "value": 2, "colour": "blue"},
    {"id": 11, "kind": "number", "value": 3, "colour": "blue"},
    {"id": 29, "kind": "number", "value": 5, "colour": "green"},
    {"id": 42, "kind": "number", "value": 7, "colour": "red"},
    {"id": 63, "kind": "number", "value": 10, "colour": "red"},
    {"id": 71, "kind": "clear", "value": None, "colour": "blue"},
]


def test_threeup_lays_its_strongest_cards_face_up(threeup_bot):
    observation, legal = setup_request(SIX)
    choice = threeup_bot.decide(observation, legal, ctx())
    assert legal[choice] == {"type": "choose_up", "cards": [42, 63, 71]}


def test_threeup_gives_its_neighbour_the_weakest_cards(threeup_bot):
    observation, legal = setup_request(SIX, choose_for_others=True)
    choice = threeup_bot.decide(observation, legal, ctx())
    assert legal[choice] == {"type": "choose_up", "cards": [4, 11, 29]}


def test_threeup_falls_back_to_a_legal_action_on_an_observation_it_does_not_understand(threeup_bot, capsys):
    legal = [{"type": "play", "cards": [999]}, {"type": "play", "cards": [998]}]
    choice = threeup_bot.decide({"phase": "something new"}, legal, ctx())
    assert choice in (0, 1)
    assert "fell back to a random action" in capsys.readouterr().err


# -- Three Thirteen decisions --------------------------------------------------------------

THIRTEEN = get_game("three-thirteen")


def card(name: str) -> int:
    """A card id of deck 0 from a name like '7H', '10S', 'KC'."""
    ranks = {"A": 1, "J": 11, "Q": 12, "K": 13}
    rank_text, suit = name[:-1], name[-1]
    rank = ranks.get(rank_text) or int(rank_text)
    return "CDHS".index(suit) * 13 + rank - 1


def thirteen_position(hand: list[str], discard_pile: list[str], stock: list[str], round: int = 1, **options):
    """Seat 0 to draw in `round`; seat 1 holds aces, twos, jacks and queens (unused by the tests)."""
    other = ["AC", "AD", "AH", "AS", "2C", "2H", "2S", "JC", "JD", "JH", "JS", "QC", "QD"][: round + 2]
    return THIRTEEN.position(
        [[card(name) for name in hand], [card(name) for name in other]],
        stock=[card(name) for name in stock],
        discard_pile=[card(name) for name in discard_pile],
        round=round,
        dealer=1,
        current=0,
        options=options,
    )


@pytest.fixture(scope="module")
def thirteen_bot():
    return load_module(BOTS / "three-thirteen-heuristic")


def test_thirteen_takes_the_discard_that_completes_a_run_and_goes_out(thirteen_bot):
    state = thirteen_position(["5H", "6H", "KC"], discard_pile=["7H"], stock=["9S", "QS"])
    assert decision(thirteen_bot, state) == {"type": "draw", "source": "discard"}
    state.apply({"type": "draw", "source": "discard"})
    assert decision(thirteen_bot, state) == {"type": "go_out", "card": card("KC")}


def test_thirteen_draws_from_the_stock_when_the_discard_does_not_lower_its_deadwood(thirteen_bot):
    state = thirteen_position(["5H", "6H", "KC"], discard_pile=["KS"], stock=["9S", "QS"])
    assert decision(thirteen_bot, state) == {"type": "draw", "source": "stock"}


def test_thirteen_discards_the_card_that_leaves_the_least_deadwood(thirteen_bot):
    # Round 2, 4s wild: 7-8-9 of clubs is a run; of Q of spades and 2 of diamonds the Q goes.
    state = thirteen_position(["7C", "8C", "9C", "QS"], discard_pile=["KH"], stock=["9S", "2D"], round=2)
    state.apply({"type": "draw", "source": "stock"})
    assert decision(thirteen_bot, state) == {"type": "discard", "card": card("QS")}


def test_thirteen_goes_out_with_its_highest_card_but_never_with_a_wild(thirteen_bot):
    # Round 2, 4s wild, an unmatched wild costs 25: any of the five cards can go out.
    state = thirteen_position(["7C", "8C", "9C", "4S"], discard_pile=["KH"], stock=["9S", "10C"], round=2, wild_penalty=25)
    state.apply({"type": "draw", "source": "stock"})
    going_out = [action["card"] for action in state.legal_actions() if action["type"] == "go_out"]
    assert sorted(going_out) == sorted(card(name) for name in ["7C", "8C", "9C", "10C", "4S"])
    assert decision(thirteen_bot, state) == {"type": "go_out", "card": card("10C")}


def test_thirteen_falls_back_to_a_legal_action_on_an_observation_it_does_not_understand(thirteen_bot, capsys):
    legal = [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}]
    choice = thirteen_bot.decide({"phase": "draw"}, legal, ctx())
    assert choice in (0, 1)
    assert "fell back to a random action" in capsys.readouterr().err


# -- the Three Thirteen bot's own deadwood evaluator -----------------------------------------


@pytest.fixture(scope="module")
def deadwood():
    return load_module(BOTS / "three-thirteen-heuristic", "deadwood")


def as_pairs(ids: list[int]) -> list[tuple[int, int]]:
    return [(card_id % 13 + 1, card_id % 52 // 13) for card_id in ids]


def test_deadwood_of_a_run_a_set_and_a_loner(deadwood):
    hand = [card(name) for name in ["5H", "6H", "7H", "9C", "9D", "9S", "KC"]]
    assert deadwood.least_deadwood(as_pairs(hand), wild_rank=3) == 10


def test_deadwood_three_wilds_alone_make_a_set_unless_the_option_forbids_it(deadwood):
    wilds = as_pairs([card(name) for name in ["4C", "4D", "4H"]])
    assert deadwood.least_deadwood(wilds, wild_rank=4) == 0
    assert deadwood.least_deadwood(wilds, wild_rank=4, all_wild=False) == 3 * 4
    assert deadwood.least_deadwood(wilds, wild_rank=4, all_wild=False, wild_penalty=20) == 3 * 20
    # With a natural card they are a set again (the king and three wilds).
    assert deadwood.least_deadwood(wilds + as_pairs([card("KS")]), wild_rank=4, all_wild=False) == 0


def test_deadwood_agrees_with_the_referee_on_random_hands(deadwood):
    rng = random.Random(2024)
    for _ in range(300):
        decks = rng.choice([1, 2, 3])
        size = rng.randint(3, 14)
        wild_rank = rng.randint(3, 13)
        ace_high = rng.random() < 0.3
        wild_penalty = rng.choice([0, 0, 1, 25])
        all_wild = rng.random() < 0.7
        pool = range(52 * decks)
        if rng.random() < 0.6:  # dense hands: two suits, seven ranks, plus the wilds
            suits, low = rng.sample(range(4), 2), rng.randint(1, 7)
            pool = [c for c in pool if (c % 52 // 13 in suits and low <= c % 13 + 1 <= low + 6) or c % 13 + 1 == wild_rank]
        hand = rng.sample(list(pool), min(size, len(pool)))
        options = {"ace_high": ace_high, "wild_penalty": wild_penalty, "all_wild": all_wild}
        evaluator = deadwood.Hand(as_pairs(hand), wild_rank, **options)
        reference = {"wild_penalty": wild_penalty or None, "all_wild": all_wild}
        assert evaluator.least() == min_penalty(hand, wild_rank, ace_high, **reference), hand
        for position in range(len(hand)):
            rest = hand[:position] + hand[position + 1 :]
            assert evaluator.least_without(position) == min_penalty(rest, wild_rank, ace_high, **reference), (hand, position)


# -- the Node.js bot on its own, and the bots in Docker --------------------------------------


@pytest.mark.skipif(not HAS_NODE, reason="node is not installed")
def test_node_bot_answers_hello_and_requests_and_ignores_unknown_messages():
    hello = {
        "type": "hello", "protocol": 1, "game": "three-thirteen", "players": 2, "rules": {},
        "games": 1, "seed": 96783563785110,
        "limits": {"startup_s": 10.0, "decision_s": 1.0, "time_bank_s": 10.0, "max_line_bytes": 1048576, "memory_mb": 512},
    }
    state = thirteen_position(["5H", "6H", "KC"], discard_pile=["7H"], stock=["9S", "QS"])
    request = {
        "type": "request", "id": 1, "observation": state.observation(0),
        "legal_actions": state.legal_actions(), "time_s": 1.0, "bank_s": 10.0,
    }
    lines = [hello, {"type": "something-newer", "x": 1}, request, {"type": "match_over", "games": 1}]
    completed = subprocess.run(
        ["node", "bot.js"],
        cwd=BOTS / "node-simple",
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    answers = [json.loads(line) for line in completed.stdout.splitlines()]
    assert completed.returncode == 0, completed.stderr
    assert answers[0] == {"type": "ready", "name": "node-simple", "version": "1.0", "protocol": 1}
    # The 7 of hearts next to the 5 and 6 of hearts is worth taking.
    assert answers[1:] == [{"type": "action", "id": 1, "index": 1}]


@pytest.mark.parametrize(
    "folder, game",
    [(BOTS / "threeup-heuristic", "3up3down"), (BOTS / "three-thirteen-heuristic", "three-thirteen")],
    ids=["threeup-heuristic", "three-thirteen-heuristic"],
)
def test_python_example_bots_play_in_docker_on_the_base_image(docker_engine, folder, game):
    match = run_match(game, [folder, BOTS / "random"], games=1, seed=5, sandbox="docker")
    assert match.sandbox == "docker"
    assert match.games[0].incidents == []


def test_node_bot_brings_a_dockerfile_with_node():
    manifest = load_bot(BOTS / "node-simple")
    assert manifest.dockerfile == "Dockerfile"
    lines = (BOTS / "node-simple" / "Dockerfile").read_text().splitlines()
    assert "FROM node:20-slim" in lines and any(line.startswith("COPY bot.js") for line in lines)


def test_node_bot_plays_in_docker_from_its_own_image(docker_engine):
    # Skipped even in CI: these machines cannot pull node:20-slim (see bots/README.md).
    from arena.sandbox.docker import engine_problem

    problem = engine_problem("node:20-slim")
    if problem:
        pytest.skip(f"{problem} (the node bot's image is built FROM node:20-slim)")
    match = run_match("3up3down", [BOTS / "node-simple", BOTS / "random"], games=1, seed=5, sandbox="docker")
    assert match.games[0].incidents == []
