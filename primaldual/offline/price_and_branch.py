"""Column generation then price-and-branch: an interval ``[objective, bound]`` on OPT at the paper's scale.

:func:`column_generation_solve` seeds the restricted master of :mod:`primaldual.offline.column_generation` with the
verified online schedules it is given (``seeds``, :class:`primaldual.offline.options.OnlineSeed`; a seed's
certified bound, OASiS's dual objective, is the first bound), runs stabilised column generation until the master's
LP value meets the best Lagrangian bound or the column-generation share of the time is spent, then solves the
master as a 0-1 program over the generated columns (price-and-branch). The schedule found is feasible for
(1)-(13) because every column is a whole schedule of one job and the master's rows are the capacities (15)-(16);
:func:`primaldual.offline.solve.solve_offline` verifies it anyway.

It returns a :class:`~primaldual.offline.outcome.ColumnGenerationRun` (plain data: it may run in a child
process, see :mod:`primaldual.offline.child`) and reports its progress as events: an
:class:`~primaldual.offline.outcome.Incumbent` with each better schedule, a
:class:`~primaldual.offline.outcome.BoundImproved` with each better certified bound, a
:class:`~primaldual.offline.outcome.ProgressLine` per round.

Termination: each round either improves nothing that matters and stops with a
:class:`~primaldual.offline.outcome.Stop` reason, or adds columns; there are finitely many columns, and
every round is capped by the column-generation share of the time limit. Cost per round: one warm-started LP
of the master and one dual subroutine per job (:func:`primaldual.offline.column_generation.price_all`).
"""

from __future__ import annotations

import time

import numpy as np

from primaldual.offline.column_generation import (
    LP_TOLERANCE, REDUCED_COST_TOLERANCE, SMOOTHING, Cells, RestrictedMaster, place_on_servers, price_all,
    reduced_cost)
from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.offline.outcome import (
    BoundImproved, ColumnGenerationRun, Incumbent, Notify, Phase, ProgressLine, Stop, ignore)

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
            notify(Incumbent(_assignments(best), best_utility, None))
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
        notify(BoundImproved(bound, "pooled LP relaxation"))
    point = np.concatenate([worker_prices.ravel(), ps_prices.ravel()])
    priced = price_all(cells, master.jobs, point, deadline)
    if not priced.complete:
        return bound, None, float("inf")
    master.add(priced.columns)
    if priced.bound < bound:
        bound = priced.bound
        notify(BoundImproved(bound, "pricing at the pooled LP's duals"))
    return bound, point, priced.bound


class _Generation:
    """The column-generation loop's working state, and one round of it (:meth:`step`).

    The loop's termination rule: :meth:`run` repeats :meth:`step` until a step returns a
    :class:`~primaldual.offline.outcome.Stop` reason. A step either stops, or solves the master LP and adds
    the columns that price out, or (once) moves the end of the column-generation share to the deadline when
    price-and-branch could not gain anything anyway."""

    def __init__(self, cells: Cells, master: RestrictedMaster, *, bound: float, centre, best_lagrangian: float,
                 best_utility: float, until: float | None, deadline: float | None, notify: Notify, started: float):
        self.cells, self.master, self.notify, self.started = cells, master, notify, started
        self.bound, self.centre, self.best_lagrangian, self.best_utility = bound, centre, best_lagrangian, best_utility
        self.until, self.deadline = until, deadline
        self.rounds, self.lp_value, self.alpha, self.extended = 0, None, SMOOTHING, False

    def run(self) -> Stop:
        stop = None
        while stop is None:
            stop = self.step()
        return stop

    def step(self) -> Stop | None:
        if self.until is not None and time.time() > self.until:
            return self._share_spent()
        optimal, value, duals, mu = self.master.solve_lp(
            None if self.until is None else max(0.1, self.until - time.time()))
        if not optimal:
            if not self.extended and self.until is not None and time.time() >= self.until:
                return None  # stopped at the share's end: the next step may hand it the branching time
            return Stop.LP_STOPPED  # a simplex stopped early has neither a master value nor usable duals
        self.lp_value = value
        if self.bound - value <= LP_TOLERANCE * max(1.0, abs(self.bound)):
            return Stop.BOUND_MET
        return self._price(duals, mu)

    def _share_spent(self) -> Stop | None:
        if self.extended or self.deadline is None or not _branching_is_pointless(
                self.lp_value, self.best_utility, self.bound):
            return Stop.TIME_SPENT
        # Price-and-branch cannot beat the incumbent: its share of the time goes to the bound instead.
        self.until, self.extended = self.deadline - MIN_BRANCH_SECONDS, True
        return None

    def _price(self, duals: np.ndarray, mu) -> Stop | None:
        """One pricing round at the smoothed prices: a Lagrangian bound, and the columns that enter."""
        point = duals if self.centre is None or self.alpha == 0 else self.alpha * self.centre + (1 - self.alpha) * duals
        priced = price_all(self.cells, self.master.jobs, point, self.until)
        if not priced.complete:
            return Stop.PRICING_STOPPED
        self.rounds += 1
        if priced.bound < self.best_lagrangian:
            self.best_lagrangian, self.centre = priced.bound, point
        if priced.bound < self.bound:
            self.bound = priced.bound
            self.notify(BoundImproved(self.bound, f"round {self.rounds}"))
        added = self.master.add(c for c in priced.columns if reduced_cost(c, duals, mu) > REDUCED_COST_TOLERANCE)
        self.notify(ProgressLine(
            f"column generation round {self.rounds}: bound {self.bound:.6g}, master LP {self.lp_value:.6g}, "
            f"incumbent {self.best_utility:.6g}, {len(self.master.columns)} columns, "
            f"{time.time() - self.started:.0f} s"))
        if added == 0:
            if self.alpha == 0:
                return Stop.NO_ENTERING_COLUMN
            self.alpha = 0.0  # a mis-pricing: price at the master's duals next round
        else:
            self.alpha = SMOOTHING
        return None


