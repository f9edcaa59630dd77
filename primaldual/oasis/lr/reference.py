"""OASiS-LR's slot, the parts written as plain loops: a slot's plan and the offers up to their blocks (the twin as
data, under way).

:mod:`primaldual.dual.kernel` compiles these functions with numba, as it compiles the dual subroutine
(:mod:`primaldual.dual.reference`); ``PRIMALDUAL_KERNEL=reference`` runs this very text as Python. Every function
takes numpy arrays, numbers and named tuples of them. :mod:`primaldual.oasis.lr.execution` and
:mod:`primaldual.oasis.lr.admission` prepare them and call :func:`primaldual.oasis.lr.kernel.functions`.

**First fit** (:func:`place_most`). A growing job gets the most workers ``D <= limit`` whose ``Z(D)`` PSs fit too
(eq. (6)); both pools are filled first-fit: server by server in index order, each taking what is left of the
count up to the units that fit on it. How many units fit on a server is the rule of the dual subroutine
(:func:`primaldual.dual.reference.units_that_fit`: the least over the demanded resources of
``floor((free + FIT_TOLERANCE) / demand)``), so the project states it once. The result and the capacity left are
bit for bit those of the array programme this replaced (``units_that_fit``, ``_first_fit`` and
``FreeCapacity.take`` of :mod:`primaldual.simulation.placement`): the same IEEE operations on the same values,
``free - count * demand`` per cell in the same order; randomized tests compare the two
(``tests/oasis/test_oasis_lr_speed.py``, as Python and compiled).

**Plans** (:func:`grow_plan`). The jobs that grow into the capacity the blocks leave free, one after another in
the policy's order (:func:`grow_job`): a running block grows in place; in a stable plan a job that ran in the slot
before keeps its placement where it fits and grows only if that pays after the restart (:func:`keep`), and a job
with a block runs early on the block's placement; every other job is placed first fit. The numpy programme this
replaced is kept in ``tests/oasis/test_exact_shortcuts.py``, and runs are compared with it.

**Blocks** are searched by :func:`block_search` (:mod:`primaldual.oasis.lr.blocks`, whose loops this module lists
among its compiled functions) and **offers** made by :func:`offer`, up to the block (the rest is in
:mod:`primaldual.oasis.lr.admission`).

**Cost.** ``O((H + K) R)`` per call of :func:`place_most`, without the dozen small numpy temporaries per call the array programme
made (0.2 million calls on one Philly week's rollouts: ``docs/measurements.md``, "OASiS-LR's slot compiled").
"""

from __future__ import annotations

import math  # noqa: F401 - read by the compiled copies of blocks.py's loops, which run in this namespace
from typing import NamedTuple

import numpy as np

# Names the compiled copy reads as its globals: the dual subroutine's per-server rules and its search.
# Every compiled copy runs in this one namespace, so a name means one function here (``fill`` is the blocks' fill,
# not the dual subroutine's).
from primaldual.dual.reference import FIT_TOLERANCE, cannot_pay, search, unit_price, units_that_fit  # noqa: F401
from primaldual.oasis.lr.blocks import (WORK_EPSILON, Demand, Reserved, block_length, block_search, fill,  # noqa: F401
                                        find_block, block_cost, pool_cost, slot_units, window_minima,
                                        window_that_fits)
from primaldual.oasis.lr.type_rule import HIDDEN, choose_type, hide_other_types, show_other_types  # noqa: F401

#: A server's units when the demand is zero in every resource (:data:`primaldual.simulation.placement.UNBOUNDED`).
UNBOUNDED = 1 << 40
#: The cap of a count where the demand is positive: above any count the domains allow (docs/input-ranges.md).
NO_LIMIT = 1 << 62


def server_caps(free: np.ndarray, demand: np.ndarray, caps: np.ndarray) -> int:
    """``caps[s]``: the units of ``demand`` that fit on server ``s`` of ``free`` (S, R); returns their sum."""
    positive = False
    for r in range(demand.shape[0]):
        if demand[r] > 0:
            positive = True
    total = 0
    for s in range(free.shape[0]):
        caps[s] = units_that_fit(free, s, demand, NO_LIMIT) if positive else UNBOUNDED
        total += caps[s]
    return total


