"""What the commands print through: the terminal's consoles, one line as it is (wrapped at
the terminal's width, or whole when it ends in JSON or a link), and the mistake a user
can fix (`UsageError`: one line, exit code 2)."""

from __future__ import annotations

import shlex
import sys

from rich.console import Console

from arena.errors import ArenaError
from arena.terminal import wrapped


def _live(made: Console) -> Console:
    """`made`, its width read from $COLUMNS and the terminal at each print: rich fixes a
    console's width from $COLUMNS when the console is made, and arena's are made once, at
    import (in a long-lived process, such as a test run, whatever $COLUMNS was then would
    hold for every command after)."""
    made._width = None  # rich's `size` then reads $COLUMNS and the terminal each time
    return made


console = _live(Console())
errors = _live(Console(stderr=True))


class UsageError(ArenaError):
    """A mistake on the command line that the user can fix; printed as one line."""


def say_json(line: str) -> None:
    """Print a line that ends in a JSON value (`match --verbose`'s actions and events) or a
    link (`arena play`'s) on one line, unwrapped: a wrapped one could not be read back."""
    console.print(line, highlight=False, markup=False, soft_wrap=True)


def say(line: str, to=None) -> None:
    """Print a line as it is (no markup, no highlighting), wrapped at the terminal's width."""
    where = to or console
    where.print(wrapped(line, where.width), highlight=False, markup=False, soft_wrap=True)


def say_error(text: str) -> None:
    """A mistake on stderr: its first line whole (one line to read, or to search for),
    the lines of its list (a refusal's reasons, bot.toml's mistakes, a build's output)
    wrapped at the terminal's width, each under its own indentation."""
    head, _, rest = text.partition("\n")
    errors.print(head + ("\n" + wrapped(rest, errors.width) if rest else ""), highlight=False, markup=False,
                 soft_wrap=True)


def warn_public_seed(seed: int) -> None:
    from arena.store.seeds import PUBLIC_SEED_WARNING

    say("arena: " + PUBLIC_SEED_WARNING.format(seed=seed), errors)


def say_stopped(stored: str) -> None:
    """Ctrl-C stopped a run or a league: what is stored, and the command that resumes it."""
    say(f"arena: stopped: {stored}; run the same command to resume: arena {shlex.join(sys.argv[1:])}", errors)
