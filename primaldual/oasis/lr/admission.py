"""OASiS-LR's and OASiS-P's offers: the dual subroutine at the ledger's prices, a deadline, a block, a promise.

**Offers.** Pending jobs are offered densest first (present value per resource-time,
:func:`primaldual.oasis.lr.order.present_values`): jobs offered in one slot have no order of arrival between
them, and offering by index let a sparse job's block take the slots a denser job of the same batch needed. A
new job is offered at once; one offered before once ``reoffer_every`` slots have passed or its remaining work
fell by a quarter (between those its payoff moves little: prices only fall when reservations are released).
A job that can no longer finish (:func:`primaldual.simulation.placement.can_finish`) earns nothing and stops
competing.

**Admission** (:func:`admit_job`, its arithmetic in :func:`primaldual.oasis.lr.reference.offer`). The subroutine
(:func:`primaldual.dual.subroutine.best_schedule`'s search, :func:`primaldual.dual.reference.search`) prices the
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

**Repeated offers.** An offer reads the run through few things: the job, its remaining work, the slot, the
ledger's amounts and the learned floor (:func:`offer_key`; the prices, the free amounts, the cost floor and the
utility window are functions of these). The twins of a batch start from one state and mostly change their
ledgers alike (the same blocks run first under every policy), so they make the same offers again: on the
busiest week of ee9e8c (seed 1), 45,857 of 70,007 offers. Each key's answer up to the block
(:func:`offer_answer`) is kept for its slot in ``state.offers``, shared by the run and its twins, and taken
instead of making the offer again, with its block's utility and cost at the prices (functions of the key too);
the re-pack, which reads more of the state, and the payoff test run every time. A kept answer reads no price,
so the prices are brought up to date only where they are read (a refresh recomputes every slot changed since
the last, so the values, and the slots the dual record is told changed at an admission, are the same whenever
it runs). The ledger's amounts enter the key by a token (:attr:`primaldual.oasis.ledger.Ledger.token`) that names
them to the bit, so an answer is taken only where the offer would give it. **Gain**: ee9e8c's busiest week
(seed 1) 16.2 s to 11.6 s, the 11cb48 week 8.1 s to 6.6 s, with 4c6ee6b's smaller changes (best of three;
``docs/measurements.md``, "Offers answered once per key"); keeping the block's utility and cost, 12.0 s to
10.9 s on ee9e8c's week (``examples/kernel_floor.py``: 68,893 block costs to 23,610). Answers are dropped with
their slot (:func:`forget_offers`), and all of them when an arrival batch changes the floor, which every key
holds (:func:`set_floor`): at most 32,203 answers kept at once on the whole 11cb48 VC (seed 1), not 61,637
(225 MiB, not 236).

**Cost** per offer: one cost floor and the job's utility at its earliest completion, where most offers end
(:func:`primaldual.dual.reference.cannot_pay`, the offer's own first test); otherwise one call of the compiled
offer (:func:`primaldual.oasis.lr.reference.offer`: the subroutine's search, usually cut short by the cost floor,
the deadline and the block search over the slots up to it); on a failed block search, one block search per
movable block for the re-pack. The utility is read from the job's values from its arrival on, one vector call
per job (:meth:`primaldual.oasis.lr.state.JobTables.utility_window`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from primaldual.dual.cost_floor import cost_floor_of
from primaldual.dual.reference import cannot_pay
from primaldual.dual.subroutine import best_schedule, unit_prices
from primaldual.oasis.ledger import Reservation, block_length
from primaldual.oasis.lr import reference
from primaldual.oasis.lr.reference import BLOCK, NO_BLOCK, NO_OFFER, Demand, Market, OfferedJob, OfferRules
from primaldual.oasis.lr.order import by_key, present_values
from primaldual.oasis.lr.settings import LrSettings
from primaldual.oasis.lr.state import JobTables, LrState, Recorder
from primaldual.oasis.lr.type_view import pin
from primaldual.oasis.ledger import WORK_EPSILON
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
    """One offer of job ``i`` in ``slot`` (module docstring): True if it was promised a block. The offer up to its
    block (:func:`offer_answer`) is made once per key (:func:`offer_key`); a re-pack and the block's payoff test
    follow here."""
    remaining = int(state.remaining[i])
    answers = state.offers.setdefault(slot, {})
    key = offer_key(state, i, remaining)
    if key not in answers:
        answers[key] = offer_answer(settings, tables, state, slot, i, remaining) if tables.types is None else \
            typed_answer(settings, tables, state, slot, i)
    status, mu, deadline, target, block, value, cost = answers[key][:7]
    gpu_type, remaining = answers[key][7:9] if tables.types is not None else (-1, remaining)
    if settings.provable and tables.types is not None:  # OASiS-P on types: the relaxed typed mu (typed_bound)
        mu = target = answers[key][9]
    record.see_offer(i, mu)
    if status == NO_OFFER:
        if mu > 0:  # a positive bound with no one-type offer: P4 counts it among the unplaced
            record.see_unplaced(i)
        return False
    if status == NO_BLOCK and settings.repack:
        prices = state.prices(tables.constants, slot)  # the ledger's before the re-pack replaces it
        block = repack(settings, tables, state, slot, (i, remaining, gpu_type), deadline)
        if block is not None:
            value = float(offered_job(tables, i, slot, remaining, settings.restart_cost,
                                      gpu_type).utility[block.last - slot])
            cost = block_cost(tables, block, *prices)
    if block is None:
        record.see_unplaced(i)
        return False
    payoff = value - cost
    if payoff <= 0 or payoff < (1.0 - settings.delta) * target:
        if i in state.ledger.reservations:  # placed by a re-pack: undo only this job's block
            state.ledger.remove(i)
        record.see_unplaced(i)
        return False
    if i not in state.ledger.reservations:  # a successful re-pack already placed it
        state.ledger.add(block)
    if gpu_type >= 0:  # the block's type: its work is counted there from now
        pin(tables.types, state, i, gpu_type)
    state.deadlines[i] = deadline
    record.see_admission(i, mu, payoff, value, state.prices(tables.constants, slot), state.floor, slot,
                         rows=state.price_cache.take_touched(slot))
    return True


def typed_answer(settings: LrSettings, tables: JobTables, state: LrState, slot: int, i: int) -> tuple:
    """On several GPU types: :func:`offer_answer` on the worker servers of one type, then that type and the work
    offered there. An offered job holds no block, so it is offered on each type with servers, fastest first, with
    its work left there (:meth:`primaldual.oasis.lr.type_view.TypeView.work_on`, rounded up as the simulator's
    ``needed_on``), and the largest ``mu`` wins (ties: the faster type). Cost: one offer per type
    (:mod:`primaldual.oasis.lr.type_view`)."""
    view, pinned = tables.types, int(state.pinned[i])
    best = None
    for gpu_type in view.tried[i]:
        work = int(state.remaining[i]) if gpu_type == pinned else \
            max(int(np.ceil(view.work_on(state, i, gpu_type) - WORK_EPSILON)), 1)
        answer = offer_answer(settings, tables, state, slot, i, work, gpu_type)
        if best is None or answer[1] > best[1]:
            best = (*answer, gpu_type, work)
    if settings.provable:
        best = (*best, max(best[1], typed_bound(tables, state, slot, i)))
    return best


def typed_bound(tables: JobTables, state: LrState, slot: int, i: int) -> float:
    """OASiS-P on several types: the relaxed typed ``mu`` of job ``i``'s remaining work from ``slot`` at the
    offer's prices and free amounts (:func:`primaldual.dual.subroutine.best_schedule` with ``start`` and
    ``fraction_left``, ``relaxed``; proofs/oasis.md Lemma 1h'), at least the best payoff of every schedule of that
    work, of any mix of types. P2's admission test and P4's record use it (or the one-type offer's ``mu`` if
    higher), so the bound of proofs/oasis-lr.md G3 holds on types (there, "On several GPU types"). The work left is
    the fraction of the pinned type's (1 while unpinned: it never ran). Cost: one relaxed typed search per offer,
    with the cost floor of the fastest type's work."""
    pinned = int(state.pinned[i])
    view = tables.types
    left = 1.0 if pinned < 0 else float(state.work_left[i]) / float(view.work[i, pinned])
    if left <= 0.0 or slot >= tables.instance.horizon:
        return 0.0
    prices = state.prices(tables.constants, slot)
    worker_free, ps_free = state.free(tables.constants, slot)
    answer = best_schedule(tables.instance, i, *prices, worker_free, ps_free, start=slot, fraction_left=min(left, 1.0),
                           relaxed=True, cost_floor=state.price_cache.least_prices())
    return float(answer.mu)


