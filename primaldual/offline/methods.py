"""Which method, builder and options an offline solve uses, and the checks of its arguments (issue 11).

:func:`primaldual.offline.solve.solve_offline` calls these; every public name is re-exported from
:mod:`primaldual.offline.solve`.
"""

from __future__ import annotations

import math

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.models.offline import FORMULATIONS, offline_sparsity
from primaldual.core.schedule import Schedule
from primaldual.backends.solvers import check_solver
from primaldual.core.verify import verify

#: ``method`` values: the ILP, its LP relaxation, the pooled relaxation, column generation with
#: price-and-branch over the packing formulation (14)-(18), or ``auto`` (the ILP where it is expected to
#: finish, column generation otherwise).
METHODS = ("ilp", "lp", "pooled", "cg", "auto")

#: ``auto`` picks the ILP when the model has at most this many worker and PS placement variables (the ILP is
#: proven optimal within a minute up to about 40 jobs x 50 slots on 10 + 10 servers, ~20 000 placements),
#: column generation above.
AUTO_ILP_PLACEMENTS = 20_000

#: Who assembles the ILP/LP: the Pyomo model (the declarative reference), the numpy sparse arrays of
#: :mod:`primaldual.offline.matrix` handed to highspy, or ``auto``: the matrix path for the strong per-server
#: model with HiGHS above :data:`AUTO_MATRIX_PLACEMENTS` placement variables.
BUILDERS = ("auto", "pyomo", "matrix")
AUTO_MATRIX_PLACEMENTS = 5_000

#: Share of the time left the pooled ILP may take when the ILP is solved pooled first
#: (:mod:`primaldual.offline.pooled`); the per-server ILP gets the rest if its optimum does not pack.
POOLED_SHARE = 0.6

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


def _large_ilp_options(instance, method, solver, formulation, start, pooled_first, online_start) -> dict:
    """``pooled_first`` and ``online_start`` for this call: given (bools), or, when None, on for the HiGHS
    strong ILP above :data:`AUTO_MATRIX_PLACEMENTS` placement variables (where server symmetry and a weak
    first incumbent are what keep the ILP from finishing) and off otherwise."""
    for name, value in (("pooled_first", pooled_first), ("online_start", online_start)):
        if value is not None and not isinstance(value, bool):
            raise InputError(f"{name}: must be True, False or None, got {value!r}")
    large = (method == "ilp" and solver == "highs" and formulation == "strong"
             and placement_count(instance) > AUTO_MATRIX_PLACEMENTS)
    if (pooled_first or online_start) and not (method == "ilp" and solver == "highs"):
        raise InputError("pooled_first and online_start apply to the ILP solved by HiGHS")
    return {"pooled_first": large if pooled_first is None else pooled_first,
            "online_start": (large and start is None) if online_start is None else online_start}


def resolve_builder(instance, builder, *, solver, pooled, formulation, start) -> str:
    """``"pyomo"`` or ``"matrix"``: what ``builder`` (:data:`BUILDERS`) means for this call."""
    if builder not in BUILDERS:
        raise InputError(f"--builder: must be one of {', '.join(BUILDERS)}, got {builder!r}")
    matrix_ok = solver == "highs" and not pooled and formulation == "strong"
    if builder == "matrix" and not matrix_ok:
        raise InputError("--builder: the matrix path covers the strong per-server model solved by HiGHS; use "
                         "--builder pyomo for the others")
    if builder == "auto":
        return "matrix" if matrix_ok and placement_count(instance) > AUTO_MATRIX_PLACEMENTS else "pyomo"
    return builder


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


__all__ = ["AUTO_ILP_PLACEMENTS", "AUTO_MATRIX_PLACEMENTS", "BUILDERS", "METHODS", "POOLED_SHARE",
           "placement_count", "resolve_builder", "resolve_method"]
