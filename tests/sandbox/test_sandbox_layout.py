"""The sandboxes' code stays readable: programs that run inside or beside a bot (the local
sandbox's exec shim, the keyring sweep, the build step's child) are files of their own, not
strings handed to `python -c`, and no sandbox module passes 700 lines."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from arena.sandbox import keyring, local, local_process

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "arena" / "sandbox"


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def test_no_program_in_a_string():
    programs, shells = [], []
    for path in sorted([*SANDBOX.rglob("*.py"), ROOT / "arena" / "langs" / "build.py"]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and node.value.count("\n") >= 5):
                programs.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.List) and any(getattr(item, "value", None) == "-c" for item in node.elts):
                # a command line with -c: only a shell's one-line command (`python -c` would be a program)
                shells.append((f"{path.relative_to(ROOT)}:{node.lineno}", getattr(node.elts[0], "value", None)))
    assert programs == []
    assert shells and {shell for _, shell in shells} == {"/bin/sh"}, shells


def test_the_programs_are_files_run_by_path():
    for program in (local_process.SHIM, keyring.CLEAR):  # a local build runs through the bots' shim
        assert program.is_file() and program.parent in (SANDBOX, ROOT / "arena" / "langs")
        # Never imported: running it is the only use (a guard keeps an import harmless).
        assert 'if __name__ == "__main__":' in program.read_text(encoding="utf-8")
    assert local.SHIM is local_process.SHIM
    # The shim refuses a plan it cannot read, as its first act (no plan: nothing runs).
    done = subprocess.run([sys.executable, "-I", "-S", str(local_process.SHIM), "{}"], capture_output=True, timeout=30)
    assert done.returncode != 0 and b"KeyError" in done.stderr


def test_no_sandbox_module_is_over_700_lines():
    long = {
        str(path.relative_to(ROOT)): lines
        for path in SANDBOX.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 700
    }
    assert long == {}
