"""The dual subroutine on a heterogeneous cluster (issue 64; proofs/oasis.md section 2b), in plain loops.

:mod:`primaldual.dual.kernel` compiles these functions as it compiles :mod:`primaldual.dual.reference` (whose
pool costs and fills they call, restricted to one type's servers). On a heterogeneous cluster a job's workers in
one slot are of one type ``g`` and ``D`` of them do the fraction ``D / W^g`` of the job
(:mod:`primaldual.core.gpu_types`), so the work is no longer a count of worker-slots.

**Progress in integral units.** The job is ``Q`` units; ``D`` workers of type ``g`` make ``u_g(D)`` units, rounded

* *down* (``inner``): ``u_g(D) = floor(D Q / W^g)``, so a schedule reaching ``Q`` units does at least the whole
  job: every schedule found is feasible (the online decision); ``Q = RESOLUTION ceil(W^slowest)``, at least
  ``RESOLUTION`` units per worker on every type;
* *up* (``outer``): ``u_g(D) = ceil(D Q / W^g)``, so every feasible schedule reaches ``Q`` units: the search
  ranges over a superset of the schedules and its ``mu`` is an upper bound on eq. (21)'s (the certificate), for
  any ``Q``; here ``RESOLUTION`` units per full-width slot of the slowest type and at least one per worker
  (:func:`job_units`: ``Q = ceil(W^slowest)`` from 4 workers on), which loosens the bound by at most a unit a slot.

(a) ``c_{s,g}(D)``: the cheapest placement of ``D`` workers on type ``g``'s servers and of ``Z(D)`` PSs.
(b) ``F_s(v) = min_{g, D, v'} F_{s-1}(v') + c_{s,g}(D)`` over ``min(Q, v' + u_g(D)) = v``; among equal values the
    first in the order (``v'``, ``g``, ``D``) is kept (as pushing forward from each reachable ``v'`` would). Below
    ``Q`` it is pulled (:func:`typed_dp_step`); the back-pointers keep the pair ``(g, D)`` of each state, one byte
    where ``G (N + 1) <= 256``, and the ``v'`` of ``Q`` per slot (the cap at ``Q`` makes it unrecoverable).
(c) as in :mod:`primaldual.dual.reference`: the earliest maximiser of ``f(s) - F_s(Q)``, the same early stop.

Cost: ``O(Q P)`` per slot for the ``P <= G N + 1`` pairs of finite cost, against ``O(V N)`` on one type; the inner
``Q`` is about ``4 V`` times the slowest type's slowdown, the outer one a quarter of it for ``N >= 4``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from primaldual.dual.reference import (completion_step, fill, fill_among, in_slot, pool_costs, pool_costs_among,
                                      pool_prices, stops_after)

#: Units per worker-slot of the slowest type (inner), per full-width slot of it (outer): the rounding loses at most
#: ``1 / Q`` of the job per slot (a schedule may need a little more than its work, or the bound be a little loose);
#: the search costs ``O(Q)``.
RESOLUTION = 4
#: Slack of the rounding of ``D Q / W^g`` (a relative 1e-9, the verifier's tolerance on eq. (2)).
UNIT_TOLERANCE = 1e-9


def job_units(slowest: int, chunks: int, outer: bool) -> int:
    """``Q`` for a job of ``slowest = ceil(W^slowest)`` worker-slots on its slowest type and at most ``chunks``
    workers (module docstring): ``RESOLUTION`` units per worker of the slowest type for the inner search, and for
    the outer one ``RESOLUTION`` per full-width slot of the slowest type, at least one per worker."""
    return slowest * (max(1, -(-RESOLUTION // chunks)) if outer else RESOLUTION)


def progress_units(work_by_type: np.ndarray, resolution: int, max_workers: int, outer: bool) -> np.ndarray:
    """``u[g, D]`` for ``D = 0..max_workers`` (module docstring): down for ``inner``, up for ``outer``."""
    units = np.zeros((work_by_type.shape[0], max_workers + 1), dtype=np.int64)
    for g in range(work_by_type.shape[0]):
        for d in range(1, max_workers + 1):
            x = d * resolution / work_by_type[g]
            if outer:
                units[g, d] = int(np.ceil(x - UNIT_TOLERANCE * x))
            else:
                units[g, d] = int(np.floor(x + UNIT_TOLERANCE * x))
    return units


class TypedJob(NamedTuple):
    """One job's side of the search (module docstring): each worker server's type index, ``u[g, D]``, the arrival,
    ``Q``, the utility per window slot, a one-element array of the back-pointers' dtype, and the units done."""

    server_types: np.ndarray
    units: np.ndarray
    arrival: int
    resolution: int
    utility: np.ndarray
    pointer: np.ndarray
    #: The units already done (:func:`done_units`): the programme's progress starts there (0 for a fresh job).
    done: int = 0


