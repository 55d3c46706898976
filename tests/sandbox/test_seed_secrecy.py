"""The deal stays secret: with default settings a bot cannot compute any hidden card.

Every seed of a run comes from its `RunKey` (arena/store/seeds.py): a stored secret by default,
the public key of a user's seed otherwise. The "seer" test bot (tests/bots/seer) knows
arena's code, old and new, and tries every seed below a million with every derivation;
with a public seed it must find its deal (so the test can fail), with the default secret
it must not.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import sqlite3
import stat
import tempfile
import threading
from pathlib import Path

import pytest

from arena.game.seats import InProcessBot
from arena.play.match import match_deal, run_match
from arena.play.tournament import TournamentInterrupted, run_tournament, validate_config
from arena.sandbox.base import Limits
from arena.store.db import Store, StoreError
from arena.store.seeds import RunKey, SeedError
from tests.command import arena

ROOT = Path(__file__).resolve().parents[2]
SEER = ROOT / "tests" / "bots" / "seer"
RANDOM = ROOT / "bots" / "random"
SEARCHED = 1_000_000  # seeds the seer tries against a default run
SHORT = {"max_turns": 40}
# The seer searches at its first decision: give it the time a million candidates take.
PATIENT = {"decision_s": 600, "time_bank_s": 0, "startup_s": 30}


def seer_folder(tmp_path: Path, seeds: int, steal: tuple[str, ...] = ()) -> Path:
    """The seer with its own copy of arena.store.seeds and engine (as a bot that read arena's
    source would carry them), so it runs whatever user the sandbox runs it as."""
    folder = tmp_path / "seer"
    shutil.copytree(SEER, folder, ignore=shutil.ignore_patterns("__pycache__"))
    lib = folder / "lib"
    (lib / "arena" / "store").mkdir(parents=True)
    (lib / "arena" / "__init__.py").write_text("")
    (lib / "arena" / "store" / "__init__.py").write_text("")
    shutil.copy(ROOT / "arena" / "store" / "seeds.py", lib / "arena" / "store" / "seeds.py")
    shutil.copytree(ROOT / "engine", lib / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "seer.json").write_text(json.dumps({"root": "lib", "seeds": seeds, "names": ["seer"], "tables": 1, "steal": list(steal)}))
    for path in [folder, *folder.rglob("*")]:  # readable by anyone: bots may run as nobody
        path.chmod(path.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0))
    return folder


def verdict(log: str) -> str:
    """The seer's one line about its search."""
    lines = [line for line in log.splitlines() if line.startswith(("SEER PREDICTED", "SEER BLIND"))]
    assert len(lines) == 1, log[-2000:]
    return lines[0]


def seer_match(tmp_path: Path, seed: int | None, seeds: int) -> str:
    return seer_match_game(tmp_path, seed, seeds)[0]


def seer_match_game(tmp_path: Path, seed: int | None, seeds: int) -> tuple[str, int]:
    """The seer's line about its search, and the deal seed its game really had."""
    result = run_match(
        "3up3down", [seer_folder(tmp_path, seeds), RANDOM], games=1, seed=seed,
        rules=SHORT, limits=Limits(**PATIENT),
    )
    assert [incident.reason for incident in result.games[0].incidents] == []
    return verdict(result.bots[0].log), result.games[0].seed


def found_the_deal(line: str, deal_seed: int) -> bool:
    """Whether the seer named its game's real deal seed. Its search matches only its own six
    setup cards, so among a million candidates another seed that deals it the same six
    cards turns up now and then (84 cards: about one search in 200): a "prediction" of the
    wrong seed is such a collision and tells the seer nothing about the deal."""
    if line.startswith("SEER BLIND"):
        return False
    assert line.startswith("SEER PREDICTED deal seed "), line
    return int(line.split()[4]) == deal_seed


def seer_tournament(tmp_path: Path, seed: int | None, seeds: int) -> tuple[str, int, Path]:
    out = tmp_path / "out"
    settings = {
        "game": "3up3down", "seats": 2, "bots": [str(seer_folder(tmp_path, seeds)), str(RANDOM)],
        "output": str(out), "rules": SHORT, "limits": PATIENT,
    }
    if seed is not None:
        settings["seed"] = seed
    outcome = run_tournament(validate_config(settings), report=False)
    assert outcome.done == outcome.total == 1
    with Store.open(out) as store:
        [game] = store.games()
        seer_seat = list(game.bots).index("seer")
        return verdict(store.logs(game.key)[seer_seat]), game.seed, out


# ------------------------------------------------------------------ the seer


