"""Lower prices by value density: the ``rule="density"`` of :func:`primaldual.oasis.constants.compute_constants`
(OASiS-LR's and OASiS-P's default; proofs/oasis.md section 7).

For each pool and resource ``r``, ``L^r`` is a quarter of the least value any job earns per unit of ``r`` per
slot (``f_i^alone / (V_i w_i^r)`` on the worker pool, with ``(b_i/B_i) s_i^r`` per worker on the PS pool),
divided by ``eta``. On an empty cluster a job pays at most ``1 / (4 eta)`` of its utility per resource it
demands: the price is a reserve, which only a job whose utility beats its work at the least density of the
instance clears. One pass over the jobs, ``O(n R)``.
"""

from __future__ import annotations

import numpy as np

from primaldual.core.instance import Instance


def density_lower_prices(instance: Instance, standalone: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """``L_w^r = min_i f_i^alone / (V_i w_i^r) / (4 eta)`` and ``L_ps^r = min_i f_i^alone / (V_i (b_i/B_i) s_i^r)
    / (4 eta)`` over the jobs with ``f_i^alone > 0`` that demand ``r`` in the pool: a quarter of the least value
    any job earns per unit of ``r`` per slot, so an empty cluster charges every job at most a quarter of its
    utility. A resource nobody demands in a pool gets the least of the defined values (a constant price that
    no schedule pays)."""
    n_resources = instance.cluster.n_resources
    worker = np.full(n_resources, np.inf)
    ps = np.full(n_resources, np.inf)
    for i, job in enumerate(instance.jobs):
        if standalone[i] <= 0:
            continue
        work = float(instance.work_units[i])
        ratio = job.worker_bandwidth_gbps / job.ps_bandwidth_gbps
        for lower, amount in ((worker, work * job.worker_demand), (ps, work * ratio * job.ps_demand)):
            positive = amount > 0
            np.minimum(lower, np.where(positive, standalone[i] / np.where(positive, amount, 1.0), np.inf), out=lower)
    finite = np.concatenate([worker[np.isfinite(worker)], ps[np.isfinite(ps)]])
    fallback = float(finite.min()) if finite.size else 4.0 * eta
    worker[~np.isfinite(worker)] = fallback
    ps[~np.isfinite(ps)] = fallback
    return worker / (4.0 * eta), ps / (4.0 * eta)


__all__ = ["density_lower_prices"]
