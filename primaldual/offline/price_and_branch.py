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
from dataclasses import dataclass

import numpy as np

from primaldual.offline.column_generation import (
    DEFAULT_SIMPLEX_STRATEGY, LP_TOLERANCE, MASTER_SIMPLEX_STRATEGY, REDUCED_COST_TOLERANCE, SMOOTHING, Cells,
    RestrictedMaster, column_key, price_all, reduced_cost)
from primaldual.offline.cg_starts import assignments_of, greedy_start, pooled_start
from primaldual.offline.first_fit import place_on_servers
from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.metrics import compute_metrics
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

#: Above this many possible master rows (jobs plus aggregated capacity rows) the master LP is solved by the
#: interior point method (:attr:`Levers.interior_master`): a trace week has a few thousand and the whole
#: 1,843-job x 1,163-slot VC of philly:1/6214e9 11,147 (both converge with the primal simplex), the whole 1,993-job
#: x 2,445-slot VC of philly:1/11cb48 21,553 (the simplex's re-solves grow to tens of seconds there).
INTERIOR_MASTER_ROWS = 12_000


@dataclass(frozen=True)
class Levers:
    """The choices that make column generation and price-and-branch stronger, one switch each so that the
    ablation in ``docs/measurements.md`` ("Offline strength") can turn them off one at a time. None changes
    what is certified: the bound is a Lagrangian bound at whatever prices are priced, and every schedule is
    verified.

    ``simplex_strategy``: HiGHS's simplex for the master LP
    (:data:`~primaldual.offline.column_generation.MASTER_SIMPLEX_STRATEGY`, the primal simplex, re-solves from
    the previous basis after columns are added). ``dual_pricing``: each round prices at the master's own duals
    as well as at the smoothed point, so the columns that enter are the ones with the best reduced cost and a
    round never has to be repeated after a mis-pricing. ``greedy_start``: a schedule built at the pooled LP's
    prices (:func:`primaldual.offline.price_greedy.price_greedy`) joins the master and is the incumbent if it
    beats the online schedules. ``mip_presolve``: HiGHS's presolve on price-and-branch's 0-1 program (it
    does not stop at the time limit, see
    :meth:`~primaldual.offline.column_generation.RestrictedMaster.solve_integer`, but on trace windows it is
    what proves the optimum).

    ``interior_master``: the master LP by the interior point method without crossover (None: on above
    :data:`INTERIOR_MASTER_ROWS` rows). The simplex re-solves from the last basis, but on a whole VC's master
    (19,108 rows) each re-solve took longer as columns entered (0.7, 3.9, 7.7, 17.1 s over four rounds), where
    the interior point started afresh took 1.6, 3.4, 5.7, 8.6 s, and its duals, central rather than a vertex's,
    gave better Lagrangian bounds (44,934 against 49,625 at the first round; docs/measurements.md, issue 63).
    Without crossover the master's value is optimal only to the solver's tolerance, which certifies nothing
    anyway: the bound is always the Lagrangian one.

    ``dive``: before price-and-branch, the master's LP solution rounded and repaired, then the better of it and
    the incumbent improved by ruin and recreate (:mod:`primaldual.offline.dive`, :mod:`primaldual.offline.lns`),
    is the incumbent and the 0-1 program's start if it is worth more (None: on heterogeneous clusters only,
    where the 0-1 program reached its time limit without beating the greedy start).

    On by default: the primal simplex, the greedy start and presolve. Off by default: pricing at the master's
    duals too, which doubles a round's pricing and so halves the rounds on a 1,763-job week, where it cost
    the convergence the others reach (measured in the ablation)."""

    simplex_strategy: int = MASTER_SIMPLEX_STRATEGY
    dual_pricing: bool = False
    greedy_start: bool = True
    mip_presolve: bool = True
    interior_master: bool | None = None
    dive: bool | None = None

    def __post_init__(self):
        if self.simplex_strategy not in range(5):  # HiGHS's strategies: 0 choose, 1-3 dual, 4 primal
            raise InputError(f"levers.simplex_strategy: must be an integer in 0..4, got {self.simplex_strategy!r}")
        if self.interior_master not in (None, True, False):
            raise InputError(f"levers.interior_master: must be true, false or null, got {self.interior_master!r}")

    def interior(self, cells: Cells, jobs) -> bool:
        """Whether the master LP is solved by HiGHS's interior point method without crossover: as set, or
        (None) where the master may have more than :data:`INTERIOR_MASTER_ROWS` rows."""
        if self.interior_master is not None:
            return self.interior_master
        return len(jobs) + cells.row_capacity.shape[0] > INTERIOR_MASTER_ROWS

    @classmethod
    def none(cls) -> "Levers":
        """Every lever off: the column generation of before they were added."""
        return cls(simplex_strategy=DEFAULT_SIMPLEX_STRATEGY, greedy_start=False, dive=False)

    def dives(self, instance: Instance) -> bool:
        """Whether the dive runs: as set, or (None) on a heterogeneous cluster."""
        return instance.cluster.worker_types is not None if self.dive is None else bool(self.dive)


