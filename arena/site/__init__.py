"""The static HTML site: what the pages say, the replays' frames, and the writer.

What the runners ask of it is one call, `render_site(out_dir)`: write the site of a run's
folder (a tournament's at its end, a league's after each batch, `arena play`'s table
after each game), from the store alone; the writer (`arena.site.writer`) imports only
when it is called.
"""

from __future__ import annotations

from pathlib import Path


def render_site(out_dir: str | Path, *, jobs: int | None = None) -> Path:
    """Write (or bring up to date) the site of the run in `out_dir`, with `jobs` processes
    (None: the writer's choice); returns the site's folder (`arena.site.writer`)."""
    from arena.site.writer import render_site as write

    return write(out_dir, jobs=jobs)
