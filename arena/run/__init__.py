"""Running games: schedules, one scheduled game, the tournament and league runners, the
league's matchmaker, worker processes and the Dask cluster, matches and SPRT matches."""
