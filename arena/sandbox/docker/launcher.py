"""arena's warm-container launcher (launcher.c): built on this host, once per version of
its source, as a static binary, so that it runs in any image without using anything of it.

Why a static C program, built here: the launcher runs as root in a container whose image
may be a bot's own (a Dockerfile), so it may use nothing of that image (no shell, no
setpriv, no dynamic loader or libc of it), and it must make namespaces, drop capabilities
and stack a seccomp filter, which no shell can. A host's busybox would bring a shell but
neither the namespaces of a game nor the filter. The compiler (cc with a static libc:
Debian's gcc and libc6-dev, which .ci/docker-up installs) is needed once; the binary is
kept in `ARENA_LAUNCHER_DIR` (default /var/cache/arena), a folder of root's that nobody
else may write. Without a compiler, warm slots start cold (the reason is said once).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path

SOURCE = Path(__file__).with_name("launcher.c")
DIR_ENV = "ARENA_LAUNCHER_DIR"
DEFAULT_DIR = "/var/cache/arena"
BUILD_TIMEOUT_S = 120

_lock = threading.Lock()
_built: dict[str, Path] = {}


class LauncherUnavailable(Exception):
    """The launcher cannot be built here (no compiler, no static libc, no safe folder)."""


def _safe_folder(folder: Path) -> None:
    """The folder exists, is root's and nobody else may write it (else someone could plant
    a launcher that arena would run as root)."""
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise LauncherUnavailable(
            f"{folder} must be a folder of root's that nobody else may write "
            f"(set {DIR_ENV} to another)"
        )


def launcher_binary() -> Path:
    """The launcher's binary for the current source, built on first use."""
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    with _lock:
        if digest in _built and _built[digest].exists():  # (a cleaned cache: built again)
            return _built[digest]
        folder = Path(os.environ.get(DIR_ENV) or DEFAULT_DIR)
        if os.geteuid() != 0:
            raise LauncherUnavailable("the launcher is built and run by arena as root")
        _safe_folder(folder)
        target = folder / f"arena-launcher-{digest}"
        if not target.exists():
            _build(target)
        info = target.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
            raise LauncherUnavailable(f"{target} is not root's alone: remove it")
        _built[digest] = target
        return target


def _build(target: Path) -> None:
    compiler = shutil.which(os.environ.get("CC") or "cc") or shutil.which("gcc")
    if compiler is None:
        raise LauncherUnavailable(
            "no C compiler to build arena's warm launcher (install gcc and libc6-dev, "
            "as .ci/docker-up does)"
        )
    handle, partial = tempfile.mkstemp(prefix=".building-", dir=target.parent)
    os.close(handle)
    try:
        done = subprocess.run(
            [compiler, "-static", "-O2", "-o", partial, str(SOURCE)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise LauncherUnavailable(
                f"could not build arena's warm launcher with {compiler} -static (a static "
                f"libc is needed: libc6-dev): {last}"
            )
        os.chmod(partial, 0o755)
        os.replace(partial, target)
    except (OSError, subprocess.SubprocessError) as error:
        raise LauncherUnavailable(f"could not build arena's warm launcher: {error}") from None
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
