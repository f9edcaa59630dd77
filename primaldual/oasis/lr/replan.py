"""OASiS-LR's re-plan: the restart-cost model's LP over the next slots, as one more policy of the lookahead.

The other policies of :mod:`primaldual.oasis.lr.rollout` only reorder who grows into the free capacity; none
changes *how wide* a job runs or which jobs give way for others to run side by side. The re-plan does: at an
arrival batch in slot ``t`` it builds the offline problem with restart costs (:mod:`primaldual.models.restart`)
over the *window* of the next ``H`` slots (``replan_horizon``, cut at the instance's horizon) for the known
jobs with work left, and solves its LP relaxation. Each job of the window:

* arrives in the window's slot 0 (slot ``t``) with its remaining work (the fractional figure the scheduler
  tracks, as ``W_i``) and its utility shifted by the slots it has already waited (:func:`shifted`), so the
  window's ``f_i(d)`` is the real ``f_i(t - a_i + d)``;
* if promised, must complete by its deadline (``admit`` fixed to 1, later completion indicators fixed to 0):
  every promise is a constraint. A promise whose deadline lies past the window only has to be admitted.

What the model leaves out, and why it is still sound: the ledger's blocks are not subtracted from the capacity
and a job that ran in slot ``t - 1`` pays the restart of the window's first slot. Neither matters for
correctness: the LP is only a *guide* (:class:`Guide`) that the execution follows where the blocks leave room
(blocks still run first, so G1 of ``proofs/oasis-lr.md`` is untouched), and the rollout keeps the re-plan only
when its twin, running the real execution under the real rules, earns more than every other policy's.

**How the execution follows the guide** (:mod:`primaldual.oasis.lr.order`, order ``plan``): in each slot of the
window the jobs the LP runs there come first, widest first, each grown to at most the LP's width rounded up;
then every job left grows into what is still free, in the density order (so the execution stays
work-conserving). Past the window the order is the density order.

**Determinism.** HiGHS runs with one thread, a fixed random seed, no time limit and an iteration limit
(``replan_iterations``); an LP that stops at the limit, or has no optimum, gives no guide and the batch's
rollout goes without the re-plan. So a run does not depend on the machine's speed.

**Cost** per batch: one Pyomo model of ``jobs x H`` slots with one worker and one PS variable per server, and
one more twin; on 20-job ``small`` (cProfile, F = 0.1) about 0.09 s to build, 0.08 s to compile for HiGHS and
0.05 s to solve, so a run takes 4-6x as long as without it (``docs/measurements.md``, "The re-plan").
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from primaldual.backends.highs import solve_lp_compiled
from primaldual.core.instance import Instance
from primaldual.core.utility import Constant, LinearDecay, Sigmoid, Step, Utility
from primaldual.oasis.lr.state import JobTables, LrState

#: The default ``replan_horizon``, in slots.
REPLAN_HORIZON = 24
#: The share by which the re-plan's twin must beat the best other policy's to be adopted. Its plan packs the
#: capacity for the jobs known now, which later arrivals upset more than the greedy policies' plans: on the
#: design seeds (20-job and 10-job ``small``, 97000-97015, F = 0, 0.05, 0.1) adopting it on any win lost up to
#: 10% on instances where it won a batch by under 1%; a margin of 2% kept the gains (0.05 kept fewer).
REPLAN_MARGIN = 0.02
#: The largest instance, in jobs x window slots x servers (worker and PS), on which the re-plan runs: its
#: LP's variables grow with that product (and the time with them); a 30-job ``small`` instance has 4,800.
REPLAN_CELLS = 5_000

#: The default ``replan_iterations``: the simplex iterations one re-plan's LP may take.
REPLAN_ITERATIONS = 200_000


def shifted(utility: Utility, waited: int) -> Utility:
    """The same family seen ``waited`` slots after the job's arrival: ``g(d) = f(d + waited)`` exactly, with
    the family's parameters moved (a linear decay past its deadline, or a step past it, is worth 0)."""
    if waited == 0 or isinstance(utility, Constant):
        return utility
    if isinstance(utility, Sigmoid):
        return dataclasses.replace(utility, gamma3=utility.gamma3 - waited)
    if isinstance(utility, LinearDecay):
        left = utility.deadline - waited
        if left <= 0:
            return Constant(0.0)
        return LinearDecay(value=utility.value * left / utility.deadline, deadline=left)
    if utility.deadline - waited < 0:  # Step
        return Constant(0.0)
    return Step(value=utility.value, deadline=utility.deadline - waited)


