"""The layers stay one-way (docs/architecture.md): read from the source, imports inside
functions included, so a lazy import cannot hide a circle."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules() -> dict[str, Path]:
    found = {}
    for package in ("arena", "engine"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _runtime_nodes(tree: ast.AST):
    """Every node but those under `if TYPE_CHECKING:` (imports for annotations only)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            yield from (n for child in node.orelse for n in [child, *_runtime_nodes(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def imports_of(name: str) -> set[str]:
    """Every module this one imports at run time (top level or inside a function)."""
    out = set()
    for node in _runtime_nodes(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                package = name.split(".")[: -node.level] if not MODULES[name].name == "__init__.py" else name.split(".")
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return out


def project_imports(name: str) -> set[str]:
    """The project modules this one imports (a package counts as its __init__)."""
    return {imported for imported in imports_of(name) if imported in MODULES and imported != name}


def test_no_import_circle_between_files():
    graph = {name: project_imports(name) for name in MODULES}
    # A module may import its own package's __init__ (re-exports) without that being a circle.
    for name, imported in graph.items():
        imported.difference_update(parent for parent in list(imported) if name.startswith(parent + "."))
    state: dict[str, int] = {}
    circles = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                circles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert circles == []


def test_engine_imports_nothing_outside_engine_but_the_standard_library():
    outside = {
        (name, imported)
        for name in MODULES
        if name.startswith("engine")
        for imported in imports_of(name)
        if imported.split(".")[0] not in ("engine", "__future__") and imported.split(".")[0] not in sys.stdlib_module_names
    }
    assert outside == set()


def test_layers_that_must_not_know_each_other():
    rules = {
        "arena.game.protocol": ("arena.sandbox",),  # the protocol is the bot's contract, not a sandbox's
        "arena.site.writer": ("arena.game.referee",),  # the report reads stored records
        "arena.site.replay": ("arena.game.referee",),
        "arena.site.pages": ("arena.game.referee",),
        "arena.site.model": ("arena.game.referee",),
        "arena.site.charts": ("arena.game.referee",),
        "arena.store.db": ("arena.ratings.ledger",),  # the store persists results; rating.py turns them into ratings
        "arena.game.record": ("arena.game.referee", "arena.store.db", "arena.sandbox"),  # a leaf
        "arena.errors": ("arena",),  # the lowest leaf: every other module's errors derive from it
        "arena.faults": ("arena",),  # a leaf
        "arena.limits": ("arena", "engine"),  # a leaf: the one definition of the limits
        "arena.store.seeds": ("arena", "engine"),  # a leaf (a test bot imports it alone)
        "arena.botcopy": ("arena",),  # a leaf: the registry, the league and the image build vet folders with it
        "arena.play.cluster": ("arena.play.tournament",),
        "arena.play.workers": ("arena.play.tournament", "arena.play.cluster"),
        "arena.play.executor": ("arena.play.tournament", "arena.play.match", "arena.play.cluster", "arena.play.workers"),  # below all four
        "arena.game.referee": ("arena.human",),  # the human seat is a seat like any other: the referee knows none
        "arena.game.seats": ("arena.human",),
        "arena.human.seat": ("arena.web.play_routes", "arena.human.table", "fastapi"),  # the seat knows no web
    }
    broken = {
        (name, imported)
        for name, forbidden in rules.items()
        for imported in imports_of(name)
        if any(imported == prefix or imported.startswith(prefix + ".") for prefix in forbidden)
        and not (name in ("arena.faults", "arena.limits") and imported == name)
        and not (name != "arena.errors" and (imported == "arena.errors" or imported.startswith("arena.errors.")))
    }
    assert broken == set()


def test_the_site_reads_the_store_and_no_bot_folder():
    """The site is a function of the store: what it says of a registry (a league's folders
    that cannot join) is handed to it by its caller, which reads the folders."""
    reading = {
        (name, imported)
        for name in MODULES
        if name == "arena.site" or name.startswith("arena.site.")
        for imported in imports_of(name)
        if imported == "arena.config.botfolder" or imported.startswith("arena.config.botfolder.")
        or imported.startswith("arena.registry")
    }
    assert reading == set()


def test_the_served_arena_sits_on_top():
    """arena/web/ calls submit, league, store and the report's output; none of them calls it."""
    below = ("arena.registry.submit", "arena.league.ladder", "arena.store.db", "arena.site.writer", "arena.botcopy", "arena.play.tournament",
             "arena.play.match", "arena.game.referee", "arena.game.seats", "arena.sandbox")
    reaching_up = {
        (name, imported)
        for name in MODULES
        if any(name == low or name.startswith(low + ".") for low in below)
        for imported in imports_of(name)
        if imported == "arena.web" or imported.startswith("arena.web.")
    }
    assert reaching_up == set()


def test_the_ratings_sit_below_the_runner_the_site_and_the_terminal():
    """arena/ratings/ makes the ratings and the standings every reader shows (band, group,
    settled, status); it reads results handed to it, and knows none of its readers."""
    readers = ("arena.schedule", "arena.play", "arena.registry", "arena.league", "arena.site", "arena.cli", "arena.web", "arena.human", "arena.sandbox")
    reaching_up = {
        (name, imported)
        for name in MODULES
        if name == "arena.ratings" or name.startswith("arena.ratings.")
        for imported in imports_of(name)
        if any(imported == reader or imported.startswith(reader + ".") for reader in readers)
    }
    assert reaching_up == set()


# arena's packages, from the bottom up (docs/architecture.md draws them): a module imports
# only from its own package and from those below it. The leaves at the top of arena/ import
# nothing of arena but errors.py, the one shape of an error, below them all.
LAYERS = (
    ("errors",),  # ArenaError: what every error a user can cause derives from
    ("faults", "limits", "terminal", "resources", "botcopy", "diskfull"),  # vocabulary and leaves
    ("sandbox",),  # running a bot: local processes, Docker, the language images
    ("langs",),  # a bot's build step, starter kits, `arena images`, `arena new`
    ("game",),  # one game: the protocol, seats, the referee, the record
    ("store",),  # SQLite, the run's seeds and secret, game keys
    ("ratings",),  # results to ratings and standings, confidence, SPRT
    ("config",),  # tournament and league files, bot folders, the field, the fingerprint
    ("site",),  # the static site, a function of the store
    ("schedule",),  # schedules, pure: round-robin, gauntlet, Swiss, the league's matchmaker
    ("play",),  # playing games: the one executor, the Runner, workers, cluster, tournaments, matches
    ("registry",),  # `arena submit` and `arena bots`: bot folders into a registry
    ("league",),  # the ladder: members from the registry, ledgers, its saved state
    ("human",),  # a person's seat and table
    ("web",),  # everything served over HTTP: the authors' door, `arena play`'s page
    ("cli", "__main__"),  # the command line
)
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def _part_of(name: str) -> str | None:
    """`arena.league.ladder` -> 'league'; `arena.faults` -> 'faults'; None for `arena` itself."""
    parts = name.split(".")
    return parts[1] if parts[0] == "arena" and len(parts) > 1 else None


def test_every_package_and_top_module_has_a_layer():
    parts = {_part_of(name) for name in MODULES if name.startswith("arena.")}
    assert parts - set(RANK) == set()


def test_the_layers_only_look_down():
    upward = set()
    for name in MODULES:
        own = _part_of(name)
        if own is None:
            continue
        for imported in project_imports(name):
            target = _part_of(imported)
            if target is None or target == own:
                continue
            if RANK[target] > RANK[own]:
                upward.add((name, imported))
            elif RANK[target] == RANK[own]:
                # the leaves know none of one another; cli and __main__ share a layer: __main__ only calls cli
                upward.add((name, imported))
    upward.discard(("arena.__main__", "arena.cli.app"))
    assert upward == set()


def test_at_most_ten_modules_directly_in_arena():
    top = sorted(path.name for path in (ROOT / "arena").glob("*.py"))
    assert len(top) <= 10, top


def test_no_module_over_700_lines():
    long = {
        str(path.relative_to(ROOT)): lines
        for path in MODULES.values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 700
    }
    assert long == {}


def _referee_uses(name: str) -> list[int]:
    """The lines where module `name` reaches the referee's `play_game`: imported by name,
    or through the module (`referee.play_game`, `arena.game.referee.play_game`)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    modules = {"arena.game.referee"}  # the dotted names the referee module is known by here
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.asname or alias.name for alias in node.names if alias.name == "arena.game.referee")
        elif isinstance(node, ast.ImportFrom) and node.module == "arena.game":
            modules.update(alias.asname or alias.name for alias in node.names if alias.name == "referee")
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "arena.game.referee":
            lines.extend(node.lineno for alias in node.names if alias.name in ("play_game", "*"))
        elif isinstance(node, ast.Attribute) and node.attr == "play_game" and ast.unparse(node.value) in modules:
            lines.append(node.lineno)
    return lines


def test_the_executor_is_the_only_caller_of_the_referee():
    """Every game arena plays (a tournament's, a league's, `arena match`'s, a table's) goes
    through `arena.play.executor`: seats started side by side, each done with the game."""
    callers = {
        name: lines
        for name in MODULES
        if name.startswith("arena.") and name not in ("arena.play.executor", "arena.game.referee")
        if (lines := _referee_uses(name))
    }
    assert callers == {}
    assert _referee_uses("arena.play.executor") != []


def _private(name: str) -> bool:
    return name.startswith("_") and name != "_" and not (name.startswith("__") and name.endswith("__"))


def _trees() -> dict[str, ast.Module]:
    return {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items() if name.startswith("arena.")}


def _private_names_by_part(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Each underscore name, and the packages that define it: at module level, in a
    function, as a class's member, or as an attribute of its own (`self._x = ...`)."""
    owners: dict[str, set[str]] = {}
    for name, tree in trees.items():
        part = _part_of(name)
        for node in ast.walk(tree):
            found = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.append(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    found.append(node.attr)
            elif isinstance(node, ast.alias) and node.asname:
                found.append(node.asname)
            for defined in found:
                if _private(defined):
                    owners.setdefault(defined, set()).add(part)
    return owners


def _returns_a_class(module: str, function: str) -> bool:
    """True when `function` of `module` is annotated to return an object of a class."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function and node.returns:
            return any(isinstance(part, ast.Name) and part.id[:1].isupper() for part in ast.walk(node.returns))
    return False


def _another_packages(name: str, tree: ast.Module) -> Callable[[ast.AST], bool]:
    """Whether an expression of module `name` is another package's module, class or object,
    as far as the module's imports, annotations and assignments tell: a module or class
    imported from another package, an object one of those classes or functions makes
    (a function annotated to return an object), an argument or name annotated with such a
    class, a name (`x`, `self.x`) assigned one of these, and what is read from them."""
    part = _part_of(name)
    modules, classes, makers = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(
                alias.asname or alias.name for alias in node.names
                if alias.name.startswith("arena.") and _part_of(alias.name) != part
            )
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arena."):
            for alias in node.names:
                target, bound = f"{node.module}.{alias.name}", alias.asname or alias.name
                if _part_of(target) == part:
                    continue
                if target in MODULES:
                    modules.add(bound)
                elif alias.name[:1].isupper():
                    classes.add(bound)
                elif node.module in MODULES and _returns_a_class(node.module, alias.name):
                    makers.add(bound)

    def key(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return f"self.{node.attr}"
        return None

    def names_a_class(annotation: ast.AST | None) -> bool:
        return annotation is not None and any(isinstance(n, ast.Name) and n.id in classes for n in ast.walk(annotation))

    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    makers |= {function.name for function in functions if names_a_class(function.returns)}
    held = {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg) and names_a_class(node.annotation)}
    held |= {key(node.target) for node in ast.walk(tree) if isinstance(node, ast.AnnAssign) and names_a_class(node.annotation)}
    held.discard(None)

    def foreign(node: ast.AST) -> bool:
        if ast.unparse(node) in modules:
            return True
        if isinstance(node, ast.Name):
            return node.id in classes or node.id in held
        if isinstance(node, ast.Attribute):
            return key(node) in held or foreign(node.value)
        if isinstance(node, ast.Call):
            called = node.func
            if isinstance(called, ast.Name):
                return called.id in classes or called.id in makers
            # A method of another package's class or object; one of this module's annotated so.
            return isinstance(called, ast.Attribute) and (
                (foreign(called.value) and ast.unparse(called.value) not in modules)
                or (called.attr in makers and key(called.value) == "self")
            )
        return False

    assignments = [node for node in ast.walk(tree) if isinstance(node, ast.Assign)]
    changed = True
    while changed:  # until no more names are known to hold another package's object
        changed = False
        for node in assignments:
            pairs = [(target, node.value) for target in node.targets]
            pairs += [
                pair for target in node.targets
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                and len(target.elts) == len(node.value.elts)
                for pair in zip(target.elts, node.value.elts)
            ]
            for target, value in pairs:
                if (bound := key(target)) is not None and bound not in held and foreign(value):
                    held.add(bound)
                    changed = True
    return foreign


def test_no_underscore_name_of_one_package_is_used_from_another():
    """A package's underscore names are its own (issue 36): none is imported by another
    package, nor read from another package's module, class or object (`x._name`: x is one
    as far as `_another_packages` can tell, or `_name` is defined in another package and not
    in this one); dunder names are everyone's."""
    trees = _trees()
    owners = _private_names_by_part(trees)
    used = set()
    for name, tree in trees.items():
        part = _part_of(name)
        foreign = _another_packages(name, tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arena."):
                if _part_of(node.module) != part:
                    used.update((name, node.module, alias.name) for alias in node.names if _private(alias.name))
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                defined_elsewhere_only = part not in owners.get(node.attr, {part})
                if defined_elsewhere_only or foreign(node.value):
                    used.add((name, ast.unparse(node.value), node.attr))
    assert used == set()
