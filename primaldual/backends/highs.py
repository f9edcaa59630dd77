"""HiGHS helpers: Pyomo's appsi interface for :func:`primaldual.backends.solvers.solve_model`, quiet highspy objects,
and the process-wide thread scheduler.

HiGHS keeps one thread scheduler per process, sized by the first solve; every highspy user in the package
(the matrix ILP, the column-generation master, slot packing, LB-BSP's robust LP, the learned floor) calls
:func:`size_highs_threads` before it runs HiGHS. Nothing here imports Pyomo at module level, so highspy-only
users load no Pyomo.
"""

from __future__ import annotations

import math

import numpy as np


def highspy_version() -> str:
    """The installed highspy's version (the HiGHS bindings used without Pyomo), ``"unknown"`` if not found."""
    from importlib import metadata

    try:
        return metadata.version("highspy")
    except metadata.PackageNotFoundError:  # pragma: no cover - highspy is a dependency
        return "unknown"


def single_objective(model):
    import pyomo.environ as pyo  # here, not at import: quiet_highs's users (the learned floor) need no Pyomo

    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) != 1:
        raise ValueError(f"solve_model needs exactly one active objective, the model has {len(objectives)}")
    return objectives[0]


def termination_name(termination) -> str:
    """``"optimal"``, ``"maxTimeLimit"``...: Pyomo's legacy conditions are strings, appsi's plain enums."""
    value = getattr(termination, "value", termination)
    return value if isinstance(value, str) else getattr(termination, "name", str(termination))


def finite_or_none(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def solve_highs(model, options: dict, time_limit, mip_gap, warmstart: bool, on_start, on_incumbent):
    """HiGHS through Pyomo's appsi interface used directly (not the legacy wrapper), so that the translation
    of the model into HiGHS can be timed apart from HiGHS's own run, and its best bound read as reported."""
    from pyomo.contrib.appsi.solvers.highs import Highs

    backend = Highs()
    backend.config.load_solution = False
    backend.config.stream_solver = False
    backend.config.time_limit = None if time_limit is None else float(time_limit)
    backend.config.mip_gap = None if mip_gap is None else float(mip_gap)
    backend.config.warmstart = bool(warmstart)
    backend.highs_options = {key: value for key, value in options.items()
                             if key not in ("time_limit", "mip_rel_gap")}
    backend.set_instance(model)
    # The model does not change between translation and solve: skip appsi's scan for changes.
    for key in ("check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
                "check_for_new_or_removed_params", "check_for_new_objective", "update_constraints",
                "update_vars", "update_params", "update_named_expressions"):
        setattr(backend.update_config, key, False)
    if on_incumbent is not None:
        report_incumbents(backend, model, on_incumbent)
    if on_start is not None:
        on_start()
    results = backend.solve(model)
    return backend, results


def report_incumbents(backend, model, on_incumbent) -> None:
    """Subscribe to HiGHS's improving-solution callback: load each new incumbent into the model's variables
    and call ``on_incumbent(objective, bound)``. A caller that may kill the solver keeps what it has so far.

    This reads private attributes of Pyomo's appsi HiGHS interface; should a Pyomo release rename them, the
    solve goes on without streaming (a killed solve then keeps only the MIP start) rather than failing."""
    try:
        columns = [(backend._vars[var_id][0], column)
                   for var_id, column in backend._pyomo_var_to_solver_var_map.items()]
        solver_model = backend._solver_model
    except (AttributeError, KeyError, TypeError):
        return
    if not hasattr(solver_model, "cbMipImprovingSolution"):
        return
    objective = single_objective(model)
    import pyomo.environ as pyo

    def improving(event) -> None:
        values = event.data_out.mip_solution
        for var, column in columns:
            var.set_value(float(values[column]), skip_validation=True)
        try:
            on_incumbent(float(pyo.value(objective)), finite_or_none(event.data_out.mip_dual_bound))
        except Exception:  # a failing observer must not abort the solve
            pass

    solver_model.cbMipImprovingSolution += improving


def appsi_status(termination) -> str:
    from pyomo.contrib.appsi.base import TerminationCondition as Appsi

    return {
        Appsi.optimal: "optimal",
        Appsi.infeasible: "infeasible",
        Appsi.unbounded: "unbounded",
        Appsi.infeasibleOrUnbounded: "infeasible",
        Appsi.maxTimeLimit: "time_limit",
        Appsi.maxIterations: "other_limit",
        Appsi.objectiveLimit: "other_limit",
        Appsi.minStepLength: "other_limit",
        Appsi.error: "error",
        Appsi.interrupted: "error",
        Appsi.licensingProblems: "error",
    }.get(termination, "unknown")


#: The ``threads`` option of the last HiGHS solve in this process (None: HiGHS's default).
_highs_threads: list = [None]


def size_highs_threads(threads: int | None) -> None:
    """Reset HiGHS's process-wide thread scheduler when a solve asks for another thread count.

    HiGHS sizes one global scheduler on the first solve of a process; a later solve with a different
    ``threads`` then fails with status "unknown" (highspy 1.16: a default solve, then ``threads=1``). Solves
    in this package run one at a time per process, so resetting between them is safe.
    """
    if threads == _highs_threads[0]:
        return
    import highspy

    reset = getattr(highspy.Highs, "resetGlobalScheduler", None)
    if reset is not None:
        reset(True)
    _highs_threads[0] = threads



def quiet_highs() -> "highspy.Highs":
    """A HiGHS object that prints nothing: its constructor writes a banner on the process's stdout (file
    descriptor 1), which would break ``--json`` output, so fd 1 points to /dev/null while it runs."""
    import os
    import sys

    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), 1)
            highs = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    highs.setOptionValue("output_flag", False)
    return highs


def solve_lp_compiled(model, options: dict) -> bool:
    """Solve the linear ``model`` (one objective, continuous variables) with highspy, reached through Pyomo's
    standard-form compiler instead of appsi's per-row translation (5-8x faster on OASiS-LR's re-plan windows,
    where translation, not HiGHS, was most of the time). ``options`` are HiGHS options by name. On an optimum
    the values are loaded into the model's variables (fixed ones keep theirs) and True is returned; otherwise
    nothing is loaded and False is returned."""
    import highspy
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    form = LinearStandardFormCompiler().write(model)  # min c x subject to A x <= rhs, the bounds kept
    columns = form.columns
    if not columns:
        return False
    matrix = form.A.tocsc()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(columns), matrix.shape[0]
    lp.col_cost_ = np.asarray(form.c.toarray()[0], dtype=float)
    lp.col_lower_ = np.array([-math.inf if v.lb is None else float(v.lb) for v in columns])
    lp.col_upper_ = np.array([math.inf if v.ub is None else float(v.ub) for v in columns])
    lp.row_lower_ = np.full(matrix.shape[0], -math.inf)
    lp.row_upper_ = np.asarray(form.rhs, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_ = matrix.indptr, matrix.indices
    lp.a_matrix_.value_ = np.asarray(matrix.data, dtype=float)
    highs = quiet_highs()
    highs.passModel(lp)
    for option, value in options.items():
        highs.setOptionValue(option, value)
    size_highs_threads(options.get("threads"))
    highs.run()
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return False
    for var, value in zip(columns, highs.getSolution().col_value):
        var.set_value(value, skip_validation=True)
    return True
