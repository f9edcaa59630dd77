"""Work-conserving execution of OASiS-LR and OASiS-P (:mod:`primaldual.oasis.lr.scheduler`), one slot at a time.

Each slot runs the ledger's reservations that cover it; admitted jobs outside their block and pending jobs then
grow into the capacity the blocks leave free, in order of present value per resource-time (``f_i`` at full
speed from now, discounted for the risk of the slots still to run as RRH does, over remaining work times the
dominant share of one worker).

**Restart costs** (``F > 0``, ``primaldual/simulation/simulator.py``): a job whose placement changes supplies only
``(1 - F)`` of its workers' work in that slot. Two plans of the free capacity are built, in the same order:

* *stable*: a job that ran in the slot before keeps that placement where it still fits (no restart), and grows
  only if the larger placement supplies more after its restart, ``(1 - F) D' > D``; a job with a block may run
  early on the block's own placement (its block then starts without a restart);
* *fresh*: every job is placed first-fit from the free capacity, as RRH does (a placement that happens to equal
  the slot before's pays nothing).

With ``plan="best"`` (the default) the slot runs the plan that delivers more present value (the stable one on
ties; ``plan="fresh"`` or ``"stable"`` always runs that one, :mod:`primaldual.oasis.lr.rollout`): ``sum_i PV_i min(s_i, W_i) / W_i`` with ``s_i`` the
worker-slots job ``i`` is supplied after restart losses and ``W_i`` its remaining work. Keeping placements is
not always better: a kept placement can fragment the servers so that a denser job gets fewer workers, and
that costs more than the restarts it saves. A job that changes placement is given up to
``ceil(W_i / (1 - F))`` workers, so that it can still finish in the slot (``ceil(W_i)`` without a change).

The scheduler tracks each job's fractional remaining work ``W_i`` exactly as the simulator does (it knows
``F`` through ``set_restart_cost`` and charges its own allocations the same way), because the simulator's
``SlotState.remaining_work`` is a ceiling. Without restart costs the plan is the fresh one and the result is
what it was before restart costs existed.
"""

from __future__ import annotations

import math

import numpy as np

from primaldual.simulation.placement import UNBOUNDED, FreeCapacity, grow, trim, units_that_fit
from primaldual.core.errors import InputError
from primaldual.oasis.ledger import WORK_EPSILON
from primaldual.simulation.scheduler import Allocation, SlotState


#: Plans of the free capacity under restart costs (module docstring).
PLANS = ("best", "fresh", "stable")


def check_plan(value) -> str:
    if value not in PLANS:
        raise InputError(f"plan: must be one of {', '.join(PLANS)}, got {value!r}")
    return value