def offer_answer(settings: LrSettings, tables: JobTables, state: LrState, slot: int, i: int, remaining: int,
                 gpu_type: int = -1) -> tuple:
    """The offer of job ``i`` with ``remaining`` worker-slots in ``slot`` up to its block, at the state's prices
    (brought up to date here): ``(status, mu, deadline, target)`` as :func:`primaldual.oasis.lr.reference.offer` gives
    them, then the block, what the job earns if it ends with the block and what the block pays at these prices
    (None, 0.0, 0.0 without a block). The last two are functions of the key as well (the prices are of the
    ledger's amounts and the floor), so a kept answer spares the payoff test's utility and block cost. With a
    ``gpu_type`` (several types), the free worker amounts and the ledger's capacity of the other types' servers
    are zeroed (:class:`primaldual.oasis.lr.type_view.TypeView`), so plan and block are of that type."""
    instance = tables.instance
    prices = state.prices(tables.constants, slot)
    least = state.price_cache.least_prices()
    floor = cost_floor_of(instance.jobs[i], remaining, least, slot) if slot < instance.horizon else 0.0
    most = min(instance.jobs[i].chunks, remaining)
    head = min(earliest_completion(remaining, most) + 1, instance.horizon - slot)
    if cannot_pay(tables.utility_window(i, slot, head), remaining, most, floor):
        # offer's first answer, read from the utility up to the earliest completion: the window's first values
        return NO_OFFER, 0.0, -1, 0.0, None, 0.0, 0.0
    job = offered_job(tables, i, slot, remaining, settings.restart_cost, gpu_type)
    rules = OfferRules(instance.horizon, floor, settings.delta,
                       settings.restart_cost, settings.provable, settings.late,
                       first_block_slot(settings.immediate_blocks, slot))
    placement = (np.empty(instance.cluster.n_worker_servers, dtype=np.int64),
                 np.empty(instance.cluster.n_ps_servers, dtype=np.int64))
    worker_free, ps_free = state.free(tables.constants, slot)
    reserved = state.ledger.reserved()
    if gpu_type >= 0:
        worker_free, reserved = tables.types.free_on(worker_free, gpu_type), tables.types.reserved_on(reserved, gpu_type)
    status, mu, deadline, target, first, last = tables.code.offer(Market(*prices, worker_free, ps_free), reserved,
                                                                  job, rules, placement)
    # Python numbers (numpy's where the loops run as Python), the same values.
    if status != BLOCK:
        return int(status), float(mu), int(deadline), float(target), None, 0.0, 0.0
    block = Reservation(i, *placement, int(first), int(last))
    return (int(status), float(mu), int(deadline), float(target), block, float(job.utility[block.last - slot]),
            block_cost(tables, block, *prices))


