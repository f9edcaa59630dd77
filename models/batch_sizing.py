"""The LB-BSP batch-sizing problem (docs/papers.md, LB-BSP, [design]) as a Pyomo MILP, on plain arrays.

This is the *reference* the fast solver :func:`primaldual.lbbsp.exact.solve_exact` is tested
against. Formulation, with the time laws written as maxima of affine pieces
``T_i(x) = max_k (a_ik + b_ik x)`` (CPU: one piece; GPU: a flat piece and a linear piece):

    min  tau                                         objective ``makespan``  (epigraph of max_i T_i)
    s.t. sum_i x_i = X                               constraint ``conservation``
         tau >= a_ik + b_ik x_i   for all i, k       constraint ``epigraph`` (tau >= T_i(x_i))
         min_batch <= x_i <= M_i, x_i integer        variable bounds / domain of ``batch``

Because every T_i is convex piecewise-linear, ``tau >= every piece`` is equivalent to
``tau >= T_i(x_i)``, so no SOS2 or binaries beyond the integrality of x are needed, and the
minimum of tau is exactly the min-max makespan. The model has ``n`` integer variables and ``n K + 1`` rows.

The model takes the data as arrays and scalars (``a`` = ``intercept_seconds``, ``b`` = ``seconds_per_sample``,
both of shape ``(n, K)``; ``X``; ``min_batch``; ``M``), so it knows nothing of the package that poses the
problem: :mod:`primaldual.lbbsp.reference` hands it a :class:`primaldual.lbbsp.problem.BatchSizingProblem`.
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

from primaldual.backends.solvers import solve_model


def build_batch_sizing_model(intercept_seconds, seconds_per_sample, global_batch: int, min_batch: int,
                             memory_cap) -> pyo.ConcreteModel:
    """Build (do not solve) the MILP above: laws ``a``, ``b`` of shape (n, K), total ``X`` = ``global_batch``,
    bounds ``min_batch <= x_i <= memory_cap[i]``. Pure: no solver calls, no I/O."""
    intercept = np.asarray(intercept_seconds, dtype=float)
    slope = np.asarray(seconds_per_sample, dtype=float)
    model = pyo.ConcreteModel(name="lbbsp_batch_sizing")
    model.workers = pyo.RangeSet(0, intercept.shape[0] - 1)
    model.pieces = pyo.RangeSet(0, intercept.shape[1] - 1)
    model.batch = pyo.Var(
        model.workers,
        domain=pyo.Integers,
        bounds=lambda m, i: (min_batch, int(memory_cap[i])),
        initialize=lambda m, i: min_batch,
    )
    model.makespan_seconds = pyo.Var(domain=pyo.Reals)
    model.conservation = pyo.Constraint(
        expr=sum(model.batch[i] for i in model.workers) == global_batch)
    model.epigraph = pyo.Constraint(
        model.workers, model.pieces,
        rule=lambda m, i, k: m.makespan_seconds
        >= float(intercept[i, k]) + float(slope[i, k]) * m.batch[i],
    )
    model.makespan = pyo.Objective(expr=model.makespan_seconds, sense=pyo.minimize)
    return model


@dataclass(frozen=True)
class BatchSizingResult:
    """Outcome of :func:`solve_batch_sizing`.

    ``status`` is :func:`primaldual.backends.solvers.solve_model`'s normalised status. ``batch`` is the
    integer allocation (rounded from the solver's values), ``makespan`` its objective re-evaluated
    with the time laws (``max_i max_k a_ik + b_ik x_i``), ``objective`` the solver's own value and ``bound`` its proven lower bound;
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


def solve_batch_sizing(intercept_seconds, seconds_per_sample, global_batch: int, min_batch: int, memory_cap,
                       solver: str = "highs", time_limit: float | None = None) -> BatchSizingResult:
    """Build the model (arguments of :func:`build_batch_sizing_model`), then solve it with backend ``solver``
    (a :data:`primaldual.backends.solvers.SOLVERS` name)."""
    started = time.perf_counter()
    model = build_batch_sizing_model(intercept_seconds, seconds_per_sample, global_batch, min_batch, memory_cap)
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
        makespan=_makespan(intercept_seconds, seconds_per_sample, batch),
        objective=outcome.objective,
        bound=outcome.bound,
        solver=solver,
        build_seconds=built - started,
        solve_seconds=solved - built,
    )


def _makespan(intercept_seconds, seconds_per_sample, batch) -> float:
    """``max_i max_k (a_ik + b_ik x_i)``, the objective of an allocation evaluated with the laws themselves."""
    batch = np.asarray(batch, dtype=float)
    return float(np.max(np.max(np.asarray(intercept_seconds, dtype=float)
                               + np.asarray(seconds_per_sample, dtype=float) * batch[:, None], axis=1)))
