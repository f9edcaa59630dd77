"""Lower prices from each resource's share of an initial-dual budget: the ``rule="share"`` of
:func:`primaldual.oasis.prices.compute_constants`, ``oasis``'s default (proofs/oasis.md section 7c).

The framework's only use of ``L`` is the initial dual ``D_0 = sum_u L_u T C_u`` (``C_u``: the capacity of unit
type ``u``, a pool-resource pair, summed over the pool's servers), which must be small against OPT. The first
implementation's single ``L`` (``rule="capacity"``) met ``D_0 = LB / (2 eta)`` by dividing one budget by a sum
of GPUs, vCPUs, GB and Gbps, so the unit measured in the largest numbers (memory) set every price. This rule
splits the same kind of budget equally between the unit types, each in its own unit::

    LB   = max_i f_i^alone                                  (a lower bound on OPT: any one job alone)
    L_u  = SHARE_BUDGET * LB / (eta * m * T * C_u)          (the m unit types with C_u > 0)
    D_0  = sum_u L_u T C_u = SHARE_BUDGET * LB / eta         (by construction)

so on the empty cluster a job pays ``SHARE_BUDGET * LB / eta`` times the mean, over the unit types, of the share
of that type's capacity-time its schedule holds. How ``SHARE_BUDGET = 2.5`` was chosen is recorded in
proofs/oasis.md section 7c. A guard keeps OASiS from pricing out a whole instance: if even the cheapest job (least cost of its
fastest standalone schedule at the lower prices over its ``f_i^alone``) would pay more than ``GUARD = 1/2`` of its
utility on the empty cluster, every ``L_u`` is scaled down until it pays exactly half. Then the first job
with the least such ratio to arrive on the empty cluster is admitted, so ALG > 0 whenever OPT > 0 (Lemma 8'),
at every ``price_scale`` below ``1 / GUARD = 2`` (``compute_constants`` multiplies the prices after the guard).
"""

from __future__ import annotations

import math

import numpy as np

from primaldual.core.instance import Instance
from primaldual.oasis.budget import standalone_resource_slots

#: ``D_0 / LB`` at ``eta = 1`` (module docstring).
SHARE_BUDGET = 2.5
#: The most of its utility the cheapest job may pay on the empty cluster (Lemma 8').
GUARD = 0.5


def _cost_ratio(cost: float, utility: float) -> float:
    """``cost / utility``, or ``inf`` above 1e300 (only for a utility below 1), which leaves the guard's minimum
    unchanged: the job with ``f_i^alone = LB`` has a ratio of at most ``SHARE_BUDGET / eta <= 2.5e9``
    (``eta >= 1e-9``), since it holds at most all of each type's capacity-time."""
    if utility < 1.0 and cost > utility * 1e300:
        return math.inf
    return cost / utility


def share_lower_prices(instance: Instance, standalone: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """``(L_w, L_ps)`` of the share rule (module docstring). A unit type with no capacity gets the least defined
    value (no schedule can place a unit that demands it there, so its price is never paid)."""
    cluster = instance.cluster
    n_resources = cluster.n_resources
    capacity_time = instance.horizon * np.concatenate([cluster.worker_capacity.sum(axis=0),
                                                       cluster.ps_capacity.sum(axis=0)])
    positive = capacity_time > 0
    best = float(standalone.max(initial=0.0))
    if best <= 0 or not positive.any():
        return np.ones(n_resources), np.ones(n_resources)
    lower = np.zeros(2 * n_resources)
    lower[positive] = SHARE_BUDGET * best / (eta * int(positive.sum()) * capacity_time[positive])
    lower[~positive] = lower[positive].min()
    cheapest = min(_cost_ratio(float(np.concatenate(standalone_resource_slots(instance, i)) @ lower), standalone[i])
                   for i in range(instance.n_jobs) if standalone[i] > 0)
    if cheapest > GUARD:
        lower *= GUARD / cheapest
    return lower[:n_resources].copy(), lower[n_resources:].copy()


__all__ = ["GUARD", "SHARE_BUDGET", "share_lower_prices"]
