"""One evaluation of online schedulers on one instance, the pipeline behind ``compare``, ``ratio`` and ``reproduce``.

:func:`evaluate` runs each scheduler through the simulator, checks each schedule with the independent verifier,
optionally solves the offline optimum (MIP-started from the best online schedule) and returns an
:class:`Evaluation`: per scheduler its result, verification and the upper bounds it offers, the interval
``[low, high]`` that holds the optimum OPT with the method behind each end, and OPT/ALG per scheduler. Every
command and notebook reads its numbers from here, so the same instance gives the same interval and ratios
everywhere.

**The OPT interval** (:mod:`primaldual.evaluation.bounds`):

* ``low`` is the best verified utility: the best online schedule, or the solver's incumbent;
* ``high`` is the least proven upper bound: the instance's standalone bound (every job alone on the empty
  cluster, :func:`primaldual.core.standalone.standalone_utilities`), the solver's bound, and any bound a scheduler
  offers through an ``upper_bounds()`` method (OASiS offers its weak-duality certificate ``D``, see
  :mod:`primaldual.oasis.engine`). No code here knows which scheduler offers what.

**Restart costs.** With ``restart_cost > 0`` a schedule's utility is the simulator's (a job loses that fraction
of a slot's work in each slot where its placement changed, so it completes later), and OPT is the optimum
*with* restart costs. Its upper end comes from the **start-cost relaxation** (:mod:`primaldual.evaluation.restart_bound`):
every job completed under a restart cost received at least ``V_i + 1`` worker-slots, so the offline solve, the
standalone bound and OPT/ALG are computed on the instance with one more worker-slot of work per job
(``Evaluation.bound_instance``), a valid and tighter bound than the optimum without restart costs (which the
schedulers' own bounds, such as OASiS's ``D``, still bound). The solver's incumbent is then not a lower bound
(its restarts are not counted) and the relaxation's optimum is not OPT itself, so ``low`` comes from the online
schedules and, out of the exact model's reach, from the relaxation's schedule replayed through the simulator at
the restart cost (``relaxation-replayed``, :func:`primaldual.evaluation.restart_opt.with_replayed_relaxation`).
Where the per-server model is small enough (:func:`primaldual.evaluation.restart_opt.within_reach`) the exact model
of the restart rule (:mod:`primaldual.models.restart`) is solved after the relaxation, from the better of the best
online schedule and the relaxation's schedule replayed at the restart cost, its objective
capped by the relaxation's bound, and its schedule replayed through the simulator; when it is proven, OPT is
that point (``proven``, ``low == high``, candidates ``restart_solver``); otherwise its ends join the
relaxation's interval.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterable, Mapping, Protocol, runtime_checkable

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.evaluation.gpu_refusals import NOT_YET_HETEROGENEOUS, refusals as _refusals
from primaldual.core.metrics import compute_metrics
from primaldual.core.verify import VerificationReport, verify
from primaldual.evaluation.bounds import OptInterval, Ratio, best_feasible, opt_interval, standalone_bound
from primaldual.evaluation.restart_bound import relaxation_or_instance
from primaldual.evaluation.restart_opt import (
    RestartOpt, exact_restart_opt, restart_entry, restart_interval, with_replayed_relaxation, within_reach)
from primaldual.offline.options import SolveOptions
from primaldual.simulation.rules import SimulationError
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import ReportedCertificate, SimulationResult, simulate

if TYPE_CHECKING:  # the offline result's module loads Pyomo's side only when a solve runs
    from primaldual.offline.result import OfflineResult


@runtime_checkable
class OffersUpperBounds(Protocol):
    """A scheduler that, after a run, proves upper bounds on OPT (name -> value)."""

    def upper_bounds(self) -> dict[str, float]: ...


@dataclass(frozen=True, eq=False)
class SchedulerOutcome:
    """One scheduler on the instance: its simulation ``result`` and ``verification`` (None if it broke a rule,
    then ``error`` says which), the upper bounds on OPT it offers, and the certificate behind them if it
    reports one (only for a verified schedule that offers bounds)."""

    name: str
    result: SimulationResult | None = None
    verification: VerificationReport | None = None
    error: SimulationError | None = None
    upper_bounds: Mapping[str, float] = field(default_factory=dict)
    certificate: ReportedCertificate | None = None
    seconds: float = 0.0

    @property
    def ran(self) -> bool:
        return self.result is not None

    @property
    def feasible(self) -> bool:
        return self.verification is not None and bool(self.verification.feasible)

    @property
    def utility(self) -> float | None:
        """The verifier's utility (it shares no code with the scheduler); the simulator's under restart costs."""
        if self.result is None:
            return None
        return float(self.verification.utility) if self._verified_utility else float(self.result.utility)

    _verified_utility: bool = True


@dataclass(frozen=True, eq=False)
class Evaluation:
    """What :func:`evaluate` found (module docstring)."""

    instance: Instance
    outcomes: dict[str, SchedulerOutcome]
    interval: OptInterval
    ratios: dict[str, Ratio]
    offline: "OfflineResult | None" = None
    offline_verification: VerificationReport | None = None
    solve: SolveOptions | None = None
    mip_start: str | None = None
    restart_cost: float = 0.0
    warnings: tuple[str, ...] = ()
    seconds: Mapping[str, float] = field(default_factory=dict)
    #: The instance the OPT interval bounds the optimum of: ``instance``, or under restart costs its
    #: start-cost relaxation (module docstring).
    bound_instance: Instance | None = None
    #: Per scheduler that offers bounds, the OPT/ALG interval they prove (:func:`certified_ratio`).
    certified: Mapping[str, Ratio] = field(default_factory=dict)
    #: The offline solve as written to JSON (:func:`offline_entry`), None without a solve.
    offline_entry: dict[str, Any] | None = None
    #: Under a restart cost, the exact restart solve (:mod:`primaldual.evaluation.restart_opt`) where it was
    #: within reach; when it is proven the relaxation is not solved and ``offline`` is None.
    restart_opt: "RestartOpt | None" = None

    @property
    def relaxation(self) -> dict[str, Any] | None:
        """What the OPT bound was computed on beyond the instance (``{"name": "start-cost", ...}``), or None."""
        return _relaxation(self.instance, self.bound_instance)


def _relaxation(instance: Instance, bound_instance: Instance | None) -> dict[str, Any] | None:
    return None if bound_instance is None or bound_instance is instance else dict(bound_instance.meta.get("relaxation", {}))


def certified_ratio(outcome: SchedulerOutcome, interval: OptInterval) -> Ratio | None:
    """OPT/ALG of one scheduler bounded by its own offered bounds and the standalone bound (no solver needed):
    what the scheduler's certificate proves about its own run (None if it offers no bound)."""
    if not outcome.upper_bounds or outcome.utility is None:
        return None
    high = min([*outcome.upper_bounds.values(), interval.upper_candidates.get("standalone", float("inf"))])
    return Ratio.of(max(interval.low, outcome.utility), high, outcome.utility, proven=False)


