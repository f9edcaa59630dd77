"""Solver backends that Pyomo drives, looked up by short name.

HiGHS (through highspy, Pyomo's ``appsi_highs`` interface) is the default and needs nothing outside pip; CBC and
GLPK come from Debian (``coinor-cbc``, ``glpk-utils``); SCIP comes from pip as well (``pyscipopt``, whose wheels
bundle SCIP, through Pyomo's ``scip_direct`` interface; the matrix path drives it directly,
:mod:`primaldual.backends.scip`); Gurobi and CPLEX are used where installed or licensed. :func:`solve_model` is the one place a Pyomo model is handed to a solver, for every model of the
package (the offline ILP, Dorm's partition MILP, the batch-sizing model).

What :func:`solve_model` promises, whatever the backend:

* the variables hold the solver's solution when ``has_solution`` is true (a variable the solver did not
  report is set to 0, because solution files omit zeros), and are left untouched otherwise;
* ``objective`` is recomputed from those values (not parsed from a log);
* ``bound`` is the solver's best bound in the model's sense (an upper bound for a maximisation), or None when
  the backend reports none, reports one on the wrong side of its own incumbent, or stopped an LP early;
* ``status`` is one of :data:`STATUSES`, the same words for every backend.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import Callable

import pyomo.environ as pyo
from pyomo.common.log import LoggingIntercept
from pyomo.opt import SolverStatus, TerminationCondition

from primaldual.backends.outcome import SolveOutcome  # noqa: F401 - its home is the Pyomo-free outcome module
from primaldual.core.errors import InputError
from primaldual.backends.highs import (
    appsi_status, finite_or_none, highspy_version, single_objective, size_highs_threads, solve_highs,
    termination_name)

#: short name -> Pyomo SolverFactory name
SOLVERS: dict[str, str] = {
    "highs": "appsi_highs",
    "cbc": "cbc",
    "glpk": "glpk",
    "scip": "scip_direct",
    "gurobi": "gurobi",
    "cplex": "cplex",
}

#: SCIP parameters set on every solve. Dual sparsification (a presolver that adds multiples of one column to
#: another) returned optima with fractional binaries here (completion indicators of 1/3 and 2/3 on a 5-job
#: ``small`` instance, seed 1000, SCIP 10.0 from pyscipopt 6.3), a schedule worth less than the objective
#: claimed; with it off the same solve is integral and equal to HiGHS's optimum.
SCIP_SAFE_PARAMETERS = {"presolving/dualsparsify/maxrounds": 0}

#: Backends whose Pyomo interface accepts a MIP start (the variables' current values).
WARMSTART_SOLVERS = frozenset({"highs", "cbc", "gurobi", "cplex"})

#: Backends whose Pyomo plugin reports no best bound of its own when stopping at a relative MIP gap.
GAP_ONLY_SOLVERS = frozenset({"cbc", "glpk"})

#: ``SolveOutcome.status`` values: a normalised reading of Pyomo's termination condition.
STATUSES = ("optimal", "feasible", "infeasible", "unbounded", "time_limit", "other_limit", "error", "unknown")

_TERMINATION_STATUS = {
    TerminationCondition.optimal: "optimal",
    TerminationCondition.globallyOptimal: "optimal",
    TerminationCondition.locallyOptimal: "optimal",
    TerminationCondition.feasible: "feasible",
    TerminationCondition.infeasible: "infeasible",
    TerminationCondition.unbounded: "unbounded",
    TerminationCondition.infeasibleOrUnbounded: "infeasible",
    TerminationCondition.maxTimeLimit: "time_limit",
    TerminationCondition.maxIterations: "other_limit",
    TerminationCondition.maxEvaluations: "other_limit",
    TerminationCondition.minFunctionValue: "other_limit",
    TerminationCondition.minStepLength: "other_limit",
    TerminationCondition.other: "other_limit",
    TerminationCondition.error: "error",
    TerminationCondition.solverFailure: "error",
    TerminationCondition.internalSolverError: "error",
    TerminationCondition.licensingProblems: "error",
    TerminationCondition.invalidProblem: "error",
    TerminationCondition.resourceInterrupt: "error",
    TerminationCondition.userInterrupt: "error",
}


@functools.lru_cache(maxsize=None)
def solver_available(name: str) -> bool:
    """Whether backend ``name`` can run here (cached per process: it may start the executable)."""
    if name not in SOLVERS:
        return False
    try:
        return bool(pyo.SolverFactory(SOLVERS[name]).available(exception_flag=False))
    except Exception:  # a broken plugin is as good as absent
        return False


def available_solvers() -> list[str]:
    return [name for name in SOLVERS if solver_available(name)]


@functools.lru_cache(maxsize=None)
def solver_version(name: str) -> str:
    try:
        version = pyo.SolverFactory(SOLVERS[name]).version()
    except Exception:
        return "unknown"
    if version is None:
        return "unknown"
    return ".".join(str(part) for part in version) if isinstance(version, tuple) else str(version)


def check_solver(name: str) -> None:
    """Raise :class:`InputError` if ``name`` is unknown or not installed here; cheap, no solver object kept.
    ``auto`` passes: the offline solve resolves it by size (:mod:`primaldual.offline.solver_choice`)."""
    if name == "auto":
        return
    if name not in SOLVERS:
        raise InputError(f"--solver: unknown solver {name!r}; known: {', '.join(SOLVERS)}, auto")
    if not solver_available(name):
        raise InputError(
            f"--solver: {name} is not available on this machine (available: {', '.join(available_solvers())})"
        )


def get_solver(name: str):
    """The Pyomo solver object for ``name``; :class:`InputError` if unknown or not installed here."""
    if name == "auto":
        raise InputError("--solver: auto is resolved by the offline solve; name a backend here")
    check_solver(name)
    return pyo.SolverFactory(SOLVERS[name])


def _options(name: str, time_limit: float | None, mip_gap: float | None, threads: int | None) -> dict:
    options = {}
    if name in ("highs", "cbc"):
        keys = {"highs": ("time_limit", "mip_rel_gap", "threads"), "cbc": ("sec", "ratio", "threads")}[name]
        for key, value, kind in zip(keys, (time_limit, mip_gap, threads), (float, float, int)):
            if value is not None:
                options[key] = kind(value)
        if name == "highs":
            # Keep HiGHS quiet: its log would go to Pyomo's logger on every solve.
            options["output_flag"] = False
    elif name == "glpk":
        if time_limit is not None:
            # glpsol takes whole seconds; round up so that a short limit never becomes "no limit" (0).
            options["tmlim"] = max(1, int(math.ceil(time_limit)))
        if mip_gap is not None:
            options["mipgap"] = float(mip_gap)
    elif name in ("gurobi", "cplex", "scip"):
        keys = {
            "gurobi": ("TimeLimit", "MIPGap", "Threads"),
            "cplex": ("timelimit", "mipgap", "threads"),
            "scip": ("limits/time", "limits/gap", "parallel/maxnthreads"),
        }[name]
        for key, value in zip(keys, (time_limit, mip_gap, threads)):
            if value is not None:
                options[key] = value
        if name == "scip":
            options.update(SCIP_SAFE_PARAMETERS)
    return options


@dataclass(frozen=True, eq=False)
class _BackendAnswer:
    """What a backend's run left behind, before any value is loaded into the model."""

    termination: object  # the backend's own termination condition (appsi's or Pyomo's legacy enum)
    status: str  # its reading as one of STATUSES
    solver_seconds: float | None
    reported_bound: object  # the best bound as the backend reports it (may be None, inf or a string)
    has_answer: bool  # whether the backend says it holds a solution to load
    load: Callable[[], None]  # loads that solution into the model's variables


