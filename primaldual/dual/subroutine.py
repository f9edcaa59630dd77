"""OASiS's dual subroutine: the best schedule of one job at frozen prices, and ``mu_i`` (eq. (21)).

A schedule ``l`` of job ``i`` fixes ``y_ih(t)`` and ``z_ik(t)`` for every slot; its payoff is the right-hand side
of the dual constraint (20), ``f_i(t_il - a_i) - sum p w y - sum q s z``, and eq. (21) sets
``mu_i = max(0, max_l payoff(l))``. The subroutine finds ``max_l`` exactly, in three steps (proofs/oasis.md section 2):

(a) **Slot placement** (:func:`slot_costs`). For a slot ``t`` and a worker count ``D``, the cheapest placement
    of ``D`` workers and of their PSs. With prices frozen, a worker on server ``h`` costs
    ``pi_h(t) = sum_r p_h^r(t) w_i^r`` whatever the other workers do: the cost is *linear in the counts*
    ``y_h`` within a slot, and the only constraints coupling servers are ``sum_h y_h = D`` and
    ``0 <= y_h <= cap_h`` (residual capacity, eqs. (4)). Minimising a linear function over that set is a
    continuous knapsack with unit weights, solved exactly by filling the cheapest server first (exchange
    argument: moving one worker from a dearer to a cheaper server with room never costs more), and its
    greedy optimum is integral. The PSs are the same problem on the PS pool for ``Z(D) = ceil(D b_i / B_i)``
    PSs: eq. (6) needs at least ``Z(D)``, more only add cost (prices are positive) and eq. (7) needs
    ``Z(D) <= D``. The two pools share nothing, so ``c_t(D) = WorkerCost_t(D) + PSCost_t(Z(D))`` and
    ``+inf`` where the workers or the PSs do not fit. All ``D = 0..min(N_i, V_i)`` come out of one sort per
    slot and a masked prefix sum, vectorised over the slots.

    ``c_t(D)`` is not convex in ``D``: the PS cost steps up each time ``D b_i / B_i`` crosses an integer, so
    one PS serves several workers. This is why (b) is a dynamic programme and not a greedy over marginal costs.

(b) **Dynamic programme over slots** (:func:`cover_work`). With ``F_t(v)`` the least cost of supplying exactly
    ``v`` worker-slots in slots ``a_i..t``::

        F_{a_i - 1}(0) = 0,  F_{a_i - 1}(v > 0) = +inf
        F_t(v) = min_{0 <= D <= min(N_i, v)} F_{t-1}(v - D) + c_t(D)            (a min-plus convolution)

    and ``C_i(t) = F_t(V_i)`` is the least cost of covering the work ``V_i`` (eq. (2)) by slot ``t``, for every
    ``t`` in one forward pass. Supplying more than ``V_i`` never helps because ``c_t`` is non-decreasing in
    ``D`` (a cheaper way to supply ``v + 1`` would give a way to supply ``v`` no dearer), so states stop at
    ``V_i``. Each step is one vectorised min-plus convolution: a strided ``(V_i + 1) x (D_max + 1)`` view of the
    previous row plus ``c_t``, its row ``argmin`` (the back-pointer) and the minima gathered there. Only the
    columns up to the largest ``D`` with finite ``c_t(D)`` and the rows up to the most work the slots so far can
    supply are computed (the rest is ``+inf``), which shrinks the step when servers are full. Ties go to the
    smallest ``D`` in the later slot (work as early as possible).

(c) **Best schedule.** ``t* = argmax_t f_i(t - a_i) - C_i(t)`` (earliest on ties), ``mu_i = max(0, payoff)``.
    Because ``f_i`` is non-increasing, a schedule counted at ``t`` that finishes earlier is only worth more,
    and the earliest maximiser always has a worker in ``t*`` (otherwise ``t* - 1`` has the same cost and at
    least the utility), so ``t*`` is the schedule's completion slot of eq. (8). The forward pass stops early
    once ``f_i(t - a_i) <= max(0, best payoff)``: no later completion can do better (costs are >= 0).

**Complexity** per job, with ``S = T - a_i`` slots, ``n = min(N_i, V_i)``, ``H``/``K`` servers and ``R``
resources: unit prices and caps ``O(S (H + K) R)``; placement tables ``O(S (H log H + K log K) + S n)``
(one sort per slot, then one prefix sum over the ``n`` cheapest units); DP ``O(S V_i n)`` time and ``O(S V_i)``
memory for the back-pointers; reconstruction ``O(S + T (H + K))``. Polynomial in ``T, H, K, N_i, V_i``;
pseudo-polynomial in the job's numeric parameters through ``V_i`` (proofs/oasis.md section 8).

**Modes.** The online loop calls it with the *residual* capacity (``capacity - already allocated``) as caps;
the certificate calls it with each server's *own* capacity (``free = capacity``), i.e. over all schedules that
respect every server's capacity on their own, at the final prices. ``objective="utility"`` is the ``greedy``
ablation: the job pays nothing; the completion slot maximises utility, and among the schedules with the
highest utility the one of least cost at the supplied (tie-break) prices is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from primaldual.dual.cost_floor import cost_floor_of, least_prices  # noqa: F401 - re-exported
from primaldual.core.instance import Instance
from primaldual.core.schedule import JobSchedule
from primaldual.dual.slot_costs import (  # noqa: F401 - re-exported
    PoolFills,
    PoolPlacement,
    SlotCosts,
    cheapest_fill,
    slot_costs,
    unit_prices,
)
from primaldual.dual.work_cover import OBJECTIVES, WorkCover, check_objective, cover_work  # noqa: F401 - re-exported

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


def _placements(tables, counts: np.ndarray, best: int, arrival: int, horizon: int, n_worker_servers: int,
                n_ps_servers: int) -> JobSchedule:
    """The best schedule on servers: each window slot's count placed by its cheapest fill (step (a))."""
    workers = np.zeros((horizon, n_worker_servers), dtype=np.int64)
    parameter_servers = np.zeros((horizon, n_ps_servers), dtype=np.int64)
    for first, stop, table in tables:
        window_slots = np.arange(first, min(stop, best + 1))
        window_slots = window_slots[counts[window_slots] > 0]
        if window_slots.size == 0:
            continue
        local = counts[window_slots]
        table.workers.fill(workers, arrival + window_slots, window_slots - first, local)
        table.parameter_servers.fill(parameter_servers, arrival + window_slots, window_slots - first,
                                     table.ps_needed[local])
    return JobSchedule(workers, parameter_servers)