def offline_entry(instance: Instance, offline: "OfflineResult | None", verification: VerificationReport | None,
                  solve: SolveOptions | None, mip_start: str | None,
                  relaxation: dict[str, Any] | None) -> dict[str, Any] | None:
    """The offline solve as ``compare --json`` and sweep records write it, without what depends on where it ran
    (its durations, and its ``message``, which says e.g. that a Dask worker could not start a solver process);
    None without a solve. ``time_limited``: the clock, not a MIP gap the options asked for, stopped the
    search, so the numbers depend on the machine's speed."""
    if offline is None:
        return None
    out = {
        "computed": True, "status": offline.status, "utility": offline.objective, "objective": offline.objective,
        "bound": offline.bound, "gap": offline.gap, "solver": offline.solver,
        "solver_version": offline.solver_version,
        # the method that ran (what ``auto`` resolved to), not the one asked for
        "method": getattr(offline, "method", solve.method), "start_scheduler": mip_start,
        "start_objective": offline.start_objective, "incumbent_source": offline.incumbent_source,
        "time_limited": offline.status in TIME_LIMITED_STATUSES or (
            offline.status == "feasible" and solve.mip_gap is None and solve.time_limit is not None),
        # None: the instance itself; else the start-cost relaxation the solve ran on (restart costs)
        "relaxation": relaxation,
    }
    if offline.schedule is not None:
        metrics = compute_metrics(instance, offline.schedule)
        out.update(verified=bool(verification.feasible), admitted=metrics.admitted,
                   completed=metrics.completed, mean_jct=metrics.mean_jct)
    return out


#: Solver statuses that mean the clock stopped the search.
TIME_LIMITED_STATUSES = ("time_limit_no_incumbent", "killed")

