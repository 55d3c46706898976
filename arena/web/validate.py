"""One validation, in a process of its own: `python -m arena.web.validate SPEC_JSON`.

The queue (`arena.web.queue`) starts it for each submission, so a smoke match's CPU never
holds the server's threads and a validation dies with the queue's worker (the kernel
kills it when its parent thread goes: PR_SET_PDEATHSIG; a server killed with -9 leaves
no validation running to race the one its restart begins). It runs `arena.registry.submit`'s own
checks (`submit_bot`: the folder vetted and copied by `arena.botcopy`, bot.toml, the
image build, the smoke match in every declared game; an accepted bot lands in the
registry by one rename) and writes one line per step to stdout, each starting with
MARK and holding a JSON object: {"stage": ...}, then {"accepted": {...}} or
{"refused": [reasons]}.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from pathlib import Path

MARK = "@arena-validate "


def _die_with_parent(parent: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent went before the line above
        os._exit(1)


def _say(message: dict) -> None:
    sys.stdout.write(MARK + json.dumps(message) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    _die_with_parent(spec["parent"])
    # The queue stops a validation with SIGTERM: as Ctrl-C, so the smoke match's sandbox
    # closes (its processes and containers go) before the process ends.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    os.nice(10)  # checking is background work: the server's answers come first
    from arena.botcopy import FolderLimits
    from arena.registry.submit import SubmitRefused, submit_bot
    from arena.sandbox import Limits

    try:
        done = submit_bot(
            Path(spec["folder"]), Path(spec["registry"]), sandbox=spec["sandbox"], limits=Limits(**spec["limits"]),
            runtime=spec.get("runtime"),
            folder_limits=FolderLimits(**spec["folder_limits"]), stage=lambda step: _say({"stage": step}),
        )
    except SubmitRefused as refused:
        _say({"refused": refused.reasons})
        return 0
    except Exception as error:  # noqa: BLE001 - arena's own failure: the submission is refused, the author told
        from arena.diskfull import is_full

        # A full disk is not the bot's: the queue checks it again once there is space.
        _say({"full": str(error)} if is_full(error) else {"failed": f"{type(error).__name__}: {error}"})
        return 0
    _say({"accepted": {
        "name": done.name, "version": done.version, "content_hash": done.content_hash,
        "already_there": done.already_there, "smoke_games": done.smoke_games, "newest": done.newest,
        "note": done.already_line() if done.already_there else "",
    }})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
