"""OASiS's dual subroutine: the best schedule of one job at frozen prices, and ``mu_i`` (eq. (21)).

A schedule ``l`` of job ``i`` fixes ``y_ih(t)`` and ``z_ik(t)`` for every slot; its payoff is the right-hand side
of the dual constraint (20), ``f_i(t_il - a_i) - sum p w y - sum q s z``, and eq. (21) sets
``mu_i = max(0, max_l payoff(l))``. :mod:`primaldual.dual.reference` states the algorithm that finds ``max_l``
exactly (slot placement, the programme over slots, the best completion); :mod:`primaldual.dual.kernel` runs it
compiled. Why it is exact, and its cost: proofs/oasis.md section 2.

**Modes.** The online loop calls it with the *residual* capacity as the free amounts; the certificate with each
server's *own* capacity, i.e. over all schedules that respect every server's capacity on their own, at the
final prices. ``objective="utility"`` is the ``greedy`` ablation: the job pays nothing; the completion slot
maximises utility, and among the schedules with the highest utility the one of least cost at the supplied
(tie-break) prices is chosen.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from primaldual.dual.cost_floor import cost_floor_of, least_prices  # noqa: F401 - re-exported
from primaldual.core.instance import Instance, ceil_tolerant
from primaldual.core.schedule import JobSchedule
from primaldual.dual import kernel, reference, typed
from primaldual.core.errors import InputError

#: What the subroutine maximises: ``"payoff"`` (utility minus cost, eq. (21): OASiS) or ``"utility"`` (the
#: ``greedy`` ablation, cost only breaks ties).
OBJECTIVES = ("payoff", "utility")


def check_objective(objective: str) -> None:
    if objective not in OBJECTIVES:
        raise InputError(f"objective: must be one of {OBJECTIVES}, got {objective!r}")


def unit_prices(prices: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """``sum_r prices[..., r] demand[r]`` over the demanded resources, in resource order (the kernel's sums)."""
    out = np.zeros(prices.shape[:-1])
    for r in np.flatnonzero(demand > 0):
        out += prices[..., r] * demand[r]
    return out


class KernelInputs(NamedTuple):
    """The kernel's arguments before the window, in its order (:func:`primaldual.dual.reference.search`)."""

    worker_prices: np.ndarray
    ps_prices: np.ndarray
    worker_free: np.ndarray
    ps_free: np.ndarray
    worker_demand: np.ndarray
    ps_demand: np.ndarray
    ps_needed: np.ndarray
    ps_max: int


@dataclass(frozen=True, eq=False)
class Offer:
    """The subroutine's answer for one job in numbers: what :class:`DualResult` and the online decision
    (:class:`primaldual.oasis.decision.JobDecision`) share. ``payoff`` is utility minus cost of the best schedule
    and ``mu = max(0, payoff)`` (eq. (21)); ``feasible`` is False (``payoff = -inf``) when no schedule was found."""

    job: int
    feasible: bool
    mu: float
    payoff: float
    cost: float
    utility: float
    completion_slot: int | None

    @property
    def admit(self) -> bool:
        """Eq. (21) and Algorithm 1: admit iff ``mu_i > 0``."""
        return self.mu > 0

    def offer_fields(self) -> dict:
        """The :class:`Offer` fields alone, by name (to build a record that extends them)."""
        return {f.name: getattr(self, f.name) for f in fields(Offer)}


@dataclass(frozen=True, eq=False)
class DualResult(Offer):
    """The subroutine's answer for one job (all slots absolute, ``0..T-1``): the :class:`Offer` and the schedule.

    ``schedule`` is the best schedule even when ``mu = 0`` (``None`` when infeasible or not asked for). With ``early_stop`` (the
    default) ``mu`` and, when ``mu > 0``, the schedule are exact, but the search stops as soon as no later
    completion can have a positive payoff, so for a job with ``mu = 0`` the payoff and schedule are the best
    found up to then (possibly none).
    ``completion_costs[t] = C_i(t)`` (``+inf`` where no schedule covers the work by ``t``, ``nan`` before the
    arrival or past an early stop). With ``objective="utility"`` the job
    pays nothing: ``cost = 0``, ``payoff = utility`` and ``tie_break_cost`` is the cost at the tie-break prices.
    """

    schedule: JobSchedule | None
    workers_per_slot: np.ndarray
    parameter_servers_per_slot: np.ndarray
    completion_costs: np.ndarray
    tie_break_cost: float = 0.0
    #: Heterogeneous clusters: the GPU type (index into ``cluster.gpu_types``) of each slot's workers, -1 idle.
    types_per_slot: np.ndarray | None = None


def best_schedule(
    instance: Instance,
    job_index: int,
    worker_prices: np.ndarray,
    ps_prices: np.ndarray,
    worker_free: np.ndarray,
    ps_free: np.ndarray,
    objective: str = "payoff",
    early_stop: bool = True,
    work: int | None = None,
    start: int | None = None,
    cost_floor: bool | tuple[np.ndarray, np.ndarray] = False,
    plan: bool = True,
    relaxed: bool = False,
    fraction_left: float | None = None,
) -> DualResult:
    """The best schedule of job ``job_index`` at frozen prices, and ``mu_i`` (eq. (21)): a front over the
    kernel (:mod:`primaldual.dual.reference` is its text). Utilities are computed here, by numpy.

    ``worker_prices`` (T, H, R) and ``ps_prices`` (T, K, R) are ``p_h^r(t)``, ``q_k^r(t)``; ``worker_free`` and
    ``ps_free`` the amounts the job may use, (T, H, R)/(T, K, R) or (H, R)/(K, R) for every slot alike.
    ``work``/``start`` re-offer a job that has progressed: ``work`` worker-slots still needed from ``start`` on
    (its utility still counted from its arrival). ``cost_floor`` (True, or :func:`least_prices`' tables) stops
    the search where utility no longer exceeds ``max(0, best payoff) + floor`` and skips it when finishing at
    full speed cannot pay the floor: ``mu`` and a positive-``mu`` schedule are unchanged. ``plan=False`` skips
    placing the schedule on servers (``schedule`` None, the rest the same).

    On a heterogeneous cluster the search is :mod:`primaldual.dual.typed`'s: its schedules are feasible and its
    ``mu`` a lower bound on eq. (21)'s, or with ``relaxed`` an upper bound (no schedule: the certificate's and
    column generation's bounds). There a progressed job is re-offered by ``start`` and ``fraction_left`` (the
    fraction of its work left, the simulator's; ``work`` is one type's count and is refused), which the search
    counts as units already done (:func:`primaldual.dual.typed.done_units`): rounded down for the plan, up for the
    relaxed bound, so each keeps its side (proofs/oasis.md section 2b, Lemma 1h').
    """
    check_objective(objective)
    if instance.cluster.heterogeneous:
        if work is not None:
            raise InputError("the dual subroutine re-offers a progressed job on several gpu types by fraction_left, "
                             "not work")
        return _typed_schedule(instance, job_index, (worker_prices, ps_prices, worker_free, ps_free),
                               TypedOptions(objective, early_stop, cost_floor, plan and not relaxed, relaxed,
                                            start, 1.0 if fraction_left is None else float(fraction_left)))
    if fraction_left is not None:
        raise InputError("fraction_left: for heterogeneous clusters only (one type re-offers by work)")
    job = instance.jobs[job_index]
    horizon = instance.horizon
    arrival = job.arrival if start is None else max(int(start), job.arrival)
    work = int(instance.work_units[job_index]) if work is None else int(work)
    max_workers = int(min(job.chunks, work))
    completion_costs = np.full(horizon, np.nan)
    if arrival >= horizon or work < 1 or max_workers < 1:
        return _infeasible(job_index, horizon, completion_costs)
    n_slots = horizon - arrival
    # Window slot s completes at duration (arrival - a_i) + s.
    utility = np.asarray(job.utility(arrival - job.arrival + np.arange(n_slots)), dtype=float)
    floor = 0.0
    if objective == "payoff" and early_stop and cost_floor is not False:
        least = least_prices(worker_prices, ps_prices) if cost_floor is True else cost_floor
        floor = cost_floor_of(job, work, least, arrival)
        if reference.cannot_pay(utility, work, max_workers, floor):
            return _infeasible(job_index, horizon, completion_costs)  # no schedule pays: mu = 0 without searching
    inputs = _kernel_inputs(job, max_workers, worker_prices, ps_prices, worker_free, ps_free)
    servers = inputs.worker_prices.shape[1] + inputs.ps_prices.shape[1]
    code = kernel.functions(n_slots * (max_workers + 1) * servers)  # the reference for a small search
    best, counts, window_costs = code.search(
        *inputs, arrival, work, _read_only(utility), objective == "payoff", early_stop, floor)
    completion_costs[arrival:] = window_costs
    if best < 0:
        return _infeasible(job_index, horizon, completion_costs)
    place = None
    if plan:
        def place(workers, parameter_servers):
            code.place(*inputs, arrival, counts, workers, parameter_servers)
    return _answer(instance, job_index, inputs, counts, int(best), arrival, objective, place, completion_costs)


class TypedOptions(NamedTuple):
    """:func:`best_schedule`'s options as the search on several types reads them."""

    objective: str
    early_stop: bool
    cost_floor: bool | tuple
    plan: bool
    relaxed: bool
    start: int | None = None
    fraction_left: float = 1.0


def _typed_schedule(instance: Instance, job_index: int, market: tuple, options: TypedOptions) -> DualResult:
    """:func:`best_schedule` on a heterogeneous cluster (:mod:`primaldual.dual.typed`), ``market`` its prices and
    free amounts in its order. The cost floor and the skip use the fastest type's work ``V_i``
    (``Instance.work_units``): every schedule uses at least that many worker-slots, so both stay valid for every
    mix of types (proofs/oasis.md section 2b)."""
    worker_prices, ps_prices, worker_free, ps_free = market
    objective, early_stop, cost_floor, plan, relaxed, start, left = options
    job = instance.jobs[job_index]
    horizon = instance.horizon
    arrival = job.arrival if start is None else max(int(start), job.arrival)
    work_by_type = instance.work_by_type[job_index]
    work = int(instance.work_units[job_index]) if left >= 1.0 else _least_work(work_by_type, left)
    resolution = typed.job_units(max(ceil_tolerant(float(work_by_type.max())), 1), job.chunks, relaxed)
    max_workers = int(min(job.chunks, resolution))
    completion_costs = np.full(horizon, np.nan)
    if arrival >= horizon or max_workers < 1 or left <= typed.UNIT_TOLERANCE:
        return _infeasible(job_index, horizon, completion_costs)
    n_slots = horizon - arrival
    utility = np.asarray(job.utility(arrival - job.arrival + np.arange(n_slots)), dtype=float)
    floor = 0.0
    if objective == "payoff" and early_stop and cost_floor is not False:
        least = least_prices(worker_prices, ps_prices) if cost_floor is True else cost_floor
        floor = cost_floor_of(job, work, least, arrival)
        if reference.cannot_pay(utility, work, int(min(job.chunks, work)), floor):
            return _infeasible(job_index, horizon, completion_costs)
    inputs = _kernel_inputs(job, max_workers, worker_prices, ps_prices, worker_free, ps_free)
    server_types = _read_only(np.ascontiguousarray(instance.cluster.worker_type_index))
    units = _read_only(typed.progress_units(work_by_type, resolution, max_workers, relaxed))
    cells = n_slots * (max_workers + 1) * units.shape[0] * (inputs.worker_prices.shape[1] + inputs.ps_prices.shape[1])
    code = kernel.functions(cells, typed)
    pointer = np.zeros(1, dtype=np.uint8 if units.size <= 256 else np.int32)  # the back-pointers' dtype
    done = typed.done_units(left, resolution, relaxed) if left < 1.0 else 0
    side = typed.TypedJob(server_types, units, arrival, resolution, _read_only(utility), pointer, done)
    best, counts, types, window_costs = code.typed_search(inputs, side, typed.Rule(objective == "payoff",
                                                                                     bool(early_stop), float(floor)))
    completion_costs[arrival:] = window_costs
    if best < 0:
        return _infeasible(job_index, horizon, completion_costs)
    path_cost = None
    if not relaxed:  # the rounding may finish the job before the programme's last slot: stop there
        counts, types = _trim(counts, types, work_by_type, 1.0 - left)
        path_cost = _path_cost(code, inputs, side, counts, types)
    place = None
    if plan:
        def place(workers, parameter_servers):
            code.typed_place(inputs, side, counts, types, workers, parameter_servers)
    answer = _answer(instance, job_index, inputs, counts, int(best), arrival, objective, place, completion_costs,
                     path_cost)
    types_per_slot = np.full(horizon, -1, dtype=np.int64)
    types_per_slot[arrival:] = types
    return dataclasses.replace(answer, types_per_slot=types_per_slot)


def _least_work(work_by_type: np.ndarray, left: float) -> int:
    """The cost floor's work for a re-offer: at most what any schedule of ``left`` of the job spends."""
    return max(int(np.floor(left * float(work_by_type.min()))), 1)


def _trim(counts: np.ndarray, types: np.ndarray, work_by_type: np.ndarray,
          done: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The plan up to the slot where its work is done as the simulator and the verifier count it (per type, then
    summed, with the fraction ``done`` before it, at least ``1 - 1e-9``): the inner units round progress down, so a
    plan may be done before its end."""
    counts, types = counts.copy(), types.copy()
    supplied = np.zeros(work_by_type.shape[0])
    for s in np.flatnonzero(counts).tolist():
        supplied[types[s]] += counts[s]
        if done + float((supplied / work_by_type).sum()) >= 1.0 - typed.UNIT_TOLERANCE:
            counts[s + 1:], types[s + 1:] = 0, -1
            break
    return counts, types


def _path_cost(code, inputs: KernelInputs, side, counts, types) -> float:
    """The plan's cost: step (a)'s cost of each slot's type and count, added in slot order as the programme adds
    them (so an untrimmed plan costs exactly its ``C(s)``)."""
    total = 0.0
    for s in np.flatnonzero(counts).tolist():
        cost = code.typed_slot_costs(inputs, side.arrival + s, side.server_types, side.units.shape[0])
        total += cost[types[s], counts[s]]
    return float(total)


def _kernel_inputs(job, max_workers: int, worker_prices, ps_prices, worker_free, ps_free) -> KernelInputs:
    """The kernel's arguments before the window: C-contiguous float arrays of shape (T or 1, n, R) (one row for
    every slot alike, as a broadcast over the slots is passed), the demands, ``Z(D)`` for ``D = 0..N`` and the
    most PSs a fill needs. Arrays go in as read-only views, so that the kernel has one signature to compile
    whoever owns them."""
    arrays = []
    for values in (worker_prices, ps_prices, worker_free, ps_free):
        values = np.asarray(values, dtype=float)
        if values.ndim == 2:
            values = values[None]
        elif values.strides[0] == 0:  # the same in every slot: one row, not a copy per slot
            values = values[:1]
        arrays.append(_read_only(np.ascontiguousarray(values)))
    ps_needed = np.asarray(job.min_parameter_servers(np.arange(max_workers + 1)), dtype=np.int64)
    ps_max = int(min(ps_needed.max(initial=0), max_workers))
    demands = [_read_only(np.ascontiguousarray(d, dtype=float)) for d in (job.worker_demand, job.ps_demand)]
    return KernelInputs(*arrays, *demands, _read_only(ps_needed), ps_max)


def _read_only(values: np.ndarray) -> np.ndarray:
    view = values.view()
    view.flags.writeable = False
    return view


def _infeasible(job_index: int, horizon: int, completion_costs: np.ndarray) -> DualResult:
    """No schedule found (or none can pay): ``mu = 0``, ``payoff = -inf``."""
    empty = np.zeros(horizon, dtype=np.int64)
    return DualResult(job_index, False, 0.0, -np.inf, np.inf, 0.0, None, None, empty, empty, completion_costs)


def _answer(instance: Instance, job_index: int, inputs: KernelInputs, counts: np.ndarray, best: int, arrival: int,
            objective: str, place, completion_costs: np.ndarray, path_cost: float | None = None) -> DualResult:
    """Step (c)'s answer for a search that found a schedule: its numbers, placed on servers by ``place(workers,
    parameter_servers)`` unless it is None; ``path_cost`` when the plan is not the programme's ``C(s)``."""
    job = instance.jobs[job_index]
    horizon = instance.horizon
    workers_per_slot = np.zeros(horizon, dtype=np.int64)
    workers_per_slot[arrival:] = counts
    ps_per_slot = np.zeros(horizon, dtype=np.int64)
    ps_per_slot[arrival:] = inputs.ps_needed[counts]
    schedule = None
    if place is not None:
        workers = np.zeros((horizon, instance.cluster.n_worker_servers), dtype=np.int64)
        parameter_servers = np.zeros((horizon, instance.cluster.n_ps_servers), dtype=np.int64)
        place(workers, parameter_servers)
        schedule = JobSchedule(workers, parameter_servers)
    completion = int(np.flatnonzero(workers_per_slot)[-1])  # eq. (8); arrival + best (module docstring, (c))
    value = float(job.utility(completion - job.arrival))
    path_cost = float(completion_costs[completion]) if path_cost is None else path_cost
    payoff, result_cost, tie_break = (value - path_cost, path_cost, 0.0) if objective == "payoff" else (
        value, 0.0, path_cost)
    return DualResult(job=job_index, feasible=True, mu=max(0.0, payoff), payoff=payoff, cost=result_cost,
                      utility=value, completion_slot=completion, schedule=schedule,
                      workers_per_slot=workers_per_slot, parameter_servers_per_slot=ps_per_slot,
                      completion_costs=completion_costs, tie_break_cost=tie_break)


__all__ = [
    "OBJECTIVES",
    "DualResult",
    "KernelInputs",
    "Offer",
    "best_schedule",
    "check_objective",
    "cost_floor_of",
    "least_prices",
    "unit_prices",
]