def first_fit(count: int, caps: np.ndarray, out: np.ndarray) -> bool:
    """``out[s]``: ``count`` units spread first-fit over servers holding at most ``caps[s]``; False (``out``
    undefined) if they do not fit."""
    room = 0
    for s in range(caps.shape[0]):
        room += min(caps[s], count)
    if room < count:
        return False
    left = count
    for s in range(caps.shape[0]):
        out[s] = min(caps[s], left)
        left -= out[s]
    return True


def take(free: np.ndarray, counts: np.ndarray, demand: np.ndarray) -> None:
    """``free -= counts[:, None] * demand[None, :]``, cell by cell."""
    for s in range(free.shape[0]):
        for r in range(free.shape[1]):
            free[s, r] = free[s, r] - counts[s] * demand[r]


def place_most(worker_free: np.ndarray, ps_free: np.ndarray, worker_demand: np.ndarray, ps_demand: np.ndarray,
               limit: int, ps_needed: np.ndarray, workers: np.ndarray, parameter_servers: np.ndarray) -> int:
    """The most workers ``D <= limit`` (``limit < len(ps_needed)``) whose ``Z(D) = ps_needed[D]`` PSs fit too,
    placed first-fit into ``workers`` (H,) and ``parameter_servers`` (K,) and taken from the free amounts;
    returns ``D``, or 0 with nothing taken if not one worker fits."""
    worker_room = server_caps(worker_free, worker_demand, workers)
    count = min(limit, worker_room)
    if count <= 0:
        return 0  # the PS pool need not be looked at
    ps_caps = np.empty(ps_free.shape[0], dtype=np.int64)
    ps_room = min(server_caps(ps_free, ps_demand, ps_caps), UNBOUNDED)
    while count > 0 and ps_needed[count] > ps_room:
        count -= 1
    if count <= 0:
        return 0
    worker_caps = workers.copy()
    if not first_fit(count, worker_caps, workers) or not first_fit(ps_needed[count], ps_caps, parameter_servers):
        return 0
    take(worker_free, workers, worker_demand)
    take(ps_free, parameter_servers, ps_demand)
    return count


class RunJobs(NamedTuple):
    """Per job of a run (:class:`primaldual.oasis.lr.state.JobTables`): demands (n, R), demand profile (an index:
    jobs of one profile fit alike), and ``Z(D)`` for ``D = 0..`` at ``ps_needed[ps_start[i]:ps_start[i + 1]]``."""

    worker_demand: np.ndarray
    ps_demand: np.ndarray
    profile: np.ndarray
    ps_needed: np.ndarray
    ps_start: np.ndarray


class Growing(NamedTuple):
    """The jobs a plan grows (:func:`grow_plan`), in its order (job ``order[m]`` at position ``m``): the workers that
    finish each in the slot (``most``), the re-plan's cap (-1: none), the work left, whether it ran in the slot
    before (placement in ``previous_*``) and whether it holds a reservation (placement in ``block_*``)."""

    order: np.ndarray
    most: np.ndarray
    cap: np.ndarray
    work_left: np.ndarray
    kept: np.ndarray
    reserved: np.ndarray
    previous_workers: np.ndarray
    previous_ps: np.ndarray
    block_workers: np.ndarray
    block_ps: np.ndarray
    #: On several GPU types (else empty): each worker server's type, each job's fixed type (-1: none), its types
    #: fastest first (-1 after the last) and its work on each type.
    server_type: np.ndarray
    job_type: np.ndarray
    type_rank: np.ndarray
    type_work: np.ndarray


class Plan(NamedTuple):
    """A plan under way: the free amounts it takes from, per position the placement (``placed``: the job holds
    one, a running block from the start), the positions in the order they were placed (``count[0]`` of them)
    and the demand profiles with not one worker's room left (free only shrinks here)."""

    free_worker: np.ndarray
    free_ps: np.ndarray
    workers: np.ndarray
    parameter_servers: np.ndarray
    placed: np.ndarray
    sequence: np.ndarray
    count: np.ndarray
    no_room: np.ndarray


