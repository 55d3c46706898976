"""The served arena's one error a user can cause at start (light: the CLI imports it always)."""

from __future__ import annotations

from arena.errors import ArenaError


class WebError(ArenaError, ValueError):
    """A server cannot start or a client cannot go on as asked; the message says what to change."""
