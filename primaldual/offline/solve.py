"""Solve the offline problem (1)-(13) and return an honest certificate (docs/papers.md, OASiS).

:func:`solve_offline` builds :func:`primaldual.models.offline.build_offline_model`, hands it to a backend
through :func:`primaldual.backends.solvers.solve_model` and returns an :class:`OfflineResult`:

* the **incumbent** is a :class:`~primaldual.core.schedule.Schedule` that has passed the independent verifier
  :func:`primaldual.core.verify.verify`; ``objective`` is the utility the verifier recomputes for it, not the
  solver's number;
* the **bound** is an upper bound on OPT: the solver's best bound, capped by the trivial bound
  ``sum_i f_i(shortest_duration_i - 1)`` over the jobs that can finish; if a solver's bound is ever below a
  verified schedule's utility (a wrong answer), it is discarded for the trivial bound and ``message`` says so;
* ``status`` is ``"optimal"`` only when the solver finished (not at a limit) and the bound meets the
  incumbent within :data:`OPTIMALITY_TOLERANCE`; a time-limited or gap-limited incumbent is ``"feasible"``
  with its gap, never ``"optimal"``.

Hard wall-clock and memory limits: with a ``time_limit`` (or a ``memory_limit``) the whole solve (building
the model, translating it, solving it) runs in a child process (:mod:`primaldual.offline.child`, the
``spawn`` start method) whose address space is capped; the parent kills it ``grace`` seconds past the limit
(HiGHS does not always honour MIP time limits; a Pyomo build may never end at the paper's scale), and the
status is ``"killed"`` (``"memory_limit"`` past the cap). The solver gets the time left after building.
HiGHS streams each improving incumbent to the parent as it finds it, so a killed solve still returns its best
verified schedule and bound. (Scripts that call this must guard their code with
``if __name__ == "__main__":``, as for any spawned process; one that does not gets
:class:`~primaldual.offline.child.MissingMainGuard` saying so.)

Methods: the ILP (built by Pyomo, :mod:`primaldual.models.offline`, or as numpy sparse arrays,
:mod:`primaldual.offline.matrix`), its LP and pooled relaxations, and column generation with price-and-branch
over the packing formulation (14)-(18) (:mod:`primaldual.offline.price_and_branch`), which gives a verified schedule
and a certified bound at the paper's scale.

MIP start: ``start=schedule`` (an online scheduler's result, say) is verified, handed to the solver as a MIP
start where the backend takes one (HiGHS, CBC), and returned as the incumbent whenever the solver's own
incumbent is worse or missing; so the result is never worse than the start.
"""

from __future__ import annotations

import multiprocessing
import time
from typing import Sequence

from primaldual.backends.solvers import check_solver
from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.models.sparsity import schedulable_jobs
from primaldual.offline.certify import certify, nothing_to_solve
from primaldual.offline.child import default_memory_limit, run_in_child
from primaldual.offline.methods import METHOD_TABLE, Method
from primaldual.offline.methods import resolve_method, verified_start_utility
from primaldual.offline.options import EXACT, OnlineSeed, SolveOptions
from primaldual.offline.outcome import ChildOutcome, ProgressLine
from primaldual.offline.result import OfflineResult
from primaldual.offline.solver_choice import resolve_solver
from primaldual.offline.task import DEFAULT_HIGHS_GAP

# --------------------------------------------------------------------------------------- the solve


def default_grace(time_limit: float) -> float:
    """Seconds past the solver's limit before the child is killed (a late stop, reading and sending back)."""
    # 2 s + 3%: with the certificate's verification and the interpreter's start a solve ends within the limit
    # + 5% + 10 s (issue 63, item 4); a killed child loses nothing it streamed (its best schedule and bound).
    return 2.0 + 0.03 * float(time_limit)