def fits(free: np.ndarray, counts: np.ndarray, demand: np.ndarray) -> bool:
    """Whether ``counts`` units per server of ``demand`` fit in ``free`` (within ``FIT_TOLERANCE``)."""
    for s in range(free.shape[0]):
        for r in range(free.shape[1]):
            if free[s, r] - counts[s] * demand[r] < -FIT_TOLERANCE:
                return False
    return True


def grow(free: tuple, demand: tuple, needed: np.ndarray, most: int, held: tuple) -> None:
    """``held = (workers, parameter_servers)`` (taken from ``free``) grown in place towards ``most`` workers with
    the PSs ``Z`` needs, first fit, the largest count that fits; existing units stay where they are."""
    workers, parameter_servers = held
    held_workers, held_ps = workers.sum(), parameter_servers.sum()
    worker_caps = np.empty(workers.shape[0], dtype=np.int64)
    ps_caps = np.empty(parameter_servers.shape[0], dtype=np.int64)
    server_caps(free[0], demand[0], worker_caps)
    server_caps(free[1], demand[1], ps_caps)
    added_workers, added_ps = np.empty_like(worker_caps), np.empty_like(ps_caps)
    for target in range(most, held_workers, -1):
        if first_fit(target - held_workers, worker_caps, added_workers) and \
                first_fit(max(0, needed[target] - held_ps), ps_caps, added_ps):
            take(free[0], added_workers, demand[0])
            take(free[1], added_ps, demand[1])
            workers += added_workers
            parameter_servers += added_ps
            return


def keep(free: tuple, demand: tuple, needed: np.ndarray, most: int, held: tuple, work_left: float,
         restart_cost: float) -> None:
    """A job's placement of the slot before taken again (no restart), grown only if the larger placement
    supplies more after its restart: ``(1 - F) D' > D``."""
    take(free[0], held[0], demand[0])
    take(free[1], held[1], demand[1])
    kept = float(held[0].sum())
    if kept < work_left - WORK_EPSILON:
        trial, grown = (free[0].copy(), free[1].copy()), (held[0].copy(), held[1].copy())
        grow(trial, demand, needed, most, grown)
        if float(grown[0].sum()) * (1.0 - restart_cost) > kept + WORK_EPSILON:
            free[0][:] = trial[0]
            free[1][:] = trial[1]
            held[0][:] = grown[0]
            held[1][:] = grown[1]


def grow_job(jobs: RunJobs, growing: Growing, plan: Plan, m: int, cap: int, restart_cost: float,
             stable: bool) -> None:
    """The job at position ``m`` grown into the plan's free capacity (:mod:`primaldual.oasis.lr.execution`: the
    stable and fresh plans). A profile that found no room is not searched again (``place_most`` finds nothing iff
    one worker with its ``Z(1)`` PSs does not fit, which only the profile decides); a job with a placement of its
    own still tries it. Gain of ``no_room``: 1.06x on ``paper``, 1.03x on a Philly week, measured on the Python plan
    before it was compiled (``examples/cache_ablation.py``, "no-room profiles searched", switches it off here)."""
    i = growing.order[m]
    profile, own = jobs.profile[i], stable and (growing.kept[m] or growing.reserved[m])
    if plan.no_room[profile] and not plan.placed[m] and not own:
        return
    most = growing.most[m] if cap < 0 else min(growing.most[m], cap)
    if most < 1:
        return
    free, demand = (plan.free_worker, plan.free_ps), (jobs.worker_demand[i], jobs.ps_demand[i])
    needed = jobs.ps_needed[jobs.ps_start[i]:jobs.ps_start[i + 1]]
    held = (plan.workers[m], plan.parameter_servers[m])
    if plan.placed[m]:  # a running block without restart costs: growing it is free
        grow(free, demand, needed, most, held)
        return
    if stable and growing.kept[m] and fits(free[0], growing.previous_workers[m], demand[0]) and \
            fits(free[1], growing.previous_ps[m], demand[1]):
        held[0][:] = growing.previous_workers[m]
        held[1][:] = growing.previous_ps[m]
        keep(free, demand, needed, most, held, growing.work_left[m], restart_cost)
    elif stable and growing.reserved[m] and fits(free[0], growing.block_workers[m], demand[0]) and \
            fits(free[1], growing.block_ps[m], demand[1]):
        held[0][:] = growing.block_workers[m]  # runs early on its block's placement: the block starts without a restart
        held[1][:] = growing.block_ps[m]
        take(free[0], held[0], demand[0])
        take(free[1], held[1], demand[1])
    elif plan.no_room[profile]:
        return
    elif place_most(free[0], free[1], demand[0], demand[1], most, needed, held[0], held[1]) == 0:
        plan.no_room[profile] = True
        return
    plan.placed[m] = True
    plan.sequence[plan.count[0]] = m
    plan.count[0] += 1


