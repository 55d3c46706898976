"""Play against the bots in the browser: the human seat (`arena play`, docs/play.md).

- `seat.py`: `HumanSeat`, a `Seat` whose decisions come from a page through a `Channel`;
  what the page gets is the seat's observation, legal actions and events, nothing more.
- `table.py`: `PlayTable` (people and bots at one table, games in a thread, each stored
  with the people marked `kind = 'human'`), `PlayHost` (a server's tables, by token).
- `turn_help.py`: what a game adds to a turn (Three Thirteen's combinations when going out).
- The page (HTML, JS and CSS: `arena/web/play_page/`) and what serves it over HTTP live in `arena/web/`
  (`play_routes.py`, `door_play.py`, `play_server.py`).
"""

from arena.human.seat import Channel, GameStopped, HumanSeat
from arena.human.table import HUMAN_KIND, PlayError, PlayHost, PlayTable, TableConfig

__all__ = ["HUMAN_KIND", "Channel", "GameStopped", "HumanSeat", "PlayError", "PlayHost", "PlayTable", "TableConfig"]
