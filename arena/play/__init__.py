"""Playing games: the one executor of a scheduled game (`executor.py`), the one Runner
under a tournament and a league (`runner.py`), worker processes (`workers.py`), the Dask
cluster (`cluster.py`), a tournament (`tournament.py`) and `arena match` (`match.py`)."""