#: Slots of placement tables computed at a time, so that an early stop also saves the tables of later slots.
FIRST_BLOCK = 8


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
    fills: PoolFills | None = None,
) -> DualResult:
    """The best schedule of job ``job_index`` at frozen prices, and ``mu_i`` (eq. (21)).

    ``work`` and ``start`` re-offer a job that has already progressed (OASiS-LR's pending tier): it still
    needs ``work`` worker-slots (default ``V_i``) from slot ``start`` on (default its arrival); its utility is
    still counted from its arrival, ``f_i(t - a_i)``.

    ``cost_floor`` (True, or the tables :func:`least_prices` of the prices, to share them between jobs offered
    at the same prices) bounds every schedule's cost from below (:func:`cost_floor_of`: the least prices from
    the window's first slot on, for ``work`` worker-slots and the PS-slots eq. (6) needs): the search then stops where utility
    no longer exceeds ``max(0, best payoff) + floor``, and is not run at all when finishing at full speed cannot
    pay it. ``mu`` and, when ``mu > 0``, the schedule are unchanged; a job with ``mu = 0`` may come back with no
    schedule (``feasible`` False). Only the payoff objective uses it. ``plan=False`` skips placing the best
    schedule's workers and PSs on servers (``schedule`` is then None; its completion, per-slot counts, payoff
    and ``mu`` are the same): for callers that only read those. ``fills`` (:class:`PoolFills` of these very
    prices and free amounts, per slot) shares step (a)'s pool fills between jobs offered at the same prices:
    the same slot costs, computed once.

    ``worker_prices`` (T, H, R) and ``ps_prices`` (T, K, R) are ``p_h^r(t)``, ``q_k^r(t)``; ``worker_free`` and
    ``ps_free`` are the amounts the job may use, shape (T, H, R)/(T, K, R) or (H, R)/(K, R) for the same in
    every slot (residual capacity online; own capacity for the certificate). See the module docstring.
    """
    check_objective(objective)
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
        fastest = -(-work // max_workers) - 1  # the earliest completion, at full speed from the first slot
        if fastest >= n_slots or utility[fastest] - floor <= 0.0:
            return _infeasible(job_index, horizon, completion_costs)  # no schedule pays: mu = 0 without searching
    cover = WorkCover(work, max_workers, utility, objective, early_stop, floor)
    arrays = [np.asarray(a, dtype=float) for a in (worker_prices, ps_prices, worker_free, ps_free)]
    shared = fills if fills is not None and arrival >= fills.first else None
    tables = _search(cover, job, arrays, arrival, n_slots, work, max_workers, shared)
    completion_costs[arrival:] = cover.completion_cost
    if cover.best_slot is None:
        return _infeasible(job_index, horizon, completion_costs)
    return _answer(instance, job_index, cover, tables, arrival, objective, plan, completion_costs)


def _infeasible(job_index: int, horizon: int, completion_costs: np.ndarray) -> DualResult:
    """No schedule found (or none can pay): ``mu = 0``, ``payoff = -inf``."""
    empty = np.zeros(horizon, dtype=np.int64)
    return DualResult(job_index, False, 0.0, -np.inf, np.inf, 0.0, None, None, empty, empty, completion_costs)


def _search(cover: WorkCover, job, arrays: list[np.ndarray], arrival: int, n_slots: int, work: int,
            max_workers: int, fills: PoolFills | None = None) -> list[tuple[int, int, SlotCosts]]:
    """Steps (a) and (b) block by block of doubling length until ``cover`` stops; the placement tables of
    each block, ``(first window slot, stop, table)``, for rebuilding the schedule. Step (a) comes from
    ``fills`` when given (the same tables)."""
    tables: list[tuple[int, int, SlotCosts]] = []
    # The first block reaches FIRST_BLOCK / 2 slots past the earliest completion at full speed, where a schedule
    # can first be found, so searches with a cost floor mostly end in it; block sizes never change the result
    # (every slot's costs are its own).
    start, size = 0, max(FIRST_BLOCK, -(-work // max_workers) + FIRST_BLOCK // 2)
    while start < n_slots:
        stop = min(n_slots, start + size)
        # Per-slot arrays are cut to the block's slots; per-server ones (the same in every slot) broadcast.
        if fills is not None:
            table = fills.slot_costs(job, max_workers, arrival + start, arrival + stop)
        else:
            window = [a[arrival + start: arrival + stop] if a.ndim == 3 else a[None] for a in arrays]
            table = slot_costs(job, max_workers, *window)
        tables.append((start, stop, table))
        more = cover.extend(np.broadcast_to(table.cost, (stop - start, max_workers + 1)))
        start, size = stop, size * 2
        if not more:
            break
    return tables


def _answer(instance: Instance, job_index: int, cover: WorkCover, tables: list[tuple[int, int, SlotCosts]],
            arrival: int, objective: str, plan: bool, completion_costs: np.ndarray) -> DualResult:
    """Step (c): the best schedule of a search that found one, placed on servers if ``plan``."""
    job = instance.jobs[job_index]
    horizon = instance.horizon
    best = cover.best_slot
    counts = cover.workers_per_slot(best)
    if plan:
        schedule = _placements(tables, counts, best, arrival, horizon, instance.cluster.n_worker_servers,
                               instance.cluster.n_ps_servers)
        completion = schedule.completion_slot()
        workers_per_slot, ps_per_slot = schedule.workers_per_slot, schedule.parameter_servers_per_slot
    else:  # the counts alone: the same completion and per-slot totals, without placing them on servers
        schedule = None
        workers_per_slot = np.zeros(horizon, dtype=np.int64)
        workers_per_slot[arrival:arrival + best + 1] = counts
        ps_per_slot = np.zeros(horizon, dtype=np.int64)
        ps_per_slot[arrival:arrival + best + 1] = tables[0][2].ps_needed[counts]
        completion = int(np.flatnonzero(workers_per_slot)[-1])
    value = float(job.utility(completion - job.arrival))
    path_cost = float(cover.completion_cost[best])
    if objective == "payoff":
        payoff = value - path_cost
        result_cost, tie_break = path_cost, 0.0
    else:
        payoff = value
        result_cost, tie_break = 0.0, path_cost
    return DualResult(
        job=job_index,
        feasible=True,
        mu=max(0.0, payoff),
        payoff=payoff,
        cost=result_cost,
        utility=value,
        completion_slot=completion,
        schedule=schedule,
        workers_per_slot=workers_per_slot,
        parameter_servers_per_slot=ps_per_slot,
        completion_costs=completion_costs,
        tie_break_cost=tie_break,
    )


__all__ = [
    "DualResult",
    "Offer",
    "PoolFills",
    "PoolPlacement",
    "SlotCosts",
    "WorkCover",
    "best_schedule",
    "cheapest_fill",
    "cover_work",
    "cost_floor_of",
    "least_prices",
    "slot_costs",
]
