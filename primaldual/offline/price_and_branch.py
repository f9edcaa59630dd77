"""Column generation then price-and-branch: an interval ``[objective, bound]`` on OPT at the paper's scale.

:func:`column_generation_solve` seeds the restricted master of :mod:`primaldual.offline.column_generation` with the
verified online schedules it is given (``seeds``, :class:`primaldual.offline.options.OnlineSeed`; a seed's
certified bound, OASiS's dual objective, is the first bound), runs stabilised column generation until the master's
LP value meets the best Lagrangian bound or the column-generation share of the time is spent, then solves the
master as a 0-1 program over the generated columns (price-and-branch). The schedule found is feasible for
(1)-(13) because every column is a whole schedule of one job and the master's rows are the capacities (15)-(16);
:func:`primaldual.offline.solve.solve_offline` verifies it anyway.

It returns plain data (it may run in a child process, see :mod:`primaldual.offline.child`) and reports its
progress through ``notify(kind, data)``: ``"incumbent"`` with the best schedule so far, ``"bound"`` with the best
certified bound so far, ``"progress"`` with a line of text per round.
"""

from __future__ import annotations

import time

import numpy as np

from primaldual.offline.column_generation import (
    LP_TOLERANCE, REDUCED_COST_TOLERANCE, SMOOTHING, Cells, RestrictedMaster, place_on_servers, price_all,
    reduced_cost)
from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.core.verify import verify

#: Share of the time limit column generation may use before price-and-branch starts.
COLUMN_GENERATION_SHARE = 0.65

#: Price-and-branch is skipped with less time left than this (placing and returning the schedule take time
#: too), and leaves half of it for them.
MIN_BRANCH_SECONDS = 2.0

#: Price-and-branch's time limit when the call has none (a 0-1 program over thousands of columns may not finish).
UNLIMITED_BRANCH_SECONDS = 120.0

#: Share of the time left (after seeding) the pooled LP relaxation may take (:func:`_pooled_start`).
POOLED_LP_SHARE = 0.4


def _assignments(schedule: Schedule) -> dict:
    return {i: (np.asarray(s.workers), np.asarray(s.parameter_servers)) for i, s in schedule.assignments.items()}


def _seed(cells: Cells, master: RestrictedMaster, seeds, notify):
    """Add the seeds' columns in their order; return (best schedule, its utility, utility per seed, the best
    certified bound among them or None)."""
    best, best_utility, utilities, bound = Schedule({}), 0.0, {}, None
    for seed in seeds:
        if seed.certified_bound is not None:
            bound = seed.certified_bound if bound is None else min(bound, seed.certified_bound)
        utilities[seed.name] = float(seed.utility)
        master.add(cells.column(i, s) for i, s in seed.schedule.assignments.items())
        if seed.utility > best_utility:
            best, best_utility = seed.schedule, float(seed.utility)
            notify("incumbent", {"assignments": _assignments(best), "objective": best_utility, "bound": None})
    return best, best_utility, utilities, bound


#: Price-and-branch is skipped when the most it can gain is below this share of the gap to the bound.
BRANCH_GAIN_SHARE = 0.01


def _branching_is_pointless(lp_value, best_utility: float, bound: float) -> bool:
    """Whether the master's LP value exceeds the incumbent by less than :data:`BRANCH_GAIN_SHARE` of the gap
    (or not at all): a 0-1 solution over the master's columns is worth at most the LP value, so
    price-and-branch could close almost none of the gap, and the time is better spent on the bound."""
    if lp_value is None:
        return False
    gap = max(0.0, bound - best_utility) if bound < float("inf") else 0.0
    return lp_value - best_utility <= max(LP_TOLERANCE * max(1.0, best_utility), BRANCH_GAIN_SHARE * gap)


def _pooled_start(instance, cells, master, bound, deadline, threads, notify) -> tuple:
    """The pooled LP relaxation's value (an upper bound on OPT) and its duals as the first prices: their
    columns enter the master and, priced, they give a Lagrangian bound and the first stability centre.
    Returns (best bound, centre or None, best Lagrangian bound); skipped when the LP does not finish within
    :data:`POOLED_LP_SHARE` of the time left."""
    from primaldual.offline.pooled import pooled_lp_prices

    if deadline is not None and time.time() >= deadline:
        return bound, None, float("inf")
    left = None if deadline is None else max(0.1, POOLED_LP_SHARE * (deadline - time.time()))
    pooled = pooled_lp_prices(instance, left, threads)
    if pooled is None:
        return bound, None, float("inf")
    pooled_bound, worker_prices, ps_prices = pooled
    if pooled_bound < bound:
        bound = pooled_bound
        notify("bound", {"bound": bound, "source": "pooled LP relaxation"})
    point = np.concatenate([worker_prices.ravel(), ps_prices.ravel()])
    priced = price_all(cells, master.jobs, point, deadline)
    if not priced.complete:
        return bound, None, float("inf")
    master.add(priced.columns)
    if priced.bound < bound:
        bound = priced.bound
        notify("bound", {"bound": bound, "source": "pricing at the pooled LP's duals"})
    return bound, point, priced.bound


