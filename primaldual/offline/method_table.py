"""The offline methods, one entry each in :data:`METHOD_TABLE`: what :func:`~primaldual.offline.solve.solve_offline`
hands the solver process, what runs there, and how the one certificate (:func:`primaldual.offline.certify.certify`)
names the answer.

Every method's work is a module-level function ``run(notify, instance, task) -> RawSolve`` (it is pickled by
name into the spawned child), with ``prepare(instance, task)`` run there before the memory cap (the imports the
work makes later). The parent builds the task with ``make_task``; the certificate reads the entry's flags
(``relaxed``, ``pooled``) and wording. Adding a method is adding an entry here, and its name to
:data:`primaldual.offline.options.METHODS`.

This is the one place that knows what a method does: the command line, the resolution of options
(:mod:`primaldual.offline.resolve`) and the evaluation ask the predicates below (:func:`is_relaxation`,
:func:`has_one_model`, :func:`plans_large_ilp`, :func:`always_seeded`, :func:`may_be_ilp`), never a name. The
module imports no solver (the backends load when a result names its solver), so the command line reads it
cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from primaldual.offline.ilp import ilp_in_child, prepare_ilp
from primaldual.offline.options import AUTO, CG, ILP, LP, POOLED, SolveOptions
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
    from primaldual.offline.resolve import large_ilp_plan, resolve_builder  # it asks this table: imported here

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
#: :func:`primaldual.offline.resolve.resolve_method`).
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

#: What ``auto`` resolves to (:func:`primaldual.offline.resolve.resolve_method`): the exact ILP on a model it is
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
    """Whether the method is, or may resolve to (``auto`` on a small model), the exact ILP: where the exact
    restart model can stand in for it."""
    return name in (ILP, AUTO)


__all__ = ["AUTO_LARGE", "AUTO_SMALL", "METHOD_TABLE", "Method", "always_seeded", "column_generation_in_child",
           "column_generation_task", "has_one_model", "ilp_task", "is_relaxation", "may_be_ilp", "plans_large_ilp",
           "prepare_column_generation"]
