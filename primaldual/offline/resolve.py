"""What an offline solve's options resolve to on a given instance: its method, builder and large-ILP plan, and its
start (what each method does is :mod:`primaldual.offline.method_table`'s, which these functions ask).

:class:`primaldual.offline.options.SolveOptions` checks every option alone; these functions decide what the
options mean together with the instance (``auto`` looks at the model's size), and raise
:class:`~primaldual.core.errors.InputError` naming the option when a combination does not apply. They are
pure and cheap: the size they look at comes from :func:`primaldual.models.offline.offline_sparsity`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.core.verify import verify
from primaldual.models.sparsity import offline_sparsity
from primaldual.offline.options import AUTO, BUILDERS, METHODS, SolveOptions  # noqa: F401 - BUILDERS, METHODS: their home

#: ``auto`` picks the ILP when the model has at most this many worker and PS placement variables (about the
#: size the strong ILP proves optimal within a minute), column generation above.
AUTO_ILP_PLACEMENTS = 20_000

#: ``builder="auto"`` takes the matrix path for the strong per-server model with HiGHS above this many
#: placement variables, where Pyomo's build dominates the solve.
AUTO_MATRIX_PLACEMENTS = 5_000

#: Share of the time left the pooled ILP may take when the ILP is solved pooled first
#: (:mod:`primaldual.offline.pooled`); the per-server ILP gets the rest if its optimum does not pack.
POOLED_SHARE = 0.6

#: Solvers the matrix path (:mod:`primaldual.offline.matrix`) hands its arrays to: highspy, and pyscipopt
#: (:mod:`primaldual.backends.scip`).
MATRIX_SOLVERS = ("highs", "scip")


def verified_start_utility(instance: Instance, start) -> float:
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


@dataclass(frozen=True)
class IlpPlan:
    """How the ILP is solved on a large instance: the pooled ILP first, and from the best online start."""

    pooled_first: bool
    online_start: bool


def large_ilp_plan(instance: Instance, options: SolveOptions, method: str, start) -> IlpPlan:
    """``pooled_first`` and ``online_start`` for this solve: as given, or, when None, on for the HiGHS strong
    ILP above :data:`AUTO_MATRIX_PLACEMENTS` placement variables (where server symmetry and a weak first
    incumbent keep the ILP from finishing; the online start only without a caller's start), off otherwise."""
    from primaldual.offline.method_table import plans_large_ilp  # the table imports the ILP, which imports this

    applies = plans_large_ilp(method) and options.solver == "highs"
    if (options.pooled_first or options.online_start) and not applies:
        raise InputError("pooled_first and online_start apply to the ILP solved by HiGHS")
    large = applies and options.formulation == "strong" and placement_count(instance) > AUTO_MATRIX_PLACEMENTS
    return IlpPlan(pooled_first=large if options.pooled_first is None else options.pooled_first,
                   online_start=(large and start is None) if options.online_start is None else options.online_start)


def uses_seeds(instance: Instance, options: SolveOptions, start=None) -> bool:
    """Whether :func:`primaldual.offline.solve.solve_offline` with these options reads online seeds: column
    generation always, the ILP when it starts from the best online schedule."""
    if not offline_sparsity(instance).jobs:
        return False  # the solve returns the empty schedule without a solver
    from primaldual.offline.method_table import always_seeded

    method = resolve_method(instance, options.method)
    return always_seeded(method) or large_ilp_plan(instance, options, method, start).online_start


def resolve_builder(instance: Instance, options: SolveOptions, pooled: bool) -> str:
    """``"pyomo"`` or ``"matrix"``: what ``options.builder`` (:data:`BUILDERS`) means for this solve."""
    matrix_ok = options.solver in MATRIX_SOLVERS and not pooled and options.formulation == "strong"
    if options.builder == "matrix" and not matrix_ok:
        raise InputError("--builder: the matrix path covers the strong per-server model solved by HiGHS or SCIP; "
                         "use --builder pyomo for the others")
    if options.builder == "auto" and matrix_ok and options.solver == "scip":
        return "matrix"  # pyscipopt built from arrays skips Pyomo's translation, the slower half of scip_direct
    if options.builder == "auto":
        return "matrix" if matrix_ok and placement_count(instance) > AUTO_MATRIX_PLACEMENTS else "pyomo"
    return options.builder


def resolve_method(instance: Instance, method: str) -> str:
    """The method ``method`` means: itself, and for ``"auto"`` the ILP when the model has at most
    :data:`AUTO_ILP_PLACEMENTS` placement variables, else ``"cg"`` (:data:`~primaldual.offline.method_table.AUTO_SMALL`,
    :data:`~primaldual.offline.method_table.AUTO_LARGE`)."""
    from primaldual.offline.method_table import AUTO_LARGE, AUTO_SMALL

    if method != AUTO:
        return method
    return AUTO_SMALL if placement_count(instance) <= AUTO_ILP_PLACEMENTS else AUTO_LARGE


def placement_count(instance: Instance) -> int:
    """Worker and PS placement variables of the per-server model: the size ``auto`` looks at."""
    sparsity = offline_sparsity(instance)
    return int(sum((instance.horizon - instance.jobs[i].arrival)
                   * (np.count_nonzero(sparsity.worker_fit[i]) + np.count_nonzero(sparsity.ps_fit[i]))
                   for i in sparsity.jobs))


__all__ = ["AUTO_ILP_PLACEMENTS", "AUTO_MATRIX_PLACEMENTS", "BUILDERS", "IlpPlan", "MATRIX_SOLVERS", "METHODS",
           "POOLED_SHARE", "large_ilp_plan", "placement_count", "resolve_builder", "resolve_method", "uses_seeds",
           "verified_start_utility"]
