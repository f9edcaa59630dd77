"""The offline methods, all that is known of them in one module: their names' meaning (:data:`METHOD_TABLE`,
one entry each: what :func:`~primaldual.offline.solve.solve_offline` hands the solver process, what runs there,
and how the one certificate, :func:`primaldual.offline.certify.certify`, names the answer), the predicates
every other module asks instead of comparing names (:func:`is_relaxation`, :func:`has_one_model`,
:func:`plans_large_ilp`, :func:`always_seeded`, :func:`may_be_ilp`), and what a solve's options resolve to on
an instance (:func:`resolve_method`, :func:`resolve_builder`, :func:`large_ilp_plan`, :func:`uses_seeds`).

Every method's work is a module-level function ``run(notify, instance, task) -> RawSolve`` (it is pickled by
name into the spawned child), with ``prepare(instance, task)`` run there before the memory cap (the imports the
work makes later). The parent builds the task with ``make_task``; the certificate reads the entry's flags
(``relaxed``, ``pooled``) and wording. Adding a method is adding an entry here, and its name (a constant) to
:data:`primaldual.offline.options.METHODS`.

:class:`primaldual.offline.options.SolveOptions` checks every option alone; the resolution decides what the
options mean together with the instance (``auto`` looks at the model's size), and raises
:class:`~primaldual.core.errors.InputError` naming the option when a combination does not apply. It is pure and
cheap: the size it looks at comes from :func:`primaldual.models.offline.offline_sparsity`. The module imports no
solver (the backends load when a result names its solver), so the command line reads it cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.core.verify import verify
from primaldual.models.sparsity import offline_sparsity
from primaldual.offline.ilp import ilp_in_child, prepare_ilp
from primaldual.offline.options import AUTO, BUILDERS, CG, ILP, LP, METHODS, POOLED, SolveOptions  # noqa: F401 - BUILDERS, METHODS: their home
from primaldual.offline.outcome import Notify, RawSolve
from primaldual.offline.task import ColumnGenerationTask, IlpTask


def chosen_solver(options: SolveOptions) -> tuple[str, str]:
    """The solver the options name, and its version."""
    from primaldual.backends.solvers import solver_version

    return options.solver, solver_version(options.solver)


@dataclass(frozen=True)
class Method:
    """One offline method: how the parent makes its task, what runs in the solver process, how its answer reads.

    ``make_task(method, instance, options, start, start_utility, seeds, deadline, jobs)`` returns the picklable
    task; ``prepare`` and ``run`` are module-level functions (module docstring). ``relaxed``/``pooled`` mark a
    relaxation (its answer is a bound, no schedule); ``solver_of(options)`` is the (solver, version) the result
    names; ``streams_progress`` says its progress lines are shown when it runs in this process. The certificate
    tags the work's schedule with ``source`` and the result's fields ``meta_keys``, advises ``memory_advice``
    past the memory cap, and says ``no_bound_note`` when the work gave no bound (None: nothing). ``one_model``:
    the method solves one model that ``solve --write-mps`` can export; ``large_ilp``: the large-ILP plan
    (``pooled_first``, ``online_start``) applies; ``seeded``: it always reads the online seeds."""

    name: str
    make_task: Callable[..., object]
    prepare: Callable[[object, object], None]
    run: Callable[[Notify | None, object, object], RawSolve]
    relaxed: bool = False
    pooled: bool = False
    solver_of: Callable[[SolveOptions], tuple[str, str]] = chosen_solver
    streams_progress: bool = False
    source: str = "offline"
    meta_keys: tuple[str, ...] = ("solver", "formulation")
    memory_advice: str = "raise --memory-limit or try --method cg, whose master program is much smaller"
    no_bound_note: str | None = None
    one_model: bool = True
    large_ilp: bool = False
    seeded: bool = False

    @property
    def relaxation(self) -> bool:
        """Whether the answer is a relaxation's bound, with no schedule."""
        return self.relaxed or self.pooled


def ilp_task(method: Method, instance, options: SolveOptions, start, start_utility, seeds, deadline,
             jobs) -> IlpTask:
    """What the ILP/LP child needs, as picklable data (``jobs``: the child finds them itself)."""
    plan = large_ilp_plan(instance, options, method.name, start)
    return IlpTask(solver=options.solver, time_limit=options.time_limit, mip_gap=options.mip_gap,
                   threads=options.threads, relax=method.relaxed, pooled=method.pooled,
                   formulation=options.formulation, builder=resolve_builder(instance, options, method.pooled),
                   start=start, start_utility=start_utility, deadline=deadline, seeds=tuple(seeds),
                   pooled_first=plan.pooled_first, online_start=plan.online_start,
                   symmetry=options.symmetry, work_cuts=options.work_cuts)


def column_generation_task(method: Method, instance, options: SolveOptions, start, start_utility, seeds, deadline,
                           jobs) -> ColumnGenerationTask:
    """What column generation needs (the start is the certificate's floor, not the master's)."""
    return ColumnGenerationTask(jobs=jobs, deadline=deadline, threads=options.threads, seeds=tuple(seeds))


