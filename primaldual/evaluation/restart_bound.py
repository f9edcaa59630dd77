"""An upper bound on OPT *with* restart costs: the start-cost relaxation (proofs/oasis-lr.md, Lemma R).

Under a restart cost ``F`` (:mod:`primaldual.simulation.simulator`) a job loses ``F`` of a slot's work in every slot where
its placement changed, and its first running slot always counts as a change. A job with ``D_1 >= 1`` workers
in that slot supplies ``(1 - F) D_1``, so it completes only if the worker-slots it received satisfy
``sum_t sum_h y_ih(t) >= V_i + F D_1 - tol > V_i`` (``tol`` is the simulator's completion tolerance, below
every ``F`` this applies to); the left side is an integer, so ``sum y >= V_i + 1``. Every schedule a scheduler
completes under ``F`` is therefore a feasible schedule of the same instance with ``V_i + 1`` worker-slots of
work per job (eqs. (2)-(13), the completion slots and utilities unchanged), and

    ALG_F <= OPT(V + 1) <= OPT(V) = OPT_0        for every scheduler, online or offline.

``OPT(V + 1)`` relaxes only what happens after the start (moves, pauses, resizes are free in it), and every
upper bound on it (the ILP's bound, the LP, column generation, the standalone bound) is an upper bound on the
optimum under restart costs. On 20-job ``small`` instances it is about 17% below ``OPT_0`` at ``F = 0.1``
(``OPT_0`` is about 20% above it), so OPT/ALG printed against it is that much closer to the truth.

:func:`start_cost_relaxation` builds that instance: each job's compute time per mini-batch is raised so that
its work ``W_i`` becomes ``V_i + 1`` exactly (nothing else changes: arrivals, demands, bandwidths, utilities),
so every offline method, the verifier and the file format apply to it unchanged.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.simulation.simulator import WORK_TOLERANCE

#: The simulator's completion tolerance: at or below it a restart loses too little work for the argument
#: above, and the relaxation is the instance itself.
RELAXATION_THRESHOLD = WORK_TOLERANCE

#: Worker-slots every job needs beyond ``V_i`` under a restart cost (the start's loss, rounded up).
EXTRA_WORK_UNITS = 1


def applies(restart_cost: float) -> bool:
    """Whether a restart cost is large enough for the start-cost relaxation (module docstring)."""
    return float(restart_cost) > RELAXATION_THRESHOLD


def relaxation_or_instance(instance: Instance, restart_cost: float) -> tuple[Instance, str | None]:
    """The instance whose optimum bounds OPT at ``restart_cost``: the start-cost relaxation, or ``instance``
    itself, with a warning, where the relaxation cannot be built (a job at the edge of the file format's
    ranges, whose raised compute time or work would leave them; ``docs/input-ranges.md``): the optimum without
    restart costs still bounds every run, only more loosely."""
    if instance.cluster.worker_types is not None and applies(restart_cost):
        return instance, (f"on a heterogeneous cluster (gpu types) the start-cost relaxation is not built (its rounding "
                          f"needs integral work): OPT at restart cost {float(restart_cost):g} is bounded by the "
                          "optimum without restart costs")
    try:
        return start_cost_relaxation(instance, restart_cost), None
    except InputError as error:
        return instance, (f"the start-cost relaxation was not built ({error}); OPT at restart cost "
                          f"{float(restart_cost):g} is bounded by the optimum without restart costs instead")


def start_cost_relaxation(instance: Instance, restart_cost: float) -> Instance:
    """The instance whose optimum bounds every schedule completed under ``restart_cost`` (module docstring):
    ``instance`` itself when the cost is 0 (or below :data:`RELAXATION_THRESHOLD`), else a copy in which job
    ``i`` has ``V_i + 1`` worker-slots of work. ``meta["relaxation"]`` records what was done."""
    if not applies(restart_cost):
        return instance
    work_units = np.asarray(instance.work_units, dtype=np.int64)
    jobs = []
    for i, job in enumerate(instance.jobs):
        per_minibatch = (work_units[i] + EXTRA_WORK_UNITS) * instance.slot_seconds / (
            job.epochs * job.chunks * job.minibatches_per_chunk)
        # W_i = E N M (tau + comm) / slot_seconds <= V_i < V_i + 1, so the new tau exceeds the old one (>= 0).
        jobs.append(dataclasses.replace(job, compute_seconds=per_minibatch - job.communication_seconds))
    meta = {**instance.meta, "relaxation": {"name": "start-cost", "restart_cost": float(restart_cost),
                                            "extra_work_units": EXTRA_WORK_UNITS}}
    # Raises InputError (naming the field) where a raised compute time or work leaves the file format's ranges.
    relaxed = dataclasses.replace(instance, jobs=tuple(jobs), meta=meta)
    if not np.array_equal(relaxed.work_units, work_units + EXTRA_WORK_UNITS):  # floating rounding, never seen
        bad = int(np.flatnonzero(relaxed.work_units != work_units + EXTRA_WORK_UNITS)[0])
        raise InputError(f"jobs[{bad}]: the start-cost relaxation could not give it exactly "
                         f"{int(work_units[bad]) + EXTRA_WORK_UNITS} worker-slots of work")
    return relaxed


__all__ = ["EXTRA_WORK_UNITS", "RELAXATION_THRESHOLD", "applies", "relaxation_or_instance", "start_cost_relaxation"]
