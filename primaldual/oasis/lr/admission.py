"""OASiS-LR's and OASiS-P's offers: the dual subroutine at the ledger's prices, a deadline, a block, a promise.

**Offers.** Pending jobs are offered densest first (present value per resource-time,
:func:`primaldual.oasis.lr.order.present_values`): jobs offered in one slot have no order of arrival between
them, and offering by index let a sparse job's block take the slots a denser job of the same batch needed. A
new job is offered at once; one offered before once ``reoffer_every`` slots have passed or its remaining work
fell by a quarter (between those its payoff moves little: prices only fall when reservations are released).
A job that can no longer finish (:func:`primaldual.simulation.placement.can_finish`) earns nothing and stops
competing.

**Admission** (:func:`admit_job`). The subroutine (:func:`primaldual.dual.subroutine.best_schedule`) prices the
job's remaining work from the current slot at the ledger's cell prices and free amounts, with the cost floor:
a job that cannot pay (``mu = 0``) is skipped without a search or cut short, which leaves ``mu`` unchanged.
With ``mu > 0`` the job gets a deadline and a block (the module docstring of
:mod:`primaldual.oasis.lr.scheduler`): the subroutine plans elastic per-slot counts without restart costs,
while a block is one fixed placement that pays one restart, so the deadline keeps ``(1 - delta)`` of the
later of the plan's completion and the end of the earliest block on an empty cluster. The block must pay for
itself at the admission prices and keep ``(1 - delta)`` of the plan's payoff (for OASiS-LR, less what the
block's unavoidable delay costs the job): OASiS-P's bound needs it against ``mu``, and for OASiS-LR it keeps
blocks that the plan's payoff flatters out of the ledger. If no block fits, OASiS-LR re-packs
(:func:`repack`): every block that has not started is re-placed, latest deadline first, with the newcomer
among them, and the new ledger is adopted only if all fit.

**Immediate blocks.** With ``immediate_blocks = False`` (an option; the default is True) a job offered in slot
``t`` is promised only if its reservation can start at ``t + 1`` or later: the block search (and the re-pack's
placement of the newcomer) start from :func:`first_block_slot`. A job whose only blocks start at ``t`` stays
in the pending tier: it runs now in the order of present value per resource-time, like every pending job, and
is re-offered in a later slot, when its deadline is recomputed from that slot. Why (``proofs/oasis-lr.md``,
"Where the utility goes"): a block is placed as late as possible, so one that must start in the slot of the
offer has no slack at all; the promise is then a commitment to run the job at a fixed width from now to its
deadline, and for that whole time the execution serves it before every unpromised job, however dense. It
buys the job nothing in the present slot, where the density order would serve it anyway if it were dense
enough, and it takes the slots a denser job arriving during the block needs. The rule only refuses
admissions, so the promise invariant (G1) is untouched; ``oasis-p``'s bound (G3) is stated for the default.

**Cost** per offer: one subroutine call (:mod:`primaldual.dual.subroutine`, usually cut short by the cost
floor), one block search over the slots up to the deadline (:meth:`primaldual.oasis.ledger.Ledger.find_block`)
and, on a failed search, one per movable block for the re-pack. Most offers end at the cost floor
(:func:`primaldual.dual.cost_floor.cannot_pay`: one utility value and one floor).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from primaldual.dual.cost_floor import cannot_pay
from primaldual.dual.subroutine import best_schedule, unit_prices
from primaldual.oasis.ledger import Reservation, block_length
from primaldual.oasis.lr import blas, reference
from primaldual.oasis.lr.order import by_key, present_values
from primaldual.oasis.lr.settings import LrSettings
from primaldual.oasis.lr.state import JobTables, LrState, Recorder
from primaldual.simulation.placement import can_finish


def first_block_slot(immediate_blocks: bool, slot: int) -> int:
    """The first slot a promise offered in ``slot`` may reserve (``slot + 1`` without immediate blocks)."""
    return slot if immediate_blocks else slot + 1


def offer_pending(settings: LrSettings, tables: JobTables, state: LrState, slot: int,
                  admit: Callable[[int, int], bool]) -> None:
    """Offer the pending jobs that are due, densest first (module docstring); ``admit(slot, i)`` makes one
    offer and says whether the job was promised."""
    if len(state.pending) > 1:
        state.pending = by_key(state.pending, present_values(tables, state, slot, state.pending)[1])
    # Remaining work does not change during the offers, so one vector call decides every job (the same
    # integer arithmetic as one call per job), and one whether it is due.
    jobs = np.array(state.pending, dtype=np.int64)
    remaining = state.remaining[jobs]
    finishable = can_finish(slot, remaining, tables.fastest_workers[jobs], tables.instance.horizon)
    due = finishable & state.offered.due(slot, jobs, remaining, settings.reoffer_every)
    promised = {i for i in jobs[due].tolist() if admit(slot, i)}
    # After the offers, which never read it (nor change the remaining work).
    state.offered.record(slot, jobs[due], remaining[due])
    # A job that can no longer finish earns nothing, so it stops competing.
    state.pending = [i for i in jobs[finishable].tolist() if i not in promised]


def admit_job(settings: LrSettings, tables: JobTables, state: LrState, record: Recorder, slot: int,
              i: int) -> bool:
    """One offer of job ``i`` in ``slot`` (module docstring): True if it was promised a block."""
    instance, constants = tables.instance, tables.constants
    worker_prices, ps_prices = state.prices(constants, slot)
    remaining = int(state.remaining[i])
    least = state.price_cache.least_prices()
    if cannot_pay(instance.jobs[i], remaining, slot, instance.horizon, least):
        record.see_offer(i, 0.0)  # the subroutine's own answer without its call (cost_floor.cannot_pay)
        return False
    worker_free, ps_free = state.free(constants, slot)
    result = best_schedule(instance, i, worker_prices, ps_prices, worker_free, ps_free, work=remaining,
                           start=slot, cost_floor=least, plan=False)
    record.see_offer(i, result.mu)
    if not result.admit:
        return False
    job = instance.jobs[i]
    workers = min(int(tables.fastest_workers[i]), remaining)
    if workers < 1:
        record.see_unplaced(i)
        return False
    # The earliest block on an empty cluster: the most workers that fit, from now.
    planned = max(result.completion_slot, slot + block_length(remaining, workers, settings.restart_cost) - 1)
    deadline = latest_deadline(job, planned, instance.horizon, settings.delta)
    target = result.mu
    if not settings.provable:  # the plan's payoff less what the block's unavoidable delay costs the job
        target -= float(job.utility(result.completion_slot - job.arrival) - job.utility(planned - job.arrival))
    earliest = first_block_slot(settings.immediate_blocks, slot)
    block = state.ledger.find_block(i, remaining, earliest, deadline, settings.restart_cost, settings.late)
    if block is None and settings.repack:
        block = repack(state, settings.restart_cost, slot, i, remaining, deadline, earliest)
    if block is None:
        record.see_unplaced(i)
        return False
    cost = block_cost(tables, block, worker_prices, ps_prices)
    payoff = float(job.utility(block.last - job.arrival)) - cost
    if payoff <= 0 or payoff < (1.0 - settings.delta) * target:
        if i in state.ledger.reservations:  # placed by a re-pack: undo only this job's block
            state.ledger.remove(i)
        record.see_unplaced(i)
        return False
    if i not in state.ledger.reservations:  # a successful re-pack already placed it
        state.ledger.add(block)
    state.deadlines[i] = deadline
    prices = state.prices(constants, slot)
    record.see_admission(i, result.mu, payoff, float(job.utility(block.last - job.arrival)), prices, state.floor,
                         slot, rows=state.price_cache.take_touched(slot))
    return True


def latest_deadline(job, arrival_completion: int, horizon: int, delta: float) -> int:
    """The latest slot ``d`` (``>= completion``) with ``f(d - a) >= (1 - delta) f(completion - a)``."""
    target = (1.0 - delta) * float(job.utility(arrival_completion - job.arrival))
    slots = np.arange(arrival_completion, horizon)
    ok = np.asarray(job.utility(slots - job.arrival), dtype=float) >= target * (1 - 1e-12)
    return int(slots[ok][-1]) if ok.any() else arrival_completion



def block_cost(tables: JobTables, block: Reservation, worker_prices: np.ndarray, ps_prices: np.ndarray) -> float:
    """What ``block`` pays at the cell prices over its slots: by the compiled loops where the run is compiled and
    they can call numpy's BLAS (:func:`primaldual.oasis.lr.reference.block_cost`, the same float), else by numpy."""
    job = tables.instance.jobs[block.job]
    if tables.code is not reference and blas.available():
        return tables.code.block_cost(worker_prices, ps_prices, block.first, block.last, job.worker_demand,
                                      job.ps_demand, block.workers, block.parameter_servers)
    window = slice(block.first, block.last + 1)
    return float((unit_prices(worker_prices[window], job.worker_demand) @ block.workers).sum()
                 + (unit_prices(ps_prices[window], job.ps_demand) @ block.parameter_servers).sum())


def repack(state: LrState, restart_cost: float, slot: int, i: int, remaining: int, deadline: int,
           earliest: int) -> Reservation | None:
    """Re-place every block that has not started, and job ``i``'s, latest deadline first (module docstring);
    adopt the new ledger only if every one of them fits. Moves cost nothing: a block that has not started
    restarts anyway and its length includes that restart."""
    state.repacks.tried += 1
    trial = state.ledger.copy()
    movable = [j for j, r in trial.reservations.items() if r.first > slot]
    for j in movable:
        trial.remove(j)
    work = {j: int(state.remaining[j]) for j in movable}
    work[i] = remaining
    limits = {j: state.deadlines[j] for j in movable}
    limits[i] = deadline
    for j in sorted(work, key=lambda j: (-limits[j], j)):
        block = trial.find_block(j, work[j], earliest if j == i else slot, limits[j], restart_cost)
        if block is None:
            return None
        trial.add(block)
    state.ledger = trial
    state.repacks.succeeded += 1
    return trial.reservations[i]


__all__ = ["admit_job", "block_cost", "first_block_slot", "latest_deadline", "offer_pending", "repack"]