def _price_and_branch(instance: Instance, master: RestrictedMaster, generation: _Generation, best: Schedule,
                      deadline: float | None, notify: Notify) -> tuple[Schedule, float, str, float]:
    """The master over the generated columns as a 0-1 program, when the time left and the LP value allow
    it; returns (best schedule, its utility, what price-and-branch did, its seconds)."""
    best_utility = generation.best_utility
    left = None if deadline is None else deadline - time.time()
    if left is not None and left < MIN_BRANCH_SECONDS:
        return best, best_utility, f"not run: {max(left, 0.0):.1f} s left", 0.0
    if _branching_is_pointless(generation.lp_value, best_utility, generation.bound):
        # A 0-1 solution over the master's columns is worth at most the master's LP value.
        return best, best_utility, "not run: the master LP exceeds the incumbent by under 1% of the gap", 0.0
    notify(Phase("solving the price-and-branch program"))
    started = time.time()
    # HiGHS's MIP may overrun its limit by up to half of it (root LP, presolve): ask for half.
    chosen, mip_status = master.solve_integer(
        UNLIMITED_BRANCH_SECONDS if left is None else (left - MIN_BRANCH_SECONDS / 2) / 2, best)
    mip_seconds = time.time() - started
    if chosen is not None:
        schedule = place_on_servers(instance, chosen.assignments)
        # The parent verifies the returned schedule; here only its value is needed, to pick the better.
        value = sum(float(instance.jobs[i].utility(s.completion_slot() - instance.jobs[i].arrival))
                    for i, s in schedule.assignments.items())
        if value > best_utility:
            best, best_utility = schedule, value
    return best, best_utility, mip_status, mip_seconds


def column_generation_solve(instance: Instance, jobs, *, deadline: float | None = None, notify: Notify | None = None,
                            threads: int | None = None, integer: bool = True,
                            share: float = COLUMN_GENERATION_SHARE, seeds=()) -> ColumnGenerationRun:
    """Stabilised column generation, then (``integer=True``) price-and-branch; see the module docstring.

    ``deadline`` is an absolute ``time.time()``; column generation stops at ``share`` of the time left, and
    price-and-branch gets the rest. ``notify(event)``, if given, receives the progress events.
    """
    notify = notify or ignore
    started = time.time()
    notify(Phase("seeding the master with the online schedulers' schedules"))
    cells = Cells(instance)
    master = RestrictedMaster(cells, jobs, threads=threads, aggregate=True)
    best, best_utility, seed_utilities, bound = _seed(cells, master, seeds, notify)
    seed_seconds = time.time() - started
    bound = float("inf") if bound is None else bound
    if bound < float("inf"):
        notify(BoundImproved(bound, "oasis certificate"))
    notify(Phase("solving the pooled LP relaxation"))
    pooled_started = time.time()
    # The first stability centre is the pooled LP's duals, not OASiS's prices: those give a valid but loose
    # bound, a poor centre to smooth towards.
    bound, centre, best_lagrangian = _pooled_start(instance, cells, master, bound, deadline, threads, notify)
    pooled_seconds = time.time() - pooled_started
    notify(Phase("generating columns"))
    generation = _Generation(
        cells, master, bound=bound, centre=centre, best_lagrangian=best_lagrangian, best_utility=best_utility,
        until=None if deadline is None else time.time() + share * max(0.0, deadline - time.time()),
        deadline=deadline, notify=notify, started=started)
    stop = generation.run()
    cg_seconds = time.time() - started - seed_seconds - pooled_seconds
    mip_status, mip_seconds = "not run", 0.0
    if integer:
        best, best_utility, mip_status, mip_seconds = _price_and_branch(
            instance, master, generation, best, deadline, notify)
    return ColumnGenerationRun(
        bound=generation.bound, lp_value=generation.lp_value, assignments=_assignments(best), objective=best_utility,
        rounds=generation.rounds, columns=len(master.columns), rows=master.n_rows, stop=stop, seeds=seed_utilities,
        seed_seconds=seed_seconds, pooled_seconds=pooled_seconds, cg_seconds=cg_seconds, mip_seconds=mip_seconds,
        mip_status=mip_status)


__all__ = ["COLUMN_GENERATION_SHARE", "column_generation_solve"]
