"""OASiS-LR's execution orders: by present value per resource-time (RRH's), by urgency, by value, per work.

The work-conserving execution (:mod:`primaldual.oasis.lr.execution`) grows admitted jobs outside their block
and pending jobs into the capacity the blocks leave free, one job after another. ``order="density"`` (the
default of both variants) ranks them as RRH does, by present value per remaining
resource-time. ``order="urgency"`` (an option; the default is ``density``) ranks job ``i`` at slot ``t`` by

    k_i = ( f_i(c_i) / (1 + r d_i)  +  f_i(c_i) - f_i(c_i + 1) ) / (W_i u_i)

with ``W_i`` its remaining work, ``u_i`` the dominant share of one worker, ``r`` the discount rate,
``d_i = ceil(W_i / N_i + F)`` the slots it still needs at full speed (``F`` the restart cost, left out if the
job ran in slot ``t - 1``: it need not restart) and ``c_i = t + d_i - 1`` its earliest completion;
``f_i(c) = 0`` for ``c`` at or past the horizon (the job would not finish).

**Why** (``proofs/oasis-lr.md``, "Where the utility goes"). Present value per resource-time says which jobs
are worth completing, not which should go *first*: it serves a dense job whose utility is flat before a less
dense one that loses much of its utility with every slot of waiting. The offline optimum does the reverse on
the design instances (20-job ``small`` seed 0: it delays a flat job worth 97.8 by two slots, losing 3.7, to
finish a job that decays by 12 per slot one slot earlier, gaining 11.6). The added term is what one slot of
waiting costs the job (the exchange argument for two jobs competing for one slot serves the one that loses
more by waiting); the horizon makes a job that would no longer finish urgent by the whole of its utility.
Both terms are utilities, so their sum per resource-time needs no weight. Under restart costs ``d_i``
includes the restart a job that is not running must pay, as the simulator charges it
(``primaldual/simulation/simulator.py``).

Two more orders exist for the lookahead (:mod:`primaldual.oasis.lr.rollout`), which picks among them at each
arrival batch: ``order="value"`` ranks by present value alone, largest first (big jobs are placed before the
small ones fragment the servers), and ``order="work"`` by present value per remaining worker-slot (density
without the dominant share of one worker). Neither wins alone; each is the best policy on some batches.

An order only changes who grows into free capacity first; blocks still run first, so promises (G1 of
``proofs/oasis-lr.md``) are untouched.
"""

from __future__ import annotations

import numpy as np

from primaldual.core.errors import InputError
from primaldual.oasis.ledger import WORK_EPSILON

ORDERS = ("density", "urgency", "value", "work")


def check_order(value) -> str:
    """The ``order`` parameter: ``density`` by default (:mod:`primaldual.oasis.lr.admission`, "Default")."""
    if value is None:
        return "density"
    if value not in ORDERS:
        raise InputError(f"order: must be one of {', '.join(ORDERS)}, got {value!r}")
    return value


def urgency_keys(scheduler, slot: int, candidates: list[int]) -> np.ndarray:
    """``k_i`` of the module docstring for each of ``candidates`` (uses the scheduler's ``work_left``,
    ``chunks``, ``unit``, ``previous``, ``restart_cost``, ``discount_rate`` and ``instance``)."""
    instance = scheduler.instance
    jobs = np.asarray(candidates, dtype=np.int64)
    remaining = np.maximum(scheduler.work_left[jobs], 1e-9)
    running = np.array([scheduler.previous.get(i, (-2,))[0] == slot - 1 for i in candidates], dtype=bool)
    restart = np.where(running, 0.0, scheduler.restart_cost)
    needed = np.maximum(np.ceil(remaining / scheduler.chunks[jobs] + restart - WORK_EPSILON), 1).astype(np.int64)
    completion = slot + needed - 1
    now, later = np.empty(len(candidates)), np.empty(len(candidates))
    for m, i in enumerate(candidates):
        job = instance.jobs[i]
        values = np.asarray(job.utility(np.array([completion[m], completion[m] + 1]) - job.arrival), dtype=float)
        now[m], later[m] = values
    now[completion >= instance.horizon] = 0.0
    later[completion + 1 >= instance.horizon] = 0.0
    key = now / (1.0 + scheduler.discount_rate * needed) + (now - later)
    return key / (np.maximum(remaining, 1.0) * np.maximum(scheduler.unit[jobs], 1e-12))


class GrowthOrder:
    """Overrides the execution's ``_growth_order`` (density order) for the other orders (module docstring);
    ties go to the lower index."""

    def _growth_order(self, slot: int, blocks: dict) -> tuple[list[int], dict[int, float]]:
        order, values = super()._growth_order(slot, blocks)
        if self.order == "density" or len(order) < 2:
            return order, values
        if self.order == "urgency":
            key = urgency_keys(self, slot, order)
        elif self.order == "value":
            key = np.array([values[i] for i in order])
        else:  # work
            key = np.array([values[i] / max(float(self.work_left[i]), 1.0) for i in order])
        return [order[m] for m in sorted(range(len(order)), key=lambda m: (-key[m], order[m]))], values


__all__ = ["ORDERS", "GrowthOrder", "check_order", "urgency_keys"]
