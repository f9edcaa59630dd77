"""The type choice of a heterogeneous cluster in the offline model (issue 64; :mod:`primaldual.core.gpu_types`).

On a heterogeneous cluster worker server ``h`` has a GPU type ``g(h)`` and job ``i`` needs ``W_i^g`` worker-slots
of type ``g``. :func:`primaldual.models.offline.build_offline_model` then adds, through
:func:`declare_type_choice`:

* ``uses_type[i, t, g]`` (binary, ``u_itg``): job i's workers in slot t are of type g, for each type with a
  server the job fits on;
* **one type per slot** (Gavel's rule): ``sum_g u_itg <= unfinished[i, t]`` (at most one, and none after the
  completion slot, where the job has no workers anyway);
* **workers only on the chosen type**: ``sum_{h: g(h) = g} y_iht <= M_ig u_itg`` with the big-M
  ``M_ig = min(N_i, sum_{h: g(h) = g} fit_ih)``, the most workers the job can have on type g (eq. (3));
* **eq. (2) at each type's speed**: every worker-slot on type g does ``W_i / W_i^g`` worker-slots of the
  fastest type (``W_i = min_g W_i^g``, :attr:`Instance.work`), and ::

      sum_t sum_h  (W_i / W_i^{g(h)}) y_iht  >=  (1 - TYPE_WORK_TOLERANCE) W_i x_i

  which is ``sum y / W^{g(h)} >= x_i`` scaled by ``W_i`` (rows of the order of the work, as in the homogeneous
  model), loosened by the verifier's relative tolerance so that the model accepts exactly what
  :func:`primaldual.core.verify.verify` accepts. The model's ``work_units[i]`` is this right-hand side and the
  strong formulation's running sum ``work_done`` is of the weighted workers, so its cut stays valid (a job that
  completes by t has done its weighted work by t).

Exactness: a schedule of (1)-(13) that keeps Gavel's rule sets ``u_itg = 1`` for the type it uses in each slot
where it runs (at most one, and only while unfinished) and meets every row; conversely a solution's workers in
each slot are on the one type with ``u = 1``, and its weighted work is the verifier's fraction done times
``W_i``. The earliest completion (sparsity) is the fastest type's, valid for every mix of types.

**Pooled** (``pooled=True``): each type's servers merge into one server of the summed capacity (a pool per
type), the workers of job i on type g per slot being one variable bounded by ``M_ig``; every schedule aggregates
to it with the same value, so its optimum bounds OPT. **Cost**: one binary per (job, slot, type that fits) and
one row per (job, slot) and per (job, slot, type). On a homogeneous instance nothing here runs.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

#: ``primaldual.core.verify``'s relative tolerance on the heterogeneous eq. (2) (a test checks they agree).
TYPE_WORK_TOLERANCE = 1e-9


def type_weights(instance, jobs) -> dict[int, np.ndarray]:
    """Per job, ``W_i / W_i^g`` over the cluster's types (1 on the fastest): what one worker-slot on type g
    does, in worker-slots of the job's fastest type."""
    work = instance.work_by_type
    return {i: work[i].min() / work[i] for i in jobs}


def type_work_units(instance, jobs) -> dict[int, float]:
    """The right-hand side of eq. (2) on a heterogeneous cluster: ``(1 - tolerance) W_i`` (module docstring)."""
    return {i: float((1.0 - TYPE_WORK_TOLERANCE) * instance.work_by_type[i].min()) for i in jobs}


def type_bounds(instance, worker_fit: dict, jobs) -> dict[int, np.ndarray]:
    """``M_ig = min(N_i, sum_{h of type g} fit_ih)`` per job, over the types (0: the job fits on no server of g)."""
    index, n_types = instance.cluster.worker_type_index, len(instance.cluster.gpu_types)
    out = {}
    for i in jobs:
        per_type = np.bincount(index, weights=worker_fit[i], minlength=n_types)
        out[i] = np.minimum(per_type, instance.jobs[i].chunks).astype(np.int64)
    return out


def declare_pooled_type_variables(model, options, integer) -> None:
    """Pooled heterogeneous workers: one variable per (job, slot, type), bounded by ``M_ig``."""
    bounds = type_bounds(options.instance, options.sparsity.worker_fit, options.sparsity.jobs)
    types_of = {i: np.flatnonzero(bounds[i]).tolist() for i in options.sparsity.jobs}
    model.worker_placements = pyo.Set(
        dimen=3, initialize=[(i, t, g) for i, t in model.job_slots for g in types_of[i]],
        doc="(i, t, g): workers of job i on the merged servers of type g, pooled")
    model.workers = pyo.Var(model.worker_placements, domain=integer,
                            bounds=lambda m, i, t, g: (0, int(bounds[i][g])), doc="sum_{h of type g} y_ih(t), pooled")
    model.types_of = types_of


def workers_by_type(m, i, t, g):
    """The workers of job i in slot t on servers of type g (a Pyomo expression)."""
    if m.pooled:
        return m.workers[i, t, g]
    return sum(m.workers[i, t, h] for h in m.servers_of[0][i] if m.server_type[h] == g)


def weighted_workers(m, i, t):
    """``sum_h (W_i / W_i^{g(h)}) y_iht``: slot t's work in worker-slots of the job's fastest type."""
    weight = m.type_weight[i]
    if m.pooled:
        return sum(float(weight[g]) * m.workers[i, t, g] for g in m.types_of[i])
    return sum(float(weight[m.server_type[h]]) * m.workers[i, t, h] for h in m.servers_of[0][i])


def declare_type_choice(model, options) -> None:
    """``uses_type``, one type per slot and workers only on the chosen type (module docstring)."""
    instance, jobs = options.instance, options.sparsity.jobs
    bounds = type_bounds(instance, options.sparsity.worker_fit, jobs)
    model.type_slots = pyo.Set(
        dimen=3, initialize=[(i, t, g) for i, t in model.job_slots for g in np.flatnonzero(bounds[i]).tolist()],
        doc="(i, t, g): job i may run on type g in slot t (it fits on a server of type g)")
    model.uses_type = pyo.Var(model.type_slots, domain=pyo.UnitInterval if options.relax else pyo.Binary,
                              doc="u_itg: job i's workers in slot t are of type g")
    choices = {}
    for i, t, g in model.type_slots:
        choices.setdefault((i, t), []).append(g)
    model.one_type = pyo.Constraint(
        model.job_slots, rule=lambda m, i, t: sum(m.uses_type[i, t, g] for g in choices.get((i, t), ()))
        <= m.unfinished[i, t], doc="Gavel's rule: one gpu type per job and slot (none after completion)")
    model.chosen_type = pyo.Constraint(
        model.type_slots, rule=lambda m, i, t, g: workers_by_type(m, i, t, g) <= int(bounds[i][g]) * m.uses_type[i, t, g],
        doc="workers of job i on type g in slot t only if g is its type there (big-M: min(N_i, what fits))")


def declare_type_data(model, options) -> None:
    """The plain attributes the rows read: ``server_type[h]`` (g(h)) and ``type_weight[i]`` (W_i / W_i^g)."""
    model.server_type = [int(g) for g in options.instance.cluster.worker_type_index]
    model.type_weight = type_weights(options.instance, options.sparsity.jobs)


__all__ = ["TYPE_WORK_TOLERANCE", "declare_pooled_type_variables", "declare_type_choice", "declare_type_data",
           "type_bounds", "type_weights", "type_work_units", "weighted_workers", "workers_by_type"]