def offer_key(state: LrState, i: int, remaining: int) -> tuple:
    """What an offer of job ``i`` in a slot reads of the run (module docstring, "Repeated offers"); on several
    GPU types also the type its work is counted on and that work to the bit (the offer on another type reads it)."""
    if state.pinned is not None:
        return i, remaining, state.ledger.token, state.floor.values, int(state.pinned[i]), float(state.work_left[i])
    return i, remaining, state.ledger.token, state.floor.values


def set_floor(state: LrState, floor) -> None:
    """The run's learned floor set to ``floor``; if its values changed, every kept answer goes: its key holds the
    floor before (:func:`offer_key`), so none could be read again."""
    if floor.values != state.floor.values:
        state.offers.clear()
    state.floor = floor


def forget_offers(state: LrState, slot: int) -> None:
    """Drop the answers of slots before ``slot``: no run or twin offers in them again."""
    for old in [s for s in state.offers if s < slot]:
        del state.offers[old]


def offered_job(tables: JobTables, i: int, slot: int, remaining: int, restart_cost: float,
                gpu_type: int = -1) -> OfferedJob:
    """Job ``i`` as :func:`primaldual.oasis.lr.reference.offer` reads it, offered in ``slot`` with ``remaining``
    worker-slots left: its utility over the slots the offer may read
    (:meth:`primaldual.oasis.lr.state.JobTables.utility_window`), ``Z(D)`` from the run's table; its widest block
    on the empty servers of ``gpu_type`` if one is given (several types)."""
    job = tables.instance.jobs[i]
    most = int(min(job.chunks, remaining))
    needed = tables.ps_needed_upto(i, most)
    widest = tables.fastest_workers[i] if gpu_type < 0 else tables.types.widths[i, gpu_type]
    block_workers = min(int(widest), remaining)
    slots = tables.instance.horizon - slot
    if block_workers >= 1:  # the deadline reads f at the end of the earliest block, which may pass the horizon
        slots = max(slots, block_length(remaining, block_workers, restart_cost))
    utility = tables.utility_window(i, slot, slots)
    return OfferedJob(slot, remaining, Demand(job.worker_demand, job.ps_demand, needed),
                      int(min(needed.max(initial=0), most)), block_workers, utility)


