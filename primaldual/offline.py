"""Solve the offline problem (1)-(13) and return an honest certificate (issue 3; oasis.md section 6.5).

:func:`solve_offline` builds :func:`primaldual.models.offline.build_offline_model`, hands it to a backend
through :func:`primaldual.solvers.solve_model` and returns an :class:`OfflineResult`:

* the **incumbent** is a :class:`~primaldual.schedule.Schedule` that has passed the independent verifier
  :func:`primaldual.verify.verify`; ``objective`` is the utility the verifier recomputes for it, not the
  solver's number;
* the **bound** is an upper bound on OPT: the solver's best bound, capped by the trivial bound
  ``sum_i f_i(shortest_duration_i - 1)`` over the jobs that can finish; if a solver's bound is ever below a
  verified schedule's utility (a wrong answer), it is discarded for the trivial bound and ``message`` says so;
* ``status`` is ``"optimal"`` only when the solver finished (not at a limit) and the bound meets the
  incumbent within :data:`OPTIMALITY_TOLERANCE`; a time-limited or gap-limited incumbent is ``"feasible"``
  with its gap, never ``"optimal"``.

Hard wall-clock and memory limits: with a ``time_limit`` (or a ``memory_limit``) the whole solve (building
the model, translating it, solving it) runs in a child process (:mod:`primaldual.offline_child`, the
``spawn`` start method) whose address space is capped; the parent kills it ``grace`` seconds past the limit
(HiGHS does not always honour MIP time limits; a Pyomo build may never end at the paper's scale), and the
status is ``"killed"`` (``"memory_limit"`` past the cap). The solver gets the time left after building.
HiGHS streams each improving incumbent to the parent as it finds it, so a killed solve still returns its best
verified schedule and bound. (Scripts that call this must guard their code with
``if __name__ == "__main__":``, as for any spawned process.)

Methods: the ILP (built by Pyomo, :mod:`primaldual.models.offline`, or as numpy sparse arrays,
:mod:`primaldual.offline_matrix`), its LP and pooled relaxations, and column generation with price-and-branch
over the packing formulation (14)-(18) (:mod:`primaldual.price_and_branch`), which gives a verified schedule
and a certified bound at the paper's scale.

MIP start: ``start=schedule`` (an online scheduler's result, say) is verified, handed to the solver as a MIP
start where the backend takes one (HiGHS, CBC), and returned as the incumbent whenever the solver's own
incumbent is worse or missing; so the result is never worse than the start.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pyomo.environ as pyo

from primaldual.errors import InputError
from primaldual.instance import Instance
from primaldual.models.offline import (
    FORMULATIONS, build_offline_model, model_size, offline_sparsity, schedulable_jobs)
from primaldual.offline_child import default_memory_limit, remaining, run_in_child
from primaldual.schedule import JobSchedule, Schedule
from primaldual.solvers import SolveOutcome, check_solver, solve_model, solver_version
from primaldual.verify import verify

#: Bound and incumbent closer than this (relative to max(1, |bound|)) count as equal: the optimum is proven.
OPTIMALITY_TOLERANCE = 1e-6

#: Relative MIP gap handed to HiGHS when the caller gives none (its own default, 1e-4, is coarser than the
#: tolerance above). CBC and GLPK default to an exact search already.
DEFAULT_HIGHS_GAP = 1e-7

#: ``OfflineResult.status`` values.
STATUSES = ("optimal", "feasible", "infeasible", "time_limit_no_incumbent", "killed", "memory_limit", "error")

#: ``method`` values: the ILP, its LP relaxation, the pooled relaxation, column generation with
#: price-and-branch over the packing formulation (14)-(18), or ``auto`` (the ILP where it is expected to
#: finish, column generation otherwise).
METHODS = ("ilp", "lp", "pooled", "cg", "auto")

#: ``auto`` picks the ILP when the model has at most this many worker and PS placement variables (the ILP is
#: proven optimal within a minute up to about 40 jobs x 50 slots on 10 + 10 servers, ~20 000 placements),
#: column generation above.
AUTO_ILP_PLACEMENTS = 20_000

#: Who assembles the ILP/LP: the Pyomo model (the declarative reference), the numpy sparse arrays of
#: :mod:`primaldual.offline_matrix` handed to highspy, or ``auto``: the matrix path for the strong per-server
#: model with HiGHS and no MIP start above :data:`AUTO_MATRIX_PLACEMENTS` placement variables.
BUILDERS = ("auto", "pyomo", "matrix")
AUTO_MATRIX_PLACEMENTS = 5_000

#: Statuses for which an incumbent or a relaxation bound was found (the CLI exits 0).
SUCCESS_STATUSES = ("optimal", "feasible")


@dataclass(frozen=True)
class OfflineResult:
    """The outcome of :func:`solve_offline` (named fields, like scipy's ``OptimizeResult``).

    For the ILP, ``objective`` is the verified utility of ``schedule`` (None if there is none) and ``bound``
    an upper bound on OPT. For a relaxation (``relaxed`` or ``pooled``) there is no schedule: ``objective`` is
    the relaxation's value at the solver's answer and ``bound`` the solver's bound on the relaxation, itself an
    upper bound on OPT; a relaxation stopped before it proved a bound (an LP at its time limit) reports neither
    and has status ``"time_limit_no_incumbent"``. ``gap = (bound - objective) / |bound|`` (0 when both are 0).
    ``solve_seconds`` is the wall time of the solve call, Pyomo's translation of the model included;
    ``solver_seconds`` the backend's own run time where it reports one.
    ``incumbent_source`` is ``"solver"``, ``"start"`` (the MIP start was better) or ``"empty"``.
    """

    status: str
    objective: float | None
    bound: float | None
    gap: float | None
    schedule: Schedule | None
    build_seconds: float
    solve_seconds: float
    solver: str
    solver_version: str
    n_variables: int
    n_constraints: int
    solver_seconds: float | None = None
    formulation: str = "strong"
    relaxed: bool = False
    pooled: bool = False
    termination: str = ""
    incumbent_source: str | None = None
    start_objective: float | None = None
    message: str = ""
    method: str = "ilp"
    details: dict = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return self.status in SUCCESS_STATUSES

    def to_dict(self) -> dict:
        """Everything but the schedule, JSON-ready (the keys of ``primaldual solve --json``)."""
        return {
            "status": self.status,
            "method": self.method,
            "objective": self.objective,
            # The value of the returned schedule, under the project's common name for it (None for a relaxation).
            "utility": self.objective if self.schedule is not None else None,
            "bound": self.bound,
            "gap": self.gap,
            "solver": self.solver,
            "solver_version": self.solver_version,
            "build_seconds": self.build_seconds,
            "solve_seconds": self.solve_seconds,
            "solver_seconds": self.solver_seconds,
            "n_variables": self.n_variables,
            "n_constraints": self.n_constraints,
            "formulation": self.formulation,
            "relaxed": self.relaxed,
            "pooled": self.pooled,
            "termination": self.termination,
            "incumbent_source": self.incumbent_source,
            "start_objective": self.start_objective,
            "admitted": None if self.schedule is None else len(self.schedule.admitted),
            "message": self.message,
            "details": self.details,
        }


# ------------------------------------------------------------------------------------------ validation


def _check_arguments(solver, time_limit, mip_gap, threads, formulation, grace, method=None,
                     memory_limit=None) -> None:
    problems = []
    if method is not None and method not in METHODS:
        problems.append(f"--method: must be one of {', '.join(METHODS)}, got {method!r}")
    if memory_limit is not None and (
        isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, float, np.integer))
        or not memory_limit >= 2**26 or not math.isfinite(memory_limit)
    ):
        problems.append(f"--memory-limit: must be a number of bytes >= 64 MiB, got {memory_limit!r}")
    if time_limit is not None and (
        isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0
        or not math.isfinite(time_limit)
    ):
        problems.append(f"--time-limit: must be a finite number of seconds > 0, got {time_limit!r}")
    if mip_gap is not None and (
        isinstance(mip_gap, bool) or not isinstance(mip_gap, (int, float)) or not 0 <= mip_gap < 1
    ):
        problems.append(f"--gap: must be a relative gap in [0, 1), got {mip_gap!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1):
        problems.append(f"--threads: must be an integer >= 1, got {threads!r}")
    if formulation not in FORMULATIONS:
        problems.append(f"--formulation: must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")
    if grace is not None and (not isinstance(grace, (int, float)) or not grace >= 0 or not math.isfinite(grace)):
        problems.append(f"grace: must be a finite number of seconds >= 0, got {grace!r}")
    if not isinstance(solver, str):
        problems.append(f"--solver: must be a solver name, got {solver!r}")
    if problems:
        raise InputError(problems)
    check_solver(solver)


def _check_start(instance: Instance, start: Schedule) -> float:
    """Verify the MIP start; return its utility or raise :class:`InputError` naming the violations."""
    if not isinstance(start, Schedule):
        raise InputError(f"--start: must be a Schedule, got {type(start).__name__}")
    report = verify(instance, start)
    if not report.feasible:
        shown = [f"eq. {v.equation} [{v.kind}] {v.message}" for v in report.violations[:10]]
        more = len(report.violations) - len(shown)
        raise InputError(
            ["--start: the schedule is infeasible, so it cannot seed the solver"] + shown
            + ([f"... and {more} more violations"] if more > 0 else [])
        )
    return float(report.utility)


# --------------------------------------------------------------------------------------- build and solve


def _seed(model, instance: Instance, start: Schedule) -> None:
    """Set every variable to the start's values (0 where the start has nothing): the MIP start."""
    for var in model.component_data_objects(pyo.Var):
        var.set_value(0, skip_validation=True)
    for i, assignment in start.assignments.items():
        if i not in model.jobs:
            continue  # unreachable for a verified start: every admitted job can finish and fits somewhere
        completion = assignment.completion_slot()
        if completion is None or (i, completion) not in model.complete:
            continue
        model.admit[i].set_value(1, skip_validation=True)
        model.complete[i, completion].set_value(1, skip_validation=True)
        for t, h in zip(*np.nonzero(assignment.workers)):
            if (i, int(t), int(h)) in model.workers:
                model.workers[i, int(t), int(h)].set_value(int(assignment.workers[t, h]), skip_validation=True)
        for t, k in zip(*np.nonzero(assignment.parameter_servers)):
            if (i, int(t), int(k)) in model.parameter_servers:
                model.parameter_servers[i, int(t), int(k)].set_value(
                    int(assignment.parameter_servers[t, k]), skip_validation=True)
        for t in range(instance.jobs[i].arrival, completion + 1):
            model.unfinished[i, t].set_value(1, skip_validation=True)
        if hasattr(model, "work_done"):
            running = np.cumsum(assignment.workers_per_slot)
            for t in range(instance.jobs[i].arrival, instance.horizon):
                model.work_done[i, t].set_value(float(running[t]), skip_validation=True)


def _extract(model, instance: Instance) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per admitted job, the (T, H) worker and (T, K) PS counts of the solver's answer, rounded to integers."""
    horizon = instance.horizon
    n_worker, n_ps = instance.cluster.n_worker_servers, instance.cluster.n_ps_servers
    admitted = [i for i in model.jobs if (model.admit[i].value or 0) > 0.5]
    out = {i: (np.zeros((horizon, n_worker), dtype=np.int64), np.zeros((horizon, n_ps), dtype=np.int64))
           for i in admitted}
    for (i, t, h), var in model.workers.items():
        if i in out and var.value:
            out[i][0][t, h] = int(round(var.value))
    for (i, t, k), var in model.parameter_servers.items():
        if i in out and var.value:
            out[i][1][t, k] = int(round(var.value))
    return out


def _build_and_solve_matrix(instance, *, time_limit, mip_gap, threads, relax, notify=None, deadline=None) -> dict:
    """The strong per-server model as numpy sparse arrays solved by highspy (:mod:`primaldual.offline_matrix`)."""
    from primaldual.offline_matrix import build_matrix_model, matrix_assignments, solve_matrix_model

    started = time.perf_counter()
    model = build_matrix_model(instance)
    build_seconds = time.perf_counter() - started
    if notify is not None:
        notify("built", {"build_seconds": build_seconds, "n_variables": model.n_variables,
                         "n_constraints": model.n_constraints, "objective_slack": model.objective_slack})
    if deadline is not None:
        time_limit = remaining(deadline)
    gap = mip_gap if mip_gap is not None else (None if relax else DEFAULT_HIGHS_GAP)
    outcome, values = solve_matrix_model(model, relax=relax, time_limit=time_limit, mip_gap=gap, threads=threads)
    assignments = None if relax or values is None else matrix_assignments(model, values, instance)
    return {"build_seconds": build_seconds, "n_variables": model.n_variables, "n_constraints": model.n_constraints,
            "objective_slack": model.objective_slack, "outcome": outcome, "assignments": assignments,
            "builder": "matrix"}


def resolve_builder(instance, builder, *, solver, pooled, formulation, start) -> str:
    """``"pyomo"`` or ``"matrix"``: what ``builder`` (:data:`BUILDERS`) means for this call."""
    if builder not in BUILDERS:
        raise InputError(f"--builder: must be one of {', '.join(BUILDERS)}, got {builder!r}")
    matrix_ok = solver == "highs" and not pooled and formulation == "strong" and start is None
    if builder == "matrix" and not matrix_ok:
        raise InputError("--builder: the matrix path covers the strong per-server model solved by HiGHS without "
                         "a MIP start; use --builder pyomo for the others")
    if builder == "auto":
        return "matrix" if matrix_ok and placement_count(instance) > AUTO_MATRIX_PLACEMENTS else "pyomo"
    return builder


def _build_and_solve(instance, *, solver, time_limit, mip_gap, threads, relax, pooled, formulation, start,
                     notify=None, deadline=None, builder="pyomo") -> dict:
    """Build, optionally seed, solve; return plain data (picklable: it may cross a process boundary).

    With a ``deadline`` (absolute ``time.time()``) the solver gets only the time left after building."""
    if builder == "matrix":
        return _build_and_solve_matrix(instance, time_limit=time_limit, mip_gap=mip_gap, threads=threads,
                                       relax=relax, notify=notify, deadline=deadline)
    started = time.perf_counter()
    model = build_offline_model(instance, relax=relax, formulation=formulation, pooled=pooled)
    build_seconds = time.perf_counter() - started
    n_variables, n_constraints = model_size(model)
    if notify is not None:
        notify("built", {"build_seconds": build_seconds, "n_variables": n_variables, "n_constraints": n_constraints,
                         "objective_slack": float(model.objective_slack)})
    if start is not None:
        _seed(model, instance, start)
    gap = mip_gap if mip_gap is not None else (DEFAULT_HIGHS_GAP if solver == "highs" and not relax else None)
    on_start = on_incumbent = None
    if notify is not None:
        def on_start():
            notify("solving", {})

        if not relax and not pooled:
            def on_incumbent(objective, bound):
                # Sent as found, so that a parent that kills this process keeps the best schedule so far.
                notify("incumbent", {"assignments": _extract(model, instance), "bound": bound,
                                     "objective": objective})

    if deadline is not None:
        time_limit = remaining(deadline)
    outcome = solve_model(model, solver=solver, time_limit=time_limit, mip_gap=gap, threads=threads,
                          warmstart=start is not None, on_start=on_start, on_incumbent=on_incumbent)
    assignments = None
    if outcome.has_solution and not relax and not pooled:
        assignments = _extract(model, instance)
    return {
        "build_seconds": build_seconds,
        "n_variables": n_variables,
        "n_constraints": n_constraints,
        "objective_slack": float(model.objective_slack),
        "outcome": outcome,
        "assignments": assignments,
        "builder": "pyomo",
    }


def _ilp_in_child(notify, instance, options) -> dict:  # runs in the spawned process
    raw = _build_and_solve(instance, notify=notify, **options)
    outcome = raw["outcome"]
    if outcome.status == "error" and any(word in outcome.message for word in (
            "MemoryError", "bad_alloc", "can't start new thread")):
        # solve_model reports a failed allocation as a solver error; under the child's cap it is the cap.
        raise MemoryError(outcome.message)
    return raw


def _prepare_ilp(instance, options) -> None:  # runs in the spawned process, before its memory cap
    import pyomo.contrib.appsi.solvers.highs  # noqa: F401 - the import the HiGHS path makes later

    check_solver(options["solver"])
    solver_version(options["solver"])


def _prepare_cg(instance, jobs, options) -> None:  # runs in the spawned process, before its memory cap
    import primaldual.oasis  # noqa: F401
    import primaldual.price_and_branch  # noqa: F401
    import primaldual.simulate  # noqa: F401


def _cg_in_child(notify, instance, jobs, options) -> dict:  # runs in the spawned process
    from primaldual.price_and_branch import column_generation_solve

    return column_generation_solve(instance, jobs, notify=notify, **options)


def default_grace(time_limit: float) -> float:
    """Seconds past the solver's time limit before the child is killed: room for a backend that stops a little
    late, for reading its answer back into Pyomo and for sending it to the parent."""
    return 5.0 + 0.1 * float(time_limit)


# ----------------------------------------------------------------------------------------- certificate


def _gap(objective: float | None, bound: float | None) -> float | None:
    if objective is None or bound is None:
        return None
    if bound == objective:
        return 0.0
    return float((bound - objective) / max(abs(bound), 1e-12))


def _proven(objective: float, bound: float) -> bool:
    """The bound meets the incumbent (a bound below the incumbent is handled before this is asked)."""
    return 0.0 <= bound - objective <= OPTIMALITY_TOLERANCE * max(1.0, abs(bound))


def resolve_method(instance: Instance, method: str | None, relax: bool = False, pooled: bool = False) -> str:
    """The method a call means: ``method`` if given (``relax``/``pooled`` are its old spellings), and for
    ``"auto"`` the ILP when the model has at most :data:`AUTO_ILP_PLACEMENTS` placement variables, else ``"cg"``."""
    legacy = "lp" if relax else ("pooled" if pooled else None)
    if relax and pooled:
        legacy = "pooled"  # the pooled model with relax=True was never distinct from --pooled's bound
    if method is None:
        return legacy or "ilp"
    if legacy is not None and method != legacy:
        raise InputError(f"--method: {method} contradicts --{'relax' if relax else 'pooled'} (which means "
                         f"--method {legacy}); give one of them")
    if method != "auto":
        return method
    return "ilp" if placement_count(instance) <= AUTO_ILP_PLACEMENTS else "cg"


def placement_count(instance: Instance) -> int:
    """Worker and PS placement variables of the per-server model: the size ``auto`` looks at."""
    sparsity = offline_sparsity(instance)
    return int(sum((instance.horizon - instance.jobs[i].arrival)
                   * (np.count_nonzero(sparsity.worker_fit[i]) + np.count_nonzero(sparsity.ps_fit[i]))
                   for i in sparsity.jobs))


def solve_offline(
    instance: Instance,
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    start: Schedule | None = None,
    relax: bool = False,
    pooled: bool = False,
    formulation: str = "strong",
    grace: float | None = None,
    *,
    method: str | None = None,
    memory_limit: int | None = None,
    progress=None,
    builder: str = "auto",
) -> OfflineResult:
    """Solve the offline problem of ``instance`` (or bound it) and certify the answer.

    ``method`` (:data:`METHODS`): ``"ilp"`` (default), ``"lp"`` (the LP relaxation; ``relax=True`` is the old
    spelling), ``"pooled"`` (``pooled=True``), ``"cg"`` (column generation and price-and-branch over the
    packing formulation (14)-(18), :mod:`primaldual.price_and_branch`: a verified schedule and a certified
    bound) or ``"auto"`` (:func:`resolve_method`); ``OfflineResult.method`` is the one used.

    ``time_limit`` (seconds) bounds the whole call, building included: the build and solve run in a spawned
    child that is killed ``grace`` seconds (default :func:`default_grace`) after the limit, and the solver
    gets the time left after building. ``memory_limit`` (bytes; default
    :func:`primaldual.offline_child.default_memory_limit`) caps the child's address space; past it the status
    is ``"memory_limit"``. Without either limit the solve runs in this process; inside a daemonic process
    (e.g. a ``multiprocessing.Pool`` worker), which may not start children, too, with the solver's own limit
    only, and ``message`` says so. ``builder`` (:data:`BUILDERS`) chooses who assembles the ILP/LP: the Pyomo
    model or numpy sparse arrays handed to highspy (:func:`resolve_builder`). ``progress(line)``, if given, receives progress lines while a child runs.
    ``mip_gap`` is a relative gap at which the solver may stop; the result is then ``"feasible"`` with its gap
    unless the bound meets the incumbent. ``start`` is a feasible schedule used as a MIP start and as a floor
    on the incumbent.

    Bad arguments, an unknown or unavailable solver, and an infeasible start raise :class:`InputError`. An
    instance where no job can finish returns ``"optimal"`` with objective 0 without calling a solver.
    """
    _check_arguments(solver, time_limit, mip_gap, threads, formulation, grace, method, memory_limit)
    method = resolve_method(instance, method, bool(relax), bool(pooled))
    relax, pooled = method == "lp", method == "pooled"
    relaxation = relax or pooled
    start_utility = None
    if start is not None:
        if relaxation:
            raise InputError("--start: a MIP start seeds the ILP; it does not apply to --relax or --pooled")
        start_utility = _check_start(instance, start)
    version = solver_version(solver) if method != "cg" else _highspy_version()
    jobs = schedulable_jobs(instance)
    trivial_bound = float(sum(instance.best_utility(i) for i in jobs))
    common = dict(solver=solver if method != "cg" else "highs", solver_version=version, formulation=formulation,
                  relaxed=relax, pooled=pooled, method=method)

    if not jobs:
        schedule = None if relaxation else Schedule({}, meta={"source": "offline", "status": "optimal"})
        if schedule is not None and not verify(instance, schedule).feasible:  # pragma: no cover - defensive
            raise AssertionError("the empty schedule failed verification")
        why = "the instance has no jobs" if instance.n_jobs == 0 else (
            "no job can finish by the horizon (or fit on any server)")
        return OfflineResult(
            status="optimal", objective=0.0, bound=0.0, gap=0.0, schedule=schedule, build_seconds=0.0,
            solve_seconds=0.0, n_variables=0, n_constraints=0, termination="not solved",
            incumbent_source="empty", start_objective=start_utility,
            message=f"{why}: the optimum admits nothing; no solver was called", **common,
        )

    notes = []
    in_child = (time_limit is not None or memory_limit is not None)
    if in_child and multiprocessing.current_process().daemon:
        notes.append("no hard wall-clock limit (nor memory limit): a daemonic process may not start the solver process")
        in_child = False
    deadline = None if time_limit is None else time.time() + float(time_limit)
    if method == "cg":
        options = dict(deadline=deadline, threads=threads)
        target, arguments, prepare = _cg_in_child, (instance, jobs, options), _prepare_cg
    else:
        options = dict(solver=solver, time_limit=time_limit, mip_gap=mip_gap, threads=threads, relax=relax,
                       pooled=pooled, formulation=formulation, start=start, deadline=deadline,
                       builder=resolve_builder(instance, builder, solver=solver, pooled=pooled,
                                               formulation=formulation, start=start))
        target, arguments, prepare = _ilp_in_child, (instance, options), _prepare_ilp
    started = time.perf_counter()
    if in_child:
        raw = run_in_child(target, arguments, time_limit=time_limit,
                           grace=default_grace(time_limit or 0.0) if grace is None else float(grace),
                           memory_limit=int(memory_limit) if memory_limit is not None else default_memory_limit(),
                           progress=progress, prepare=prepare)
    else:
        # In this process only column generation's own progress lines can be shown (nothing else reports).
        forward = None if progress is None or method != "cg" else (
            lambda kind, data: progress(str(data)) if kind == "progress" else None)
        raw = target(forward, *arguments)
    raw.setdefault("elapsed", time.perf_counter() - started)
    raw.setdefault("method", method)
    if method == "cg":
        return _certify_cg(instance, raw, start, start_utility, trivial_bound, notes, common)
    return _certify(instance, raw, start, start_utility, trivial_bound, relaxation, notes, common)


def _highspy_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("highspy")
    except metadata.PackageNotFoundError:  # pragma: no cover - highspy is a dependency
        return "unknown"


def _certify(instance, raw, start, start_utility, trivial_bound, relaxation, notes, common) -> OfflineResult:
    """Turn the solver's raw answer into an honest :class:`OfflineResult` (see the module docstring)."""
    outcome: SolveOutcome | None = raw.get("outcome")
    killed = bool(raw.get("killed"))
    memory = raw.get("memory")
    failure = raw.get("error")
    built = raw.get("built") or {}
    solve_seconds = float(outcome.seconds if outcome is not None else raw.get("solve_seconds", raw.get("elapsed", 0.0)))
    _limit_notes(raw, notes)
    if outcome is not None and outcome.message:
        notes.append(outcome.message)
    # The model counts utilities below its floor as 0 (models/offline.py): its optimum may fall short of OPT
    # by at most this much, so the bound on OPT is the model's bound plus this slack.
    slack = float(raw.get("objective_slack", built.get("objective_slack", 0.0)))
    fields = dict(
        build_seconds=float(raw.get("build_seconds", built.get("build_seconds", 0.0))),
        solve_seconds=solve_seconds,
        solver_seconds=outcome.solver_seconds if outcome is not None else None,
        termination=outcome.termination if outcome is not None else ("killed" if killed else "error"),
        n_variables=int(raw.get("n_variables", built.get("n_variables", 0))),
        n_constraints=int(raw.get("n_constraints", built.get("n_constraints", 0))),
        **common,
    )
    if relaxation:
        result = _certify_relaxation(outcome, killed, slack, notes, fields)
    else:
        result = _certify_ilp(instance, raw, outcome, killed, failure, slack, start, start_utility,
                              trivial_bound, notes, fields)
    if memory and result.status in ("error", "killed", "time_limit_no_incumbent"):
        result = replace(result, status="memory_limit")
    if raw.get("builder"):
        result = replace(result, details={**result.details, "builder": raw["builder"]})
    return result


def _limit_notes(raw: dict, notes: list) -> None:
    """Say which limit ended a child and in which phase."""
    if raw.get("killed"):
        phase = raw.get("phase", "solving")
        notes.append(f"the time limit ran out while {phase}: the solver process was killed after "
                     f"{float(raw.get('elapsed', 0.0)):.1f} s")
    if raw.get("memory"):
        advice = "raise --memory-limit" + ("" if raw.get("method") == "cg" else
                                           " or try --method cg, whose master program is much smaller")
        notes.append(f"the solver process reached its memory limit ({raw['memory']}); {advice}")
    if raw.get("error"):
        notes.append(f"solver process failed: {raw['error']}")


def _certify_relaxation(outcome, killed, slack, notes, fields) -> OfflineResult:
    """A relaxation's answer is its bound: without one (an LP stopped early) nothing is certified."""
    objective = outcome.objective if outcome is not None and outcome.has_solution else None
    bound = None if outcome is None or outcome.bound is None else outcome.bound + slack
    if objective is not None and bound is not None and bound < objective:
        bound = objective  # the solver's bound on its own relaxation, equal up to tolerances
    if objective is not None and bound is None:
        # An interrupted simplex has a primal value that bounds nothing; reporting it would invite misuse.
        notes.append("the relaxation was not solved to the end, so its value bounds nothing")
        objective = None
    if killed:
        status = "killed"
    elif outcome is None or outcome.status == "error":
        status = "error"
    elif objective is not None:
        status = "optimal" if outcome.status == "optimal" else "feasible"
    elif outcome.status == "infeasible":
        status = "infeasible"
    else:
        status = "time_limit_no_incumbent"
    return OfflineResult(
        status=status, objective=objective, bound=bound, gap=_gap(objective, bound), schedule=None,
        incumbent_source=None, start_objective=None, message="; ".join(notes), **fields,
    )


def _certify_ilp(instance, raw, outcome, killed, failure, slack, start, start_utility, trivial_bound, notes,
                 fields) -> OfflineResult:
    """The ILP: the incumbent is the better of the solver's verified schedule and the start; the bound is
    the solver's (plus the floor's slack), capped by the trivial bound and discarded if below the incumbent."""
    candidates = []
    assignments = raw.get("assignments")
    bound_reported = outcome.bound if outcome is not None else None
    if outcome is None and raw.get("incumbent") is not None:
        # Killed (or crashed) mid-solve: the last incumbent the solver reported, with its bound at the time.
        assignments = raw["incumbent"]["assignments"]
        bound_reported = raw["incumbent"]["bound"]
    if assignments is not None:
        solver_schedule = Schedule({i: JobSchedule(w, z) for i, (w, z) in assignments.items()})
        report = verify(instance, solver_schedule)
        if report.feasible:
            candidates.append(("solver", float(report.utility), solver_schedule))
        else:
            shown = "; ".join(f"eq. {v.equation} {v.message}" for v in report.violations[:3])
            notes.append(f"the solver's answer failed verification and was discarded: {shown}")
    if start is not None:
        candidates.append(("start", float(start_utility), start))
    source, objective, schedule = None, None, None
    if candidates:
        # Prefer the solver's schedule on a tie (it carries the certificate); the start only when better.
        source, objective, schedule = max(candidates, key=lambda c: (c[1], c[0] == "solver"))
        if source == "start" and any(c[0] == "solver" for c in candidates):
            notes.append("the solver's incumbent is worse than the start; returning the start")
        elif source == "start":
            notes.append("the solver returned no schedule; returning the start")

    bound = trivial_bound
    if bound_reported is not None:
        bound = min(float(bound_reported) + slack, trivial_bound)
    if objective is not None and bound < objective:
        if objective - bound <= OPTIMALITY_TOLERANCE * max(1.0, abs(objective)):
            bound = objective  # equal up to the solver's tolerances
        else:
            notes.append(
                f"the solver's bound {bound:.9g} is below a verified schedule's utility {objective:.9g}, so it "
                f"is wrong; using the trivial bound {trivial_bound:.9g}"
            )
            bound = trivial_bound

    solver_said = outcome.status if outcome is not None else "error"
    if killed:
        status = "killed"
    elif failure or solver_said == "error" or (objective is None and assignments is not None):
        status = "error"
    elif objective is not None:
        status = "optimal" if solver_said == "optimal" and _proven(objective, bound) else "feasible"
        if solver_said == "optimal" and status == "feasible" and (outcome.objective or 0) < objective - 1e-6:
            notes.append("the solver claimed optimality for a worse solution than the start")
    elif solver_said == "infeasible":
        status = "infeasible"
    elif solver_said in ("time_limit", "other_limit", "feasible", "optimal"):
        status = "time_limit_no_incumbent"
    else:
        status = "error"

    if schedule is not None:
        schedule = Schedule(schedule.assignments, meta={
            **(schedule.meta if source == "start" else {}),
            "source": "offline" if source == "solver" else "offline:start",
            "status": status, "objective": objective, "bound": bound,
            "solver": fields["solver"], "formulation": fields["formulation"],
        })
    return OfflineResult(
        status=status, objective=objective, bound=bound, gap=_gap(objective, bound), schedule=schedule,
        incumbent_source=source, start_objective=start_utility, message="; ".join(notes), **fields,
    )


def _certify_cg(instance, raw, start, start_utility, trivial_bound, notes, common) -> OfflineResult:
    """Column generation's answer: the best verified schedule (the start if better) and the best Lagrangian
    bound, capped by the trivial bound; ``"optimal"`` only when the bound meets the schedule."""
    _limit_notes(raw, notes)
    bound_data = raw.get("bound")
    bound = bound_data.get("bound") if isinstance(bound_data, dict) else bound_data
    if bound is None or not math.isfinite(float(bound)):
        notes.append("column generation completed no pricing round: the bound is the trivial one "
                     "(each job alone on the empty cluster)")
        bound = trivial_bound
    bound = min(float(bound), trivial_bound)
    assignments = raw.get("assignments") or (raw.get("incumbent") or {}).get("assignments")
    candidates = []
    if assignments is not None:
        schedule = Schedule({i: JobSchedule(w, z) for i, (w, z) in assignments.items()})
        report = verify(instance, schedule)
        if report.feasible:
            candidates.append(("solver", float(report.utility), schedule))
        else:  # pragma: no cover - columns are whole schedules within the capacity rows
            notes.append("the price-and-branch schedule failed verification and was discarded")
    if start is not None:
        candidates.append(("start", float(start_utility), start))
    source, objective, schedule = (max(candidates, key=lambda c: (c[1], c[0] == "solver"))
                                   if candidates else (None, None, None))
    if objective is not None and bound < objective:
        if objective - bound > OPTIMALITY_TOLERANCE * max(1.0, abs(objective)):
            notes.append(f"the bound {bound:.9g} is below a verified schedule's utility {objective:.9g}, so it is "
                         f"wrong; using the trivial bound {trivial_bound:.9g}")
            bound = trivial_bound
        else:
            bound = objective
    if raw.get("killed"):
        status = "killed"
    elif raw.get("memory"):
        status = "memory_limit"
    elif raw.get("error") or objective is None:
        status = "error"
    else:
        status = "optimal" if _proven(objective, bound) else "feasible"
    details = {key: raw[key] for key in ("rounds", "columns", "rows", "converged", "lp_value", "seeds",
                                         "seed_seconds", "cg_seconds", "mip_seconds", "mip_status") if key in raw}
    if raw.get("rounds") is not None:
        notes.append(f"column generation: {raw['rounds']} rounds, {raw.get('columns')} columns, "
                     f"{'converged' if raw.get('converged') else 'stopped at the time limit'}; price-and-branch "
                     f"{raw.get('mip_status')}")
    if schedule is not None:
        schedule = Schedule(schedule.assignments, meta={
            **(schedule.meta if source == "start" else {}),
            "source": "offline:cg" if source == "solver" else "offline:start", "status": status,
            "objective": objective, "bound": bound, "method": "cg"})
    return OfflineResult(
        status=status, objective=objective, bound=bound, gap=_gap(objective, bound), schedule=schedule,
        build_seconds=float(raw.get("seed_seconds", 0.0)), solve_seconds=float(raw.get("elapsed", 0.0)),
        n_variables=int(raw.get("columns", 0)), n_constraints=int(raw.get("rows", 0)),
        termination="converged" if raw.get("converged") else status, incumbent_source=source,
        start_objective=start_utility, message="; ".join(notes), details=details, **common,
    )


# ------------------------------------------------------------------------------------------------ export


#: file extension -> Pyomo writer (``lp`` is the CPLEX LP format that HiGHS, CBC, GLPK and Gurobi read)
EXPORT_FORMATS = {".mps": "mps", ".lp": "cpxlp"}


def write_model(
    instance: Instance, path: str | Path, relax: bool = False, formulation: str = "strong", pooled: bool = False
) -> dict:
    """Write the model as MPS or CPLEX-LP (chosen by the extension) for re-solving elsewhere.

    Variable and constraint names are Pyomo's symbolic names, e.g. ``workers(3_12_0)`` is y_{i=3,h=0}(t=12).
    Returns ``{"path", "format", "n_variables", "n_constraints"}`` (format ``"mps"`` or ``"lp"``).
    """
    path = Path(path)
    file_format = EXPORT_FORMATS.get(path.suffix.lower())
    if file_format is None:
        raise InputError(f"--write-mps: the file name must end in .mps or .lp, got {str(path)!r}")
    if not path.parent.exists():
        raise InputError(f"--write-mps: directory {str(path.parent)!r} does not exist")
    if formulation not in FORMULATIONS:
        raise InputError(f"--formulation: must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")
    model = build_offline_model(instance, relax=relax, formulation=formulation, pooled=pooled)
    n_variables, n_constraints = model_size(model)
    model.write(str(path), format=file_format, io_options={"symbolic_solver_labels": True})
    return {"path": str(path), "format": path.suffix.lower()[1:], "n_variables": n_variables,
            "n_constraints": n_constraints}


__all__ = [
    "AUTO_ILP_PLACEMENTS", "AUTO_MATRIX_PLACEMENTS", "BUILDERS", "METHODS", "resolve_builder", "placement_count", "resolve_method",
    "DEFAULT_HIGHS_GAP", "OPTIMALITY_TOLERANCE", "OfflineResult", "STATUSES", "default_grace", "solve_offline",
    "write_model",
]