def column_generation_solve(instance: Instance, jobs, *, deadline: float | None = None, notify=None,
                            threads: int | None = None, integer: bool = True,
                            share: float = COLUMN_GENERATION_SHARE, seeds=()) -> dict:
    """Stabilised column generation, then (``integer=True``) price-and-branch; see the module docstring.

    ``deadline`` is an absolute ``time.time()``; column generation stops at ``share`` of the time left, and
    price-and-branch gets the rest. Returns ``bound`` (the best Lagrangian bound, +inf if no round completed),
    ``lp_value`` (the master's last LP value), ``assignments`` of the best schedule, ``rounds``, ``columns``,
    ``converged``, ``seeds`` (utility per seeding scheduler) and timings.
    """
    notify = notify or (lambda kind, data: None)
    started = time.time()
    notify("phase", "seeding the master with the online schedulers' schedules")
    cells = Cells(instance)
    master = RestrictedMaster(cells, jobs, threads=threads, aggregate=True)
    best, best_utility, seeds, bound = _seed(cells, master, seeds, notify)
    centre = None  # OASiS's prices give a valid but loose bound: a poor centre to smooth towards
    seed_seconds = time.time() - started
    bound = float("inf") if bound is None else bound
    if bound < float("inf"):
        notify("bound", {"bound": bound, "source": "oasis certificate"})
    notify("phase", "solving the pooled LP relaxation")
    pooled_started = time.time()
    bound, centre, best_lagrangian = _pooled_start(instance, cells, master, bound, deadline, threads, notify)
    pooled_seconds = time.time() - pooled_started
    notify("phase", "generating columns")
    cg_until = None if deadline is None else time.time() + share * max(0.0, deadline - time.time())
    rounds, lp_value, converged, alpha = 0, None, False, SMOOTHING
    extended = False
    while True:
        if cg_until is not None and time.time() > cg_until:
            if extended or not _branching_is_pointless(lp_value, best_utility, bound) or deadline is None:
                break
            # Price-and-branch cannot beat the incumbent: its share of the time goes to the bound instead.
            cg_until, extended = deadline - MIN_BRANCH_SECONDS, True
            continue
        optimal, value, duals, mu = master.solve_lp(None if cg_until is None else max(0.1, cg_until - time.time()))
        if not optimal:
            if not extended and cg_until is not None and time.time() >= cg_until:
                continue  # stopped at the share's end: the check above may hand it the branching time
            break  # a simplex stopped early has neither a master value nor usable duals
        lp_value = value
        if bound - lp_value <= LP_TOLERANCE * max(1.0, abs(bound)):
            converged = True
            break
        point = duals if centre is None or alpha == 0 else alpha * centre + (1 - alpha) * duals
        priced = price_all(cells, master.jobs, point, cg_until)
        if not priced.complete:
            break
        rounds += 1
        if priced.bound < best_lagrangian:
            best_lagrangian, centre = priced.bound, point
        if priced.bound < bound:
            bound = priced.bound
            notify("bound", {"bound": bound, "source": f"round {rounds}"})
        entering = [c for c in priced.columns if reduced_cost(c, duals, mu) > REDUCED_COST_TOLERANCE]
        added = master.add(entering)
        notify("progress", f"column generation round {rounds}: bound {bound:.6g}, master LP {lp_value:.6g}, "
                           f"incumbent {best_utility:.6g}, {len(master.columns)} columns, "
                           f"{time.time() - started:.0f} s")
        if added == 0:
            if alpha == 0:
                converged = True  # no column prices out at the master's own duals: the master LP is optimal
                break
            alpha = 0.0  # a mis-pricing: price at the master's duals next round
        else:
            alpha = SMOOTHING
    cg_seconds = time.time() - started - seed_seconds - pooled_seconds
    mip_status, mip_seconds = "not run", 0.0
    left = None if deadline is None else deadline - time.time()
    if integer and left is not None and left < MIN_BRANCH_SECONDS:
        mip_status = f"not run: {max(left, 0.0):.1f} s left"
    elif integer and _branching_is_pointless(lp_value, best_utility, bound):
        # A 0-1 solution over the master's columns is worth at most the master's LP value.
        mip_status = "not run: the master LP exceeds the incumbent by under 1% of the gap"
    elif integer:
        notify("phase", "solving the price-and-branch program")
        mip_started = time.time()
        # HiGHS's MIP may overrun its limit by up to half of it (root LP, presolve): ask for half.
        chosen, mip_status = master.solve_integer(
            UNLIMITED_BRANCH_SECONDS if left is None else (left - MIN_BRANCH_SECONDS / 2) / 2, best)
        mip_seconds = time.time() - mip_started
        if chosen is not None:
            schedule = place_on_servers(instance, chosen.assignments)
            # The parent verifies the returned schedule; here only its value is needed, to pick the better.
            value = sum(float(instance.jobs[i].utility(s.completion_slot() - instance.jobs[i].arrival))
                        for i, s in schedule.assignments.items())
            if value > best_utility:
                best, best_utility = schedule, value
    return {
        "bound": bound, "lp_value": lp_value, "assignments": _assignments(best), "objective": best_utility,
        "rounds": rounds, "columns": len(master.columns), "rows": master.n_rows, "converged": converged,
        "seeds": seeds, "seed_seconds": seed_seconds, "pooled_seconds": pooled_seconds, "cg_seconds": cg_seconds,
        "mip_seconds": mip_seconds, "mip_status": mip_status,
    }


__all__ = ["COLUMN_GENERATION_SHARE", "column_generation_solve"]
