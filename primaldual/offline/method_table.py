"""The offline methods, one entry each in :data:`METHOD_TABLE`: what :func:`~primaldual.offline.solve.solve_offline`
hands the solver process, what runs there, and how the one certificate (:func:`primaldual.offline.certify.certify`)
names the answer.

Every method's work is a module-level function ``run(notify, instance, task) -> RawSolve`` (it is pickled by
name into the spawned child), with ``prepare(instance, task)`` run there before the memory cap (the imports the
work makes later). The parent builds the task with ``make_task``; the certificate reads the entry's flags
(``relaxed``, ``pooled``) and wording. Adding a method is adding an entry here, and its name to
:data:`primaldual.offline.options.METHODS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from primaldual.backends.solvers import highspy_version, solver_version
from primaldual.offline.ilp import ilp_in_child, prepare_ilp
from primaldual.offline.methods import large_ilp_plan, resolve_builder
from primaldual.offline.options import SolveOptions
from primaldual.offline.outcome import Notify, RawSolve
from primaldual.offline.task import ColumnGenerationTask, IlpTask


def chosen_solver(options: SolveOptions) -> tuple[str, str]:
    """The solver the options name, and its version."""
    return options.solver, solver_version(options.solver)


@dataclass(frozen=True)
class Method:
    """One offline method: how the parent makes its task, what runs in the solver process, how its answer reads.

    ``make_task(method, instance, options, start, start_utility, seeds, deadline, jobs)`` returns the picklable
    task; ``prepare`` and ``run`` are module-level functions (module docstring). ``relaxed``/``pooled`` mark a
    relaxation (its answer is a bound, no schedule); ``solver_of(options)`` is the (solver, version) the result
    names; ``streams_progress`` says its progress lines are shown when it runs in this process. The certificate
    tags the work's schedule with ``source`` and the result's fields ``meta_keys``, advises ``memory_advice``
    past the memory cap, and says ``no_bound_note`` when the work gave no bound (None: nothing)."""

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
    return "highs", highspy_version()


#: The methods :func:`~primaldual.offline.solve.solve_offline` runs, by name (``auto`` is resolved before:
#: :func:`primaldual.offline.methods.resolve_method`).
METHOD_TABLE: dict[str, Method] = {
    "ilp": Method("ilp", ilp_task, prepare_ilp, ilp_in_child),
    "lp": Method("lp", ilp_task, prepare_ilp, ilp_in_child, relaxed=True),
    "pooled": Method("pooled", ilp_task, prepare_ilp, ilp_in_child, pooled=True),
    "cg": Method("cg", column_generation_task, prepare_column_generation, column_generation_in_child,
                 solver_of=_highspy, streams_progress=True, source="offline:cg", meta_keys=("method",),
                 memory_advice="raise --memory-limit",
                 no_bound_note="column generation completed no pricing round: the bound is the trivial one "
                               "(each job alone on the empty cluster)"),
}

__all__ = ["METHOD_TABLE", "Method", "column_generation_in_child", "column_generation_task", "ilp_task",
           "prepare_column_generation"]
