"""Gavel's policies (Narayanan et al., OSDI 2020) as baselines: ``las`` (max-min fairness, Gavel's "LAS", in its
heterogeneity-agnostic form), ``gavel-las`` (its heterogeneity-aware form) and ``gavel-ftf`` (heterogeneity-aware
finish-time fairness). docs/papers.md (Gavel) states every adaptation to time slots.

**The policy** (:mod:`.gavel_lp`): whenever the set of jobs changes (an arrival, a completion, a job passed over),
the scheduler solves its LP over time fractions ``X[job, type]`` with HiGHS. A job is a gang of width
``D_m = min(N_i, V_i, the most workers that fit with their PSs on the empty servers of one type)``; it may run on
a type whose servers hold that gang (``allowed``), using ``c_m = D_m x its GPUs per worker`` GPUs; its rate on
type ``g`` is ``D_m / W_i^g`` of the job per slot. On a homogeneous cluster there is one type.

**The mechanism** (Gavel's round-based scheduling, section 5; one slot = one round): each round, each job takes
the type where its received time lags most behind ``X``, priority ``X[m, g] / f[m, g]`` with ``f`` the fraction of
the rounds since its arrival it ran on ``g`` (infinite while it has had none, 0 where ``X`` is 0); jobs are served
in decreasing priority (ties: larger ``X``, then lower index), each placing its gang on servers of its type by the
``placement`` rule (trimmed to what it still needs on that type), or skipped when that type has no room.

As the other baselines, a job that cannot finish by the horizon even at its width in every remaining slot is
left out (``skip_unfinishable``). Cost: one LP solve per change of the job set (FTF: about 10, by bisection),
each over ``n G`` columns; per slot O(n G) for the priorities and one placement search per job served.

Parameters: ``placement`` (``first_fit`` default, or ``least_loaded``), ``skip_unfinishable`` (True).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from primaldual.baselines import parameter_specs
from primaldual.baselines.gavel_lp import GavelProblem, finish_time_fair, max_min
from primaldual.simulation.placement import FreeCapacity, can_finish, check_placement, type_widths
from primaldual.simulation.progress import needed_on
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState

#: Time fractions at or below this count as none (HiGHS's tolerances).
EPSILON = 1e-9


class _GavelScheduler(OnlineScheduler):
    """The LP of a subclass (:meth:`solve`) realised by Gavel's round-based mechanism (module docstring)."""

    handles_gpu_types = True
    PARAMETER_SPECS = parameter_specs.GAVEL
    aware: ClassVar[bool] = True

    def __init__(self, placement: str = "first_fit", skip_unfinishable: bool = True):
        self.placement = check_placement(placement)
        self.skip_unfinishable = bool(skip_unfinishable)

    def start(self, instance) -> None:
        super().start(instance)
        cluster = instance.cluster
        self.type_index = np.zeros(cluster.n_worker_servers, dtype=np.int64) \
            if cluster.worker_types is None else np.asarray(cluster.worker_type_index)
        widths = type_widths(instance)
        self.width = widths.max(axis=1)
        self.allowed = (widths >= self.width[:, None]) & (self.width[:, None] > 0)
        self.work = instance.work[:, None] if cluster.worker_types is None else instance.work_by_type
        gpu = cluster.resources.index("gpu") if "gpu" in cluster.resources else 0
        self.gpus = np.array([job.worker_demand[gpu] for job in instance.jobs]) * self.width
        self.capacity = np.array([cluster.worker_capacity[self.type_index == g, gpu].sum()
                                  for g in range(self.allowed.shape[1])])
        self.received = np.zeros(self.allowed.shape, dtype=np.int64)
        self.planned: tuple[int, ...] = ()
        self.X: dict[int, np.ndarray] = {}
        self.skipped: set[int] = set()
        self.solves = self.failures = 0

    def parameters(self) -> dict:
        return {"placement": self.placement, "skip_unfinishable": self.skip_unfinishable}

    def report(self) -> dict:
        return {"solves": self.solves, "solver_failures": self.failures, "skipped": sorted(self.skipped)}

    def problem(self, jobs: list[int]) -> GavelProblem:
        """The LP's data for ``jobs``."""
        allowed = self.allowed[jobs]
        rate = np.where(allowed, self.width[jobs, None] / self.work[jobs], 0.0)
        return GavelProblem(rate, allowed, self.width[jobs].astype(float), self.gpus[jobs], self.capacity)

    def solve(self, slot: int, state: SlotState, jobs: list[int]) -> np.ndarray | None:
        """``X`` over ``jobs`` (rows) and the types (columns); None on a solver failure."""
        return max_min(self.problem(jobs), aware=self.aware)

    def _runnable(self, slot: int, state: SlotState) -> list[int]:
        """The active jobs that may run: allowed somewhere and (with the rule) able to finish at their width."""
        active = np.array([i for i in state.active if self.allowed[i].any()], dtype=np.int64)
        if self.skip_unfinishable and active.size:
            keep = can_finish(slot, state.remaining_work[active], self.width[active], self.instance.horizon)
            self.skipped.update(int(i) for i in active[~keep])
            active = active[keep]
        return [int(i) for i in active]

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        jobs = self._runnable(slot, state)
        if tuple(jobs) != self.planned:
            self.planned = tuple(jobs)
            X = self.solve(slot, state, jobs) if jobs else np.zeros((0, self.allowed.shape[1]))
            self.solves += 1
            if X is None:  # a solver failure: the equal share, feasible by construction
                self.failures += 1
                X = self.problem(jobs).equal_share()
            self.X = {i: X[m] for m, i in enumerate(jobs)}
        out = self._round(slot, state, jobs)
        for i, allocation in out.items():
            self.received[i, int(self.type_index[int(np.argmax(allocation.workers > 0))])] += 1
        return out

    def _round(self, slot: int, state: SlotState, jobs: list[int]) -> dict[int, Allocation]:
        """Gavel's round: each job's most-lagging type, served in decreasing priority while that type has room."""
        entries = []
        for i in jobs:
            x = self.X[i]
            rounds = max(slot - int(self.instance.jobs[i].arrival), 1)
            fraction = self.received[i] / rounds
            with np.errstate(divide="ignore", invalid="ignore"):
                priority = np.where(x > EPSILON, np.where(fraction > 0, x / fraction, np.inf), 0.0)
            g = max(range(len(x)), key=lambda h: (priority[h], x[h], -h))
            if priority[g] > 0:
                entries.append((-priority[g], -x[g], i, g))
        free = FreeCapacity(self.instance.cluster)
        out = {}
        for _, _, i, g in sorted(entries):
            workers = min(int(self.width[i]), needed_on(state, self.instance, i, g))
            allocation = free.place(self.instance.jobs[i], workers, self.placement, on_type=g)
            if allocation is not None:
                out[i] = allocation
        return out