def test_a_seer_computes_its_deal_from_a_public_match_seed(tmp_path):
    line = seer_match(tmp_path, seed=31_337, seeds=40_000)
    key = RunKey.from_seed(31_337)
    assert line.startswith(f"SEER PREDICTED deal seed {key.deal_seed(match_deal(1))} (public seed 31337 (match)")


def test_a_seer_computes_its_deal_from_a_public_tournament_seed(tmp_path):
    line, deal_seed, _ = seer_tournament(tmp_path, seed=4242, seeds=40_000)
    assert deal_seed == RunKey.from_seed(4242).deal_seed("00001-00001")
    assert line.startswith(f"SEER PREDICTED deal seed {deal_seed} (public seed 4242 (00001-00001-0)")


def test_a_seer_cannot_compute_its_deal_in_a_default_match_or_tournament(tmp_path):
    # Both at once: each search is about a core-minute.
    lines: dict[str, tuple[str, int]] = {}
    match = threading.Thread(target=lambda: lines.update(match=seer_match_game(tmp_path / "m", None, SEARCHED)))
    match.start()
    lines["tournament"] = seer_tournament(tmp_path / "t", None, SEARCHED)[:2]
    match.join()
    for where in ("match", "tournament"):
        line, deal_seed = lines[where]
        assert not found_the_deal(line, deal_seed), (where, line)
        if line.startswith("SEER BLIND"):
            assert line.startswith(f"SEER BLIND after {SEARCHED} seeds"), (where, line)


def test_a_seer_s_collision_is_not_taken_for_the_deal():
    # The line of a CI run where the seer's six cards matched another seed's deal.
    collision = "SEER PREDICTED deal seed 7484995570461403805 (public tournament seed 439832, from the deal alone; 18.8 s)"
    assert not found_the_deal(collision, 1234567)
    assert found_the_deal(collision, 7484995570461403805)
    assert not found_the_deal(f"SEER BLIND after {SEARCHED} seeds (20.1 s)", 7484995570461403805)


