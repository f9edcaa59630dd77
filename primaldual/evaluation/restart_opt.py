"""The exact offline optimum with restart costs, checked by the simulator: a proven OPT where the solver
finishes, the start-cost relaxation's interval otherwise.

:func:`exact_restart_opt` solves the restart model (:mod:`primaldual.models.restart`,
:func:`primaldual.offline.restart.solve_restart_offline`) from the best online schedule, then replays the
solver's schedule through :func:`primaldual.simulation.simulator.simulate` at the same restart cost
(:class:`ReplayScheduler`: each job gets its counts slot by slot until the simulator says it completed). What
the replay earns is the verified lower bound ``low``; the solver's bound is ``high``. The answer is
``proven`` when the solver proved optimality and the replay earns the model's objective (so ``low`` meets
``high`` within :data:`OPTIMALITY_TOLERANCE`): the optimum with restart costs, checked by the simulator itself, not
only by the model that found it. When the solver stops at its time limit, another proven bound that meets the
replayed utility (the start-cost relaxation's optimum, which the pipeline solves first) proves it as well
(:func:`restart_interval`).

Why the replay can only earn more than the model says (so a replay below it is a bug, reported as such): a
slot the model does not charge repeats the previous slot's counts, so the simulator does not charge it either,
and each job's supplied work reaches ``V_i`` no later than the model's completion slot
(:mod:`primaldual.models.restart`, Exactness (b)).

Cost: the restart ILP (the base ILP plus a binary per job and slot) and one simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.core.verify import verify
from primaldual.offline.restart import RestartSolve, solve_restart_offline
from primaldual.simulation.scheduler import Allocation, OnlineScheduler
from primaldual.simulation.simulator import simulate

#: Relative width at which a verified utility meets a proven upper bound: the offline solve's own test
#: (``primaldual.offline.result.OPTIMALITY_TOLERANCE``).
OPTIMALITY_TOLERANCE = 1e-6


class ReplayScheduler(OnlineScheduler):
    """Gives each job of a fixed schedule its per-server counts in each slot, until the job completes (the
    simulator refuses allocations to completed jobs)."""

    name = "offline-replay"
    handles_gpu_types = True  # per-server counts as given: a schedule's one type per slot, kept

    def __init__(self, schedule: Schedule):
        self.schedule = schedule

    def allocate(self, slot, state):
        return {i: Allocation(job.workers[slot], job.parameter_servers[slot])
                for i, job in self.schedule.assignments.items()
                if not state.completed[i] and state.arrived[i] and job.workers[slot].any()}


def replay_utility(instance: Instance, schedule: Schedule, restart_cost: float) -> tuple[float, Schedule]:
    """What ``schedule`` earns when the simulator runs it at ``restart_cost``, and the schedule the simulator
    records (completed jobs, truncated at their completion)."""
    result = simulate(instance, ReplayScheduler(schedule), restart_cost=restart_cost)
    return float(result.utility), result.schedule


@dataclass(frozen=True, eq=False)
class RestartOpt:
    """OPT with restart costs: ``low`` (the replayed utility of the best schedule, ``low_source`` ``solver``
    or ``online:NAME``), ``high`` (the solver's bound, or the caller's relaxation bound when smaller), ``proven``
    (the solver finished and the replay meets its bound), the ``solve`` itself, the replayed ``schedule``."""

    low: float
    high: float
    low_source: str
    proven: bool
    solve: RestartSolve
    schedule: Schedule | None
    message: str = ""

    def to_dict(self) -> dict:
        s = self.solve
        return {"low": self.low, "high": self.high, "low_source": self.low_source, "proven": self.proven,
                "restart_cost": s.restart_cost, "model": "restart", "status": s.status,
                "objective": s.objective, "bound": s.bound, "solver": s.solver, "solver_version": s.solver_version,
                "n_variables": s.n_variables, "n_constraints": s.n_constraints,
                "build_seconds": s.build_seconds, "solve_seconds": s.solve_seconds, "message": self.message}


def exact_restart_opt(instance: Instance, restart_cost: float, *, solver: str = "highs",
                      time_limit: float | None = 60.0, threads: int | None = 1,
                      start: Schedule | None = None, start_utility: float = 0.0, start_source: str = "",
                      relaxation_high: float | None = None, known_bound: float | None = None) -> RestartOpt:
    """OPT at ``restart_cost`` (module docstring). ``start`` is the best online schedule (it completes under
    ``restart_cost``, ``start_utility`` is the simulator's utility of it, ``start_source`` its name);
    ``relaxation_high`` an upper bound known already (the start-cost relaxation's); ``known_bound`` one that
    also caps the model's objective (:func:`primaldual.offline.restart.solve_restart_offline`)."""
    solve = solve_restart_offline(instance, restart_cost, solver=solver, time_limit=time_limit, threads=threads,
                                  start=start, known_bound=known_bound)
    low, source, schedule, notes = float(start_utility), start_source, start, []
    if solve.schedule is not None:
        utility, replayed = replay_utility(instance, solve.schedule, restart_cost)
        if not verify(instance, replayed).feasible:  # never seen: the simulator checks every slot's rules
            notes.append("the replayed solver schedule does not verify; ignored")
        else:
            if solve.objective is not None and utility < solve.objective - 1e-6 * max(1.0, abs(solve.objective)):
                notes.append(f"the replayed solver schedule earns {utility!r}, below the model's {solve.objective!r}")
            if utility >= low:
                low, source, schedule = utility, "solver", replayed
    candidates = [b for b in (solve.bound, relaxation_high) if b is not None]
    high = max(min(candidates), low) if candidates else float("inf")
    proven = solve.status == "optimal" and solve.bound is not None and \
        high - low <= OPTIMALITY_TOLERANCE * max(1.0, abs(high))
    if proven:
        high = max(low, min(high, solve.bound))
    return RestartOpt(low=low, high=high, low_source=source, proven=proven, solve=solve, schedule=schedule,
                      message="; ".join(notes))


__all__ = ["OPTIMALITY_TOLERANCE", "ReplayScheduler", "RestartOpt", "exact_restart_opt", "replay_utility"]


#: The restart ILP is tried where the per-server model has at most this many placement variables
#: (``primaldual.offline.methods.placement_count``; a 10-job ``small`` instance has about 1,000, the ``paper``
#: preset about 10^5); above it the start-cost relaxation's interval is the answer.
EXACT_RESTART_PLACEMENTS = 5_000


def within_reach(instance: Instance, method: str) -> bool:
    """Whether the evaluation tries the exact restart ILP: the ILP (or ``auto``) on a model of at most
    :data:`EXACT_RESTART_PLACEMENTS` placement variables."""
    from primaldual.offline.methods import may_be_ilp
    from primaldual.offline.methods import placement_count

    return may_be_ilp(method) and placement_count(instance) <= EXACT_RESTART_PLACEMENTS


def restart_interval(interval, opt: RestartOpt):
    """The OPT interval with the exact restart solve's ends added as candidates named ``restart_solver``; a
    point at the replayed utility when it is proven (the solver's own bound stays among the candidates)."""
    from primaldual.evaluation.bounds import OptInterval

    lower = dict(interval.lower_candidates)
    upper = dict(interval.upper_candidates)
    if opt.low_source == "solver":
        lower["restart_solver"] = opt.low
    if opt.solve.bound is not None:
        upper["restart_solver"] = float(opt.solve.bound)
    low = max(lower.values(), default=0.0)
    low_method = max(lower, key=lower.get) if lower else None
    if opt.proven:
        return OptInterval(low=low, high=low, low_method=low_method, high_method="restart_solver", proven=True,
                           lower_candidates=lower, upper_candidates=upper)
    high_method = min(upper, key=upper.get)
    if upper[high_method] - low <= OPTIMALITY_TOLERANCE * max(1.0, abs(upper[high_method])):
        # Another proven bound (the start-cost relaxation's optimum, the standalone bound) meets the replayed
        # utility: that proves OPT as well as the restart solver would have.
        return OptInterval(low=low, high=low, low_method=low_method, high_method=high_method, proven=True,
                           lower_candidates=lower, upper_candidates=upper)
    return OptInterval(low=low, high=max(low, upper[high_method]), low_method=low_method, high_method=high_method,
                       proven=False, lower_candidates=lower, upper_candidates=upper)


def with_replayed_relaxation(interval, instance: Instance, schedule: Schedule, restart_cost: float):
    """The OPT interval at ``restart_cost`` with the start-cost relaxation's schedule, replayed through the
    simulator at that cost (:func:`replay_utility`), as the lower candidate ``relaxation-replayed`` (issue 63,
    item 3, its first step: no repair of the jobs that fall short).

    Why it is a lower bound: the simulator runs the relaxation's counts under the restart rule, a job that the
    restarts leave short of its work earns nothing, and the recorded schedule is verified again here (the
    relaxation's schedule is a feasible placement of the original instance too: the relaxation only raises
    work). The upper end is unchanged. Cost: one simulation and one verification."""
    from primaldual.evaluation.bounds import OptInterval

    utility, replayed = replay_utility(instance, schedule, restart_cost)
    if not verify(instance, replayed).feasible:  # never seen: the simulator checks every slot's rules
        return interval
    lower = {**interval.lower_candidates, "relaxation-replayed": utility}
    low_method = max(lower, key=lower.get)
    low = lower[low_method]
    return OptInterval(low=low, high=max(low, interval.high), low_method=low_method, high_method=interval.high_method,
                       proven=interval.proven, lower_candidates=lower, upper_candidates=dict(interval.upper_candidates))


def restart_entry(instance: Instance, opt: RestartOpt, start_name: str | None, start_utility: float | None) -> dict:
    """The exact restart solve in the shape of ``primaldual.evaluation.pipeline.offline_entry`` (what
    ``compare --json`` writes as ``opt``), plus ``model: "restart"`` and the replayed ``utility``."""
    from primaldual.core.metrics import compute_metrics

    s = opt.solve
    gap = None if s.bound is None or s.objective is None else max(0.0, s.bound - opt.low) / max(1e-12, abs(s.bound))
    out = {"computed": True, "status": "optimal" if opt.proven else ("feasible" if opt.schedule is not None else s.status),
           "utility": opt.low, "objective": s.objective, "bound": s.bound, "gap": gap, "solver": s.solver,
           "solver_version": s.solver_version, "method": "ilp", "model": "restart", "restart_cost": s.restart_cost,
           "start_scheduler": start_name, "start_objective": start_utility,
           "incumbent_source": "solver" if opt.low_source == "solver" else ("start" if start_name else None),
           "time_limited": not opt.proven and s.status in ("time_limit", "feasible"), "relaxation": None}
    if opt.schedule is not None:
        metrics = compute_metrics(instance, opt.schedule)
        out.update(verified=bool(verify(instance, opt.schedule).feasible), admitted=metrics.admitted,
                   completed=metrics.completed, mean_jct=metrics.mean_jct)
    return out


__all__ += ["EXACT_RESTART_PLACEMENTS", "restart_entry", "restart_interval", "with_replayed_relaxation", "within_reach"]
