"""OASiS-LR's learned shadow-price floor: duals of a pooled multi-resource knapsack LP over recent arrivals.

At each arrival batch (slot ``t``) the jobs that arrived in the last ``W`` slots, ``t - W < a_i <= t``, are
offered to a *pooled* LP that forgets servers and time slots::

    max  sum_i f_i^alone x_i
    s.t. sum_i V_i w_i^r x_i                <= W sum_h c_h^r      (worker pool, every resource r)
         sum_i V_i (b_i / B_i) s_i^r x_i    <= W sum_k c_k^r      (PS pool, every resource r)
         0 <= x_i <= 1

Its dual prices ``y_w^r, y_ps^r >= 0`` are what one unit of resource ``r`` is worth per slot when the recent
demand competes for the capacity of ``W`` slots: 0 at light load (the capacity rows are slack), the marginal
value density under contention. OASiS-LR adds them, per unit of resource per slot, to every cell's
exponential price (``floor``). They are the "learned" part of the prices: the a-priori bounds ``L^r, U^r``
(:mod:`primaldual.oasis.prices`) fix the shape, the floor follows the observed load. The LP is solved with HiGHS
(``highspy``) directly; it has one row per pool and resource, one column per recent job.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from primaldual.core.instance import Instance


@dataclass(frozen=True, eq=False)
class PriceFloor:
    """Per-resource floors for the worker and PS pools (price per unit per slot), with the LP's facts."""

    worker: np.ndarray
    ps: np.ndarray
    jobs: int = 0
    objective: float = 0.0

    @functools.cached_property
    def values(self) -> bytes:
        """Both pools' floors as bytes, equal for equal values (:func:`primaldual.oasis.lr.admission.offer_key`)."""
        return np.asarray(self.worker, dtype=float).tobytes() + np.asarray(self.ps, dtype=float).tobytes()

    def to_dict(self, resources) -> dict:
        return {
            "worker": {r: float(v) for r, v in zip(resources, self.worker)},
            "ps": {r: float(v) for r, v in zip(resources, self.ps)},
            "jobs": self.jobs,
            "objective": self.objective,
        }


def zero_floor(n_resources: int) -> PriceFloor:
    return PriceFloor(np.zeros(n_resources), np.zeros(n_resources))


def pooled_demands(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """``V_i w_i^r`` (I, R) and ``V_i (b_i/B_i) s_i^r`` (I, R): each job's resource-slots in each pool."""
    work = np.asarray(instance.work_units, dtype=float)[:, None]
    ratio = np.array([j.worker_bandwidth_gbps / j.ps_bandwidth_gbps for j in instance.jobs])[:, None]
    return work * instance.worker_demand_matrix(), work * ratio * instance.ps_demand_matrix()


def solve_floor(values: np.ndarray, worker_use: np.ndarray, ps_use: np.ndarray, worker_capacity: np.ndarray,
                ps_capacity: np.ndarray, highs=None) -> PriceFloor:
    """Duals of the pooled knapsack LP (module docstring) for jobs with ``values`` (n,), pooled uses (n, R)
    and pool capacities over the window (R,). Rows with zero capacity are skipped (no job can use them).
    ``highs``: a silent ``highspy.Highs`` to reuse (:class:`FloorLearner` keeps one); its previous model,
    solution and basis are cleared first, so every solve starts cold and gives the same duals as a new one."""
    import highspy

    from primaldual.backends.highs import quiet_highs, size_highs_threads

    n, n_resources = worker_use.shape
    if n == 0:
        return zero_floor(n_resources)
    rows = [(0, r) for r in range(n_resources) if worker_capacity[r] > 0] + \
           [(1, r) for r in range(n_resources) if ps_capacity[r] > 0]
    matrix = np.array([(worker_use if pool == 0 else ps_use)[:, r] for pool, r in rows]).reshape(len(rows), n)
    caps = np.array([(worker_capacity if pool == 0 else ps_capacity)[r] for pool, r in rows])
    size_highs_threads(None)  # the default thread count; resets HiGHS's scheduler if a solve used another
    if highs is None:
        highs = quiet_highs()
    else:
        highs.clearModel()  # a cold start: a warm basis could pick another dual vertex of a degenerate LP
    # No "threads" option: HiGHS keeps one thread scheduler per process (see size_highs_threads above).
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, len(rows)
    lp.col_cost_ = -np.asarray(values, dtype=float)  # HiGHS minimises
    lp.col_lower_, lp.col_upper_ = np.zeros(n), np.ones(n)
    lp.row_lower_ = np.full(len(rows), -highspy.kHighsInf)
    lp.row_upper_ = caps
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.arange(0, (n + 1) * len(rows), len(rows)) if rows else np.zeros(n + 1, dtype=int)
    lp.a_matrix_.index_ = np.tile(np.arange(len(rows)), n)
    lp.a_matrix_.value_ = matrix.T.ravel()
    highs.passModel(lp)
    highs.run()
    worker, ps = np.zeros(n_resources), np.zeros(n_resources)
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        # A bounded LP with x = 0 feasible always has an optimum: anything else is a solver failure.
        raise RuntimeError(f"learned floor: HiGHS returned {highs.getModelStatus()} on the pooled knapsack LP")
    duals = -np.asarray(highs.getSolution().row_dual, dtype=float)  # of the maximisation: >= 0
    for (pool, r), y in zip(rows, np.maximum(duals, 0.0)):
        (worker if pool == 0 else ps)[r] = y
    return PriceFloor(worker, ps, n, float(-highs.getInfo().objective_function_value))


class FloorLearner:
    """The floor at each arrival batch from the jobs of the last ``window`` slots (module docstring)."""

    def __init__(self, instance: Instance, standalone: np.ndarray, window: int):
        self.instance = instance
        self.window = int(window)
        self.values = np.asarray(standalone, dtype=float)
        self.worker_use, self.ps_use = pooled_demands(instance)
        self.worker_capacity = instance.cluster.worker_capacity.sum(axis=0)
        self.ps_capacity = instance.cluster.ps_capacity.sum(axis=0)
        self.current = zero_floor(instance.cluster.n_resources)
        self.highest = zero_floor(instance.cluster.n_resources)
        self._highs = None  # one silent HiGHS object for every solve of the run
        self._window = None  # the jobs and slots of the last solve

    def update(self, slot: int) -> PriceFloor:
        """The floor for an arrival batch in ``slot``; the LP is solved again only if the window's jobs or its
        number of slots changed (else the same floor, the same object, is returned)."""
        arrivals = self.instance.arrivals
        recent = np.flatnonzero((arrivals > slot - self.window) & (arrivals <= slot) & (self.values > 0))
        # Demand that arrived over the last W' slots against W' slots of capacity (W' = W once W slots exist).
        slots = min(self.window, slot + 1)
        window = (slots, recent.tobytes())
        if window == self._window:
            return self.current
        self._window = window
        if self._highs is None and recent.size:
            from primaldual.backends.highs import quiet_highs

            self._highs = quiet_highs()
        self.current = solve_floor(self.values[recent], self.worker_use[recent], self.ps_use[recent],
                                   slots * self.worker_capacity, slots * self.ps_capacity, highs=self._highs)
        self.highest = PriceFloor(np.maximum(self.highest.worker, self.current.worker),
                                  np.maximum(self.highest.ps, self.current.ps))
        return self.current


__all__ = ["FloorLearner", "PriceFloor", "pooled_demands", "solve_floor", "zero_floor"]