def _seed(cells: Cells, master: RestrictedMaster, seeds, notify):
    """Add the seeds' columns in their order; return (best schedule, its utility, utility per seed, the best
    certified bound among them or None, where the best comes from)."""
    best, best_utility, utilities, bound, origin = Schedule({}), 0.0, {}, None, "empty"
    for seed in seeds:
        if seed.certified_bound is not None:
            bound = seed.certified_bound if bound is None else min(bound, seed.certified_bound)
        utilities[seed.name] = float(seed.utility)
        master.add(cells.column(i, s) for i, s in seed.schedule.assignments.items())
        if seed.utility > best_utility:
            best, best_utility, origin = seed.schedule, float(seed.utility), f"online:{seed.name}"
            notify(Incumbent(assignments_of(best), best_utility, None, origin=origin))
    return best, best_utility, utilities, bound, origin


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


@dataclass(frozen=True)
class BestBound:
    """The best certified bound so far and where it comes from (the name a report prints beside it)."""

    value: float
    source: str

    def improved(self, value: float, source: str, notify: Notify) -> "BestBound":
        """This bound, or ``value`` (announced through ``notify``) when it is smaller."""
        if value < self.value:
            notify(BoundImproved(value, source))
            return BestBound(float(value), source)
        return self


#: The bound before any is known: the certificate falls back to the trivial bound.
NO_BOUND = BestBound(float("inf"), "none")


