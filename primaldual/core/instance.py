"""The data model: a cluster, jobs and an instance (docs/architecture.md, Model conventions; docs/papers.md, OASiS).

Indices are zero-based in code: slots ``t = 0..T-1``, worker servers ``h = 0..H-1``, PS servers
``k = 0..K-1``, resources ``r = 0..R-1``, jobs ``i = 0..I-1`` (the papers count from one).

Jobs carry physical quantities (seconds, MB, Gbps); the work of job ``i`` in worker-slots is derived from them
with the instance's slot length, see :attr:`Instance.work`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from primaldual.core.pool import Pool, cluster_pools
from primaldual.core.utility import Utility

#: Relative tolerance for the floating-point side of ceilings and of eq. (6): ``ceil(x - EPS*x)``.
CEIL_TOLERANCE = 1e-9


def ceil_tolerant(value: float) -> int:
    """``ceil`` that does not round ``2.0000000000000004`` up to 3 (floating noise in derived work)."""
    return int(math.ceil(value - CEIL_TOLERANCE * max(1.0, abs(value))))


def _readonly(array, dtype=float) -> np.ndarray:
    out = np.array(array, dtype=dtype)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class Cluster:
    """Worker servers ``[H]`` and PS servers ``[K]``, two separate pools as in eqs. (4)-(5).

    ``worker_capacity[h, r]`` is ``c_h^r`` and ``ps_capacity[k, r]`` is ``c_k^r``. A heterogeneous cluster
    (:mod:`primaldual.core.gpu_types`) declares its ``gpu_types`` and gives each worker server its type
    (``worker_types[h]``); ``None`` for both (the default) is the homogeneous cluster. Given only
    ``worker_types``, ``gpu_types`` is their distinct names in order of first appearance.
    """

    resources: tuple[str, ...]
    worker_capacity: np.ndarray
    ps_capacity: np.ndarray
    worker_types: tuple[str, ...] | None = None
    gpu_types: tuple[str, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "resources", tuple(self.resources))
        if self.worker_types is not None:
            object.__setattr__(self, "worker_types", tuple(self.worker_types))
            if self.gpu_types is None:
                object.__setattr__(self, "gpu_types", tuple(dict.fromkeys(self.worker_types)))
        if self.gpu_types is not None:
            object.__setattr__(self, "gpu_types", tuple(self.gpu_types))
        object.__setattr__(self, "worker_capacity", _readonly(self.worker_capacity).reshape(-1, len(self.resources)))
        object.__setattr__(self, "ps_capacity", _readonly(self.ps_capacity).reshape(-1, len(self.resources)))

    @property
    def n_worker_servers(self) -> int:
        return self.worker_capacity.shape[0]

    @property
    def n_ps_servers(self) -> int:
        return self.ps_capacity.shape[0]

    @property
    def n_resources(self) -> int:
        return len(self.resources)

    @property
    def heterogeneous(self) -> bool:
        return self.worker_types is not None

    @cached_property
    def worker_type_index(self) -> np.ndarray:
        """``g(h)`` as an index into ``gpu_types``, shape (H,) (heterogeneous clusters only)."""
        return _readonly([self.gpu_types.index(g) for g in self.worker_types], dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Job:
    """One training job, with the paper's parameters (docs/papers.md, OASiS).

    arrival ``a_i`` (slot), epochs ``E_i``, chunks ``N_i`` (also the cap on concurrent workers, eq. (3)),
    mini-batches per chunk ``M_i``, compute time per mini-batch ``tau_i`` (seconds), gradient size ``e_i`` (MB),
    worker and PS bandwidth ``b_i``, ``B_i`` (Gbps), per-worker demand ``w_i^r`` and per-PS demand ``s_i^r``
    (arrays over the cluster's resources), and the utility ``f_i`` of completion duration.
    On a heterogeneous cluster, ``compute_seconds_by_type`` holds ``(type, tau_i^g)`` per GPU type and
    ``compute_seconds`` is the least of them (:mod:`primaldual.core.gpu_types`); ``None`` otherwise.
    """

    arrival: int
    epochs: int
    chunks: int
    minibatches_per_chunk: int
    compute_seconds: float
    gradient_mb: float
    worker_bandwidth_gbps: float
    ps_bandwidth_gbps: float
    worker_demand: np.ndarray
    ps_demand: np.ndarray
    utility: Utility
    name: str = ""
    compute_seconds_by_type: tuple[tuple[str, float], ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "worker_demand", _readonly(self.worker_demand))
        object.__setattr__(self, "ps_demand", _readonly(self.ps_demand))
        if self.compute_seconds_by_type is not None:  # a mapping or pairs; kept as pairs (immutable, picklable)
            given = self.compute_seconds_by_type
            pairs = given.items() if isinstance(given, dict) else given
            object.__setattr__(self, "compute_seconds_by_type", tuple((g, seconds) for g, seconds in pairs))

    @property
    def communication_seconds(self) -> float:
        """``2 e_i / b_i`` in seconds: push gradients and pull parameters, MB -> Gb is x 8 / 1000."""
        return 2.0 * self.gradient_mb * 8.0 / 1000.0 / self.worker_bandwidth_gbps

    @property
    def minibatch_seconds(self) -> float:
        """``tau_i + 2 e_i / b_i``: one worker's time per mini-batch, the bracket of eq. (2)."""
        return self.compute_seconds + self.communication_seconds

    def min_parameter_servers(self, workers):
        """Fewest PSs that satisfy eq. (6) for ``workers`` workers: ``ceil(D b_i / B_i)`` (0 for D = 0).

        Vectorised over ``workers``. Eq. (7) additionally requires the result to be at most ``workers``,
        which holds for every D exactly when ``b_i <= B_i`` (validated on load).
        """
        d = np.asarray(workers, dtype=float)
        raw = d * self.worker_bandwidth_gbps / self.ps_bandwidth_gbps
        out = np.ceil(raw - CEIL_TOLERANCE * np.maximum(1.0, raw)).astype(np.int64)
        # The tolerance absorbs noise above an integer; it must not turn a positive need (D > 0 workers with
        # b_i > 0, however small b_i / B_i is) into no PS at all, which eq. (6) forbids.
        out = np.maximum(out, (d > 0).astype(np.int64))
        return out if out.ndim else int(out)


@dataclass(frozen=True, eq=False)
class Instance:
    """A cluster, jobs in arrival order, a horizon of ``horizon`` slots of ``slot_seconds`` seconds each."""

    cluster: Cluster
    jobs: tuple[Job, ...]
    horizon: int
    slot_seconds: float
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "jobs", tuple(self.jobs))
        # The numeric domains (primaldual/core/domains.py) hold for every instance, however it was built: nothing
        # downstream may overflow, produce a NaN or allocate without bound. The file loader and the generator
        # also check consistency (see validate()).
        from primaldual.core.domains import instance_problems
        from primaldual.core.errors import InputError
        from primaldual.core.gpu_types import type_problems

        # GPU types (issue 64) once every field is in its range.
        problems = instance_problems(self, domain=True, consistency=False) or type_problems(self)
        if problems:
            raise InputError(problems)

    def validate(self) -> "Instance":
        """Raise :class:`InputError` unless the instance is one the file format accepts (domains and
        consistency: arrivals before the horizon, ``b_i <= B_i``, every demand fits some server)."""
        from primaldual.core.domains import instance_problems
        from primaldual.core.errors import InputError

        # The domain was checked when the instance was constructed (it is immutable).
        problems = instance_problems(self, domain=False, consistency=True)
        if problems:
            raise InputError(problems)
        return self

    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    # Derived quantities, one array over jobs each; computed once (the instance is immutable).

    @cached_property
    def work(self) -> np.ndarray:
        """``W_i = E_i N_i M_i (tau_i + 2 e_i / b_i) / slot_seconds``: job i's work in worker-slots (RHS of eq. (2))."""
        return _readonly(
            [j.epochs * j.chunks * j.minibatches_per_chunk * j.minibatch_seconds / self.slot_seconds for j in self.jobs]
        )

    @cached_property
    def work_by_type(self) -> np.ndarray:
        """``W_i^g`` (:mod:`primaldual.core.gpu_types`), shape (I, G) over ``cluster.gpu_types``: job i's work in
        worker-slots of type g, the denominators of the heterogeneous eq. (2). Heterogeneous instances only."""
        types = self.cluster.gpu_types
        rows = []
        for j in self.jobs:
            seconds = dict(j.compute_seconds_by_type)
            rows.append([j.epochs * j.chunks * j.minibatches_per_chunk * (seconds[g] + j.communication_seconds)
                         / self.slot_seconds for g in types])
        return _readonly(rows).reshape(self.n_jobs, len(types))

    @cached_property
    def work_units(self) -> np.ndarray:
        """``V_i = ceil(W_i)`` (eq. (2) with integral ``y``: ``sum y >= V_i``), at least 1: a positive work below
        :func:`ceil_tolerant`'s tolerance still needs one worker-slot."""
        return _readonly([max(ceil_tolerant(w), 1) for w in self.work], dtype=np.int64)

    @cached_property
    def shortest_duration(self) -> np.ndarray:
        """``ceil(V_i / N_i)``: the fewest slots job i can finish in (eq. (3); capacities ignored, so a lower
        bound: eq. (1)'s ``t_hat - a_i`` is at least ``shortest_duration - 1``)."""
        return _readonly(
            [-(-int(v) // job.chunks) for v, job in zip(self.work_units, self.jobs)], dtype=np.int64
        )

    @cached_property
    def arrivals(self) -> np.ndarray:
        return _readonly([j.arrival for j in self.jobs], dtype=np.int64)

    @cached_property
    def can_finish(self) -> np.ndarray:
        """``a_i + shortest_duration_i <= T``: whether job i can finish at all (else every scheduler rejects it)."""
        return _readonly(self.arrivals + self.shortest_duration <= self.horizon, dtype=bool)

    def best_utility(self, i: int) -> float:
        """``f_i(shortest_duration_i - 1)``: the most job i can earn."""
        return float(self.jobs[i].utility(self.shortest_duration[i] - 1))

    @cached_property
    def pools(self) -> tuple[Pool, Pool]:
        """The worker pool and the PS pool (:func:`primaldual.core.pool.cluster_pools`), built once."""
        return cluster_pools(self.cluster)

    def worker_demand_matrix(self) -> np.ndarray:
        """``w[i, r]``, shape (I, R)."""
        return np.array([j.worker_demand for j in self.jobs]).reshape(self.n_jobs, self.cluster.n_resources)

    def ps_demand_matrix(self) -> np.ndarray:
        """``s[i, r]``, shape (I, R)."""
        return np.array([j.ps_demand for j in self.jobs]).reshape(self.n_jobs, self.cluster.n_resources)


def job_with_work(
    work: int,
    chunks: int,
    worker_demand,
    ps_demand,
    utility: Utility,
    *,
    arrival: int = 0,
    slot_seconds: float = 1.0,
    worker_bandwidth_gbps: float = 1.0,
    ps_bandwidth_gbps: float = 1.0,
    name: str = "",
) -> Job:
    """A job of exactly ``work`` worker-slots on slots of ``slot_seconds``: for hand-made instances.

    One epoch and one mini-batch per chunk with no gradient traffic, so ``W_i = N_i tau_i / slot_seconds``
    equals ``work`` and eq. (6) needs ``ceil(D b_i / B_i)`` PSs for ``D`` workers.
    """
    return Job(
        arrival=arrival,
        epochs=1,
        chunks=chunks,
        minibatches_per_chunk=1,
        compute_seconds=slot_seconds * work / chunks,
        gradient_mb=0.0,
        worker_bandwidth_gbps=worker_bandwidth_gbps,
        ps_bandwidth_gbps=ps_bandwidth_gbps,
        worker_demand=np.asarray(worker_demand, dtype=float),
        ps_demand=np.asarray(ps_demand, dtype=float),
        utility=utility,
        name=name,
    )