#: Under a restart cost and :func:`evaluate`'s ``time_limit``, the share of the solve's time kept for replaying the
#: start-cost relaxation's schedule through the simulator (one simulation, like a simple scheduler's run).
REPLAY_SHARE = 0.05

#: The least time handed to a solve under :func:`evaluate`'s ``time_limit`` (a floor on a computed remainder).
MIN_LEFT_SECONDS = 0.1

Step = Callable[[str], ContextManager]


def _quiet(_: str) -> ContextManager:
    return nullcontext()


def _run_scheduler(instance, name: str, parameters: dict, restart_cost: float, refusable: bool = False):
    """The scheduler's outcome; with ``refusable``, None where it refuses a heterogeneous instance (issue 64)."""
    scheduler = make_scheduler(name, **parameters)
    clock = time.perf_counter()
    try:
        result = simulate(instance, scheduler, restart_cost=restart_cost)
    except SimulationError as error:
        return SchedulerOutcome(name=name, error=error, seconds=time.perf_counter() - clock)
    except InputError as error:
        if refusable and str(error).startswith(NOT_YET_HETEROGENEOUS):
            return None
        raise
    seconds = time.perf_counter() - clock
    verification = verify(instance, result.schedule)
    bounds = {key: float(value) for key, value in scheduler.upper_bounds().items()} if (
        isinstance(scheduler, OffersUpperBounds) and verification.feasible) else {}
    certificate = result.certificate if bounds else None
    return SchedulerOutcome(name=name, result=result, verification=verification, upper_bounds=bounds,
                            certificate=certificate, seconds=seconds, _verified_utility=not restart_cost)


#: Under :func:`evaluate`'s ``time_limit``, the share of it the schedulers may take (their schedules are the
#: interval's lower end under a restart cost, where the relaxation's schedule is not one yet); the offline solves
#: get the rest. At 0.3, on the whole philly:1/6214e9 VC at F = 0.1 and 300 s on a loaded machine, only RRH
#: finished (OASiS-LR, whose schedule was the lower end before, did not): [12,449.9, 14,866.1] where the run
#: without a limit on the schedulers had [14,185.8, 14,866.1] in 654 s.
SCHEDULER_SHARE = 0.5


#: Under a time limit these schedulers run first: on real arrivals they earn the most (docs/findings.md), and
#: the best schedule is the interval's lower end; RRH first, as it is also cheap. Measured (issue 63): on the
#: whole 1,843-job VC of philly:1/6214e9 at F = 0.1 and 300 s, the paper's order left OASiS-LR out of the
#: schedulers' 90 s, and OASiS-LR first (on a loaded machine) left every scheduler out.
BEST_FIRST = ("rrh", "oasis-lr")


def _stream_outcomes(sender, instance, names, parameters, restart_cost, refusable=False) -> None:  # in a child
    for name in names:
        sender.send((name, _run_scheduler(instance, name, dict(parameters.get(name, {})), restart_cost, refusable)))


def _run_schedulers(instance, names: tuple[str, ...], parameters, restart_cost: float, step: Step,
                    budget: float | None, refused: list | None = None) -> tuple[dict[str, SchedulerOutcome], tuple]:
    """Every scheduler's outcome, in order; with a ``budget`` (seconds) only those that finish within it (in a
    spawned child killed at the budget, :func:`primaldual.evaluation.bounded.stream_in_child`; here, between
    schedulers, on small instances and in daemonic processes), and the names left out. Given a list ``refused``,
    the schedulers that refuse a heterogeneous instance are appended to it instead (:func:`_run_scheduler`)."""
    from primaldual.evaluation.bounded import IN_PROCESS_CELLS, stream_in_child

    refusable = refused is not None
    order = names if budget is None else tuple(sorted(
        names, key=lambda name: BEST_FIRST.index(name) if name in BEST_FIRST else len(BEST_FIRST)))
    cells = instance.n_jobs * instance.horizon * instance.cluster.n_worker_servers
    if budget is not None and cells > IN_PROCESS_CELLS and not multiprocessing.current_process().daemon:
        with step(f"running {len(names)} schedulers (within {budget:.0f} s)"):
            got = stream_in_child(_stream_outcomes, (instance, order, parameters, restart_cost, refusable),
                                  len(names), budget)
        refused_here = [name for name in order if name in got and got[name][0] is None]
        ran = {name: got[name][0] for name in order if name in got and got[name][0] is not None}
    else:
        ran = {}
        clock = time.monotonic()
        for name in order:
            if budget is not None and time.monotonic() - clock >= budget:
                break
            with step(f"running {name}"):
                outcome = _run_scheduler(instance, name, dict(parameters.get(name, {})), restart_cost, refusable)
            ran[name] = outcome
        refused_here = [name for name in order if ran.get(name, False) is None]
        ran = {name: outcome for name, outcome in ran.items() if outcome is not None}
    if refusable:
        refused.extend(refused_here)
    # Reported in the caller's order, whatever order they ran in.
    left_out = set(ran) | set(refused_here)
    return {name: ran[name] for name in names if name in ran}, tuple(name for name in names if name not in left_out)