@dataclass(frozen=True, eq=False)
class Guide:
    """The LP's plan from slot ``start``: ``widths[k, d]`` is the workers job ``jobs[k]`` runs in slot
    ``start + d`` (fractional, summed over the servers)."""

    start: int
    jobs: tuple[int, ...]
    widths: np.ndarray

    def width(self, i: int, slot: int) -> float:
        """Job ``i``'s LP width in ``slot``; 0 outside the window or for a job not in it."""
        d = slot - self.start
        if d < 0 or d >= self.widths.shape[1] or i not in self.rows:
            return 0.0
        return float(self.widths[self.rows[i], d])

    @cached_property
    def rows(self) -> dict[int, int]:
        """Job -> its row of ``widths`` (read per job and slot by the execution's order)."""
        return {i: k for k, i in enumerate(self.jobs)}

    def covers(self, slot: int) -> bool:
        return 0 <= slot - self.start < self.widths.shape[1]

    def caps(self, slot: int) -> dict[int, int]:
        """Per job of the window, its LP width in ``slot`` rounded up (within a hair of an integer, down)."""
        if not self.covers(slot):
            return {}
        column = self.widths[:, slot - self.start]
        return {i: int(math.ceil(w - 1e-6)) for i, w in zip(self.jobs, column.tolist())}


def replan_cells(instance: Instance, horizon: int) -> int:
    """Jobs x window slots x servers of ``instance`` (:data:`REPLAN_CELLS`): the re-plan's size, decided once."""
    servers = instance.cluster.n_worker_servers + instance.cluster.n_ps_servers
    return instance.n_jobs * min(int(horizon), instance.horizon) * servers


def window_instance(tables: JobTables, state: LrState, slot: int, jobs: list[int], length: int) -> Instance:
    """The known ``jobs`` from ``slot`` on, over ``length`` slots (module docstring)."""
    instance = tables.instance
    window_jobs = []
    for i in jobs:
        job = instance.jobs[i]
        left = float(state.work_left[i])
        # One epoch of one mini-batch per chunk and no gradient traffic: W_i = N_i tau_i / slot_seconds = left.
        # Eq. (6)'s PS count depends on the bandwidths only, which are kept.
        window_jobs.append(dataclasses.replace(
            job, arrival=0, epochs=1, minibatches_per_chunk=1, gradient_mb=0.0,
            compute_seconds=left * instance.slot_seconds / job.chunks,
            utility=shifted(job.utility, slot - int(job.arrival))))
    return Instance(cluster=instance.cluster, jobs=tuple(window_jobs), horizon=length,
                    slot_seconds=instance.slot_seconds)


def declare_promises(model, state: LrState, slot: int, jobs: list[int]) -> None:
    """Every promised job of the window is admitted and completes by its deadline."""
    for k, i in enumerate(jobs):
        deadline = state.deadlines.get(i)
        if deadline is None or i in state.done:
            continue
        model.admit[k].fix(1)
        for (j, t) in model.completion_slots:
            if j == k and t > deadline - slot:
                model.complete[j, t].fix(0)


def solve_guide(model, iterations: int) -> bool:
    """Solve the window's LP in place, deterministically (module docstring); whether it reached an optimum."""
    options = {"threads": 1, "random_seed": 0, "simplex_iteration_limit": int(iterations), "output_flag": False}
    return solve_lp_compiled(model, options)


def replan_guide(tables: JobTables, state: LrState, slot: int, restart_cost: float, horizon: int,
                 iterations: int) -> Guide | None:
    """The guide of the batch in ``slot`` (module docstring), or None when there is nothing to plan or the
    LP gives no optimum within ``iterations``."""
    instance = tables.instance
    length = min(int(horizon), instance.horizon - slot)
    jobs = state.live(instance, slot)  # arrived, not done, with work left
    if not jobs or length < 1:
        return None
    # Pyomo loads only when a batch re-plans (about a second): runs that never do, never import it.
    from primaldual.models.restart import build_restart_model

    window = window_instance(tables, state, slot, jobs, length)
    model = build_restart_model(window, restart_cost, cuts=False, relax=True)
    declare_promises(model, state, slot, jobs)
    if not solve_guide(model, iterations):
        return None
    widths = np.zeros((len(jobs), length))
    for (k, t, _), var in model.workers.items():
        value = var.value
        if value is not None and value > 1e-9:
            widths[k, t] += value
    widths.setflags(write=False)
    return Guide(start=slot, jobs=tuple(jobs), widths=widths)


__all__ = ["REPLAN_CELLS", "REPLAN_HORIZON", "REPLAN_ITERATIONS", "REPLAN_MARGIN", "replan_cells", "Guide", "shifted", "declare_promises", "replan_guide",
           "solve_guide", "window_instance"]
