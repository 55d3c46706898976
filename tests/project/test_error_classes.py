"""Errors with one shape (arena/errors.py): every exception class of arena a user can cause
derives from `ArenaError`, which `arena` catches once (arena/cli/app.py, `main`); the
fault vocabulary (`BotFault`, `Reason`, `SandboxError`) is imported from its home alone.
Read from the modules themselves, so a new error class cannot be forgotten."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
from pathlib import Path

from arena.errors import ArenaError
from arena.faults import SandboxError

ROOT = Path(__file__).resolve().parents[2]

# The exception classes no user ever sees as an error of arena's, and why: each is a
# bot's own forfeit, a signal between arena's parts, or turned into an ArenaError (or
# a bot's incident) before it reaches anyone. A new class belongs here only with a reason.
NOT_SHOWN = {
    "arena.faults.BotFault": "a bot's forfeit: the referee records it in the game, where its author reads it",
    "arena.human.seat.GameStopped": "a person's table closing ends their seat's wait; the table stops its game",
    "arena.langs.build.BuildFailed": "a bot's build failing is told as that bot's (MatchError, SubmitRefused, a broken member)",
    "arena.langs.built.BuildOutputRefused": "a build's output past the folder limits: a BuildFailed, the bot's",
    "arena.league.ladder.LeagueInterrupted": "Ctrl-C: `arena league` says what is stored and how to resume (exit 130)",
    "arena.play.tournament.TournamentInterrupted": "Ctrl-C: `arena run` says what is stored and how to resume (exit 130)",
    "arena.play.tournament.SiteInterrupted": "Ctrl-C while the site is written: `arena run` says how to finish it",
    "arena.sandbox.docker.launcher.LauncherUnavailable": "the warm slot turns it into a SandboxError (_Unsupported)",
    "arena.site.replay.ReplayUnavailable": "a game without a replay: its page says so",
    "arena.site.replay._NotMasked": "the replay's fast path does not apply: the slow path draws the frame",
    "arena.botcopy._Hostile": "a folder's walk broke off: told as the folder's problem ('could not be read safely')",
    "arena.sandbox.docker.warm_container._Broken": "a warm container that cannot be reset is replaced",
}


def _arena_modules() -> list[str]:
    names = []
    for path in sorted((ROOT / "arena").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name != "arena.__main__":  # runs the command when imported
            names.append(name)
    return names


def _exception_classes() -> dict[str, type]:
    found = {}
    for name in _arena_modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{value.__qualname__}"] = value
    return found


def test_every_error_a_user_can_cause_is_an_arena_error():
    classes = _exception_classes()
    assert len(classes) > 30  # the walk found arena's classes (34 when this test was written)
    not_arena_errors = {name for name, cls in classes.items() if not issubclass(cls, ArenaError)}
    assert not_arena_errors == set(NOT_SHOWN)


def test_every_class_excused_from_the_one_shape_still_exists():
    """A class renamed or gone leaves its excuse behind: the list says only what is true."""
    assert set(NOT_SHOWN) <= set(_exception_classes())


def _names_an_exception(base: ast.expr, known: set[str]) -> bool:
    """`base` (a class's base as written) is an exception: a built-in one or one of arena's."""
    name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    builtin = getattr(builtins, name, None)
    return name in known or (inspect.isclass(builtin) and issubclass(builtin, BaseException))


def test_no_exception_class_hides_inside_a_function():
    """The walk above reads module-level classes: one defined in a function would escape it."""
    known = {cls.__name__ for cls in _exception_classes().values()}
    hidden = []
    for name in _arena_modules():
        path = ROOT / (name.replace(".", "/") + ".py")
        if not path.exists():
            path = ROOT / name.replace(".", "/") / "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hidden.extend(
                    f"{name}.{node.name}.{inner.name}"
                    for inner in ast.walk(node)
                    if isinstance(inner, ast.ClassDef) and any(_names_an_exception(base, known) for base in inner.bases)
                )
    assert hidden == []


def test_a_users_mistake_exits_2_and_arenas_own_failure_exits_1():
    from arena.cli.console import UsageError
    from arena.store.seeds import SeedError

    assert (UsageError("x").exit_code, UsageError("x").shown()) == (2, "arena: error: x")
    assert (SeedError("x").exit_code, SeedError("x").shown()) == (2, "arena: error: x")
    assert (SandboxError("x").exit_code, SandboxError("x").shown()) == (1, "arena: internal error: x")


def test_errors_that_were_value_errors_still_are():
    """pydantic turns a ValueError raised in a validator into its own error, and callers
    catch ValueError: deriving from ArenaError took none of that away."""
    from arena.config.botfolder import BotFolderError
    from arena.config.tournament_file import TournamentError
    from arena.limits import LimitsError
    from arena.ratings.skills import RatingSettingsError
    from arena.ratings.sprt import SprtError
    from arena.schedule.seating import ScheduleError
    from arena.store.seeds import SeedError

    for cls in (BotFolderError, TournamentError, LimitsError, RatingSettingsError, SprtError, ScheduleError, SeedError):
        assert issubclass(cls, ValueError) and issubclass(cls, ArenaError), cls


# The fault vocabulary's names and their one home (no import through a re-export).
HOMES = {"BotFault": "arena.faults", "Reason": "arena.faults", "SandboxError": "arena.faults",
         "ArenaError": "arena.errors"}


def test_the_fault_vocabulary_is_imported_from_its_home():
    elsewhere = set()
    for folder in ("arena", "tests", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("arena"):
                    elsewhere.update(
                        (str(path.relative_to(ROOT)), node.module, alias.name)
                        for alias in node.names
                        if alias.name in HOMES and node.module != HOMES[alias.name]
                    )
    assert elsewhere == set()


def _shows_or_turns(handler: ast.ExceptHandler) -> bool:
    """The handler prints the error its own way or raises another in its place (a handler
    that passes over an item, `continue`, is flow, not an error shown)."""
    for node in ast.walk(handler):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in {"print", "echo", "secho", "say", "say_error"}:
                return True
    return False


def test_no_command_catches_an_arena_error_but_main():
    """`arena` catches an ArenaError once, in arena/cli/app.py's `main`: a command that caught
    one to print it its own way (or to turn it into another) gave errors a second shape;
    one that passes over a broken item (`continue`) shows nothing."""
    import engine

    shown = {cls.__name__ for cls in _exception_classes().values() if issubclass(cls, ArenaError)}
    shown |= {"ArenaError", *(name for name in dir(engine.api) if name.endswith("Error"))}
    caught = set()
    for path in sorted((ROOT / "arena" / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or (path.name, function.name) == ("app.py", "main"):
                continue
            for handler in ast.walk(function):
                if isinstance(handler, ast.ExceptHandler) and handler.type is not None and _shows_or_turns(handler):
                    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                    caught.update(
                        (path.name, function.name, name)
                        for name in (t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", "") for t in types)
                        if name in shown
                    )
    assert caught == set()


def test_the_seeds_module_still_works_alone_with_the_standard_library(tmp_path):
    """arena/store/seeds.py promises a tool (and the seer test bot) that it runs as a file
    alone: its SeedError is an ArenaError inside arena only."""
    import shutil
    import subprocess
    import sys

    (tmp_path / "arena" / "store").mkdir(parents=True)
    (tmp_path / "arena" / "__init__.py").write_text("")
    (tmp_path / "arena" / "store" / "__init__.py").write_text("")
    shutil.copy(ROOT / "arena" / "store" / "seeds.py", tmp_path / "arena" / "store" / "seeds.py")
    probe = (
        "import sys\nsys.path.insert(0, '.')\n"
        "from arena.store.seeds import RunKey, SeedError\n"
        "try:\n    RunKey.from_secret('not hex')\nexcept ValueError as error:\n"
        "    print(type(error).__name__, type(error).__mro__[1].__module__)\n"
    )
    run = subprocess.run([sys.executable, "-I", "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout, run.stderr) == (0, "SeedError arena.store.seeds\n", "")
