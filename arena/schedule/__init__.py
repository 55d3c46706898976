"""Schedules, pure: which bots sit at which table, in which seats, with which deal.
- `seating.py`: what every schedule is made of (checks of its inputs, deal seeds, seat
  rotations, games of tables);
- `formats.py`: round-robin (designs and the golfer's schedule), gauntlet, balanced seats;
- `swiss.py`: Swiss rounds;
- `matchmaker.py`: a league's next batch of tables.
Nothing here plays a game or reads a store."""
