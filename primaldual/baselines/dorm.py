"""Dorm: dynamically resized per-job partitions, re-solved by a MILP at every arrival and departure
(Sun, Wen, Duong, Yan, "Towards Distributed Machine Learning in Shared Clusters: A Dynamically-Partitioned
Approach", IEEE SMARTCOMP 2017, arXiv 1704.06738; docs/papers.md, OASiS).

Reading:

* each job runs in a partition: workers on worker servers and PSs on PS servers (eqs. (4)-(5));
* at every **event** (a job arrives, a job completes) all partitions are re-solved together by Dorm's
  utilisation-fairness MILP (:mod:`primaldual.models.dorm`): maximise worker-pool utilisation subject to the
  fairness loss (total deviation of dominant shares from DRF's, computed by progressive filling as in
  :mod:`.drf`) staying within ``fairness_threshold``, with Dorm's adjustment overhead as a small penalty per
  resized partition and, if ``max_adjustments`` is set, a bound on how many are resized per event;
* between events partitions are fixed; a running partition may shrink or grow but is never taken away
  (Dorm resizes applications, it does not kill them) unless it can no longer finish by the horizon;
* PSs are sized at the fewest eq. (6) allows; a job gets at most ``N_i`` workers (eq. (3)).

Choices in the baseline's favour:

* the source optimises utilisation and knows no deadlines, so a partition could be too small for its job to
  finish by the horizon, wasting everything it gets. Here a job is only given a partition that lets it finish:
  at least ``ceil(R_i / slots_left)`` workers (``R_i`` its remaining work), and jobs that cannot finish even
  with ``N_i`` workers are left out (``skip_unfinishable``);
* a job never gets more workers than its remaining work, so its last slot wastes nothing;
* resizing costs nothing in the slot model, so ``max_adjustments`` defaults to None (unbounded);
* ``fairness_threshold = 0.1`` (total absolute deviation of dominant shares from DRF's) gave Dorm its highest
  mean utility among bounded thresholds on ``small`` instances (seeds 0-19, 10 and 20 jobs): 207.5, against
  205.9 at 0.05, 195.8 at 0.2 and 202.4 at 0.5; dropping the bound (``None``) gave 208.0, within noise, but
  the fairness constraint is what defines Dorm, so it stays on.

Formulation: the per-server MILP has ``J x (H + K)`` integer placement variables and is exact; on large clusters
it cannot be re-solved at every event in reasonable time (on the ``paper`` preset it runs into its per-event time
limit at most events), so ``formulation="auto"`` (the default) switches to the **pooled** MILP (one worker and one PS
count per job, pool-wide capacities) when ``J x (H + K)`` exceeds ``AUTO_PER_SERVER_LIMIT`` = 1000. The pooled
counts are then placed: partitions that shrink or keep their size stay on their servers; growing and new
partitions (largest dominant share per worker first) keep their servers and add units by the ``placement``
rule, as many as fit; a new partition that cannot reach its minimum size is not started. ``per_server`` and
``pooled`` force one formulation.

Solving and its fallback, in order (each use is counted in ``report()``):

1. the MILP with ``solver`` (default ``highs``) and ``time_limit`` seconds (default 2) per event; the best
   incumbent is used when the limit is hit;
2. if it is infeasible (the surviving partitions' minimum sizes and the fairness bound can conflict) or finds
   nothing, the same MILP without the fairness constraint (``fairness_relaxed``);
3. if that finds nothing either, the previous partitions are kept (shrunk to their remaining work) and the new
   jobs are given what is left by DRF's progressive filling (``kept_previous``).

On a **heterogeneous cluster** it is type-unaware (:mod:`primaldual.simulation.placement`): it always solves the
pooled MILP (pool-wide counts; the per-server model would mix types in a partition), its capacities summed
over every type; each count is placed on one type, a kept partition on its own and a new one on the first type
with room; caps read the work left on a job's slowest type and each slot trims to what its type needs.

Parameters: ``fairness_threshold`` (>= 0 or None for no fairness constraint), ``max_adjustments`` (None or
>= 0), ``solver``, ``time_limit`` (seconds), ``mip_gap``, ``formulation`` (``auto``, ``per_server``,
``pooled``), ``placement`` (for pooled counts, fallback 3 and the DRF shares), ``skip_unfinishable`` (True).
"""

from __future__ import annotations

import inspect
import logging
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace

import numpy as np

from primaldual.simulation.parameter_ranges import check_parameters
from primaldual.baselines.drf import progressive_filling
from primaldual.baselines import parameter_specs
from primaldual.simulation.placement import (FreeCapacity, check_placement, dominant_share_unit, grow, most_needed,
                                             need_of, trim)
from primaldual.models.dorm import DormProblem, build_dorm_model, extract_partition
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState
from primaldual.backends.solvers import check_solver, solve_model


FORMULATIONS = ("auto", "per_server", "pooled")
#: ``formulation="auto"`` uses the per-server MILP up to this many integer placement variables J x (H + K).
AUTO_PER_SERVER_LIMIT = 1000