class WorkConservingExecution:
    """The ``allocate`` of :class:`primaldual.oasis.lr.scheduler.OasisLrScheduler` (module docstring). Expects ``instance``,
    ``ledger``, ``deadlines``, ``pending``, ``done``, ``previous``, ``chunks``, ``unit``, ``restart_cost``,
    ``discount_rate``, ``plan``, ``pending_tier`` and ``work_left`` (float, per job) on ``self``."""

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        ceiling = np.asarray(state.remaining_work, dtype=float)
        # The simulator's figure is a ceiling of the true remaining work, which this scheduler tracks itself.
        self.work_left = np.minimum(self.work_left, ceiling)
        self.remaining = np.maximum(np.ceil(self.work_left - WORK_EPSILON), 0).astype(np.int64)
        if self.instance.arrivals.size and slot not in self._arrival_slots():
            self._offer(slot)  # the pending tier is re-offered every slot
        self._trim(slot)
        self._check_promises(slot)
        blocks = {i: Allocation(r.workers.copy(), r.parameter_servers.copy())
                  for i, r in self.ledger.reservations.items() if r.covers(slot)}
        free = FreeCapacity(self.instance.cluster)
        free.worker -= self.ledger.worker_used[slot]
        free.ps -= self.ledger.ps_used[slot]
        self._finish_blocks(slot, blocks, free)
        order, values = self._growth_order(slot, blocks)
        if self.restart_cost > 0 and order and self.plan == "stable":
            out = self._plan(slot, order, free, dict(blocks), stable=True)
        else:
            out = self._plan(slot, order, free.copy(), dict(blocks), stable=False)
        if self.restart_cost > 0 and order and self.plan == "best":
            stable = self._plan(slot, order, free, dict(blocks), stable=True)
            # Ties go to the stable plan: the same value with fewer restarts.
            if self._plan_value(slot, stable, values) >= self._plan_value(slot, out, values) - 1e-12:
                out = stable
        self._account(slot, out)
        self.previous = {i: (slot, a) for i, a in out.items()}
        if slot + 1 < self.instance.horizon:
            self._trim(slot + 1)  # the next slot's arrivals are offered before its allocate: show them the room
        return out

    @property
    def ps_tables(self) -> list[list[int]]:
        """Per job, ``Z(D)`` for ``D = 0..N_i`` (eq. (6)): a job constant read many times per slot, computed once."""
        if getattr(self, "_ps_tables", None) is None or self._ps_tables[0] is not self.instance:
            self._ps_tables = (self.instance, [job.min_parameter_servers(np.arange(job.chunks + 1)).tolist()
                                               for job in self.instance.jobs])
        return self._ps_tables[1]

    # ------------------------------------------------------------------------------------------ accounts

    def _supplied(self, slot: int, i: int, allocation: Allocation) -> float:
        """Worker-slots ``allocation`` supplies job ``i`` in ``slot`` (the simulator's restart rule)."""
        workers = float(allocation.workers.sum())
        return workers if self._kept(slot, i, allocation) else workers * (1.0 - self.restart_cost)

    def _kept(self, slot: int, i: int, allocation: Allocation) -> bool:
        previous = self.previous.get(i)
        return previous is not None and previous[0] == slot - 1 and previous[1].same_placement(allocation)

    def _account(self, slot: int, out: dict[int, Allocation]) -> None:
        """Apply this slot's work to the remaining work the way the simulator will, so that arrivals in the next
        slot, which come before its ``allocate``, see current figures."""
        for i, allocation in out.items():
            self.work_left[i] = max(self.work_left[i] - self._supplied(slot, i, allocation), 0.0)
        self.remaining = np.maximum(np.ceil(self.work_left - WORK_EPSILON), 0).astype(np.int64)

    def _most(self, i: int, restart: bool) -> int:
        """Workers that finish job ``i`` in this slot (more would idle), at most ``N_i``."""
        left = float(self.work_left[i]) / ((1.0 - self.restart_cost) if restart else 1.0)
        return int(min(self.chunks[i], max(math.ceil(left - WORK_EPSILON), 0)))

    def _plan_value(self, slot: int, plan: dict[int, Allocation], values: dict[int, float]) -> float:
        total = 0.0
        for i, allocation in plan.items():
            if i in values and self.work_left[i] > WORK_EPSILON:
                done = min(self._supplied(slot, i, allocation), float(self.work_left[i]))
                total += values[i] * done / float(self.work_left[i])
        return total

    def _finish_blocks(self, slot: int, blocks: dict[int, Allocation], free: FreeCapacity) -> None:
        """A block that holds more workers than its job needs to finish in this slot runs only those (restart
        loss included: trimming changes the placement) and frees the rest for others in this slot. The job
        completes in this slot either way, so its promise is untouched."""
        for i, allocation in blocks.items():
            left = float(self.work_left[i])
            size = int(allocation.workers.sum())
            if left <= WORK_EPSILON or size * (1.0 if self._kept(slot, i, allocation) else 1.0 - self.restart_cost) < left:
                continue  # not its last slot
            # A margin above the simulator's completion tolerance: the trimmed placement surely finishes the job.
            need = math.ceil((left + 1e-7) / (1.0 - self.restart_cost))
            if need < size:
                job = self.instance.jobs[i]
                trimmed = trim(job, allocation, need)
                free.release(job, allocation)
                free.take(job, trimmed)
                blocks[i] = trimmed

    # ------------------------------------------------------------------------------------------- plans

    def _growth_order(self, slot: int, blocks: dict[int, Allocation]) -> tuple[list[int], dict[int, float]]:
        """Admitted jobs outside their block and pending jobs (and, without restart costs, running blocks), by
        present value per resource-time (ties: lower index); and each one's present value."""
        candidates = [i for i in self.deadlines if i not in self.done and (i not in blocks or self.restart_cost == 0)]
        if self.pending_tier:
            candidates += [i for i in self.pending if i not in blocks]
        if not candidates:
            return [], {}
        value, density = self.present_values(slot, candidates)
        order = [candidates[m] for m in sorted(range(len(candidates)), key=lambda m: (-density[m], candidates[m]))]
        return order, dict(zip(candidates, value.tolist()))

    def present_values(self, slot: int, candidates: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Each job's present value (``f_i`` at full speed from now, discounted for the risk of the slots still
        to run, as RRH) and that value per remaining resource-time (remaining work times the dominant share of
        one worker). Kept for the slot: the pending jobs are ranked when offered and again for execution, and a
        job's figures change only with its remaining work."""
        known = getattr(self, "_present", None)
        if known is None or known[0] != slot:
            known = self._present = (slot, {})
        cache = known[1]
        missing = [i for i in dict.fromkeys(candidates) if cache.get(i, (None,))[0] != self.work_left[i]]
        if missing:
            jobs = np.array(missing, dtype=np.int64)
            remaining = np.maximum(self.work_left[jobs], 1e-9)
            needed = np.maximum(-(-np.ceil(remaining - WORK_EPSILON) // self.chunks[jobs]), 1)
            value = np.array([float(self.instance.jobs[i].utility(slot + n - 1 - self.instance.jobs[i].arrival))
                              for i, n in zip(missing, needed.tolist())])
            value = value / (1.0 + self.discount_rate * needed)
            density = value / (np.maximum(remaining, 1.0) * np.maximum(self.unit[jobs], 1e-12))
            for i, v, d in zip(missing, value.tolist(), density.tolist()):
                cache[i] = (self.work_left[i], v, d)
        return (np.array([cache[i][1] for i in candidates]), np.array([cache[i][2] for i in candidates]))

    def _plan(self, slot: int, order: list[int], free: FreeCapacity, out: dict[int, Allocation],
              stable: bool) -> dict[int, Allocation]:
        for i in order:
            self._grow(slot, i, free, out, stable)
        return out

    def _grow(self, slot: int, i: int, free: FreeCapacity, out: dict[int, Allocation], stable: bool) -> None:
        job = self.instance.jobs[i]
        most = self._most(i, restart=self.restart_cost > 0)
        if most < 1:
            return
        if i in out:  # a running block without restart costs: growing it is free
            out[i] = grow(free, job, out[i], most, "first_fit")
            return
        previous = self.previous.get(i)
        if stable and previous is not None and previous[0] == slot - 1 and free.fits(job, previous[1]):
            free.take(job, previous[1])  # the same placement again: no restart
            held = float(previous[1].workers.sum())
            if held < self.work_left[i] - WORK_EPSILON:
                grown = grow(free.copy(), job, previous[1], most, "first_fit")
                # Growing is a change of placement: worth it only if it supplies more after the restart.
                if float(grown.workers.sum()) * (1.0 - self.restart_cost) > held + WORK_EPSILON:
                    out[i] = grow(free, job, previous[1], most, "first_fit")
                    return
            out[i] = previous[1]
            return
        reserved = self.ledger.reservations.get(i)
        if stable and reserved is not None:
            # Run early on the block's own placement where it fits: the block then starts without a restart.
            allocation = Allocation(reserved.workers.copy(), reserved.parameter_servers.copy())
            if free.fits(job, allocation):
                free.take(job, allocation)
                out[i] = allocation
                return
        allocation = place_most(free, job, most, self.ps_tables[i])
        if allocation is not None:
            out[i] = allocation


def place_most(free: FreeCapacity, job, limit: int, needed: list[int]) -> Allocation | None:
    """``free.place(job, free.max_workers(job, limit), "first_fit")`` (None if no worker fits) with the units that
    fit on each server counted once for both steps instead of twice (the same counts: ``free`` is unchanged
    between them); ``needed[D] = Z(D)`` for ``D <= limit`` (eq. (6), :meth:`primaldual.core.instance.Job.min_parameter_servers`)."""
    worker_caps = units_that_fit(free.worker, job.worker_demand)
    workers = int(min(limit, worker_caps.sum()))
    if workers <= 0:
        return None  # the PS pool need not be looked at
    ps_caps = units_that_fit(free.ps, job.ps_demand)
    ps_room = int(min(ps_caps.sum(), UNBOUNDED))
    while workers > 0 and needed[workers] > ps_room:
        workers -= 1
    if workers <= 0:
        return None
    y = _first_fit(workers, worker_caps)
    z = _first_fit(needed[workers], ps_caps)
    if y is None or z is None:
        return None
    free.take(job, Allocation(y, z))
    return Allocation(y, z)


def _first_fit(count: int, caps: np.ndarray) -> np.ndarray | None:
    """``spread(count, caps, "first_fit")`` (:mod:`primaldual.simulation.placement`) without its loop: each server
    in index order takes what is left of ``count``, up to its cap."""
    caps = np.minimum(caps, count)
    if int(caps.sum()) < count:
        return None
    before = np.cumsum(caps) - caps
    return np.minimum(np.maximum(count - before, 0), caps).astype(np.int64)


__all__ = ["PLANS", "WorkConservingExecution", "check_plan", "place_most"]