def done_units(fraction_left: float, resolution: int, outer: bool) -> int:
    """Units done by a job with ``fraction_left`` left (proofs/oasis.md Lemma 1h'): ``(1 - fraction_left) Q`` down
    for ``inner`` (its plan finishes the job), up for ``outer`` (every schedule of the rest reaches ``Q``), at most
    ``Q - 1`` (one worker is at least one outer unit)."""
    done = (1.0 - fraction_left) * resolution
    rounded = int(np.ceil(done - UNIT_TOLERANCE * resolution)) if outer else int(np.floor(done))
    return min(max(rounded, 0), resolution - 1)


class Rule(NamedTuple):
    """Step (c)'s rule: OASiS's payoff (else greedy's utility), the early stop, and the cost floor."""

    payoff_objective: bool
    early_stop: bool
    floor: float


def typed_slot_costs(inputs, t: int, server_types: np.ndarray, n_types: int) -> np.ndarray:
    """Step (a) for slot ``t``: ``cost[g, D]``, ``+inf`` where ``D`` workers do not fit on type ``g``; ``inputs`` is
    :class:`primaldual.dual.subroutine.KernelInputs`."""
    max_workers = inputs.ps_needed.shape[0] - 1
    price = pool_prices(in_slot(inputs.worker_prices, t), inputs.worker_demand)
    parameter_servers = pool_costs(in_slot(inputs.ps_prices, t), in_slot(inputs.ps_free, t), inputs.ps_demand,
                                   inputs.ps_max)
    cost = np.empty((n_types, max_workers + 1))
    for g in range(n_types):
        workers = pool_costs_among(price, server_types != g, in_slot(inputs.worker_free, t), inputs.worker_demand,
                                   max_workers)
        for d in range(max_workers + 1):
            cost[g, d] = workers[d] + parameter_servers[min(inputs.ps_needed[d], inputs.ps_max)]
        cost[g, 0] = 0.0
    return cost