class _Generation:
    """The column-generation loop's working state, and one round of it (:meth:`step`).

    The loop's termination rule: :meth:`run` repeats :meth:`step` until a step returns a
    :class:`~primaldual.offline.outcome.Stop` reason. A step either stops, or solves the master LP and adds
    the columns that price out, or (once) moves the end of the column-generation share to the deadline when
    price-and-branch could not gain anything anyway."""

    def __init__(self, cells: Cells, master: RestrictedMaster, *, bound: BestBound, centre, best_lagrangian: float,
                 best_utility: float, until: float | None, deadline: float | None, notify: Notify, started: float,
                 dual_pricing: bool = False, keep=frozenset()):
        self.cells, self.master, self.notify, self.started = cells, master, notify, started
        self.dual_pricing, self.keep = dual_pricing, keep  # keep: the incumbent's column keys, never dropped
        self.best, self.centre, self.best_lagrangian, self.best_utility = bound, centre, best_lagrangian, best_utility
        self.until, self.deadline = until, deadline
        self.rounds, self.lp_value, self.alpha, self.extended = 0, None, SMOOTHING, False
        self.duals = None  # the master's last optimal LP's cell prices (the dive's, _search)
        self.round_bounds: list[float] = []  # every complete pricing round's Lagrangian bound, in order

    @property
    def bound(self) -> float:
        """The best certified bound so far."""
        return self.best.value

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
        self.lp_value, self.duals = value, duals
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
        """One pricing round at the smoothed prices (and, with ``dual_pricing``, at the master's duals too):
        a Lagrangian bound at each, and the columns that enter."""
        smoothed = self.centre is not None and self.alpha != 0
        point = self.alpha * self.centre + (1 - self.alpha) * duals if smoothed else duals
        rounds = [price_all(self.cells, self.master.jobs, point, self.until)]
        if not rounds[0].complete:
            return Stop.PRICING_STOPPED
        if smoothed and self.dual_pricing:
            at_duals = price_all(self.cells, self.master.jobs, duals, self.until)
            if at_duals.complete:  # an unfinished round adds nothing: its columns are a prefix of the jobs
                rounds.append(at_duals)
        self.rounds += 1
        for where, priced in zip((point, duals), rounds):
            self.round_bounds.append(priced.bound)
            if priced.bound < self.best_lagrangian:
                self.best_lagrangian, self.centre = priced.bound, where
            self.best = self.best.improved(priced.bound, f"Lagrangian bound of round {self.rounds}", self.notify)
        dropped = self.master.drop_idle(duals, mu, self.keep)  # what the master no longer needs (item 2)
        added = self.master.add(c for priced in rounds for c in priced.columns
                                if reduced_cost(c, duals, mu) > REDUCED_COST_TOLERANCE)
        self.notify(ProgressLine(
            f"column generation round {self.rounds}: bound {self.bound:.6g}, master LP {self.lp_value:.6g}, "
            f"incumbent {self.best_utility:.6g}, {len(self.master.columns)} columns ({dropped} dropped), "
            f"{time.time() - self.started:.0f} s"))
        if added == 0:
            if not smoothed or len(rounds) == 2:  # priced exactly at the master's duals: its LP is optimal
                typed = self.cells.instance.cluster.worker_types is not None  # (not proven by a typed pricing)
                return Stop.NO_TYPED_COLUMN if typed else Stop.NO_ENTERING_COLUMN
            self.alpha = 0.0  # a mis-pricing: price at the master's duals next round
        else:
            self.alpha = SMOOTHING
        return None


#: Share of the time left after column generation the dive and the local search may take (the 0-1 program
#: gets the rest); without a deadline the local search stops after :data:`SEARCH_MOVES` moves.
SEARCH_SHARE = 0.75
SEARCH_MOVES = 100


def _search(cells: Cells, master: RestrictedMaster, generation: _Generation, best: Schedule,
            deadline: float | None, notify: Notify) -> tuple[Schedule, str | None]:
    """The dive and ruin and recreate (:func:`primaldual.offline.dive.search_incumbent`) at the master's last LP
    solution and duals: a better schedule's columns join the master (the 0-1 program's start) and it replaces
    ``best`` and ``generation.best_utility``. Returns (best, where it comes from or None)."""
    from primaldual.offline.dive import search_incumbent

    if deadline is not None and deadline - time.time() < 2 * MIN_BRANCH_SECONDS:
        return best, None
    notify(Phase("a dive from the master's LP solution, then ruin and recreate"))
    until = None if deadline is None else time.time() + SEARCH_SHARE * (deadline - time.time())
    duals = np.zeros(cells.capacity.shape[0]) if generation.duals is None else generation.duals
    values = None if generation.duals is None else np.array(master.values)
    found = search_incumbent(cells.instance, list(master.columns), values, cells.prices(duals),
                             (best, generation.best_utility), master.jobs, until, None if until else SEARCH_MOVES)
    if found is None:
        return best, None
    schedule, utility, origin = found
    master.add(cells.column(i, s) for i, s in schedule.assignments.items())
    generation.best_utility = utility
    notify(Incumbent(assignments_of(schedule), utility, None, origin=origin))
    return schedule, origin