def grow_plan(jobs: RunJobs, growing: Growing, plan: Plan, restart_cost: float, stable: bool, capped: bool) -> None:
    """A slot's stable or fresh plan: the jobs of ``growing`` grown one after another (:func:`grow_job`). Under the
    re-plan's caps (``capped``), a first pass grows each job to at most its cap, and a second the jobs still
    without workers, uncapped."""
    if capped:
        for m in range(growing.order.shape[0]):
            grow_one(jobs, growing, plan, m, growing.cap[m], restart_cost, stable)
    for m in range(growing.order.shape[0]):
        if not (capped and plan.placed[m]):
            grow_one(jobs, growing, plan, m, -1, restart_cost, stable)


def grow_one(jobs: RunJobs, growing: Growing, plan: Plan, m: int, cap: int, restart_cost: float,
             stable: bool) -> None:
    """:func:`grow_job`; on several GPU types, with the worker servers of the other types hidden
    (:mod:`primaldual.oasis.lr.type_rule`) and ``no_room`` not kept (no room on one type says nothing of another's)."""
    if growing.server_type.shape[0] == 0:
        grow_job(jobs, growing, plan, m, cap, restart_cost, stable)
        return
    i = growing.order[m]
    gpu_type = choose_type(plan.free_worker, growing.server_type, jobs.worker_demand[i], growing.job_type[m],
                           growing.type_rank[m], growing.type_work[m], growing.most[m] if cap < 0 else cap)
    if gpu_type < 0:
        return
    saved = np.empty_like(plan.free_worker)
    hide_other_types(plan.free_worker, growing.server_type, gpu_type, saved)
    grow_job(jobs, growing, plan, m, cap, restart_cost, stable)
    show_other_types(plan.free_worker, growing.server_type, gpu_type, saved)
    plan.no_room[:] = False


class Market(NamedTuple):
    """The cell prices and free amounts an offer is priced at, (T, H, R) and (T, K, R), current from its slot on."""

    worker_prices: np.ndarray
    ps_prices: np.ndarray
    worker_free: np.ndarray
    ps_free: np.ndarray


class OfferedJob(NamedTuple):
    """A job offered in slot ``start`` with ``work`` worker-slots left: its demands, ``Z``'s most useful count
    (``ps_max``), the widest block it may get (``block_workers``: the most workers it can run on the empty
    cluster, at most ``work``) and ``utility[s] = f_i(start + s - a_i)`` for every slot to the horizon or to the
    end of its earliest block, whichever is later."""

    start: int
    work: int
    demand: Demand
    ps_max: int
    block_workers: int
    utility: np.ndarray


class OfferRules(NamedTuple):
    """What an offer is decided by besides the job and the prices: the horizon, the job's cost floor
    (:func:`primaldual.dual.cost_floor.cost_floor_of`), ``delta``, the restart cost, OASiS-P's bound, late
    blocks, and the first slot a block may start (:func:`primaldual.oasis.lr.admission.first_block_slot`)."""

    horizon: int
    floor: float
    delta: float
    restart_cost: float
    provable: bool
    late: bool
    earliest: int


#: How an offer ends (:func:`offer`): not admitted (``mu = 0``), admitted but no worker fits anywhere, admitted
#: with no block before its deadline (the caller may re-pack), a block found.
NO_OFFER, UNPLACED, NO_BLOCK, BLOCK = 0, 1, 2, 3