def earliest_completion(remaining: int, most: int) -> int:
    """The window slot of the earliest completion, at full speed (``most`` workers) from the offer's slot."""
    return -(-remaining // most) - 1 if most >= 1 else 0


def block_cost(tables: JobTables, block: Reservation, worker_prices: np.ndarray, ps_prices: np.ndarray) -> float:
    """What ``block`` pays at the cell prices over its slots, every sum in index order: by the compiled loops
    where the run is compiled (:func:`primaldual.oasis.lr.reference.block_cost`), else by numpy's ``cumsum``,
    which adds in the same order, so both kernels give the same float (tested). Not numpy's ``@``: its BLAS adds
    in an order of its own, which plain loops cannot reproduce without calling into numpy's private modules."""
    job = tables.instance.jobs[block.job]
    if tables.code is not reference:
        return tables.code.block_cost(worker_prices, ps_prices, block.first, block.last, job.worker_demand,
                                      job.ps_demand, block.workers, block.parameter_servers)
    window = slice(block.first, block.last + 1)
    return (ordered_cost(unit_prices(worker_prices[window], job.worker_demand), block.workers)
            + ordered_cost(unit_prices(ps_prices[window], job.ps_demand), block.parameter_servers))


def ordered_cost(unit: np.ndarray, counts: np.ndarray) -> float:
    """``sum_t sum_s unit[t, s] counts[s]``, added in index order (servers, then slots): the order of
    :func:`primaldual.oasis.lr.reference.pool_cost`'s loops."""
    per_slot = np.cumsum(unit * counts.astype(np.float64), axis=1)[:, -1]
    return float(np.cumsum(per_slot)[-1])


def repack(settings: LrSettings, tables: JobTables, state: LrState, slot: int, newcomer: tuple,
           deadline: int) -> Reservation | None:
    """Re-place every block that has not started, and job ``i``'s, latest deadline first (module docstring);
    adopt the new ledger only if every one of them fits. Moves cost nothing: a block that has not started
    restarts anyway and its length includes that restart. ``newcomer`` is ``(i, remaining, gpu_type)``; on
    several GPU types every block is searched on its job's type (the newcomer's offered one)."""
    i, remaining, gpu_type = newcomer
    earliest = first_block_slot(settings.immediate_blocks, slot)
    state.repacks.tried += 1
    trial = state.ledger.copy()
    movable = [j for j, r in trial.reservations.items() if r.first > slot]
    for j in movable:
        trial.remove(j)
    work = {j: int(state.remaining[j]) for j in movable}
    work[i] = remaining
    limits = {j: state.deadlines[j] for j in movable}
    limits[i] = deadline
    types = {j: gpu_type if j == i else int(state.pinned[j]) for j in work} if tables.types is not None else {}
    for j in sorted(work, key=lambda j: (-limits[j], j)):
        block = trial.find_block(j, work[j], earliest if j == i else slot, limits[j], settings.restart_cost,
                                 types=tables.types, gpu_type=types.get(j, -1))
        if block is None:
            return None
        trial.add(block)
    state.ledger = trial
    state.repacks.succeeded += 1
    return trial.reservations[i]


__all__ = ["admit_job", "block_cost", "first_block_slot", "forget_offers", "offer_answer", "offer_key",
           "offer_pending", "offered_job", "repack", "set_floor", "typed_answer"]