@pytest.mark.skipif(os.geteuid() != 0, reason="as a normal user local bots run as that user: not a boundary")
def test_a_local_bot_cannot_read_the_store_or_the_other_bots_of_its_tournament(tmp_path, request):
    # The store holds the secret; arena runs the bots as nobody with the output folder and
    # the other bots' folders hidden (the local sandbox's guarantee when arena runs as root).
    # Not side by side, and not under /tmp (the folders beside a bot's own, and /tmp, are
    # hidden anyway): what hides these is the runner telling the sandbox about the field
    # and the output folder.
    outside = Path(tempfile.mkdtemp(prefix="arena-hide-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(outside, ignore_errors=True))
    outside.chmod(0o755)
    out = outside / "results" / "out"
    other = outside / "elsewhere" / "other"
    shutil.copytree(RANDOM, other, ignore=shutil.ignore_patterns("__pycache__"))
    (out / "notes.txt").parent.mkdir(parents=True)
    (out / "notes.txt").write_text("readable by anyone, but inside the output folder")
    for path in (outside / "results", out, outside / "elsewhere", *other.rglob("*"), other):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (out / "notes.txt").chmod(0o644)
    seer = seer_folder(tmp_path / "mine", 1, steal=(str(out / "notes.txt"), str(other / "bot.py"), "/proc/1/cwd/etc/hostname"))
    settings = {"game": "3up3down", "seats": 2, "bots": [str(seer), str(other)], "output": str(out), "rules": SHORT}
    run_tournament(validate_config(settings), report=False)
    with Store.open(out) as store:
        [game] = store.games()
        log = store.logs(game.key)[list(game.bots).index("seer")]
    lines = [line for line in log.splitlines() if line.startswith(("SEER STOLE", "SEER DENIED"))]
    assert [line.split(" (")[0] for line in lines] == [
        f"SEER DENIED {out / 'notes.txt'}", f"SEER DENIED {other / 'bot.py'}", "SEER DENIED /proc/1/cwd/etc/hostname"
    ], log
    assert stat.S_IMODE((out / "arena.sqlite").stat().st_mode) == 0o600  # and the store is root's alone


# ------------------------------------------------------------------ the key


def test_deal_and_bot_seeds_are_separate_hmacs_of_the_key():
    key = RunKey.from_secret("00" * 16 + "ff" * 16)
    expected_deal = int.from_bytes(hmac.new(key.material, b"deal/00002-00003", hashlib.sha256).digest()[:8], "big") >> 1
    expected_bot = int.from_bytes(hmac.new(key.material, b"bot/00002-00003-1/ann", hashlib.sha256).digest()[:6], "big")
    assert key.deal_seed("00002-00003") == expected_deal
    assert key.bot_seed("00002-00003-1", "ann") == expected_bot
    assert key.bot_seed("00002-00003-1", "ann") != key.bot_seed("00002-00003-1", "bob")
    assert RunKey.from_seed(5).deal_seed("x") == RunKey.from_seed(5).deal_seed("x") != RunKey.from_seed(6).deal_seed("x")


def test_a_generated_key_is_a_256_bit_secret_that_never_prints_itself():
    first, second = RunKey.generate(), RunKey.generate()
    assert len(first.secret) == 64 and first.secret != second.secret
    assert not first.is_public and RunKey.from_seed(3).is_public and RunKey.from_seed(3).secret is None
    assert first.secret not in repr(first) and first.secret not in str(first)
    assert RunKey.from_secret(first.secret).deal_seed("d") == first.deal_seed("d")


@pytest.mark.parametrize("bad", ["xyz", "abcd", "", "0" * 30])
def test_a_bad_secret_says_what_a_secret_is(bad):
    with pytest.raises(SeedError, match="hex digits|at least 128 bits"):
        RunKey.from_secret(bad)


def _in_process_tournament(out: Path, progress=None, stop=None, **settings):
    bots = {f"b{n}": (lambda: InProcessBot(lambda observation, legal: 0)) for n in range(3)}
    config = validate_config({"game": "3up3down", "seats": 3, "output": str(out), "rules": SHORT, **settings})
    return run_tournament(config, in_process=bots, report=False, progress=progress, stop=stop)


def test_a_default_tournament_stores_its_secret_and_every_deal_comes_from_it(tmp_path):
    _in_process_tournament(tmp_path / "a", rounds=2)
    _in_process_tournament(tmp_path / "b", rounds=2)
    seeds = {}
    for name in ("a", "b"):
        with Store.open(tmp_path / name) as store:
            secret = store.secret()
            assert re.fullmatch(r"[0-9a-f]{64}", secret)
            assert store.settings()["seed"] is None and secret not in json.dumps(store.settings())
            key = RunKey.from_secret(secret)
            seeds[name] = [game.seed for game in store.games()]
            assert seeds[name] == [key.deal_seed(game.deal) for game in store.games()]
    assert set(seeds["a"]).isdisjoint(seeds["b"])  # two default runs: unrelated deals
    # Only its owner may read the store (it holds the secret), journal files included.
    for path in (tmp_path / "a").glob("arena.sqlite*"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_a_resumed_default_tournament_keeps_its_secret_and_its_deals(tmp_path):
    out = tmp_path / "out"
    stop = threading.Event()
    with pytest.raises(TournamentInterrupted):
        _in_process_tournament(out, format="swiss", rounds=3, progress=lambda update: stop.set(), stop=stop)
    with Store.open(out) as store:
        secret, first = store.secret(), [(g.key, g.seed) for g in store.games()]
    assert len(first) == 1
    outcome = _in_process_tournament(out, format="swiss", rounds=3)  # resume: rounds 2 and 3
    assert outcome.done == outcome.total == 3 and outcome.resumed == 1
    with Store.open(out) as store:
        assert store.secret() == secret
        games = store.games()
    assert [(g.key, g.seed) for g in games][:1] == first
    assert [g.seed for g in games] == [RunKey.from_secret(secret).deal_seed(g.deal) for g in games]


def _bytes_of_store(out: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(out.glob("arena.sqlite*")))


def _stopped_at_once(out: Path) -> str:
    """A Swiss tournament in `out` stopped after its first game; the secret it stored."""
    stop = threading.Event()
    with pytest.raises(TournamentInterrupted):
        _in_process_tournament(out, format="swiss", rounds=3, progress=lambda update: stop.set(), stop=stop)
    return (out / "secret.key").read_text().strip()


def test_the_secret_is_a_file_of_its_own_and_never_in_the_store(tmp_path):
    """A copy of arena.sqlite (and its -wal) carries no secret: it is DIR/secret.key, 0600."""
    out = tmp_path / "out"
    secret = _stopped_at_once(out)
    assert re.fullmatch(r"[0-9a-f]{64}", secret)
    assert stat.S_IMODE((out / "secret.key").stat().st_mode) == 0o600
    assert secret.encode() not in _bytes_of_store(out) and bytes.fromhex(secret) not in _bytes_of_store(out)
    assert _in_process_tournament(out, format="swiss", rounds=3).resumed == 1
    with Store.open(out) as store:
        assert store.secret() == secret
        assert [g.seed for g in store.games()] == [RunKey.from_secret(secret).deal_seed(g.deal) for g in store.games()]
    assert secret.encode() not in _bytes_of_store(out)
    (out / "secret.key").unlink()  # lost: a resume must not deal other cards from a new secret
    with Store.open(out) as store, pytest.raises(StoreError, match="the deal secret of .* is missing: put its file back"):
        store.secret()


def test_a_store_that_kept_its_secret_inside_moves_it_out_on_open(tmp_path):
    out = tmp_path / "out"
    secret = _stopped_at_once(out)
    # As arena kept it before: a meta row (written while the store is in WAL mode, with
    # more writes after it), and no file.
    (out / "secret.key").unlink()
    db = sqlite3.connect(out / "arena.sqlite", isolation_level=None)
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("DELETE FROM meta WHERE key = 'secret_kept'")
    db.execute("INSERT INTO meta (key, value) VALUES ('deal_secret', ?)", (secret,))
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('created', 'then')")
    assert secret.encode() in _bytes_of_store(out)
    with Store.open(out) as store:
        assert store.secret() == secret
        assert store.secret_path() == out / "secret.key"
    db.close()
    assert stat.S_IMODE((out / "secret.key").stat().st_mode) == 0o600
    assert secret.encode() not in _bytes_of_store(out)
    outcome = _in_process_tournament(out, format="swiss", rounds=3)  # the resume deals from the same secret
    assert outcome.done == 3 and outcome.resumed == 1
    with Store.open(out) as store:
        assert [g.seed for g in store.games()] == [RunKey.from_secret(secret).deal_seed(g.deal) for g in store.games()]
    shown = arena("secret", str(out))
    assert shown.returncode == 0 and shown.stdout.strip() == secret


def test_secrets_can_be_kept_apart_from_the_output_folder(tmp_path, monkeypatch):
    apart = tmp_path / "secrets"
    monkeypatch.setenv("ARENA_SECRET_DIR", str(apart))
    _in_process_tournament(tmp_path / "out", rounds=1)
    assert not (tmp_path / "out" / "secret.key").exists()
    [kept] = apart.iterdir()
    secret = kept.read_text().strip()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and secret.encode() not in _bytes_of_store(tmp_path / "out")
    with Store.open(tmp_path / "out") as store:
        assert store.secret() == secret and store.secret_path() == kept
    monkeypatch.delenv("ARENA_SECRET_DIR")
    with Store.open(tmp_path / "out") as store, pytest.raises(StoreError, match=f"set ARENA_SECRET_DIR to the folder that holds {kept.name}"):
        store.secret()


def test_a_public_seed_tournament_stores_no_secret(tmp_path):
    _in_process_tournament(tmp_path / "out", rounds=1, seed=9)
    with Store.open(tmp_path / "out") as store:
        assert store.secret() is None
        assert [game.seed for game in store.games()] == [RunKey.from_seed(9).deal_seed("00001-00001")]


def test_arena_secret_prints_the_secret_and_checks_a_published_one(tmp_path):
    _in_process_tournament(tmp_path / "out", rounds=2)
    with Store.open(tmp_path / "out") as store:
        secret = store.secret()
    shown = arena("secret", str(tmp_path / "out"))
    assert shown.returncode == 0 and shown.stdout.strip() == secret
    good = arena("secret", str(tmp_path / "out"), "--check", secret)
    assert good.returncode == 0 and "all 2 games were dealt from this secret" in good.stdout
    bad = arena("secret", str(tmp_path / "out"), "--check", "ab" * 32)
    assert bad.returncode == 1 and "2 of 2 games do not have the deal seed this secret gives" in bad.stderr
    typo = arena("secret", str(tmp_path / "out"), "--check", "nothex")
    assert typo.returncode == 2 and "arena: error: a secret is 64 hex digits" in typo.stderr


def test_arena_secret_of_a_public_seed_tournament_names_the_seed(tmp_path):
    _in_process_tournament(tmp_path / "out", rounds=1, seed=9)
    run = arena("secret", str(tmp_path / "out"))
    assert run.returncode == 2 and "has no secret: its deals come from the public seed 9" in run.stderr


def test_a_given_seed_is_warned_about_and_the_default_is_not(tmp_path):
    common = ["run", "--game", "3up3down", "--seats", "2", "--bot", str(RANDOM), "--bot", str(ROOT / "bots" / "threeup-heuristic"),
              "--rule", "max_turns=20", "-q"]
    public = arena(*common, "--seed", "1", "--out", str(tmp_path / "public"))
    assert public.returncode == 0, public.stderr
    assert "seed 1 is public: any bot that guesses it can compute every deal" in public.stderr
    secret = arena(*common, "--out", str(tmp_path / "secret"))
    assert secret.returncode == 0, secret.stderr
    assert "is public" not in secret.stderr
