"""The one shape of an error arena shows its user: `ArenaError`.

Every error a user can cause and fix (a wrong flag, file, bot folder, setting or store)
derives from it, and so does arena's own failure (`SandboxError`, in faults.py). The
`arena` command catches it once (arena/cli/app.py, `main`) and prints its line,
`arena: KIND: MESSAGE`, without a traceback, then exits with its `exit_code`. A class
says its kind and exit code once, here or in its own body. An error of the games'
(`engine.GameError`: the engine knows nothing of arena) is shown as a user's mistake.

The lowest leaf: the standard library only (the other leaves' errors derive from it).
tests/project/test_errors.py checks that every exception class of arena a user can
cause derives from it.
"""

from __future__ import annotations


class ArenaError(Exception):
    """An error arena shows as one line, no traceback: what was wrong and what to do.
    The message may list several mistakes, one a line, under its first line."""

    exit_code = 2  # a mistake the user can fix, as a wrong command line is
    kind = "error"

    @property
    def message(self) -> str:
        """What was wrong and what to do (the text the error was made with)."""
        return str(self)

    def shown(self) -> str:
        """What `arena` prints: `arena: KIND: MESSAGE`."""
        return f"arena: {self.kind}: {self.message}"
