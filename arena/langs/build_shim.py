"""The build step's child in the local sandbox (`arena.langs.build`): run as `python -I -S
build_shim.py CPU_S DATA_BYTES FSIZE_BYTES DROP PROGRAM ARGV...`, it sets the rlimits,
becomes nobody when DROP is 1 (arena is root), then execs the build's command (rlimits
set in the child, without preexec_fn). Never imported by arena."""

import os
import resource
import sys


def main():
    cpu, data, fsize, drop = (int(x) for x in sys.argv[1:5])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_DATA, (data, data))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if drop:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    try:
        os.execv(sys.argv[5], sys.argv[6:])
    except OSError as error:
        sys.stderr.write(f"cannot run {sys.argv[5]!r}: {error.strerror}\n")
        sys.exit(126)


if __name__ == "__main__":
    main()