def _run_highs(model, options, time_limit, mip_gap, threads, warmstart, on_start, on_incumbent) -> _BackendAnswer:
    """HiGHS through Pyomo's appsi interface (:func:`primaldual.backends.highs.solve_highs`)."""
    size_highs_threads(threads)
    _, results = solve_highs(model, options, time_limit, mip_gap, warmstart, on_start, on_incumbent)
    return _BackendAnswer(
        termination=results.termination_condition, status=appsi_status(results.termination_condition),
        solver_seconds=finite_or_none(results.wallclock_time), reported_bound=results.best_objective_bound,
        has_answer=results.best_feasible_objective is not None, load=results.solution_loader.load_vars)


def _run_plugin(model, solver: str, options, warmstart: bool, on_start, sense_max: bool) -> _BackendAnswer:
    """Any other backend through Pyomo's legacy ``SolverFactory`` interface, solution left unloaded."""
    backend = pyo.SolverFactory(SOLVERS[solver])
    kwargs = {"load_solutions": False, "options": options}
    if warmstart:
        kwargs["warmstart"] = True
    if on_start is not None:
        on_start()
    results = backend.solve(model, **kwargs)
    termination = results.solver.termination_condition
    status = _TERMINATION_STATUS.get(termination, "unknown")
    if results.solver.status == SolverStatus.error and status not in ("infeasible", "unbounded"):
        status = "error"
    solver_seconds = finite_or_none(getattr(results.solver, "wallclock_time", None)) or finite_or_none(
        getattr(results.solver, "time", None))
    solutions = getattr(results, "solution", None)

    def load():
        # Pyomo warns on stdout when it loads the answer of a solver stopped at a limit; the status
        # reported here says so already, and the warning would garble the CLI's output.
        with LoggingIntercept(module="pyomo.core"):
            model.solutions.load_from(results)

    return _BackendAnswer(
        termination=termination, status=status, solver_seconds=solver_seconds,
        reported_bound=results.problem.upper_bound if sense_max else results.problem.lower_bound,
        has_answer=solutions is not None and len(solutions) > 0, load=load)


