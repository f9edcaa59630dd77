"""A feasible schedule from prices: jobs placed one by one at frozen prices on what capacity is left.

Column generation's master only ever holds the columns it has priced, and price-and-branch can only pick among
them, so its 0-1 program starts from the online schedulers' schedules. The pooled LP relaxation's duals say
where capacity is scarce over the whole horizon, which no online scheduler knows; :func:`price_greedy` turns
them into a schedule: in the given order, each job gets the dual subroutine's best schedule
(:func:`primaldual.dual.subroutine.best_schedule`) at the frozen prices, on the capacity the jobs before it
left, and keeps it when its payoff is positive (as OASiS admits a job, but with offline prices).

**Correctness.** Each job's schedule is placed within the residual capacity of every (slot, server,
resource) cell and the residual is reduced by exactly what it uses, so the union respects (4)-(5); each job's
schedule is the subroutine's own, so (6)-(13) hold job by job. The solver verifies it anyway
(:func:`primaldual.offline.solve.solve_offline`), and ``tests/offline/test_price_greedy.py`` checks it on
random instances.

**Cost.** One dual-subroutine call per job and scale, the cost of one pricing round of column generation.
Prices are tried at each of :data:`GREEDY_SCALES` times the given ones (lower prices admit more jobs, the
duals of a relaxation being too high for the residual of an integer schedule); the best schedule is returned.
"""

from __future__ import annotations

import time

import numpy as np

from primaldual.core.instance import Instance
from primaldual.core.metrics import compute_metrics
from primaldual.core.schedule import Schedule
from primaldual.dual.subroutine import best_schedule

#: The multiples of the given prices at which the greedy is run; the best schedule is kept.
GREEDY_SCALES = (0.8, 1.0)


def _greedy_at(instance: Instance, order, worker_prices: np.ndarray, ps_prices: np.ndarray,
               deadline: float | None) -> Schedule | None:
    """One greedy pass at fixed prices; None if the deadline passed first."""
    cluster = instance.cluster
    horizon = instance.horizon
    worker_free = np.repeat(np.asarray(cluster.worker_capacity, dtype=float)[None], horizon, axis=0)
    ps_free = np.repeat(np.asarray(cluster.ps_capacity, dtype=float)[None], horizon, axis=0)
    chosen = {}
    for i in order:
        if deadline is not None and time.time() > deadline:
            return None
        result = best_schedule(instance, int(i), worker_prices, ps_prices, worker_free, ps_free)
        if result.schedule is None or result.mu <= 0:
            continue
        job = instance.jobs[int(i)]
        worker_free -= result.schedule.workers[:, :, None] * np.asarray(job.worker_demand, dtype=float)[None, None]
        ps_free -= result.schedule.parameter_servers[:, :, None] * np.asarray(job.ps_demand, dtype=float)[None, None]
        chosen[int(i)] = result.schedule
    return Schedule(chosen)


def price_greedy(instance: Instance, order, worker_prices: np.ndarray, ps_prices: np.ndarray,
                 deadline: float | None = None, scales=GREEDY_SCALES) -> tuple[Schedule, float] | None:
    """The best greedy schedule over ``scales`` x the prices ``p`` (T, H, R) and ``q`` (T, K, R), jobs in
    ``order``, and its utility (module docstring); None if the deadline (``time.time()``) passed before any
    pass finished."""
    best = None
    for scale in scales:
        schedule = _greedy_at(instance, order, scale * worker_prices, scale * ps_prices, deadline)
        if schedule is None:
            break
        utility = compute_metrics(instance, schedule).utility
        if best is None or utility > best[1]:
            best = (schedule, utility)
    return best


__all__ = ["GREEDY_SCALES", "price_greedy"]
