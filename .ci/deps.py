"""arena's direct dependencies, as pyproject.toml declares them (CI's helper).

    python3 .ci/deps.py lower [EXTRA...]     a pip constraints file that pins every direct
                                             dependency (and those of the EXTRAs) to its
                                             lower bound: `name==bound`, one a line
    python3 .ci/deps.py versions [EXTRA...]  the version installed of each direct dependency,
                                             beside the bound pyproject.toml claims

Every dependency must say its lower bound with `>=`: `lower` refuses one that does not,
since a bound nobody tests is a bound nobody knows holds. Standard library only (it runs
before anything is installed).
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*?)\s*(;.*)?$")
LOWER = re.compile(r">=\s*([^,\s]+)")


def requirements(extras: list[str]) -> list[str]:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    optional = project.get("optional-dependencies", {})
    unknown = [extra for extra in extras if extra not in optional]
    if unknown:
        raise SystemExit(f"deps.py: no extra {', '.join(unknown)} in {PYPROJECT.name} "
                         f"(it has {', '.join(sorted(optional))})")
    found = list(project["dependencies"])
    for extra in extras:
        found += optional[extra]
    return found


def bounds(extras: list[str]) -> dict[str, str | None]:
    """Each direct dependency's name and its lower bound (None when it has none)."""
    out: dict[str, str | None] = {}
    for line in requirements(extras):
        match = REQUIREMENT.match(line)
        if match is None:
            raise SystemExit(f"deps.py: cannot read the requirement {line!r}")
        name, spec = match.group(1), match.group(3)
        lower = LOWER.search(spec)
        out.setdefault(name, lower.group(1) if lower else None)
    return out


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("lower", "versions"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    found = bounds(argv[1:])
    if argv[0] == "lower":
        missing = [name for name, bound in found.items() if bound is None]
        if missing:
            raise SystemExit(f"deps.py: no lower bound (>=) for {', '.join(missing)} "
                             f"in {PYPROJECT.name}")
        for name, bound in found.items():
            print(f"{name}=={bound}")
        return 0
    width = max(map(len, found))
    print(f"{'dependency':<{width}}  {'installed':<12}  claimed")
    for name, bound in found.items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "MISSING"
        print(f"{name:<{width}}  {installed:<12}  >={bound}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