def _load_solution(variables: list, objective, answer: _BackendAnswer) -> float | None:
    """Load the backend's solution and return its objective, recomputed from the loaded values; None (and
    the variables as they were) when there is no finite solution to load."""
    if not answer.has_answer or answer.status in ("infeasible", "unbounded", "error"):
        return None
    previous = [v.value for v in variables]
    for v in variables:
        v.set_value(None, skip_validation=True)
    value = None
    try:
        answer.load()
        for v in variables:
            if v.value is None:  # solution files list non-zero values only
                v.set_value(0, skip_validation=True)
        value = float(pyo.value(objective))
    except Exception:
        value = None
    if value is None or not math.isfinite(value):
        for v, old in zip(variables, previous):
            v.set_value(old, skip_validation=True)
        return None
    return value


def _certified_bound(solver: str, status: str, value: float | None, reported, continuous: bool, sense_max: bool,
                     mip_gap) -> tuple[float | None, str, str]:
    """The bound :func:`solve_model` may promise, the status (an optimum without a solution is an error)
    and a message on what was dropped or corrected."""
    bound = finite_or_none(reported)
    message = ""
    if status != "optimal" and bound is not None and continuous:
        # An LP stopped early reports its current objective as "bound" (Pyomo's appsi does for HiGHS); that is
        # a primal value, not a certificate. Only a finished LP's value bounds anything.
        bound = None
    if bound is not None and value is not None:
        slack = 1e-6 * max(1.0, abs(value))
        wrong_side = bound < value - slack if sense_max else bound > value + slack
        if wrong_side:
            # A bound on the wrong side of the solver's own incumbent is a parsing or sign error: drop it.
            message = f"{solver} reported bound {bound!r} on the wrong side of its incumbent {value!r}; ignored"
            bound = None
    if status == "optimal" and value is None:
        status = "error"
        message = message or f"{solver} reported an optimum but returned no solution"
    if status == "optimal" and solver in GAP_ONLY_SOLVERS and mip_gap:
        # These plugins report a gap-optimal answer as its own bound. GLPK stops when |bound - value| <=
        # g |value|, CBC when it is <= g max(|value|, |bound|) (CbcModel's testGap); the latter allows
        # |bound - value| up to g |value| / (1 - g), so widen by that much (it covers both) to keep a true bound.
        gap = float(mip_gap)
        widen = gap * abs(value) / (1.0 - gap) + 1e-9 if gap < 1 else math.inf
        bound = finite_or_none(value + widen if sense_max else value - widen)
    elif status == "optimal" and bound is None:
        bound = value  # an optimal answer is its own bound (some plugins leave the field empty)
    return bound, status, message


def solve_model(
    model,
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    warmstart: bool = False,
    on_start=None,
    on_incumbent=None,
) -> SolveOutcome:
    """Solve ``model`` in place (values loaded when a solution exists) and say what happened.

    ``warmstart=True`` hands the variables' current values to the backend as a MIP start where the backend
    supports it (:data:`WARMSTART_SOLVERS`: HiGHS through ``Highs.setSolution``, CBC through a ``-mipstart``
    file); elsewhere it is ignored and ``warmstart_used`` is False. ``on_start()``, if given, is called when
    the backend is about to run (for HiGHS after the model is translated), so that a caller can start a
    wall clock on the solver alone. ``on_incumbent(objective, bound)``, if given, is called each time HiGHS
    finds a better solution, with the solution loaded in the model's variables (other backends do not report
    incumbents while they run). Solver errors (a crashed executable, an unreadable answer) are reported as
    ``status="error"`` with the message, not raised; an unknown or unavailable backend raises
    :class:`InputError`.
    """
    check_solver(solver)
    objective = single_objective(model)
    sense_max = objective.sense == pyo.maximize
    options = _options(solver, time_limit, mip_gap, threads)
    version = solver_version(solver)
    use_warmstart = bool(warmstart) and solver in WARMSTART_SOLVERS
    variables = list(model.component_data_objects(pyo.Var, active=True))
    started = time.perf_counter()
    try:
        if solver == "highs":
            answer = _run_highs(model, options, time_limit, mip_gap, threads, use_warmstart, on_start, on_incumbent)
        else:
            answer = _run_plugin(model, solver, options, use_warmstart, on_start, sense_max)
    except Exception as error:  # a crashed or missing executable, an unparsable solution file
        return SolveOutcome(
            termination="error", has_solution=False, objective=None, bound=None,
            seconds=time.perf_counter() - started, solver=solver, version=version, status="error",
            warmstart_used=use_warmstart, message=f"{type(error).__name__}: {error}",
        )
    value = _load_solution(variables, objective, answer)
    seconds = time.perf_counter() - started
    bound, status, message = _certified_bound(
        solver, answer.status, value, answer.reported_bound, all(v.is_continuous() for v in variables),
        sense_max, mip_gap)
    return SolveOutcome(
        termination=termination_name(answer.termination), has_solution=value is not None, objective=value,
        bound=bound, seconds=seconds, solver=solver, version=version, status=status,
        warmstart_used=use_warmstart, message=message, solver_seconds=answer.solver_seconds,
    )


__all__ = [
    "SCIP_SAFE_PARAMETERS", "SOLVERS", "STATUSES", "SolveOutcome", "TerminationCondition", "WARMSTART_SOLVERS", "available_solvers",
    "check_solver", "get_solver", "highspy_version", "solve_model", "solver_available", "solver_version",
]
