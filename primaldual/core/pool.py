"""The two server pools of a cluster, workers and parameter servers (PSs), as one value each.

Problem (1)-(13) treats its two pools alike: worker server ``h`` has capacities ``c_h^r`` and a job's worker
demands ``w_i^r``; PS server ``k`` has ``c_k^r`` and a PS demands ``s_i^r``. Every loop that does the same
thing to both pools (prices, the verifier, the simulator's checks, the metrics) runs over
:func:`cluster_pools` instead of being written twice. A :class:`Pool` is immutable; the mutable state of a
run (amounts used, free, prices) lives in :mod:`primaldual.oasis.prices`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


class Capacities(Protocol):
    """What :func:`cluster_pools` reads: a :class:`~primaldual.core.instance.Cluster` (or anything with its two
    capacity arrays). The pool module sits below the data model, so it names the fields, not the class."""

    worker_capacity: np.ndarray
    ps_capacity: np.ndarray


#: Pool names, in the order every per-pool tuple uses (workers first).
POOL_NAMES = ("worker", "ps")


@dataclass(frozen=True, eq=False)
class Pool:
    """One pool: its ``capacity[server, resource]``, how to read a job's per-unit demand and an allocation's
    per-server counts, and the names and equation numbers its messages use.

    ``name`` is ``"worker"`` or ``"ps"`` (the prefix of the file formats' twin keys); ``server`` names a
    server in messages (``"worker"``/``"PS"``); ``units`` names the counted units (``"workers"``/``"parameter
    servers"``). ``capacity_equation``, ``arrival_equation`` and ``count_equation`` are the paper's numbers of
    the pool's capacity (4)/(5), nothing-before-arrival (9)/(10) and integrality (12)/(13) constraints.
    """

    name: str
    server: str
    units: str
    capacity: np.ndarray
    demand_field: str
    count_field: str
    capacity_equation: str
    arrival_equation: str
    count_equation: str

    @property
    def n_servers(self) -> int:
        return self.capacity.shape[0]

    def demand(self, job: Any) -> np.ndarray:
        """This pool's demand per unit (``w_i`` or ``s_i``, shape (R,)) of a :class:`~primaldual.core.instance.Job`."""
        return getattr(job, self.demand_field)

    def demand_matrix(self, instance: Any) -> np.ndarray:
        """Every job's demand per unit of an :class:`~primaldual.core.instance.Instance`, shape (I, R)."""
        return getattr(instance, f"{self.demand_field}_matrix")()

    def counts(self, allocation: Any) -> np.ndarray:
        """This pool's per-server counts (``workers`` or ``parameter_servers``) of an allocation or a schedule."""
        return getattr(allocation, self.count_field)


def cluster_pools(cluster: Capacities) -> tuple[Pool, Pool]:
    """The worker pool and the PS pool of ``cluster`` (an :class:`~primaldual.core.instance.Instance`, which
    carries its cluster, works too)."""
    cluster = getattr(cluster, "cluster", cluster)
    return (
        Pool("worker", "worker", "workers", cluster.worker_capacity, "worker_demand", "workers", "(4)", "(9)",
             "(12)"),
        Pool("ps", "PS", "parameter servers", cluster.ps_capacity, "ps_demand", "parameter_servers", "(5)", "(10)",
             "(13)"),
    )


__all__ = ["POOL_NAMES", "Pool", "cluster_pools"]
