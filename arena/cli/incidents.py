"""Incidents under a match's or a run's standings: one line each, and under the first of
each bot and reason the end of the bot's stderr and a hint (arena.faults.explain_fault)."""

from __future__ import annotations

from pathlib import Path

from arena.cli.console import say

# Incidents listed one by one under a match's or a run's standings; the rest are counted.
_INCIDENTS_SHOWN = 20


def print_incidents(incidents, sandbox: str | None) -> None:
    """Each incident on a line (`where`: game and seat), and under the first of each bot and
    reason the end of the bot's stderr and a hint (arena.faults.explain_fault)."""
    explained: set[tuple[str, str]] = set()
    for where, incident in incidents[:_INCIDENTS_SHOWN]:
        say(f"{where}, {incident.headline()}")
        if (incident.bot, incident.reason.value) not in explained:
            explained.add((incident.bot, incident.reason.value))
            for line in incident.explained(sandbox):
                say(f"  {line}")
    if len(incidents) > _INCIDENTS_SHOWN:
        say(f"... and {len(incidents) - _INCIDENTS_SHOWN} more incidents")


def print_stored_incidents(out_dir: Path, sandbox: str | None) -> None:
    """A run's incidents, under its standings: per bot and reason how many, and the first of
    each with the end of the bot's stderr and a hint (the site's bot pages list them all)."""
    from arena.store.db import Store

    with Store.open(out_dir) as store:
        incidents = store.incidents()
    if not incidents:
        return
    groups: dict[tuple[str, str], list] = {}
    for key, incident in incidents:
        groups.setdefault((incident.bot, incident.reason.value), []).append((key, incident))
    forfeits = sum(1 for _, incident in incidents if incident.forfeit)
    say(f"incidents: {len(incidents)} ({forfeits} forfeits); the first of each bot and reason:")
    for (bot, reason), listed in groups.items():
        key, incident = listed[0]
        more = f" ({len(listed)} {reason} in all)" if len(listed) > 1 else ""
        say(f"game {key}, seat {incident.seat}, {incident.headline()}{more}")
        for line in incident.explained(sandbox):
            say(f"  {line}")
