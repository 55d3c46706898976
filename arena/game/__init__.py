"""One game as the referee plays it: the bot protocol, the seats, the referee, the game
record."""