def _price_and_branch(instance: Instance, master: RestrictedMaster, generation: _Generation, best: Schedule,
                      deadline: float | None, notify: Notify,
                      presolve: bool = True) -> tuple[Schedule, float, str, float]:
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
        UNLIMITED_BRANCH_SECONDS if left is None else (left - MIN_BRANCH_SECONDS / 2) / 2, best, presolve)
    mip_seconds = time.time() - started
    if chosen is not None:
        schedule = place_on_servers(instance, chosen.assignments)
        # The parent verifies the returned schedule; here only its value is needed, to pick the better.
        value = compute_metrics(instance, schedule).utility
        if value > best_utility:
            best, best_utility = schedule, value
    return best, best_utility, mip_status, mip_seconds


def column_generation_solve(instance: Instance, jobs, *, deadline: float | None = None, notify: Notify | None = None,
                            threads: int | None = None, integer: bool = True,
                            share: float = COLUMN_GENERATION_SHARE, seeds=(),
                            levers: Levers = Levers()) -> ColumnGenerationRun:
    """Stabilised column generation, then (``integer=True``) price-and-branch; see the module docstring.

    ``deadline`` is an absolute ``time.time()``; column generation stops at ``share`` of the time left, and
    price-and-branch gets the rest. ``notify(event)``, if given, receives the progress events. ``levers``
    (:class:`Levers`) are on by default; ``Levers.none()`` is the method without them.
    """
    notify = notify or ignore
    started = time.time()
    notify(Phase("seeding the master with the online schedulers' schedules"))
    cells = Cells(instance)
    master = RestrictedMaster(cells, jobs, threads=threads, aggregate=True, simplex_strategy=levers.simplex_strategy,
                              interior=levers.interior(cells, jobs))
    best, best_utility, seed_utilities, bound, origin = _seed(cells, master, seeds, notify)
    seed_seconds = time.time() - started
    bound = NO_BOUND if bound is None else NO_BOUND.improved(bound, "OASiS's dual certificate", notify)
    notify(Phase("solving the pooled LP relaxation"))
    pooled_started = time.time()
    # The first stability centre is the pooled LP's duals, not OASiS's prices: those give a valid but loose
    # bound, a poor centre to smooth towards.
    bound, centre, best_lagrangian = pooled_start(instance, cells, master, bound, deadline, threads, notify)
    if levers.greedy_start:
        notify(Phase("a greedy schedule at the pooled LP's prices"))
        utility_before = best_utility
        best, best_utility = greedy_start(instance, cells, master, centre, best, best_utility, deadline, notify)
        origin = "greedy at the pooled LP's prices" if best_utility > utility_before else origin
    pooled_seconds = time.time() - pooled_started
    notify(Phase("generating columns"))
    generation = _Generation(
        cells, master, bound=bound, centre=centre, best_lagrangian=best_lagrangian, best_utility=best_utility,
        until=None if deadline is None else time.time() + share * max(0.0, deadline - time.time()),
        deadline=deadline, notify=notify, started=started, dual_pricing=levers.dual_pricing,
        keep=frozenset(column_key(i, s) for i, s in best.assignments.items()))
    stop = generation.run()
    cg_seconds = time.time() - started - seed_seconds - pooled_seconds
    mip_status, mip_seconds = "not run", 0.0
    if integer and levers.dives(instance):
        best, found = _search(cells, master, generation, best, deadline, notify)
        best_utility, origin = generation.best_utility, found or origin
    if integer:
        utility_before = best_utility
        best, best_utility, mip_status, mip_seconds = _price_and_branch(
            instance, master, generation, best, deadline, notify, levers.mip_presolve)
        origin = "price-and-branch" if best_utility > utility_before else origin
    return ColumnGenerationRun(
        bound=generation.bound, bound_source=generation.best.source, incumbent_origin=origin,
        round_bounds=tuple(generation.round_bounds),
        lp_value=generation.lp_value, assignments=assignments_of(best), objective=best_utility,
        rounds=generation.rounds, columns=len(master.columns), rows=master.n_rows, stop=stop, seeds=seed_utilities,
        seed_seconds=seed_seconds, pooled_seconds=pooled_seconds, cg_seconds=cg_seconds, mip_seconds=mip_seconds,
        mip_status=mip_status)


__all__ = ["COLUMN_GENERATION_SHARE", "Levers", "column_generation_solve"]