def evaluate(instance, schedulers: Iterable[str], *, solve: SolveOptions | None = None, restart_cost: float = 0.0,
             parameters: Mapping[str, dict] | None = None, step: Step | None = None,
             time_limit: float | None = None) -> Evaluation:
    """Evaluate ``schedulers`` (registered names, with ``parameters[name]``) on ``instance``; with ``solve`` also
    solve the offline optimum. ``step(description)`` wraps each long step (a context manager: progress output).
    ``time_limit`` (seconds, ``solve --restart-cost F --time-limit T``) bounds the whole evaluation: the
    schedulers get :data:`SCHEDULER_SHARE` of it (those not done are left out, and a warning names them), the
    offline solve what is left (half of it where the exact restart solve follows, which gets the rest).
    """
    step = step or _quiet
    parameters = parameters or {}
    refused = _refusals(instance, solve)
    seconds: dict[str, float] = {}
    started = time.monotonic()
    budget = None if time_limit is None else SCHEDULER_SHARE * time_limit
    outcomes, skipped = _run_schedulers(instance, tuple(schedulers), parameters, restart_cost, step, budget,
                                        refused)
    best = best_feasible(outcomes.values())
    bound_instance, warning = relaxation_or_instance(instance, restart_cost)
    extra_warnings = [warning] if warning else []
    if refused:
        extra_warnings.append(f"left out {', '.join(refused)}: {NOT_YET_HETEROGENEOUS} by the simulator")
    if skipped:
        extra_warnings.append(f"left out {', '.join(skipped)}: not done within the schedulers' "
                              f"{SCHEDULER_SHARE * time_limit:.0f} s of the {time_limit:g} s time limit")
    offline_options = solve
    if time_limit is not None and solve is not None:
        left = max(MIN_LEFT_SECONDS, time_limit - (time.monotonic() - started))
        exact_follows = bool(restart_cost) and within_reach(instance, solve.method)
        # The relaxation's schedule is replayed at the restart cost after it: a simulation, kept inside the limit.
        offline_options = solve.replace(time_limit=left / 2 if exact_follows else (
            (1 - REPLAY_SHARE) * left if restart_cost else left))
    offline = offline_verification = start_name = None
    if solve is not None:
        from primaldual.evaluation.bounded import solve_within  # without an OPT solve no model code is loaded
        from primaldual.offline.options import OnlineSeed

        start_name = best.name if (solve.mip_start and best is not None) else None
        start = None
        if start_name:
            report = best.verification if bound_instance is instance else verify(bound_instance, best.result.schedule)
            start = OnlineSeed(start_name, best.result.schedule, float(report.utility)) if report.feasible else None
        if start_name and start is None:
            # Lemma R says this cannot happen; the solve goes on without the start, and the run says so.
            extra_warnings.append(f"the schedule of {start_name} does not satisfy the start-cost relaxation "
                                  "(Lemma R, proofs/oasis-lr.md): solved without a MIP start")
            start_name = None
        # Schedulers that ran here with their defaults on the solved instance are seeds already verified.
        ran = {} if bound_instance is not instance else {
            name: outcome for name, outcome in outcomes.items() if outcome.ran and not parameters.get(name)}
        clock = time.perf_counter()
        limit = ("no time limit" if offline_options.time_limit is None
                 else f"time limit {offline_options.time_limit:g} s, seeds included")
        with step(f"solving the offline optimum ({solve.method}, {solve.solver}, {limit})"):
            offline = solve_within(bound_instance, offline_options, start=start, ran=ran)
        seconds["opt"] = time.perf_counter() - clock
        offline_verification = _offline_verification(bound_instance, offline)
    restart_options = solve if time_limit is None or solve is None else solve.replace(
        time_limit=max(MIN_LEFT_SECONDS, time_limit - (time.monotonic() - started)))
    restart = _exact_restart(instance, restart_options, restart_cost, best, step, seconds, offline)
    interval, warnings = opt_interval(
        bound_instance, outcomes.values(), offline, offline_verification, count_incumbent=not restart_cost)
    if restart is not None:
        interval = restart_interval(interval, restart)
        warnings += [f"exact restart OPT: {restart.message}"] if restart.message else []
    elif restart_cost and offline is not None and offline.schedule is not None:
        interval = with_replayed_relaxation(interval, instance, offline.schedule, restart_cost)
    ran = {name: outcome for name, outcome in outcomes.items() if outcome.ran}
    certified = {name: ratio for name, outcome in ran.items()
                 if (ratio := certified_ratio(outcome, interval)) is not None}
    ratios = {name: dataclasses.replace(interval.ratio(outcome.utility),
                                        certified=certified[name].upper if name in certified else None)
              for name, outcome in ran.items()}
    entry = offline_entry(instance, offline, offline_verification, solve, start_name,
                          _relaxation(instance, bound_instance))
    if restart is not None:
        start_name = best.name if best is not None and solve.mip_start else start_name
        exact = restart_entry(instance, restart, start_name, best.utility if start_name else None)
        entry = exact if restart.proven else {**entry, "restart_model": exact}
    return Evaluation(
        instance=instance, outcomes=outcomes, interval=interval, ratios=ratios, offline=offline,
        offline_verification=offline_verification, solve=solve, mip_start=start_name,
        restart_cost=float(restart_cost), warnings=tuple(extra_warnings + warnings), seconds=seconds,
        bound_instance=bound_instance, certified=certified, offline_entry=entry, restart_opt=restart)


