"""A league on a Dask cluster (LocalCluster of two worker processes on loopback): a bot that
joins while it runs is shipped to the workers, and the league stores what the local pool
stores, game for game and rating for rating; its bot_process is the one its workers use."""

from __future__ import annotations

import shutil

from distributed import Client, LocalCluster

from arena.league.ladder import run_league
from tests.play.test_cluster import _worker_slots
from tests.league.test_league import (
    bot_folder,
    config,
    members_of,
    ratings_of,
    registry_of,
    schedule_of,
)

LOOPBACK = {
    "threads_per_worker": 1, "processes": True, "host": "127.0.0.1", "dashboard_address": None,
    "scheduler_kwargs": {"dashboard_address": "127.0.0.1:0"},
}


def test_a_league_on_a_cluster_plays_what_the_local_pool_plays(tmp_path):
    registry = registry_of(tmp_path, ("ann", "bob", "cat"))
    late = bot_folder(tmp_path / "late", "dan")
    local_registry = tmp_path / "local-registry"
    shutil.copytree(registry, local_registry)

    def arrive(where):
        def at(batch: int) -> None:
            if batch == 3:
                shutil.copytree(late, where / "dan" / "1.0")
        return at

    with LocalCluster(n_workers=2, **LOOPBACK) as cluster:
        run_league(
            config(tmp_path / "cluster", registry, games=10, cluster=cluster.scheduler_address),
            before_batch=arrive(registry), report=False,
        )
    run_league(config(tmp_path / "local", local_registry, games=10), before_batch=arrive(local_registry), report=False)
    assert members_of(tmp_path / "cluster")["dan@1.0"].joined == 3
    assert any("dan@1.0" in bots for _, _, bots, _, _ in schedule_of(tmp_path / "cluster"))
    assert schedule_of(tmp_path / "cluster") == schedule_of(tmp_path / "local")
    assert ratings_of(tmp_path / "cluster") == ratings_of(tmp_path / "local")


def test_a_per_slot_league_on_a_cluster_keeps_sessions_on_the_workers_and_ends_them_with_it(tmp_path):
    registry = registry_of(tmp_path, ("ann", "bob", "cat"))
    seen = []
    with LocalCluster(n_workers=2, **LOOPBACK) as cluster, Client(cluster.scheduler_address, set_as_default=False) as client:

        def look(update) -> None:
            seen.extend(slot for slots in client.run(_worker_slots).values() for slot in slots)

        run_league(
            config(tmp_path / "cluster", registry, games=12, bot_process="per-slot", cluster=cluster.scheduler_address),
            report=False, progress=look,
        )
        assert list(client.run(_worker_slots).values()) == [[], []]  # the league ended its sessions there
    # A session that lives on between games (a slot that played two games or more).
    assert any(games >= 2 and session for _, games, session in seen), seen
    # The random bot reseeds from each start's seed: per-slot plays what fresh processes play.
    run_league(config(tmp_path / "local", registry, games=12), report=False)
    assert schedule_of(tmp_path / "cluster") == schedule_of(tmp_path / "local")
    assert ratings_of(tmp_path / "cluster") == ratings_of(tmp_path / "local")
