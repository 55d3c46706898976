"""What the site's pages say, in words and cells, apart from how they are written
(`arena.site.writer`): the settings as a summary, a league bot's membership, the head-to-head
matrix's cells, a stderr excerpt that starts at a line.
Docs: docs/report.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from arena.config.tournament_file import said_sizes, swiss_sizes
from engine.registry import get_game


def _number(value: Any) -> str:
    """A setting's number as a person writes it: 4.167, not 4.166666666666667."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _rule_value(value: Any) -> str:
    return json.dumps(value) if isinstance(value, (bool, str)) or value is None else _number(value)


def settings_summary(settings: dict[str, Any]) -> dict[str, Any]:
    """What a spectator needs to know of how the tournament was run, in words.

    Only the settings named here are shown (format, tables, deals, seed, sandbox, limits,
    rating, rules); how the organiser ran it (output folder, jobs, cluster) and anything
    unknown is left out, so no local path or address reaches the site.
    """
    rows: list[tuple[str, str]] = []
    game_name = str(settings.get("game") or "")
    try:
        game = get_game(game_name) if game_name else None
    except Exception:  # a store of a game this arena does not know: its name is still worth showing
        game = None
    if game_name:
        rows.append(("game", game.title if game else game_name))
    fmt = settings.get("format") or "round-robin"
    rounds, cycles = settings.get("rounds"), settings.get("cycles") or 1
    if fmt == "swiss":
        text = f"Swiss, {rounds} round{'s' if rounds != 1 else ''}" if rounds else "Swiss"
    elif fmt == "league":
        text = "league: a ladder that bots join when they are submitted (a new version retires the old one)"
        if isinstance(settings.get("suspend_after"), int):
            text += f"; a bot that forfeits {settings['suspend_after']} games in a row is suspended"
        if settings.get("games"):
            text += f"; it stops at {settings['games']} games"
        elif settings.get("until_stable"):
            text += "; it stops once every active bot is settled"
    elif fmt == "gauntlet":
        challengers = [str(c.get("id", c)) if isinstance(c, dict) else str(c) for c in settings.get("challengers") or []]
        text = "gauntlet: " + (", ".join(challengers) or "the challengers") + " against the field"
    else:
        text = "round-robin"
        if rounds:
            text += f", {rounds} round{'s' if rounds != 1 else ''}"
        elif cycles > 1:
            text += f", {cycles} times over"
    rows.append(("format", text))
    seats_said = None  # the hero's words: "4 seats", or a Swiss's smaller tables
    if settings.get("seats"):
        seats, field = settings["seats"], settings.get("bots")
        seats_said = tables = f"{seats} seats"
        if fmt == "swiss" and isinstance(field, list) and len(field) >= 2 and isinstance(seats, int):
            sizes = swiss_sizes(len(field), seats)
            if any(size != seats for size in sizes):
                seats_said = f"tables of {said_sizes(sizes)} ({seats} seats asked)"
                tables = (f"{seats_said}: a Swiss round of {len(field)} bots seats the fewest tables that hold "
                          "every bot, their sizes within one")
        rows.append(("tables", tables))
    if "duplicate" in settings:
        rows.append(
            ("deals", "duplicate: every deal is played once in each seat rotation" if settings["duplicate"]
             else "a new deal every game")
        )
    if "seed" in settings:
        seed = settings["seed"]
        rows.append(("seed", f"public: {seed} (anyone can replay the deals)" if seed is not None else "secret (kept with the results)"))
    if settings.get("sandbox") in ("local", "docker"):
        rows.append(
            ("sandbox", "docker: each bot in its own container" if settings["sandbox"] == "docker"
             else "local: bot processes on the organiser's machine")
        )
    limits = settings.get("limits")
    if isinstance(limits, dict):
        parts = [
            (key, template) for key, template in (
                ("decision_s", "{} s per decision"), ("time_bank_s", "{} s time bank"), ("startup_s", "{} s to start"),
                ("cpu_s", "{} s of CPU per game"), ("memory_mb", "{} MB of memory"), ("cpus", "{} CPU"),
            ) if isinstance(limits.get(key), (int, float))
        ]
        if parts:
            rows.append(("limits", ", ".join(template.format(_number(limits[key])) for key, template in parts)))
    rating = settings.get("rating")
    if isinstance(rating, dict):
        named = [("mu", "mu"), ("sigma", "sigma"), ("beta", "beta"), ("tau", "tau"), ("draw_probability", "draw probability")]
        text = "TrueSkill: " + ", ".join(f"{label} {_number(rating[key])}" for key, label in named if key in rating)
        update = {
            "hand": "one update per hand of a deal (the bots that held the same cards compared)",
            "deal": "one update per deal (by total of places)",
            "rotation": "one update per rotation of a deal",
        }.get(str(rating.get("duplicate_update")))
        if settings.get("duplicate") and update:
            text += f"; {update}"
        rows.append(("rating", text))
    rules = settings.get("rules") if isinstance(settings.get("rules"), dict) else {}
    all_rules, changed = [], []
    for name, value in sorted(rules.items()):
        spec = None
        if game is not None:
            spec = next((option for option in game.options if option.name == name), None)
        rule = {"name": name, "value": _rule_value(value), "help": spec.help if spec else ""}
        all_rules.append(rule)
        if spec is None or spec.default != value:
            changed.append(rule)
    return {"rows": rows, "rules": all_rules, "changed_rules": changed, "seats": seats_said}


