"""Lines for the terminal, wrapped at its width: arena's output fits 80 columns (README).

`wrapped` breaks a long line between words, keeps the line's own indentation and indents
what follows by two more spaces, so a reader sees where one message ends. A word longer
than a line (a long path, say) is never cut: it goes whole on a line of its own, to be
copied as it is. Standard library only.
"""

from __future__ import annotations

import shutil
import textwrap

HANGING = "  "  # the continuation of a wrapped line: indented this much more than its start


def terminal_width() -> int:
    """The terminal's width in columns ($COLUMNS first; 80 when the output is not a terminal)."""
    return shutil.get_terminal_size((80, 24)).columns


def wrapped(text: str, width: int | None = None, hanging: int | None = None) -> str:
    """`text` with every line longer than `width` broken between words; what follows a
    break is indented `hanging` columns (default: the line's own indentation and two)."""
    width = width or terminal_width()
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip(" "))] + HANGING if hanging is None else " " * hanging
        lines.extend(textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False))
    return "\n".join(lines)