def solve_offline(instance: Instance, options: SolveOptions | None = None, *,
                  start: Schedule | OnlineSeed | None = None, seeds: Sequence[OnlineSeed] = (),
                  progress=None) -> OfflineResult:
    """Solve the offline problem of ``instance`` (or bound it) and certify the answer.

    ``options`` (:class:`~primaldual.offline.options.SolveOptions`, default :data:`EXACT`, the exact ILP here
    without limits) says how. ``method``: ``"ilp"``, ``"lp"``, ``"pooled"`` (relaxations), ``"cg"`` (column
    generation and price-and-branch over (14)-(18), :mod:`primaldual.offline.price_and_branch`) or ``"auto"``
    (:func:`~primaldual.offline.methods.resolve_method`); ``OfflineResult.method`` is the one used.
    ``time_limit`` bounds the whole call: build and solve run in a spawned child killed ``grace`` seconds
    (:func:`default_grace`) past it; ``memory_limit`` caps the child's address space (status
    ``"memory_limit"``). Without either, or inside a daemonic process (``message`` says so), it runs here.
    ``progress(line)`` receives progress lines while a child runs.
    ``start``: a feasible schedule, the MIP start and a floor on the incumbent (verified here unless it is an
    :class:`~primaldual.offline.options.OnlineSeed`); ``seeds``: verified online schedules
    (:mod:`primaldual.evaluation.seeds`) that start column generation's master and the ILP.
    Raises :class:`InputError` for an unknown or unavailable solver, an option the method does not take, or an
    infeasible start. With no job able to finish: ``"optimal"``, objective 0, no solver called.
    """
    options = EXACT if options is None else options
    if not isinstance(options, SolveOptions):
        raise InputError(f"options: must be SolveOptions, got {type(options).__name__}")
    solver, auto_note = resolve_solver(instance, options)  # --solver auto: by size, from measured data
    options = options.replace(solver=solver) if auto_note else options
    check_solver(options.solver)
    method = METHOD_TABLE[resolve_method(instance, options.method)]
    start, start_utility = _checked_start(instance, start, method.relaxation)
    jobs = schedulable_jobs(instance)
    if not jobs:
        return nothing_to_solve(instance, method, options, start_utility)
    trivial_bound = float(sum(instance.best_utility(i) for i in jobs))
    notes = [auto_note] if auto_note else []
    in_child = options.time_limit is not None or options.memory_limit is not None
    if in_child and multiprocessing.current_process().daemon:
        notes.append("no hard wall-clock limit (nor memory limit): a daemonic process may not start the solver process")
        in_child = False
    deadline = None if options.time_limit is None else time.time() + options.time_limit
    task = method.make_task(method, instance, options, start, start_utility, seeds, deadline, jobs)
    ended = _run(method, instance, task, options, in_child, progress)
    return certify(instance, ended, method, options, start, start_utility, trivial_bound, notes)


def _checked_start(instance, start, relaxation: bool) -> tuple[Schedule | None, float | None]:
    """The start as a schedule and its verified utility (verified here unless the caller did)."""
    if start is None:
        return None, None
    if relaxation:
        raise InputError("--start: a MIP start seeds the ILP; it does not apply to --relax or --pooled")
    if isinstance(start, OnlineSeed):
        return start.schedule, float(start.utility)
    return start, verified_start_utility(instance, start)


def _run(method: Method, instance, task, options: SolveOptions, in_child: bool, progress) -> ChildOutcome:
    """Run ``method``'s work in a child under the limits, or here; how it ended, with its elapsed seconds."""
    if in_child:
        time_limit = options.time_limit
        return run_in_child(method.run, (instance, task), time_limit=time_limit,
                            grace=default_grace(time_limit or 0.0) if options.grace is None else options.grace,
                            memory_limit=options.memory_limit if options.memory_limit is not None
                            else default_memory_limit(),
                            progress=progress, prepare=method.prepare)
    started = time.perf_counter()
    forward = None
    if progress is not None and method.streams_progress:
        # In this process only a method's own progress lines can be shown (nothing else reports).
        def forward(event):
            if isinstance(event, ProgressLine):
                progress(event.line)

    answer = method.run(forward, instance, task)
    return ChildOutcome(answer=answer, elapsed=time.perf_counter() - started)


__all__ = ["DEFAULT_HIGHS_GAP", "default_grace", "solve_offline"]
