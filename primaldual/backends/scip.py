"""SCIP through ``pyscipopt`` (its PyPI wheels bundle SCIP, so it needs nothing outside pip) for a linear
program given as arrays: the second solver of the matrix path (:mod:`primaldual.offline.matrix`).

:func:`solve_arrays_scip` reads any value with the fields of ``primaldual.offline.matrix.MatrixModel``
(``max cost x``, ``row_lower <= A x <= row_upper``, ``col_lower <= x <= col_upper``, ``A`` in compressed
sparse columns ``starts``/``indices``/``values``, ``integer`` per column) and returns what
:func:`primaldual.offline.matrix.solve_matrix_model` returns for HiGHS: a
:class:`~primaldual.backends.solvers.SolveOutcome` and the column values (or None), so the offline layer
treats both solvers alike. Through Pyomo, SCIP is Pyomo's ``scip_direct`` interface
(:data:`primaldual.backends.solvers.SOLVERS`), which also drives ``pyscipopt``.

Method: one SCIP variable per column (its bounds, ``I`` or ``C``), one linear constraint per row, built from
the rows of the matrix (the compressed columns are transposed with one stable sort by row). A MIP start is
handed to SCIP as a partial solution it repairs or discards (``addSol``); each improving incumbent is passed to
``on_incumbent`` from a ``BESTSOLFOUND`` event handler, so a parent that kills the solving process still has
the best schedule so far.

What the outcome promises, as for HiGHS: ``objective`` is ``cost @ values`` recomputed here; ``bound`` is
SCIP's dual bound (an upper bound for the maximisation) of a MIP, and of an LP only when it finished;
``status`` is ``optimal`` when SCIP proved optimality or stopped at the requested gap (the caller compares
bound and incumbent before it says "optimal"), ``time_limit`` at the clock, ``infeasible``, or ``other_limit``.

Cost: building is O(non-zeros) Python calls (about a microsecond each: a 10^5-non-zero model builds in well
under a second); the solve is SCIP's.
"""

from __future__ import annotations

import math
import time

import numpy as np

from primaldual.backends.solvers import SCIP_SAFE_PARAMETERS as SAFE_PARAMETERS
from primaldual.backends.solvers import SolveOutcome, solver_version

#: SCIP statuses read as the package's :data:`primaldual.backends.solvers.STATUSES`.
_STATUS = {"optimal": "optimal", "gaplimit": "optimal", "timelimit": "time_limit", "infeasible": "infeasible",
           "unbounded": "unbounded", "inforunbd": "infeasible"}


def _rows(model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The matrix by rows: ``row_starts``, column ``indices`` and ``values`` (compressed sparse rows)."""
    n_cols = int(np.asarray(model.cost).shape[0])
    starts = np.asarray(model.starts, dtype=np.int64)
    columns = np.repeat(np.arange(n_cols), np.diff(starts))
    rows = np.asarray(model.indices, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    row_starts = np.zeros(int(np.asarray(model.row_lower).shape[0]) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=row_starts.size - 1), out=row_starts[1:])
    return row_starts, columns[order], np.asarray(model.values, dtype=float)[order]


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) and abs(value) < 1e20 else None


def build_scip(model, relax: bool):
    """A ``pyscipopt.Model`` of the arrays (maximise), and its variables in column order."""
    import pyscipopt
    from pyscipopt.scip import Expr, ExprCons, Term

    scip = pyscipopt.Model()
    scip.hideOutput()
    integer = np.zeros_like(np.asarray(model.cost), dtype=bool) if relax else np.asarray(model.integer, dtype=bool)
    variables = [
        scip.addVar(name=f"c{j}", vtype="I" if integer[j] else "C", lb=_finite(low), ub=_finite(high), obj=float(c))
        for j, (c, low, high) in enumerate(zip(np.asarray(model.cost, dtype=float), model.col_lower, model.col_upper))
    ]
    row_starts, columns, values = _rows(model)
    for r, (low, high) in enumerate(zip(model.row_lower, model.row_upper)):
        terms = {}
        for j, a in zip(columns[row_starts[r]:row_starts[r + 1]].tolist(), values[row_starts[r]:row_starts[r + 1]].tolist()):
            key = Term(variables[j])
            terms[key] = terms.get(key, 0.0) + a
        scip.addCons(ExprCons(Expr(terms), lhs=_finite(low), rhs=_finite(high)), name=f"r{r}")
    scip.setMaximize()
    return scip, variables




def _options(scip, time_limit, mip_gap, threads) -> None:
    for key, value in SAFE_PARAMETERS.items():
        scip.setParam(key, value)
    if time_limit is not None:
        scip.setParam("limits/time", max(float(time_limit), 0.01))
    if mip_gap is not None:
        scip.setParam("limits/gap", float(mip_gap))
    if threads is not None:
        scip.setParam("parallel/maxnthreads", int(threads))


def _watch_incumbents(scip, variables, cost, on_incumbent) -> None:
    """Call ``on_incumbent(values, objective, bound)`` on each best solution SCIP finds."""
    import pyscipopt

    class Improving(pyscipopt.Eventhdlr):
        def eventinit(self):
            self.model.catchEvent(pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND, self)

        def eventexit(self):
            self.model.dropEvent(pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND, self)

        def eventexec(self, event):
            try:
                solution = self.model.getBestSol()
                values = np.array([self.model.getSolVal(solution, v) for v in variables])
                bound = _finite(self.model.getDualbound())
                on_incumbent(values, float(cost @ values), bound)
            except Exception:  # a failing observer must not abort the solve
                pass

    scip.includeEventhdlr(Improving(), "primaldual_incumbents", "reports each improving incumbent")


def solve_arrays_scip(model, *, relax: bool, time_limit, mip_gap, threads, start=None,
                      on_incumbent=None) -> tuple[SolveOutcome, np.ndarray | None]:
    """Solve the arrays with SCIP (module docstring); ``start`` column values are a MIP start."""
    cost = np.asarray(model.cost, dtype=float)
    started = time.perf_counter()
    scip, variables = build_scip(model, relax)
    _options(scip, time_limit, mip_gap, threads)
    if start is not None and not relax:
        solution = scip.createPartialSol()
        for v, value in zip(variables, np.asarray(start, dtype=float).tolist()):
            scip.setSolVal(solution, v, value)
        scip.addSol(solution)
    if on_incumbent is not None and not relax:
        _watch_incumbents(scip, variables, cost, on_incumbent)
    scip.optimize()
    seconds = time.perf_counter() - started
    name = str(scip.getStatus())
    status = _STATUS.get(name, "other_limit")
    values = None
    if scip.getNSols() > 0 and status not in ("infeasible", "unbounded"):
        best = scip.getBestSol()
        values = np.array([scip.getSolVal(best, v) for v in variables])
    objective = None if values is None else float(cost @ values)
    if relax:
        bound = objective if status == "optimal" else None  # an LP stopped early bounds nothing
    else:
        bound = _finite(scip.getDualbound())
        if status == "optimal" and bound is None:
            bound = objective
    outcome = SolveOutcome(termination=name, has_solution=values is not None, objective=objective, bound=bound,
                           seconds=seconds, solver="scip", version=solver_version("scip"), status=status,
                           warmstart_used=start is not None and not relax,
                           solver_seconds=float(scip.getSolvingTime()))
    return outcome, values


__all__ = ["build_scip", "solve_arrays_scip"]
