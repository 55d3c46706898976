"""Tables in a terminal: compact (one space between columns, no frame), as wide as the
terminal allows by leaving out spare columns, names never cut; and the standings table."""

from __future__ import annotations

from rich.table import Table

from arena.cli.console import console
from arena.ratings.ledger import SCORE_MEANS, WINS_MEANS


def fits(columns: list[str], rows: list[dict[str, str]]) -> bool:
    """True if a compact table of these columns fits in the terminal."""
    widths = [max([len(column)] + [len(row[column]) for row in rows]) for column in columns]
    return sum(widths) + len(columns) - 1 <= console.width


def fitting(columns: list[str], rows: list[dict[str, str]], spare: tuple[str, ...]) -> list[str]:
    """`columns` without the `spare` ones (in order) while a compact table of them would be
    wider than the terminal."""
    columns = list(columns)
    for column in spare:
        if fits(columns, rows):
            break
        columns.remove(column)
    return columns


def compact_table(columns: list[str], rows: list[dict[str, str]], left: tuple[str, ...] = ()) -> Table:
    """A table with one space between columns, a rule under the header and no frame: the
    most that fits in a terminal; names are never cut."""
    from rich import box

    table = Table(box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False, collapse_padding=True)
    for column in columns:
        table.add_column(column, justify="left" if column in left else "right", no_wrap=True)
    for row in rows:
        table.add_row(*(row[column] for column in columns))
    return table


def match_games_table(result) -> tuple[Table, list[str]]:
    """A match's games (arena.play.match.MatchResult), a row each: every bot's place, game score
    and seat, and the incidents; with the legend that numbers the bots when their names do
    not fit."""
    names = [bot.name for bot in result.bots]
    rows = []
    for game_result in result.games:
        cells = {"game": str(game_result.game_number), "seed": str(game_result.seed)}
        for seat, name in enumerate(game_result.seats):
            cells[name] = f"{game_result.places[seat]} ({game_result.scores[seat]:g}) s{seat}"
        cells["incidents"] = ", ".join(f"{i.bot}: {i.reason.value}" for i in game_result.incidents) or "-"
        rows.append(cells)
    # The seed is the column to leave out when the table is wider than the terminal
    # (--verbose and --replay give every game's seed); then long names become numbers.
    columns = fitting(["game", "seed", *names, "incidents"], rows, ("seed",))
    legend = []
    if not fits(columns, rows):
        for number, name in enumerate(names, start=1):
            for row in rows:
                row[f"bot {number}"] = row.pop(name)
            legend.append(f"bot {number}: {name}")
        columns = [f"bot {names.index(c) + 1}" if c in names else c for c in columns]
    return compact_table(columns, rows, left=("incidents",)), legend


# Standings columns left out, in this order, while the table is wider than the terminal
# (names are never cut); `arena standings --json` has every figure.
# The column the standings are ranked by (score for a Swiss, mu-3σ otherwise), the rank and
# the name always stay.
_SPARE_COLUMNS = ("wins", "sigma", "games", "mu", "place", "score", "bhz", "mu-3σ", "band")


def standings_table(standings, title: str, swiss: bool, width: int = 80, marks=None) -> Table:
    """The standings (`arena.ratings.standings.Standings.lines`) as a rich table, in their
    order (a Swiss's by score and tie-break), each bot's band, and a blank line between
    groups of bots that are separated; at most `width` columns wide while spare columns remain."""
    from rich import box

    columns = ["#", "band", "bot"] + (["score", "bhz"] if swiss else [])
    columns += ["mu", "sigma", "mu-3σ", "games", "wins", "place", "forf"] + ([] if swiss else ["score"])
    groups = [line.group for line in standings]
    rows = []
    for rank, line in enumerate(standings, start=1):
        rows.append({
            "#": str(rank),
            "band": str(line.band),
            "bot": line.bot + (marks or {}).get(line.bot, ""),
            "score": f"{line.score:.2f}" if swiss else f"{line.score:.1f}",  # a Swiss's ties must show
            "bhz": f"{line.buchholz:.2f}" if line.buchholz is not None else "-",
            "mu": f"{line.mu:.2f}",
            "sigma": f"{line.sigma:.2f}",
            "mu-3σ": f"{line.conservative:.2f}",
            "games": str(line.games),
            "wins": str(line.wins),
            "place": f"{line.average_place:.2f}" if line.games else "-",
            "forf": str(line.forfeits),
        })
    widths = {column: max([len(column)] + [len(row[column]) for row in rows]) for column in columns}
    ranked_by = "score" if swiss else "mu-3σ"
    for spare in _SPARE_COLUMNS:
        if sum(widths[column] for column in columns) + len(columns) - 1 <= width:
            break
        if spare in columns and spare != ranked_by:
            columns.remove(spare)
    # One space between columns and none at the edges.
    shown = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False, collapse_padding=True
    )
    for column in columns:
        shown.add_column(column, justify="left" if column == "bot" else "right", no_wrap=True, min_width=widths[column])
    for at, row in enumerate(rows):
        if at and groups[at] != groups[at - 1]:
            shown.add_section()
        shown.add_row(*(row[column] for column in columns))
    return shown


def standings_notes(swiss: bool) -> list[str]:
    """What the standings table's columns and blank lines mean."""
    ranked = (
        "Ranked by score, then bhz (Buchholz: over the bot's games, the sum of its table-mates' average final "
        "score), then mu-3σ."
        if swiss
        else "Ranked by mu-3σ (the conservative rating)."
    )
    return [
        f"{ranked} wins: {WINS_MEANS}; score: {SCORE_MEANS}.",
        "band: the places the bot could hold given the games played (90%); a blank line separates groups: "
        "bots whose bands overlap a neighbour's are not separated, and their order may be luck. "
        "place: average place (1 = best); forf: games forfeited.",
    ]


def gauntlet_table(lines) -> Table:
    """A gauntlet's lines (arena.schedule.formats.GauntletLine): each challenger against each field
    bot it met."""
    from rich import box

    shown = Table(
        title="gauntlet: each challenger against each field bot it met", title_justify="left",
        box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False, collapse_padding=True,
    )
    for column in ("challenger", "opponent", "games", "ahead", "tied", "behind", "score", "place", "theirs"):
        shown.add_column(column, justify="left" if column in ("challenger", "opponent") else "right", no_wrap=True)
    for line in lines:
        shown.add_row(
            line.challenger, line.opponent, str(line.games), str(line.ahead), str(line.tied), str(line.behind),
            f"{line.score:.2f}", f"{line.place:.2f}", f"{line.opponent_place:.2f}",
        )
    return shown
