"""Column generation's start (:mod:`primaldual.offline.price_and_branch`): the pooled LP relaxation's bound and
duals, and greedy schedules at a point's prices.

:func:`pooled_start` solves the pooled LP relaxation (an upper bound on OPT) and prices every job at its duals
(a Lagrangian bound, and the first stability centre); :func:`greedy_start` builds a feasible schedule at given
prices (:mod:`primaldual.offline.price_greedy`), run at the pooled LP's duals before the rounds. Neither
certifies anything beyond what it computes: the bounds are the LP's and the Lagrangian's, and every schedule is
verified by the solver.
"""

from __future__ import annotations

import time

import numpy as np

from primaldual.core.instance import Instance
from primaldual.offline.column_generation import price_all
from primaldual.offline.outcome import Incumbent

#: Share of the time left (after seeding) the pooled LP relaxation may take (:func:`pooled_start`).
POOLED_LP_SHARE = 0.4
#: The same on a heterogeneous cluster, where the rounds without the pooled LP's duals as their centre left the
#: bound at the standalone one (b436b2's week on v100:5,p100:5,k80:5: 18 rounds in 120 s) and its LP took 38 s
#: of the 46 s of a 120 s limit that 0.4 gave it on a loaded machine (docs/bounds.md, "Heterogeneous clusters").
POOLED_LP_SHARE_TYPED = 0.6

#: Share of the time left the greedy schedule at the pooled LP's prices may take (:func:`greedy_start`).
GREEDY_SHARE = 0.15

#: The pooled LP relaxation is solved only where the schedulable jobs' (job, slot) pairs from arrival to horizon
#: number at most this many (:func:`pooled_lp_pays`). Measured (docs/measurements.md, issue 63): a whole 1,843-job
#: x 1,163-slot VC has 107,830 pairs (pooled model 0.53 M variables, built in 0.5 s, 260 MiB); the whole 1,993-job
#: x 2,445-slot VC has 1,832,519 (9.1 M variables and 11.0 M rows, 12.7 s and 3.1 GiB to build, 11.1 GiB peak in
#: HiGHS, not solved in the 78 s it was given), where it only took the rounds' time and memory.
POOLED_LP_MAX_PAIRS = 600_000


def assignments_of(schedule) -> dict:
    """A schedule's per-job (workers, PSs) arrays, as :class:`~primaldual.offline.outcome.Incumbent` holds them."""
    return {i: (np.asarray(s.workers), np.asarray(s.parameter_servers)) for i, s in schedule.assignments.items()}


def pooled_lp_pays(instance: Instance, jobs) -> bool:
    """Whether the pooled LP is worth solving: ``sum_i (T - a_i)`` at most :data:`POOLED_LP_MAX_PAIRS`."""
    return sum(instance.horizon - instance.jobs[i].arrival for i in jobs) <= POOLED_LP_MAX_PAIRS


def pooled_start(instance, cells, master, bound, deadline, threads, notify) -> tuple:
    """The pooled LP relaxation's value (an upper bound on OPT) and its duals as the first prices: their
    columns enter the master and, priced, they give a Lagrangian bound and the first stability centre.
    Returns (best bound, centre or None, best Lagrangian bound); skipped where it does not pay
    (:func:`pooled_lp_pays`) or when the LP does not finish within :data:`POOLED_LP_SHARE` of the time left."""
    from primaldual.offline.pooled import pooled_lp_prices

    if (deadline is not None and time.time() >= deadline) or not pooled_lp_pays(instance, master.jobs):
        return bound, None, float("inf")
    share = POOLED_LP_SHARE if instance.cluster.worker_types is None else POOLED_LP_SHARE_TYPED
    left = None if deadline is None else max(0.1, share * (deadline - time.time()))
    pooled = pooled_lp_prices(instance, left, threads)
    if pooled is None:
        return bound, None, float("inf")
    pooled_bound, worker_prices, ps_prices = pooled
    bound = bound.improved(pooled_bound, "pooled LP relaxation", notify)
    point = np.concatenate([worker_prices.ravel(), ps_prices.ravel()])
    priced = price_all(cells, master.jobs, point, deadline)
    if not priced.complete:
        return bound, None, float("inf")
    master.add(priced.columns)
    bound = bound.improved(priced.bound, "Lagrangian bound at the pooled LP's duals", notify)
    return bound, point, priced.bound


def greedy_start(instance, cells, master, centre, best, best_utility, deadline, notify) -> tuple:
    """The greedy schedule at the pooled LP's prices ``centre`` (:mod:`primaldual.offline.price_greedy`), jobs
    in decreasing order of their payoff there (ties, and jobs with no column, by index): its columns enter
    the master, and it replaces ``best`` if it is worth more. Returns (best, its utility)."""
    from primaldual.offline.price_greedy import price_greedy

    if centre is None or (deadline is not None and time.time() >= deadline):
        return best, best_utility
    worker_prices, ps_prices = cells.prices(centre)
    payoff = {i: -np.inf for i in master.jobs}
    for column in master.columns:
        payoff[column.job] = max(payoff[column.job], column.utility - float(column.values @ centre[column.cells]))
    order = sorted(master.jobs, key=lambda i: (-payoff[i], i))
    until = None if deadline is None else time.time() + GREEDY_SHARE * (deadline - time.time())
    found = price_greedy(instance, order, worker_prices, ps_prices, until)
    if found is None:
        return best, best_utility
    schedule, utility = found
    master.add(cells.column(i, s) for i, s in schedule.assignments.items())
    if utility > best_utility:
        best, best_utility = schedule, utility
        notify(Incumbent(assignments_of(best), best_utility, None))
    return best, best_utility


__all__ = ["GREEDY_SHARE", "POOLED_LP_MAX_PAIRS", "POOLED_LP_SHARE", "POOLED_LP_SHARE_TYPED", "assignments_of",
           "greedy_start", "pooled_lp_pays", "pooled_start"]