def _offline_verification(instance, offline: "OfflineResult"):
    """The report on the optimum's schedule: the certificate's own (it verified the solver's schedule, and a
    schedule is verified once), else a verification here (a start or the empty schedule); None without one."""
    if offline.schedule is None:
        return None
    return offline.verification if offline.verification is not None else verify(instance, offline.schedule)


def _exact_restart(instance, solve: SolveOptions | None, restart_cost: float, best, step: Step,
                   seconds: dict, relaxed: "OfflineResult | None") -> "RestartOpt | None":
    """The exact OPT with restart costs (:mod:`primaldual.evaluation.restart_opt`) where it is within reach; None
    at restart cost 0, without a solve, or out of reach. Its MIP start is the better of the best online schedule
    and the start-cost relaxation's schedule replayed at the restart cost, and the relaxation's bound (an upper
    bound on OPT, Lemma R) caps its objective, so that a relaxation schedule that loses nothing to its
    restarts proves OPT at once."""
    if solve is None or not restart_cost or not within_reach(instance, solve.method):
        return None
    from primaldual.evaluation.restart_opt import replay_utility
    from primaldual.offline.solver_choice import resolve_solver

    starts = [(best.utility, f"online:{best.name}", best.result.schedule)] if (
        solve.mip_start and best is not None) else []
    if relaxed is not None and relaxed.schedule is not None:
        utility, replayed = replay_utility(instance, relaxed.schedule, restart_cost)
        starts.append((utility, "relaxation-replayed", replayed))
    utility, source, start = max(starts, key=lambda entry: entry[0], default=(0.0, "", None))
    known_bound = None if relaxed is None else relaxed.bound
    clock = time.perf_counter()
    limit = "no time limit" if solve.time_limit is None else f"time limit {solve.time_limit:g} s"
    with step(f"solving the exact optimum with restart cost {restart_cost:g} ({solve.solver}, {limit})"):
        opt = exact_restart_opt(instance, restart_cost, solver=resolve_solver(instance, solve)[0],
                                time_limit=solve.time_limit, threads=solve.threads, start=start,
                                start_utility=utility, start_source=source, relaxation_high=known_bound,
                                known_bound=known_bound)
    seconds["restart_opt"] = time.perf_counter() - clock
    return opt


__all__ = ["TIME_LIMITED_STATUSES", "Evaluation", "OffersUpperBounds", "SchedulerOutcome", "certified_ratio",
           "evaluate", "offline_entry", "standalone_bound"]