def pull_order(cost: np.ndarray, units: np.ndarray):
    """The pairs ``(g, D)`` of finite cost as ``(units, cost, g (N + 1) + D)``, in the order that makes step (b)'s
    pull keep the push's first minimum: most units first (the least ``v'``), then ``g``, then ``D``. ``D = 0`` is
    kept for ``g = 0`` alone (every type's idle choice is the same candidate, and the first one wins)."""
    n_types, width = cost.shape
    most = units.max()
    keys = np.empty(n_types * width, dtype=np.int64)
    count = 0
    for g in range(n_types):
        for d in range(width):
            if cost[g, d] < np.inf and (d > 0 or g == 0):
                keys[count] = (most - units[g, d]) * (n_types * width) + g * width + d
                count += 1
    keys = np.sort(keys[:count])
    pair = keys % (n_types * width)
    shift = np.empty(count, dtype=np.int64)
    price = np.empty(count)
    for i in range(count):
        shift[i], price[i] = units[pair[i] // width, pair[i] % width], cost[pair[i] // width, pair[i] % width]
    return shift, price, pair


def typed_dp_step(before: np.ndarray, reach: int, cost: np.ndarray, units: np.ndarray, resolution: int,
                  row: np.ndarray, pointers: np.ndarray):
    """Step (b) for one slot (module docstring) into ``row`` and its back-pointer row ``pointers`` (the pair
    ``g (N + 1) + D``); ``before`` is ``+inf`` past ``reach``. Returns the reach of ``row`` and ``v'`` of ``row[Q]``.

    Pulled, not pushed: below ``Q`` the cap does not bind, so ``v' = v - u_g(D)``, and ``row[v]`` is the minimum
    over the pairs of ``before[v - u_g(D)] + c_{s,g}(D)``, each pair a sweep over ``v`` (no branch on ``before``,
    one write per improvement). The same sums in an order that keeps the push's first minimum (:func:`pull_order`),
    so the values and back-pointers are those of the push; ``row[Q]``, where the cap binds, is pushed from the
    ``v'`` within ``max u`` of ``Q``, which also records ``v'``. Cost ``O(Q P)`` for ``P <= G N + 1`` pairs."""
    row[:] = np.inf
    top = units.max()
    most = min(resolution, reach + top)
    shift, price, pair = pull_order(cost, units)
    for i in range(shift.shape[0]):
        step, extra, code = shift[i], price[i], pair[i]
        for v in range(step, min(resolution - 1, reach + step) + 1):
            candidate = before[v - step] + extra
            if candidate < row[v]:
                row[v] = candidate
                pointers[v] = code
    came_from = -1
    for v in range(max(0, resolution - top), reach + 1):
        if before[v] == np.inf:
            continue
        for g in range(cost.shape[0]):
            for d in range(cost.shape[1]):
                if cost[g, d] < np.inf and v + units[g, d] >= resolution:
                    candidate = before[v] + cost[g, d]
                    if candidate < row[resolution]:
                        row[resolution] = candidate
                        pointers[resolution], came_from = g * cost.shape[1] + d, v
    return most, came_from


def typed_search(inputs, job: TypedJob, rule: Rule):
    """Steps (a)-(c) over the window: ``(best, workers per window slot, type per window slot, C(s))``, as
    :func:`primaldual.dual.reference.search` with the units of the module docstring. The back-pointers are one
    pair per state, of ``job.pointer``'s dtype (the front picks the narrowest that holds ``G (N + 1)`` pairs), plus
    ``v'`` of ``Q`` per slot: ``1`` byte a state where there are at most 256 pairs, against ``10`` before."""
    units, resolution, utility = job.units, job.resolution, job.utility
    n_slots, n_types = utility.shape[0], units.shape[0]
    completion_cost = np.full(n_slots, np.nan)
    # Back-pointer rows grow by doubling: a search that stops early holds only the rows it used.
    rows = min(n_slots, 16)
    pointers = np.zeros((rows, resolution + 1), dtype=job.pointer.dtype)
    came_from = np.zeros(n_slots, dtype=np.int64)
    before = np.full(resolution + 1, np.inf)
    before[job.done] = 0.0
    row = np.full(resolution + 1, np.inf)
    reach = job.done
    best, best_payoff, best_utility, best_cost = -1, -np.inf, -np.inf, np.inf
    for s in range(n_slots):
        if s == rows:
            rows = min(n_slots, 2 * rows)
            pointers = grown(pointers, rows)
        cost = typed_slot_costs(inputs, job.arrival + s, job.server_types, n_types)
        reach, came_from[s] = typed_dp_step(before, reach, cost, units, resolution, row, pointers[s])
        total = row[resolution]
        completion_cost[s] = total
        best, best_payoff, best_utility, best_cost = completion_step(
            s, total, utility, rule.payoff_objective, best, best_payoff, best_utility, best_cost)
        if rule.early_stop and stops_after(s, utility, rule.payoff_objective, rule.floor, best_payoff, best_utility):
            break
        before, row = row, before
    counts, types = typed_path(pointers, came_from, units, best, resolution, n_slots)
    return best, counts, types, completion_cost


def grown(rows: np.ndarray, count: int) -> np.ndarray:
    """``rows`` with room for ``count`` rows (the first ones copied)."""
    out = np.zeros((count, rows.shape[1]), dtype=rows.dtype)
    out[:rows.shape[0]] = rows
    return out


def typed_path(pointers, came_from, units, best: int, resolution: int, n_slots: int):
    """The schedule's workers and type per window slot, back from ``(best, Q)`` (type -1 where idle): below ``Q``
    the state before is ``v - u_g(D)``, at ``Q`` the recorded ``v'``."""
    counts = np.zeros(n_slots, dtype=np.int64)
    types = np.full(n_slots, -1, dtype=np.int64)
    width = units.shape[1]
    v = resolution
    for s in range(best, -1, -1):
        g, d = pointers[s, v] // width, pointers[s, v] % width
        counts[s] = d
        if d > 0:
            types[s] = g
        v = came_from[s] if v == resolution else v - units[g, d]
    return counts, types


def typed_place(inputs, job: TypedJob, counts: np.ndarray, types: np.ndarray, workers: np.ndarray,
                parameter_servers: np.ndarray) -> None:
    """The schedule on servers: each window slot's workers on its type's servers and their PSs, cheapest first."""
    max_workers = inputs.ps_needed.shape[0] - 1
    for s in range(counts.shape[0]):
        if counts[s] > 0:
            t = job.arrival + s
            price = pool_prices(in_slot(inputs.worker_prices, t), inputs.worker_demand)
            fill_among(price, job.server_types != types[s], in_slot(inputs.worker_free, t), inputs.worker_demand,
                       max_workers, counts[s], workers[t])
            fill(in_slot(inputs.ps_prices, t), in_slot(inputs.ps_free, t), inputs.ps_demand, inputs.ps_max,
                 inputs.ps_needed[counts[s]], parameter_servers[t])


def kernel_globals() -> dict:
    """What the compiled copy calls instead of :mod:`primaldual.dual.reference`'s Python functions."""
    from primaldual.dual import kernel, reference

    code = kernel.compiled(reference)
    return {name: getattr(code, name) for name in ("completion_step", "fill", "fill_among", "in_slot", "pool_costs",
                                                    "pool_costs_among", "pool_prices", "stops_after")}


#: The functions :mod:`primaldual.dual.kernel` compiles, callees before callers.
KERNEL_FUNCTIONS = ("typed_slot_costs", "pull_order", "typed_dp_step", "grown", "typed_path", "typed_search",
                    "typed_place")
