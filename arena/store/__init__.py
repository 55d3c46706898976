"""What persists: the SQLite store of runs and games, the run's seeds and secret, and the
bot registry a league watches."""