# --- a league bot's membership ------------------------------------------------------------

LEFT = {"retired": "retired", "removed": "removed", "suspended": "suspended"}


def bot_membership(member: Any, rounds: Sequence[int]) -> str:
    """A league bot's time in the league, in words that are true: the batch it joined, the
    batches it played in (from its stored games: `rounds`, a league's round being its
    batch) and, for a bot that stopped, from which batch it is no longer matched and why.

    `member.left_at` is the first batch the bot was not matched in; two batches play at
    once, so a bot suspended from batch b still played its games of batch b - 1."""
    return membership_text(member, min(rounds, default=0), max(rounds, default=0), len(rounds))


def membership_text(member: Any, first: int, last: int, games: int) -> str:
    """`bot_membership` from the first and last batch the bot played in and its games
    (what the site's state keeps of them)."""
    parts = [f"joined at batch {member.joined}"]
    if games:
        played = f"{games} game{'' if games == 1 else 's'}"
        parts.append(f"played in batch {first} ({played})" if first == last else f"played in batches {first} to {last} ({played})")
    else:
        parts.append("no game played")
    if member.left_at is not None and member.status in LEFT:
        parts.append(f"{LEFT[member.status]}: not matched from batch {member.left_at} on")
    text = "; ".join(parts)
    return text + (f" ({member.reason})" if member.reason else "")


# --- the head-to-head matrix ----------------------------------------------------------------


def _percent(share: float) -> int:
    """A share as a whole percent, rounded half to even, so that the two cells of a pair
    (p and 1 - p) always add up to 100: 50.5% and 49.5% both show 50."""
    return round(100 * share)


def h2h_cells(
    bots: Sequence[str],
    model: Mapping[str, Mapping[str, float]],
    ahead: Mapping[str, Mapping[str, int]],
    together: Mapping[str, Mapping[str, int]],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Each cell of the matrix (row ahead of column): the model's percent (None without a
    model), the games together and the times ahead, the observed percent, and its colour:
    'win', 'loss' or 'even' by the percent the cell SHOWS (the model's, else the observed
    share), so a cell that reads 50% is never coloured as a win or a loss."""
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    for row in bots:
        cells[row] = {}
        for col in bots:
            if col == row:
                continue
            p = model.get(row, {}).get(col)
            n, a = together.get(row, {}).get(col, 0), ahead.get(row, {}).get(col, 0)
            seen = _percent(a / n) if n else None
            shown = _percent(p) if p is not None else seen
            tint = p if p is not None else (a / n if n else 0.5)
            colour = "even" if shown is None or shown == 50 else ("win" if shown > 50 else "loss")
            cells[row][col] = {
                "model": None if p is None else _percent(p), "model_exact": p, "games": n, "ahead": a, "seen": seen,
                "colour": colour, "tint": round(tint, 2),
            }
    return cells


# --- stderr ---------------------------------------------------------------------------------


def log_excerpt(text: str, limit: int) -> tuple[str, bool]:
    """The end of a log, at most `limit` characters, starting at the start of a line (a
    line longer than the limit is the exception: its end is kept); and whether anything
    was left out before it."""
    if len(text) <= limit:
        return text, False
    tail = text[-limit:]
    if text[-limit - 1] != "\n":  # the cut fell inside a line: start at the next one
        newline = tail.find("\n")
        if 0 <= newline < len(tail) - 1:
            tail = tail[newline + 1 :]
    return tail, True


def last_lines(text: str, count: int = 20, width: int = 300, kept: int = 2000) -> list[str]:
    """The last `count` lines of an incident's log tail (a line cut to `width` characters).
    The referee keeps the last `kept` characters of the log, so a tail that long may begin
    inside a line: that partial first line is left out."""
    if len(text) >= kept and "\n" in text.rstrip("\n"):
        text = text[text.index("\n") + 1 :]
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    return [line if len(line) <= width else line[: width - 1] + "\u2026" for line in lines[-count:]]
