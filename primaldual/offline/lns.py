"""Ruin and recreate: a local search that improves a feasible schedule until a deadline (issue 64's incumbent).

Price-and-branch's 0-1 program over the master's columns rarely beats its start on a heterogeneous trace week
(docs/bounds.md): HiGHS's presolve loses the start there, and its root LP takes most of its time. This search
works on schedules directly. Each **move** picks a random slot, takes out up to :data:`RUIN_JOBS` of the jobs
running in it (random ones), and offers them, with up to :data:`RUIN_JOBS` random jobs not in the schedule, in
random order, the dual subroutine's best schedule on the capacity left
(:func:`primaldual.dual.subroutine.best_schedule`, the residual as the free amounts) at the given prices
(column generation's duals, where capacity is scarce) times a random scale in :data:`SCALES`; a job keeps its
offer when it pays (``mu > 0``). The move is kept when the utility rises, otherwise undone. The seeded
generator makes a run repeatable up to where the deadline stops it.

**Correctness.** The residual of every (slot, server, resource) cell is the capacity minus what the kept jobs
use (recomputed exactly after every kept move, restored from a copy after every undone one); each offer is
placed within it, so the schedule respects (4)-(5) after every move, and each job's schedule is the
subroutine's own or the start's, so (6)-(13) hold job by job. The utility never falls. The caller keeps the
result only when it beats its incumbent, and the solver verifies every schedule it returns
(:func:`primaldual.offline.solve.solve_offline`). No bound is read or changed.

**Cost.** A move is at most ``2 x RUIN_JOBS`` subroutine calls (a few ms each on a 168-slot week) and one
residual update; the search stops at the deadline, checked before every call.
"""

from __future__ import annotations

import time

import numpy as np

from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.dual.subroutine import best_schedule

#: At most this many jobs leave the schedule in a move, and at most this many jobs not in it are offered.
RUIN_JOBS = 8

#: The range of the random factor on the prices of a move's offers (lower prices admit more).
SCALES = (0.5, 2.0)


def residual_of(instance: Instance, chosen: dict) -> list:
    """The worker (T, H, R) and PS (T, K, R) amounts ``chosen``'s per-server schedules leave."""
    cluster = instance.cluster
    residual = [np.array(cluster.worker_capacity, dtype=float)[None].repeat(instance.horizon, axis=0),
                np.array(cluster.ps_capacity, dtype=float)[None].repeat(instance.horizon, axis=0)]
    for i, schedule in chosen.items():
        use_cells(instance, i, schedule, residual, -1.0)
    return residual


def use_cells(instance: Instance, i: int, schedule, residual: list, sign: float) -> None:
    """Add ``sign`` times job ``i``'s use of every cell to ``residual``, in place."""
    job = instance.jobs[i]
    residual[0] += sign * schedule.workers[:, :, None] * np.asarray(job.worker_demand, dtype=float)[None, None]
    residual[1] += sign * schedule.parameter_servers[:, :, None] * np.asarray(job.ps_demand, dtype=float)[None, None]


def job_utility(instance: Instance, i: int, schedule) -> float:
    """``f_i(t_i - a_i)`` of job ``i``'s schedule (0 if it does not complete)."""
    completion, job = schedule.completion_slot(), instance.jobs[i]
    return 0.0 if completion is None else float(job.utility(completion - job.arrival))


def _recreate(instance: Instance, candidates, prices: tuple, residual: list, deadline: float | None):
    """Offer each candidate its best schedule on ``residual`` (updated in place); the offers kept, or None at the
    deadline."""
    offers = {}
    for i in candidates:
        if deadline is not None and time.time() > deadline:
            return None
        schedule = offer_on(instance, int(i), prices, residual)
        if schedule is not None:
            offers[int(i)] = schedule
            use_cells(instance, int(i), schedule, residual, -1.0)
    return offers


def offer_on(instance: Instance, i: int, prices: tuple, residual: list, objective: str = "payoff"):
    """The subroutine's best schedule of job ``i`` on ``residual`` at ``prices``; None when there is none, it
    does not complete, or (``objective="payoff"``) it does not pay."""
    result = best_schedule(instance, int(i), prices[0], prices[1], np.maximum(residual[0], 0.0),
                           np.maximum(residual[1], 0.0), objective=objective)
    if result.schedule is None or (objective == "payoff" and result.mu <= 0):
        return None
    return None if result.schedule.completion_slot() is None else result.schedule


def ruin_and_recreate(instance: Instance, schedule: Schedule, jobs, prices: tuple, deadline: float | None,
                      seed: int = 0, max_moves: int | None = None) -> tuple[Schedule, float, int]:
    """Improve ``schedule`` (feasible, per server) by the moves of the module docstring over ``jobs`` (those that
    may be offered) at ``prices`` ((T, H, R), (T, K, R)) until ``deadline`` (``time.time()``) or ``max_moves``;
    returns (the schedule, its utility, how many moves were kept)."""
    rng = np.random.default_rng(seed)
    chosen = dict(schedule.assignments)
    utility = {i: job_utility(instance, i, s) for i, s in chosen.items()}
    residual = residual_of(instance, chosen)
    kept, moves, jobs = 0, 0, [int(i) for i in jobs]
    while (deadline is None or time.time() < deadline) and (max_moves is None or moves < max_moves) and chosen:
        moves += 1
        slot = int(rng.integers(instance.horizon))
        running = [i for i, s in chosen.items() if s.workers[slot].any()]
        removed = [running[k] for k in rng.permutation(len(running))[:RUIN_JOBS]]
        outside = [i for i in jobs if i not in chosen]
        added = [outside[k] for k in rng.permutation(len(outside))[:RUIN_JOBS]]
        candidates = [(removed + added)[k] for k in rng.permutation(len(removed) + len(added))]
        scale = rng.uniform(*SCALES)
        saved = [r.copy() for r in residual]
        for i in removed:
            use_cells(instance, i, chosen[i], residual, 1.0)
        offers = _recreate(instance, candidates, (scale * prices[0], scale * prices[1]), residual, deadline)
        gain = None if offers is None else (sum(job_utility(instance, i, s) for i, s in offers.items())
                                            - sum(utility[i] for i in removed))
        if gain is None or gain <= 1e-9:
            residual = saved
            continue
        kept += 1
        for i in removed:
            del chosen[i], utility[i]
        for i, s in offers.items():
            chosen[i], utility[i] = s, job_utility(instance, i, s)
        residual = residual_of(instance, chosen)
    return Schedule(chosen), float(sum(utility.values())), kept


__all__ = ["RUIN_JOBS", "SCALES", "job_utility", "offer_on", "residual_of", "ruin_and_recreate", "use_cells"]
