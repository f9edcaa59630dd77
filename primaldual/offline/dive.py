"""A schedule from the restricted master's LP solution: round it, then repair (a "dive"), before price-and-branch.

Price-and-branch's 0-1 program over the master's columns may reach its time limit without beating its start (on
a heterogeneous trace week, docs/bounds.md). The master's LP solution already says which schedule of each job
the relaxation wants; :func:`master_dive` turns it into a schedule in two steps:

1. **Round.** The columns with a positive LP value, in decreasing order of it (ties: the higher utility), each
   job at most once: a column is kept when its per-slot counts fit on what the columns kept before it left
   (:func:`primaldual.offline.first_fit.place_job`, each slot on the servers of the type it ran on).
2. **Repair.** Every job left out, in decreasing order of its LP value (then its index), gets the dual
   subroutine's best schedule on the capacity left (:func:`primaldual.dual.subroutine.best_schedule` with the
   residual as the free amounts), at the master's last duals or by utility alone with the duals breaking
   ties (:data:`REPAIRS`), and keeps it when that pays (``mu > 0``, or any schedule when by utility).

:func:`search_incumbent` runs it, then improves the better of its schedule and the incumbent by ruin and
recreate (:mod:`primaldual.offline.lns`) until its deadline.

**Correctness.** Every job's schedule is placed within the residual of every (slot, server, resource) cell and
the residual is reduced by exactly what it uses, so the union respects (4)-(5); each schedule is a column's (a
schedule of (6)-(13), re-placed on servers slot by slot) or the subroutine's own. The result is only ever a
candidate: the caller keeps it when it beats the incumbent, and the solver verifies every schedule it returns
(:func:`primaldual.offline.solve.solve_offline`). Nothing here touches a bound.

**Cost.** Rounding: one placement per column with a positive value (O(slots x servers x resources) each).
Repair: one subroutine call per job and objective, about a pricing round of column generation.
Every step stops at the deadline and returns the best schedule complete by then.
"""

from __future__ import annotations

import time

import numpy as np

from primaldual.core.instance import Instance
from primaldual.core.metrics import compute_metrics
from primaldual.core.schedule import Schedule
from primaldual.offline.first_fit import place_job
from primaldual.offline.lns import offer_on, residual_of, ruin_and_recreate, use_cells

#: A column's LP value above which rounding considers it.
DIVE_VALUE = 1e-6

#: The repair's objectives: ``"payoff"`` at the master's duals, ``"utility"`` with the duals breaking ties.
REPAIRS = ("payoff", "utility")


def round_master(instance: Instance, columns, values: np.ndarray, deadline: float | None) -> tuple:
    """Step 1 of the module docstring: (the kept jobs' per-server schedules, the residual), or None at the
    deadline."""
    residual = residual_of(instance, {})
    chosen = {}
    order = sorted((j for j in range(len(columns)) if values[j] > DIVE_VALUE),
                   key=lambda j: (-values[j], -columns[j].utility, j))
    for j in order:
        if deadline is not None and time.time() > deadline:
            return None
        column = columns[j]
        if column.job in chosen:
            continue
        fitted = place_job(instance, column.job, column.schedule, residual)
        if fitted is not None:
            chosen[column.job], residual = fitted
    return chosen, residual


def _repair(instance: Instance, chosen: dict, residual: list, order, prices: tuple, objective: str,
            deadline: float | None) -> bool:
    """Step 2: offer each job of ``order`` not in ``chosen`` a schedule on ``residual``; both are updated in
    place. False if the deadline passed first."""
    for i in order:
        if i in chosen:
            continue
        if deadline is not None and time.time() > deadline:
            return False
        schedule = offer_on(instance, i, prices, residual, objective)
        if schedule is not None:
            chosen[i] = schedule
            use_cells(instance, i, schedule, residual, -1.0)
    return True


def master_dive(instance: Instance, columns, values: np.ndarray, prices: tuple,
                deadline: float | None = None) -> tuple[Schedule, float] | None:
    """The best schedule of the module docstring's steps over the master's ``columns`` at LP ``values`` and
    the master's duals ``prices`` ((T, H, R), (T, K, R)), and its utility; None if the deadline passed before
    one was complete."""
    rounded = round_master(instance, columns, values, deadline)
    if rounded is None:
        return None
    weight = {}
    for column, value in zip(columns, values):
        weight[column.job] = weight.get(column.job, 0.0) + float(value)
    jobs = sorted({c.job for c in columns} | set(rounded[0]))
    order = sorted(jobs, key=lambda i: (-weight.get(i, 0.0), i))
    best = None
    for objective in REPAIRS:
        chosen, residual = dict(rounded[0]), [r.copy() for r in rounded[1]]
        if not _repair(instance, chosen, residual, order, prices, objective, deadline):
            break
        utility = compute_metrics(instance, Schedule(chosen)).utility
        if best is None or utility > best[1]:
            best = (Schedule(dict(chosen)), utility)
    return best


def search_incumbent(instance: Instance, columns, values, prices: tuple, incumbent: tuple[Schedule, float],
                     jobs, deadline: float | None, max_moves: int | None = None) -> tuple | None:
    """The dive (:func:`master_dive`, skipped without LP ``values``), then ruin and recreate
    (:func:`primaldual.offline.lns.ruin_and_recreate`, at ``prices``, over ``jobs``) from the better of its
    schedule and the ``incumbent`` (schedule, utility) until ``deadline`` (or ``max_moves``): (schedule,
    utility, where it comes from) when worth more than the incumbent, else None."""
    (start, utility), origin = incumbent, None
    found = None if values is None else master_dive(instance, columns, values, prices, deadline)
    if found is not None and found[1] > utility:
        start, utility, origin = found[0], found[1], "dive from the master's LP"
    searched, value, kept = ruin_and_recreate(instance, start, jobs, prices, deadline, max_moves=max_moves)
    if kept and value > utility:
        start, utility = searched, value
        origin = "ruin and recreate" + ("" if origin is None else " after a dive from the master's LP")
    return None if origin is None else (start, utility, origin)


__all__ = ["DIVE_VALUE", "REPAIRS", "master_dive", "round_master", "search_incumbent"]