def prepare_column_generation(instance, task: ColumnGenerationTask) -> None:  # in the child, before its cap
    """Import price-and-branch (highspy and scipy with it)."""
    import primaldual.offline.price_and_branch  # noqa: F401


def column_generation_in_child(notify: Notify | None, instance, task: ColumnGenerationTask) -> RawSolve:
    """Column generation and price-and-branch (:mod:`primaldual.offline.price_and_branch`), as a raw record."""
    from primaldual.offline.price_and_branch import column_generation_solve

    run = column_generation_solve(instance, task.jobs, notify=notify, deadline=task.deadline,
                                  threads=task.threads, seeds=task.seeds)
    return run.to_raw()


def _highspy(options: SolveOptions) -> tuple[str, str]:
    """Column generation runs highspy whatever the options name."""
    from primaldual.backends.solvers import highspy_version

    return "highs", highspy_version()


#: The methods :func:`~primaldual.offline.solve.solve_offline` runs, by name (``auto`` is resolved before:
#: :func:`primaldual.offline.methods.resolve_method`).
METHOD_TABLE: dict[str, Method] = {
    ILP: Method(ILP, ilp_task, prepare_ilp, ilp_in_child, large_ilp=True),
    LP: Method(LP, ilp_task, prepare_ilp, ilp_in_child, relaxed=True),
    POOLED: Method(POOLED, ilp_task, prepare_ilp, ilp_in_child, pooled=True),
    CG: Method(CG, column_generation_task, prepare_column_generation, column_generation_in_child,
               solver_of=_highspy, streams_progress=True, source="offline:cg", meta_keys=("method",),
               memory_advice="raise --memory-limit",
               no_bound_note="column generation completed no pricing round: the bound is the trivial one "
                             "(each job alone on the empty cluster)", one_model=False, seeded=True),
}

#: What ``auto`` resolves to (:func:`primaldual.offline.methods.resolve_method`): the exact ILP on a model it is
#: expected to finish, column generation above.
AUTO_SMALL, AUTO_LARGE = ILP, CG


def _named(name: str) -> Method | None:
    """The entry of a method name; None for ``auto`` (not yet resolved)."""
    return None if name == AUTO else METHOD_TABLE[name]


def is_relaxation(name: str) -> bool:
    """Whether the method's answer is a bound without a schedule (``auto`` never resolves to a relaxation)."""
    entry = _named(name)
    return entry is not None and entry.relaxation


def has_one_model(name: str) -> bool:
    """Whether the method solves one model that can be exported (``auto``: the ILP's, what ``--write-mps``
    writes for it)."""
    entry = _named(name)
    return entry is None or entry.one_model


def plans_large_ilp(name: str) -> bool:
    """Whether the large-ILP plan (pooled first, online start) applies to this resolved method."""
    return METHOD_TABLE[name].large_ilp


def always_seeded(name: str) -> bool:
    """Whether this resolved method reads the online seeds whatever its options."""
    return METHOD_TABLE[name].seeded


def may_be_ilp(name: str) -> bool:
    """Whether the method is or may resolve to the exact ILP, for which the restart model can stand in."""
    return name in (ILP, AUTO)


#: ``auto`` picks the ILP when the model has at most this many worker and PS placement variables (about the
#: size the strong ILP proves optimal within a minute), column generation above.
AUTO_ILP_PLACEMENTS = 20_000

#: ``builder="auto"`` takes the matrix path for the strong per-server model with HiGHS above this many
#: placement variables, where Pyomo's build dominates the solve.
AUTO_MATRIX_PLACEMENTS = 5_000

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
    :data:`AUTO_ILP_PLACEMENTS` placement variables, else ``"cg"`` (:data:`~primaldual.offline.methods.AUTO_SMALL`,
    :data:`~primaldual.offline.methods.AUTO_LARGE`)."""
    if method != AUTO:
        return method
    return AUTO_SMALL if placement_count(instance) <= AUTO_ILP_PLACEMENTS else AUTO_LARGE


def placement_count(instance: Instance) -> int:
    """Worker and PS placement variables of the per-server model: the size ``auto`` looks at."""
    sparsity = offline_sparsity(instance)
    return int(sum((instance.horizon - instance.jobs[i].arrival)
                   * (np.count_nonzero(sparsity.worker_fit[i]) + np.count_nonzero(sparsity.ps_fit[i]))
                   for i in sparsity.jobs))


__all__ = ["AUTO_ILP_PLACEMENTS", "AUTO_LARGE", "AUTO_MATRIX_PLACEMENTS", "AUTO_SMALL", "BUILDERS", "IlpPlan",
           "MATRIX_SOLVERS", "METHODS", "METHOD_TABLE", "Method", "always_seeded", "column_generation_in_child",
           "column_generation_task", "has_one_model", "ilp_task", "is_relaxation", "large_ilp_plan", "may_be_ilp",
           "placement_count", "plans_large_ilp", "prepare_column_generation", "resolve_builder", "resolve_method",
           "uses_seeds", "verified_start_utility"]
