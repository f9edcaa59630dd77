"""OASiS-LR's forecast: what a policy's live jobs earn after a rollout's replay, by a fluid model.

The lookahead (:mod:`primaldual.oasis.lr.rollout`) ranks a handful of execution policies at every arrival batch
by replaying the run a few slots under each (the decision each policy makes now). What the jobs still live at
the cut will earn is where the policies' scores part; replaying the run to the horizon for it costs
``policies x slots x live jobs`` plans, offers and first fits. This module forecasts it instead, and need not
match the run's floats: the run itself stays exact (the verifier, the promises, the certificate); a forecast
only chooses a policy.

**The model** (:func:`tail_value`). From the cut slot ``s``, job ``i`` runs ``x_i`` workers (a real number, at
most ``N_i``) and uses ``x_i u_i`` of the cluster, ``u_i`` the dominant share of one worker with its PSs
(:func:`primaldual.simulation.placement.dominant_share_unit`), so the pooled cluster holds ``sum x_i u_i <= 1``.
Jobs holding a block of the ledger come first, by the block's start (blocks run first in the run), then the
others in the policy's growth order at ``s`` (:func:`primaldual.oasis.lr.order.growth_order`), each taking
``min(N_i, left / u_i)``: the work-conserving growth of the execution without the servers' fragmentation. The
order is kept to the end (the run re-ranks every slot). Between two completions every rate is constant, so the
model advances from completion to completion (:func:`fluid_completions`): a job whose work runs out at real
time ``tau`` completes in slot ``ceil(tau) - 1`` and earns ``f_i`` of its duration if that slot is before the
horizon. Under restart costs a job that did not run in slot ``s - 1`` pays one restart, ``F N_i`` worker-slots
(the simulator's rule at full width).

**Cost.** At most ``L`` events for ``L`` live jobs, each walking the ``R`` jobs that run (about as many as the
cluster holds at once): ``O(L R)`` per policy, and one growth order; against the replay's ``O(slots x L)`` plans
in Python, each with offers and first fits over the servers.

**On several GPU types** the model pools every type's capacity and counts each job at the work of its pinned
type (:mod:`primaldual.oasis.lr.type_view`; a job not yet pinned at its fastest type's): an approximation, since
a job can only use its own type's servers; it values policies, nothing else reads it.

**Not claimed:** fragmentation over servers and PS placement, re-ranking, the pending tier's later admissions at
other prices, restart losses beyond the first. ``proofs/oasis-lr.md`` (Lemma L) states what follows for the
choice: nothing where the forecast is used, exactness where the replay reaches the horizon.
"""

from __future__ import annotations

import math

import numpy as np

from primaldual.oasis.ledger import WORK_EPSILON as DONE  # work below it is done, as everywhere in the run
from primaldual.oasis.lr.order import growth_order
from primaldual.oasis.lr.settings import LrSettings
from primaldual.oasis.lr.state import JobTables, LrState



def fluid_completions(work: np.ndarray, widths: np.ndarray, units: np.ndarray, start: float,
                      horizon: int) -> np.ndarray:
    """The real time at which each job completes in the fluid model (module docstring): jobs in priority order
    with ``work`` worker-slots left, at most ``widths`` workers, ``units`` of the cluster per worker, from real
    time ``start``; ``inf`` for a job not done by ``horizon``.

    Only the jobs that run matter for the next completion, and they are a prefix of the alive jobs in order (the
    first take their full width while the cluster lasts, the next what is left). So each event walks that
    prefix, ``R`` jobs (about the jobs the cluster holds at once), in plain Python: ``O(R)`` per event and
    ``O(L R)`` in all for ``L`` jobs, not ``O(L^2)``."""
    left_work = [float(w) for w in work]
    width, unit = [float(w) for w in widths], [float(u) for u in units]
    ends = np.full(len(left_work), math.inf)
    alive = []
    for k, w in enumerate(left_work):
        if w > DONE:
            alive.append(k)
        else:
            ends[k] = start
    now = float(start)
    while alive and now < horizon:
        running, free = [], 1.0
        for k in alive:  # the prefix that runs
            rate = width[k] if unit[k] <= 0 else min(width[k], free / unit[k])
            if rate <= 0:
                break
            running.append((k, rate))
            free -= rate * unit[k]
            if free <= 1e-12:
                break
        step = min(left_work[k] / rate for k, rate in running)
        now += step
        finished = set()
        for k, rate in running:
            left_work[k] -= rate * step
            if left_work[k] <= DONE * max(1.0, rate) or left_work[k] / rate <= 1e-12:
                finished.add(k)
                ends[k] = now
        if not finished:  # rounding: the job that set the step is done
            k = min(running, key=lambda pair: left_work[pair[0]] / pair[1])[0]
            finished.add(k)
            ends[k] = now
        head = len(running)  # the finished jobs are among the running prefix; the rest is copied as it is
        alive = [k for k in alive[:head] if k not in finished] + alive[head:]
    ends[ends > horizon] = math.inf  # ran out after the horizon's end: never completes
    return ends


def tail_value(settings: LrSettings, tables: JobTables, state: LrState, slot: int) -> float:
    """The fluid forecast's utility for the jobs still live at the start of ``slot`` under ``state``'s policy
    (module docstring): blocks first, then the policy's growth order at ``slot``; a job that did not run in the
    slot before pays one restart."""
    instance = tables.instance
    if slot >= instance.horizon:
        return 0.0
    order = _priority(settings, tables, state, slot)
    if not order:
        return 0.0
    jobs = np.asarray(order, dtype=np.int64)
    work = state.work_left[jobs].copy()
    if settings.restart_cost > 0:
        waiting = np.array([state.previous.get(i, (-2,))[0] != slot - 1 for i in order], dtype=bool)
        work += waiting * settings.restart_cost * tables.chunks[jobs]
    ends = fluid_completions(work, tables.chunks[jobs].astype(float), tables.unit[jobs], float(slot),
                             instance.horizon)
    finite = np.isfinite(ends)
    completion = np.full(jobs.size, instance.horizon, dtype=np.int64)
    completion[finite] = np.maximum(np.ceil(ends[finite] - 1e-9).astype(np.int64) - 1, slot)
    ok = completion < instance.horizon
    if not ok.any():
        return 0.0
    return float(tables.utilities.at(jobs[ok], completion[ok] - instance.arrivals[jobs[ok]]).sum())


def _priority(settings: LrSettings, tables: JobTables, state: LrState, slot: int) -> list[int]:
    """The live jobs in the fluid's priority: blocks first by their start, then the policy's growth order."""
    state.present = None
    order, _ = growth_order(settings, tables, state, slot, {})
    state.present = None
    live = state.work_left > DONE
    reserved = sorted((r.first, j) for j, r in state.ledger.reservations.items() if j not in state.done and live[j])
    first = [j for _, j in reserved]
    taken = set(first)
    return first + [i for i in order if i not in state.done and live[i] and i not in taken]


__all__ = ["fluid_completions", "tail_value"]
