"""The static HTML site: what the pages say, the replays' frames, and the writer.

What the runners ask of it is one call, `render_site(out_dir)`: write the site of a run's
folder (a tournament's at its end, a league's after each batch, `arena play`'s table
after each game), from the store alone; the writer (`arena.site.writer`) imports only
when it is called.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def render_site(out_dir: str | Path, *, jobs: int | None = None, broken_bots: Sequence[tuple[str, str]] = ()) -> Path:
    """Write (or bring up to date) the site of the run in `out_dir`, with `jobs` processes
    (None: the writer's choice); `broken_bots`: a league's registry folders that cannot
    join, with their mistakes (the caller reads the registry, the site only the store);
    returns the site's folder (`arena.site.writer`)."""
    from arena.site.writer import render_site as write

    return write(out_dir, jobs=jobs, broken_bots=broken_bots)
