"""Sandboxes that run bots: `local` (child process with rlimits) and `docker` (container).

`get_sandbox(name, **settings)` is the one way in. `local` is built in; `docker` lives in
`arena.sandbox.docker` and is imported only when asked for, so arena works without the
Docker SDK or engine. Shared helpers for implementers are in `arena.sandbox.common`.
"""

from __future__ import annotations

import importlib
from typing import Any

from arena.errors import ArenaError
from arena.faults import SandboxError
from arena.sandbox.base import (
    BotProcess,
    BotSpec,
    Limits,
    Sandbox,
)

SANDBOXES = ("local", "docker")


class UnknownSandbox(ArenaError, ValueError):
    """No sandbox of that name (a user mistake: the message lists the known ones)."""


def get_sandbox(name: str, **settings: Any) -> Sandbox:
    """A sandbox by name, built with `settings` (keyword arguments of its class)."""
    if name == "local":
        from arena.sandbox.local import LocalSandbox

        return LocalSandbox(**settings)
    if name == "docker":
        try:
            module = importlib.import_module("arena.sandbox.docker")
        except ModuleNotFoundError as missing:
            if missing.name not in ("arena.sandbox.docker", "docker"):
                raise
            raise SandboxError(
                "the docker sandbox is not available in this installation "
                f"({missing.name} is missing); use --sandbox local"
            ) from None
        return module.DockerSandbox(**settings)
    raise UnknownSandbox(f"unknown sandbox {name!r}; known sandboxes: {', '.join(SANDBOXES)}")


__all__ = [
    "SANDBOXES",
    "BotProcess",
    "BotSpec",
    "Limits",
    "Sandbox",
    "UnknownSandbox",
    "get_sandbox",
]
