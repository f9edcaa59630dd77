"""The LB-BSP batch-sizing problem (docs/papers.md, LB-BSP, [design]) as a Pyomo MILP.

This is the *reference* the fast solver :func:`primaldual.lbbsp.exact.solve_exact` is tested
against. Formulation, with the time laws written as maxima of affine pieces
``T_i(x) = max_k (a_ik + b_ik x)`` (CPU: one piece; GPU: a flat piece and a linear piece):

    min  tau                                         objective ``makespan``  (epigraph of max_i T_i)
    s.t. sum_i x_i = X                               constraint ``conservation``
         tau >= a_ik + b_ik x_i   for all i, k       constraint ``epigraph`` (tau >= T_i(x_i))
         min_batch <= x_i <= M_i, x_i integer        variable bounds / domain of ``batch``

Because every T_i is convex piecewise-linear, ``tau >= every piece`` is equivalent to
``tau >= T_i(x_i)``, so no SOS2 or binaries beyond the integrality of x are needed, and the
minimum of tau is exactly the min-max makespan.

:func:`build_batch_sizing_model` only builds; :func:`solve_batch_sizing` hands the model to
:func:`primaldual.backends.solvers.solve_model` (the package's one entry point to a solver) with a zero
relative MIP gap. HiGHS still stops at its absolute gap (1e-6, here in seconds), so the reference
``makespan`` is optimal up to that and ``bound`` is the solver's proven lower bound on the optimum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.backends.solvers import solve_model


def build_batch_sizing_model(problem: BatchSizingProblem) -> pyo.ConcreteModel:
    """Build (do not solve) the MILP above for ``problem``. Pure: no solver calls, no I/O."""
    laws = problem.laws
    model = pyo.ConcreteModel(name="lbbsp_batch_sizing")
    model.workers = pyo.RangeSet(0, problem.n_workers - 1)
    model.pieces = pyo.RangeSet(0, laws.intercept_seconds.shape[1] - 1)
    model.batch = pyo.Var(
        model.workers,
        domain=pyo.Integers,
        bounds=lambda m, i: (problem.min_batch, int(problem.memory_cap[i])),
        initialize=lambda m, i: problem.min_batch,
    )
    model.makespan_seconds = pyo.Var(domain=pyo.Reals)
    model.conservation = pyo.Constraint(
        expr=sum(model.batch[i] for i in model.workers) == problem.global_batch)
    model.epigraph = pyo.Constraint(
        model.workers, model.pieces,
        rule=lambda m, i, k: m.makespan_seconds
        >= float(laws.intercept_seconds[i, k]) + float(laws.seconds_per_sample[i, k]) * m.batch[i],
    )
    model.makespan = pyo.Objective(expr=model.makespan_seconds, sense=pyo.minimize)
    return model


@dataclass(frozen=True)
class BatchSizingResult:
    """Outcome of :func:`solve_batch_sizing`.

    ``status`` is :func:`primaldual.backends.solvers.solve_model`'s normalised status. ``batch`` is the
    integer allocation (rounded from the solver's values), ``makespan`` its objective re-evaluated
    with the time laws, ``objective`` the solver's own value and ``bound`` its proven lower bound;
    all four are None unless ``status == "optimal"``.
    """

    status: str
    batch: np.ndarray | None
    makespan: float | None
    objective: float | None
    bound: float | None
    solver: str
    build_seconds: float
    solve_seconds: float


def solve_batch_sizing(problem: BatchSizingProblem, solver: str = "highs",
                       time_limit: float | None = None) -> BatchSizingResult:
    """Build the model, then solve it with backend ``solver`` (a :data:`primaldual.backends.solvers.SOLVERS` name)."""
    started = time.perf_counter()
    model = build_batch_sizing_model(problem)
    built = time.perf_counter()
    # A zero relative gap: the reference must be the optimum, not a point within the default gap.
    outcome = solve_model(model, solver=solver, time_limit=time_limit, mip_gap=0.0)
    solved = time.perf_counter()
    if outcome.status != "optimal":
        return BatchSizingResult(outcome.status, None, None, None, None, solver, built - started, solved - built)
    batch = np.array([int(round(pyo.value(model.batch[i]))) for i in model.workers], dtype=np.int64)
    return BatchSizingResult(
        status="optimal",
        batch=batch,
        makespan=problem.makespan(batch),
        objective=outcome.objective,
        bound=outcome.bound,
        solver=solver,
        build_seconds=built - started,
        solve_seconds=solved - built,
    )
