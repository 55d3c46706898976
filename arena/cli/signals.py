"""SIGTERM stops a command as Ctrl-C does.

systemd, `docker stop` and Kubernetes stop a service with SIGTERM. Unhandled, it ends
the process at once: the games in flight, the worker processes, the warm containers and
multiprocessing's semaphores are left as they are, and nothing is said. `arena` takes
SIGTERM as Ctrl-C (a KeyboardInterrupt in the main thread), so every long-running
command (`run`, `league`, `serve`, `play`) stops the one clean way it stops on Ctrl-C:
nothing new starts, the games in flight are stored, the sandboxes close, one line is
said. The exit code says which signal it was (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import signal
from types import FrameType

_stopped_by = [signal.SIGINT]


def stop_on_sigterm() -> None:
    """From now on, SIGTERM in this process is Ctrl-C (the main thread's KeyboardInterrupt)."""
    signal.signal(signal.SIGTERM, _as_ctrl_c)


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    _stopped_by[0] = signal.Signals(signum)
    raise KeyboardInterrupt


def stopped_code() -> int:
    """The exit code of a command stopped by a signal: 128 + its number."""
    return 128 + int(_stopped_by[0])


def stopped_name() -> str:
    """SIGINT or SIGTERM: the signal that stopped the command (SIGINT unless SIGTERM came)."""
    return signal.Signals(_stopped_by[0]).name
