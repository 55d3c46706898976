"""Game and deal keys, built and read in one place: a scheduled game is named by where it
sits in its schedule.

A deal's key is 'ROUND-TABLE' (`deal_key`, e.g. '00003-00012'), a game's is
'ROUND-TABLE-ROTATION' (`game_key`): every seat rotation of one duplicate deal shares the
deal's key. A tournament's round is its round (Swiss, design round or round-robin
cycle); a league's is its batch. The numbers are zero-padded, so keys sort as strings
in schedule order too; `key_order` reads a key back into (round, table, rotation),
`deal_of` and `rotation_of` into its parts. `ScheduledGame` is the game the keys name.

A leaf: the standard library only (the store, the ratings, the runner and the site read
keys with it).
"""

from __future__ import annotations

from dataclasses import dataclass


def deal_key(round_no: int, table_no: int) -> str:
    """The deal key of table `table_no` of round `round_no`, e.g. '00003-00012'."""
    return f"{round_no:05d}-{table_no:05d}"


def game_key(round_no: int, table_no: int, rotation: int) -> str:
    """The game key of one seat rotation of a deal, e.g. '00003-00012-1'."""
    return f"{deal_key(round_no, table_no)}-{rotation}"


def key_order(key: str) -> tuple[int, int, int]:
    """Turn a game key ('ROUND-TABLE-ROTATION') into its sortable schedule position."""
    parts = key.split("-")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise ValueError(f"game key {key!r} is not of the form ROUND-TABLE-ROTATION, e.g. '00001-00002-0'")
    round_no, table_no, rotation = (int(part) for part in parts)
    return (round_no, table_no, rotation)


def deal_of(key: str) -> str:
    """The deal key of a game key ('00003-00012-1' -> '00003-00012')."""
    return key.rsplit("-", 1)[0]


def rotation_of(key: str, deal: str) -> str:
    """The seat rotation of game `key` of deal `deal`, as written in the key ('1'); "0"
    when the key is not one of that deal's."""
    prefix = deal + "-"
    return key[len(prefix):] if key.startswith(prefix) else "0"


@dataclass(frozen=True)
class ScheduledGame:
    """One game to play: where it sits in the schedule, who sits where, and its deal."""

    round: int  # 1-based; a Swiss round, a design round, a round-robin cycle, a league's batch
    table_no: int  # 1-based within the round
    rotation: int  # 0 unless duplicate: which seat rotation of the deal this is
    table: tuple[str, ...]  # bot ids in seat order (seat 0 first)
    seed: int  # the deal's seed; every rotation of a duplicate deal shares it

    @property
    def key(self) -> str:
        """The stable game key, e.g. '00003-00012-1'; `key_order` sorts it in schedule order."""
        return game_key(self.round, self.table_no, self.rotation)

    @property
    def deal(self) -> str:
        """The deal key: the same for every rotation of one duplicate table."""
        return deal_key(self.round, self.table_no)

    @property
    def order(self) -> tuple[int, int, int]:
        """Position in the schedule: (round, table_no, rotation)."""
        return (self.round, self.table_no, self.rotation)
