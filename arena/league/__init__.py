"""A league (`arena league`): a ladder that keeps playing as bots join and leave.
- `ladder.py`: the league's runner; `members.py`: who plays, from the registry;
- `ledgers.py`: its two ledgers and the schedule's counts; `saved_state.py`: what it saves
  in its store after each batch so that a resume rates only what is new."""