@contextmanager
def _quiet_pyomo():
    """A time limit with an incumbent is an expected outcome here; keep Pyomo's warning about it off stderr."""
    logger = logging.getLogger("pyomo")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@dataclass
class DormCounts:
    """What one run of Dorm did, reported by ``report()``: events re-solved, MILP solves (and how many pooled),
    uses of fallbacks 2 and 3 (module docstring) and the seconds spent in the solver."""

    events: int = 0
    solves: int = 0
    pooled_solves: int = 0
    fairness_relaxed: int = 0
    kept_previous: int = 0
    solver_seconds: float = 0.0


class DormScheduler(OnlineScheduler):
    name = "dorm"
    PARAMETER_SPECS = parameter_specs.DORM
    handles_gpu_types = True

    def __init__(
        self,
        fairness_threshold: float | None = 0.1,
        max_adjustments: int | None = None,
        solver: str = "highs",
        time_limit: float = 2.0,
        mip_gap: float | None = None,
        formulation: str = "auto",
        placement: str = "first_fit",
        skip_unfinishable: bool = True,
    ):
        if fairness_threshold is not None and not (
            isinstance(fairness_threshold, (int, float)) and np.isfinite(fairness_threshold)
            and fairness_threshold >= 0
        ):
            raise ValueError(f"fairness_threshold must be None or a number >= 0, got {fairness_threshold!r}")
        # The range table's check and message, also for a Python caller (an integral float is its int).
        max_adjustments = check_parameters("dorm", {"max_adjustments": max_adjustments})["max_adjustments"]
        if not (isinstance(time_limit, (int, float)) and time_limit > 0):
            raise ValueError(f"time_limit must be a number of seconds > 0, got {time_limit!r}")
        self.fairness_threshold = None if fairness_threshold is None else float(fairness_threshold)
        self.max_adjustments = max_adjustments
        self.solver = str(solver)
        self.time_limit = float(time_limit)
        if mip_gap is not None and not (isinstance(mip_gap, (int, float)) and 0 <= mip_gap < 1):
            raise ValueError(f"mip_gap must be None or a number in [0, 1), got {mip_gap!r}")
        check_solver(str(solver))
        if formulation not in FORMULATIONS:
            raise ValueError(f"formulation must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")
        self.mip_gap = mip_gap
        self.formulation = formulation
        self.placement = check_placement(placement)
        self.skip_unfinishable = bool(skip_unfinishable)

    def parameters(self) -> dict:
        # The constructor's arguments, as validated and kept under the same names.
        names = inspect.signature(DormScheduler.__init__).parameters
        return {name: getattr(self, name) for name in names if name != "self"}

    def report(self) -> dict:
        history = [{"slot": slot, "workers": {str(i): n for i, n in sizes.items()}} for slot, sizes in self.history]
        return {**asdict(self.counts), "partition_history": history}

    def start(self, instance) -> None:
        self.instance = instance
        cluster = instance.cluster
        self.worker_total = cluster.worker_capacity.sum(axis=0)
        self.ps_total = cluster.ps_capacity.sum(axis=0)
        self.unit = np.array([dominant_share_unit(job, self.worker_total, self.ps_total) for job in instance.jobs])
        self.chunks = np.array([job.chunks for job in instance.jobs], dtype=np.int64)
        self.partitions: dict[int, Allocation] = {}
        self.dirty = False
        self.counts = DormCounts()
        self.history: list[tuple[int, dict[int, int]]] = []

    def on_arrival(self, slot: int, jobs: list[int]) -> None:
        self.dirty = True

    def on_completion(self, slot: int, jobs: list[int]) -> None:
        for i in jobs:
            self.partitions.pop(i, None)
        self.dirty = True

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        if self.dirty:
            self.dirty = False
            self.counts.events += 1
            self.partitions = self._repartition(slot, state)
            self.history.append((slot, {i: int(a.workers.sum()) for i, a in self.partitions.items()}))
        out = {}
        for i, allocation in self.partitions.items():
            remaining = need_of(self.instance, state, i, allocation)  # remaining_work[i] on one type
            if remaining <= 0:
                continue
            if remaining < int(allocation.workers.sum()):
                allocation = trim(self.instance.jobs[i], allocation, remaining)
            out[i] = allocation
        return out

    # ----------------------------------------------------------------------------------------- the event

    def _repartition(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        jobs = self.instance.jobs
        slots_left = state.slots_left
        candidates, min_workers, max_workers, previous = [], [], [], []
        caps = state.remaining_work if state.remaining_fraction is None else most_needed(self.instance, state)
        for i in state.active:
            remaining = int(state.remaining_work[i])
            most = int(min(self.chunks[i], caps[i]))
            least = max(1, -(-remaining // slots_left)) if self.skip_unfinishable else 1
            if least > most:
                continue  # cannot finish by the horizon any more
            candidates.append(i)
            min_workers.append(least)
            max_workers.append(most)
            held = self.partitions.get(i)
            previous.append(int(held.workers.sum()) if held is not None else 0)
        if not candidates:
            return {}
        previous_array = np.array(previous, dtype=np.int64)
        min_array = np.array(min_workers, dtype=np.int64)
        fair = progressive_filling(
            self.instance, candidates, dict(zip(candidates, max_workers)), FreeCapacity(self.instance.cluster),
            self.placement,
        )
        fair_workers = np.array([int(fair[i].workers.sum()) if i in fair else 0 for i in candidates])
        problem = DormProblem(
            worker_capacity=self.instance.cluster.worker_capacity,
            ps_capacity=self.instance.cluster.ps_capacity,
            worker_demand=np.array([jobs[i].worker_demand for i in candidates]),
            ps_demand=np.array([jobs[i].ps_demand for i in candidates]),
            bandwidth_ratio=np.array([jobs[i].worker_bandwidth_gbps / jobs[i].ps_bandwidth_gbps for i in candidates]),
            min_workers=min_array,
            max_workers=np.array(max_workers, dtype=np.int64),
            must_run=previous_array >= min_array,
            previous_workers=previous_array,
            share_unit=self.unit[candidates],
            fair_share=self.unit[candidates] * fair_workers,
            fairness_threshold=self.fairness_threshold,
            max_adjustments=self.max_adjustments,
        )
        partition = self._solve(problem, candidates)
        if partition is None and problem.fairness_threshold is not None:
            self.counts.fairness_relaxed += 1
            partition = self._solve(replace(problem, fairness_threshold=None), candidates)
        if partition is None:
            self.counts.kept_previous += 1
            partition = self._keep_previous(candidates, max_workers)
        return partition

    def _solve(self, problem: DormProblem, candidates: list[int]) -> dict[int, Allocation] | None:
        cluster = self.instance.cluster
        size = problem.n_jobs * (cluster.n_worker_servers + cluster.n_ps_servers)
        pooled = self.formulation == "pooled" or (self.formulation == "auto" and size > AUTO_PER_SERVER_LIMIT) \
            or cluster.worker_types is not None  # heterogeneous: counts, placed on one type each
        model = build_dorm_model(problem, pooled=pooled)
        with _quiet_pyomo():
            outcome = solve_model(model, solver=self.solver, time_limit=self.time_limit, mip_gap=self.mip_gap)
        self.counts.solves += 1
        self.counts.pooled_solves += int(pooled)
        self.counts.solver_seconds += outcome.seconds
        if not outcome.has_solution:
            return None
        try:
            y, z = extract_partition(model)
        except (TypeError, ValueError):
            return None
        if pooled:
            return self._place(problem, candidates, y.sum(axis=1))
        partition = {}
        free = FreeCapacity(cluster)
        for j, i in enumerate(candidates):
            job = self.instance.jobs[i]
            workers, servers = int(y[j].sum()), int(z[j].sum())
            if workers == 0 and servers == 0:
                continue
            # Accept only what the rules allow: a solver's tolerances must not leak into the schedule.
            allocation = Allocation(y[j], z[j])
            if (
                not problem.min_workers[j] <= workers <= problem.max_workers[j]
                or not job.min_parameter_servers(workers) <= servers <= workers
                or not free.fits(job, allocation)
            ):
                return None
            free.take(job, allocation)
            partition[i] = allocation
        return partition

    def _place(self, problem: DormProblem, candidates: list[int], counts: np.ndarray) -> dict[int, Allocation]:
        """Put the pooled model's worker counts onto servers (see the module docstring)."""
        jobs = self.instance.jobs
        free = FreeCapacity(self.instance.cluster)
        partition: dict[int, Allocation] = {}
        growing = []
        for j, i in enumerate(candidates):
            target = int(counts[j])
            held = self.partitions.get(i)
            if held is not None and target > 0:
                kept = trim(jobs[i], held, min(target, int(held.workers.sum())))
                free.take(jobs[i], kept)
                partition[i] = kept
            if target > (int(partition[i].workers.sum()) if i in partition else 0):
                growing.append((-self.unit[i] * target, i, j, target))
        for _, i, j, target in sorted(growing):
            job = jobs[i]
            empty = Allocation(np.zeros(self.instance.cluster.n_worker_servers, dtype=np.int64),
                               np.zeros(self.instance.cluster.n_ps_servers, dtype=np.int64))
            grown = grow(free, job, partition.get(i, empty), target, self.placement)
            if int(grown.workers.sum()) < int(problem.min_workers[j]):
                free.release(job, grown)  # too small to finish by the horizon: not started
                partition.pop(i, None)
            else:
                partition[i] = grown
        return partition

    def _keep_previous(self, candidates: list[int], max_workers: list[int]) -> dict[int, Allocation]:
        free = FreeCapacity(self.instance.cluster)
        partition = {}
        for i, most in zip(candidates, max_workers):
            held = self.partitions.get(i)
            if held is not None:
                job = self.instance.jobs[i]
                kept = trim(job, held, most) if int(held.workers.sum()) > most else held
                free.take(job, kept)
                partition[i] = kept
        newcomers = [i for i in candidates if i not in partition]
        limits = dict(zip(candidates, max_workers))
        partition.update(progressive_filling(self.instance, newcomers, limits, free, self.placement))
        return partition
