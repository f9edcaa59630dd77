"""Solver backends that Pyomo drives, looked up by short name.

HiGHS (through highspy, Pyomo's ``appsi_highs`` interface) is the default and needs nothing outside pip; CBC and
GLPK come from Debian (``coinor-cbc``, ``glpk-utils``); SCIP, Gurobi and CPLEX are used where installed or
licensed. :func:`solve_model` is the one place a Pyomo model is handed to a solver, for every model of the
package (the offline ILP, Dorm's partition MILP, the batch-sizing model).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pyomo.environ as pyo
from pyomo.opt import SolverStatus, TerminationCondition

from primaldual.errors import InputError

#: short name -> Pyomo SolverFactory name
SOLVERS: dict[str, str] = {
    "highs": "appsi_highs",
    "cbc": "cbc",
    "glpk": "glpk",
    "scip": "scip",
    "gurobi": "gurobi",
    "cplex": "cplex",
}


def solver_available(name: str) -> bool:
    if name not in SOLVERS:
        return False
    try:
        return bool(pyo.SolverFactory(SOLVERS[name]).available(exception_flag=False))
    except Exception:  # a broken plugin is as good as absent
        return False


def available_solvers() -> list[str]:
    return [name for name in SOLVERS if solver_available(name)]


def solver_version(name: str) -> str:
    try:
        version = pyo.SolverFactory(SOLVERS[name]).version()
    except Exception:
        return "unknown"
    return ".".join(str(part) for part in version) if isinstance(version, tuple) else str(version)


def get_solver(name: str):
    """The Pyomo solver object for ``name``; :class:`InputError` if unknown or not installed here."""
    if name not in SOLVERS:
        raise InputError(f"--solver: unknown solver {name!r}; known: {', '.join(SOLVERS)}")
    if not solver_available(name):
        raise InputError(
            f"--solver: {name} is not available on this machine (available: {', '.join(available_solvers())})"
        )
    return pyo.SolverFactory(SOLVERS[name])


@dataclass(frozen=True)
class SolveOutcome:
    """What a solver said: Pyomo's termination condition, whether values were loaded, bounds, seconds."""

    termination: str
    has_solution: bool
    objective: float | None
    bound: float | None
    seconds: float
    solver: str
    version: str


def _options(name: str, time_limit: float | None, mip_gap: float | None, threads: int | None) -> dict:
    options = {}
    if name == "highs":
        if time_limit is not None:
            options["time_limit"] = float(time_limit)
        if mip_gap is not None:
            options["mip_rel_gap"] = float(mip_gap)
        if threads is not None:
            options["threads"] = int(threads)
    elif name == "cbc":
        if time_limit is not None:
            options["sec"] = float(time_limit)
        if mip_gap is not None:
            options["ratio"] = float(mip_gap)
        if threads is not None:
            options["threads"] = int(threads)
    elif name == "glpk":
        if time_limit is not None:
            options["tmlim"] = int(max(1, round(time_limit)))
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
    return options


def solve_model(
    model,
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    warmstart: bool = False,
) -> SolveOutcome:
    """Solve ``model`` in place (values loaded when a solution exists) and say what happened."""
    backend = get_solver(solver)
    options = _options(solver, time_limit, mip_gap, threads)
    started = time.perf_counter()
    kwargs = {"load_solutions": False}
    if warmstart and solver in ("cbc", "gurobi", "cplex"):
        kwargs["warmstart"] = True
    if solver == "highs":
        for key, value in options.items():
            backend.highs_options[key] = value
        if warmstart:
            backend.config.warmstart = True if hasattr(backend.config, "warmstart") else None
        results = backend.solve(model, **kwargs)
    else:
        results = backend.solve(model, options=options, **kwargs)
    seconds = time.perf_counter() - started
    termination = results.solver.termination_condition
    has_solution = False
    try:
        if len(results.solution) > 0 or solver == "highs":
            model.solutions.load_from(results)
            has_solution = True
    except Exception:
        has_solution = False
    objective = None
    if has_solution:
        objectives = list(model.component_data_objects(pyo.Objective, active=True))
        try:
            objective = float(pyo.value(objectives[0])) if objectives else None
        except (ValueError, TypeError):
            has_solution, objective = False, None
    sense_max = any(o.sense == pyo.maximize for o in model.component_data_objects(pyo.Objective, active=True))
    raw_bound = results.problem.upper_bound if sense_max else results.problem.lower_bound
    bound = None
    try:
        bound = float(raw_bound) if raw_bound is not None and abs(float(raw_bound)) != float("inf") else None
    except (TypeError, ValueError):
        bound = None
    return SolveOutcome(
        termination=str(termination),
        has_solution=has_solution and results.solver.status != SolverStatus.aborted,
        objective=objective,
        bound=bound,
        seconds=seconds,
        solver=solver,
        version=solver_version(solver),
    )


__all__ = [
    "SOLVERS", "SolveOutcome", "TerminationCondition", "available_solvers", "get_solver",
    "solve_model", "solver_available", "solver_version",
]
