"""Lower prices with an empty-cluster budget: the ``rule="budget"`` of :func:`primaldual.oasis.prices.compute_constants`.

The per-resource density rule (``density_lower_prices``) charges every job at most ``1 / (4 eta)`` of its
utility *per demanded (pool, resource) pair*; a job that demands ``m`` pairs can pay ``m / (4 eta)`` of it on
the empty cluster, more than its utility when ``m > 4 eta``, and OASiS then rejects every job of such an
instance. This rule keeps the density shape (``L_u`` proportional to the least value density of unit ``u``)
and scales it by the *measured* overlap ``rho`` instead of the worst case ``m``, so that every job's fastest
standalone schedule costs at most ``1 / (budget_factor eta)`` of ``f_i^alone`` at the lower prices (proofs/oasis.md
section 7b)::

    A_iu     = amount of unit u (pool x resource) job i's fastest standalone schedule holds, summed over slots
    hat L_u  = min_i f_i^alone / A_iu                      (least value density of u)
    rho      = max_i sum_u hat L_u A_iu / f_i^alone          (1 <= rho <= number of units a job demands)
    L_u      = hat L_u / (BUDGET_FACTOR eta rho)

so ``sum_u L_u A_iu <= f_i^alone / (BUDGET_FACTOR eta)`` for every job, with equality for the tightest one.
"""

from __future__ import annotations

import numpy as np

from primaldual.core.instance import Instance
from primaldual.core.standalone import fastest_standalone_workers

#: With ``eta = 1`` a job's fastest standalone schedule costs at most half its utility at the lower prices,
#: so its payoff on the empty cluster is at least half of ``f_i^alone`` (proofs/oasis.md section 7b).
BUDGET_FACTOR = 2.0


def standalone_resource_slots(instance: Instance, i: int) -> tuple[np.ndarray, np.ndarray]:
    """``(A_w, A_ps)``: resource-slots per resource that job ``i``'s fastest standalone schedule holds on the
    worker and on the PS pool (``D`` workers per slot, the remainder in the last slot, ``ceil(D b_i / B_i)``
    PSs per slot); zeros if the job cannot run on the empty cluster."""
    job = instance.jobs[i]
    n_resources = instance.cluster.n_resources
    workers = fastest_standalone_workers(instance, i)
    if workers == 0:
        return np.zeros(n_resources), np.zeros(n_resources)
    work = int(instance.work_units[i])
    slots = -(-work // workers)
    per_slot = np.full(slots, workers, dtype=np.int64)
    per_slot[-1] = work - (slots - 1) * workers
    ps_slots = int(np.sum(job.min_parameter_servers(per_slot)))
    return work * np.asarray(job.worker_demand, dtype=float), ps_slots * np.asarray(job.ps_demand, dtype=float)


def budget_lower_prices(instance: Instance, standalone: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """``(L_w, L_ps)`` of the budget rule (module docstring) over the jobs with ``f_i^alone > 0``.

    A unit nobody demands gets the least defined value (a constant price no schedule pays).
    """
    n_resources = instance.cluster.n_resources
    jobs = [i for i in range(instance.n_jobs) if standalone[i] > 0]
    if not jobs:
        return np.ones(n_resources), np.ones(n_resources)
    amounts = np.array([np.concatenate(standalone_resource_slots(instance, i)) for i in jobs])  # (jobs, 2R)
    utility = standalone[jobs][:, None]
    with np.errstate(divide="ignore"):
        density = np.where(amounts > 0, utility / np.where(amounts > 0, amounts, 1.0), np.inf)
    least = density.min(axis=0)  # hat L_u; inf where nobody demands u
    defined = np.isfinite(least)
    least = np.where(defined, least, least[defined].min() if defined.any() else 1.0)
    # rho: the largest share of its own utility any job pays at hat L (>= 1, the job attaining a minimum).
    overlap = float(((amounts * least[None, :]).sum(axis=1) / utility[:, 0]).max())
    lower = least / (BUDGET_FACTOR * eta * max(overlap, 1.0))
    return lower[:n_resources].copy(), lower[n_resources:].copy()