def latest_deadline(utility: np.ndarray, start: int, planned: int, horizon: int, delta: float) -> int:
    """The latest slot ``d`` in ``planned..horizon - 1`` with ``f(d - a) >= (1 - delta) f(planned - a)`` (within a
    relative 1e-12), else ``planned``; ``utility[s] = f(start + s - a)``."""
    target = (1.0 - delta) * utility[planned - start]
    for d in range(horizon - 1, planned - 1, -1):
        if utility[d - start] >= target * (1 - 1e-12):
            return d
    return planned


def offer(market: Market, reserved: Reserved, job: OfferedJob, rules: OfferRules, placement: tuple) -> tuple:
    """One offer up to its block (:mod:`primaldual.oasis.lr.admission`, "Admission"): ``(status, mu, deadline,
    target, first, last)``, the status one of :data:`NO_OFFER`, :data:`UNPLACED`, :data:`NO_BLOCK`, :data:`BLOCK`.
    The dual subroutine's answer first, as :func:`primaldual.dual.subroutine.best_schedule` gives it with the
    cost floor (the window empty, or finishing at full speed not paying the floor: ``mu = 0`` without a
    search); then, for ``mu > 0``, the deadline that keeps ``(1 - delta)`` of the later of the plan's completion
    and the end of the earliest block on an empty cluster, the payoff the block must keep (``target``) and the
    block itself (:func:`block_search`, placed in ``placement``)."""
    n_slots = max(rules.horizon - job.start, 0)
    utility = job.utility
    if cannot_pay(utility[:n_slots], job.work, job.demand.ps_needed.shape[0] - 1, rules.floor):
        return NO_OFFER, 0.0, -1, 0.0, -1, -1
    best, _, costs = search(market.worker_prices, market.ps_prices, market.worker_free, market.ps_free,
                            job.demand.worker, job.demand.ps, job.demand.ps_needed, job.ps_max, job.start, job.work,
                            utility[:n_slots], True, True, rules.floor)
    mu = max(0.0, utility[best] - costs[best]) if best >= 0 else 0.0
    if mu <= 0.0:
        return NO_OFFER, mu, -1, 0.0, -1, -1
    if job.block_workers < 1:
        return UNPLACED, mu, -1, 0.0, -1, -1
    planned = max(job.start + best, job.start + block_length(job.work, job.block_workers, rules.restart_cost) - 1)
    if planned - job.start >= utility.shape[0]:  # offered_job sizes the utility for this (compiled loops do not check)
        raise IndexError("offer: the job's utility does not reach the end of its earliest block")
    deadline = latest_deadline(utility, job.start, planned, rules.horizon, rules.delta)
    target = mu
    if not rules.provable:  # the plan's payoff less what the block's unavoidable delay costs the job
        target -= utility[best] - utility[planned - job.start]
    first, last = block_search(reserved, job.demand, float(job.work), rules.earliest, deadline, rules.restart_cost,
                               rules.late, placement)
    return (BLOCK if first >= 0 else NO_BLOCK), mu, deadline, target, first, last


def kernel_globals() -> dict:
    """What the compiled copy calls instead of this module's Python objects: the dual subroutine's compiled
    search."""
    from primaldual.dual import kernel, reference

    return {"search": kernel.compiled(reference).search}


#: The functions :mod:`primaldual.dual.kernel` compiles, callees before callers.
KERNEL_FUNCTIONS = ("units_that_fit", "unit_price", "cannot_pay", "server_caps", "first_fit", "take", "place_most",
                    "fits", "grow", "keep", "grow_job", "choose_type", "hide_other_types", "show_other_types",
                    "grow_one", "grow_plan",
                    "block_length", "slot_units", "window_minima", "window_that_fits", "fill", "find_block",
                    "block_search", "latest_deadline", "offer", "pool_cost", "block_cost")

__all__ = ["BLOCK", "KERNEL_FUNCTIONS", "NO_BLOCK", "NO_LIMIT", "NO_OFFER", "UNBOUNDED", "UNPLACED", "Demand",
           "Growing", "Market", "OfferRules", "OfferedJob", "Plan", "Reserved", "RunJobs", "block_cost", "block_length",
           "block_search", "fill", "find_block", "first_fit", "fits", "grow", "grow_job", "grow_one", "grow_plan", "keep",
           "kernel_globals", "latest_deadline", "offer", "place_most", "pool_cost", "server_caps", "slot_units", "take",
           "window_minima", "window_that_fits"]