class LasScheduler(_GavelScheduler):
    """Gavel's max-min fairness ("LAS") in its heterogeneity-agnostic form: every throughput read as 1, so the
    LP shares GPU-time and its split over types reads no speed (the optimal vertex HiGHS returns)."""

    name = "las"
    aware = False


class GavelLasScheduler(_GavelScheduler):
    """Gavel's heterogeneity-aware max-min fairness: the minimum, over jobs, of the throughput normalised by the
    job's throughput on an equal share of every type, maximised."""

    name = "gavel-las"
    aware = True


class GavelFtfScheduler(_GavelScheduler):
    """Gavel's heterogeneity-aware finish-time fairness: the largest ratio of a job's finish time under ``X`` to
    its finish time on an equal ``1/n`` share, minimised (:func:`.gavel_lp.finish_time_fair`)."""

    name = "gavel-ftf"

    def solve(self, slot: int, state: SlotState, jobs: list[int]) -> np.ndarray | None:
        index = np.asarray(jobs, dtype=np.int64)
        elapsed = (slot - self.instance.arrivals[index]).astype(float)
        if state.remaining_fraction is not None:
            left = np.asarray(state.remaining_fraction)[index]
        else:
            left = state.remaining_work[index] / np.maximum(self.instance.work[index], 1e-300)
        return finish_time_fair(self.problem(jobs), elapsed, np.maximum(left, EPSILON))


__all__ = ["GavelFtfScheduler", "GavelLasScheduler", "LasScheduler"]
