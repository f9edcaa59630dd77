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
``SlotState.remaining_work`` is a ceiling. Without restart costs the plan is the fresh one.

**Promises.** Before a slot is planned, every block is trimmed to its job's remaining work (a block that has
not started starts later, a running one ends earlier) and the ledger is checked to still cover every promised
job's remaining work by its deadline (:class:`primaldual.oasis.ledger.PromiseBroken` otherwise: a bug, never
expected). Blocks run first, so nothing the growth does can break a promise. After the slot the ledger is
trimmed again, so that the next slot's arrivals, offered before its ``allocate``, see the room.

**Cost** per slot: the growth order's sort, and one call of the compiled plan
(:func:`primaldual.oasis.lr.reference.grow_plan`: per growing job one first-fit placement over the servers,
``O((H + K) R)``), twice under restart costs with ``plan="best"``.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from primaldual.simulation.placement import FreeCapacity, trim
from primaldual.oasis.ledger import WORK_EPSILON, PromiseBroken, Reservation, block_length
from primaldual.oasis.lr.order import growth_order
from primaldual.oasis.lr.reference import Growing, Plan, RunJobs
from primaldual.oasis.lr.settings import PLAN_ORDER, PLANS, LrSettings  # noqa: F401 - re-exported
from primaldual.oasis.lr.state import JobTables, LrState
from primaldual.oasis.lr.type_view import pin_placed
from primaldual.simulation.scheduler import Allocation


#: :class:`~primaldual.oasis.lr.reference.Growing`'s type fields on one type: empty, made once (the plan never
#: reads or writes them there).
ONE_TYPE = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int64),
            np.zeros((0, 0)))


def allocate_slot(settings: LrSettings, tables: JobTables, state: LrState, slot: int, ceiling: np.ndarray,
                  offer: Callable[[int], None], name: str) -> dict[int, Allocation]:
    """One slot of the execution (module docstring): ``ceiling`` is the simulator's remaining work (a
    ceiling of the true one, which ``state`` tracks itself), ``offer(slot)`` re-offers the pending tier
    outside arrival slots and ``name`` names the scheduler in a broken promise."""
    blocks, free = prepare_slot(settings, tables, state, slot, ceiling, offer, name)
    out = policy_plan(settings, tables, state, slot, blocks, free)
    finish_slot(settings, tables, state, slot, out)
    return out


def prepare_slot(settings: LrSettings, tables: JobTables, state: LrState, slot: int, ceiling: np.ndarray,
                 offer: Callable[[int], None], name: str) -> tuple[dict[int, Allocation], FreeCapacity]:
    """The part of a slot no policy changes: the work left, the offers, the blocks trimmed and checked, and
    the blocks that run with the capacity they leave free. A policy reads none of it before its plan (the
    offers rank by present value, whose discount no policy changes), which the rollout relies on."""
    instance = tables.instance
    state.work_left = np.minimum(state.work_left, np.asarray(ceiling, dtype=float))
    state.remaining = np.maximum(np.ceil(state.work_left - WORK_EPSILON), 0).astype(np.int64)
    if instance.arrivals.size and slot not in state.arrival_slots:
        offer(slot)  # the pending tier is re-offered every slot
    trim_blocks(settings, state, slot)
    check_promises(settings, state, slot, name)
    ledger = state.ledger
    blocks = {i: Allocation(r.workers.copy(), r.parameter_servers.copy())
              for i, r in ledger.reservations.items() if r.covers(slot)}
    free = FreeCapacity(instance.cluster)
    free.worker -= ledger.worker_used[slot]
    free.ps -= ledger.ps_used[slot]
    finish_blocks(settings, tables, state, slot, blocks, free)
    return blocks, free


def policy_plan(settings: LrSettings, tables: JobTables, state: LrState, slot: int, blocks: dict[int, Allocation],
                free: FreeCapacity) -> dict[int, Allocation]:
    """The slot's allocations under ``state``'s policy (its order, and under restart costs its plan), from the
    prepared ``blocks`` and ``free`` (neither changed)."""
    restart_cost = settings.restart_cost
    order, values = growth_order(settings, tables, state, slot, blocks)
    plan = state.policy.plan
    if restart_cost > 0 and order and plan == "stable":
        return plan_slot(settings, tables, state, slot, order, free.copy(), blocks, stable=True)
    out = plan_slot(settings, tables, state, slot, order, free.copy(), blocks, stable=False)
    if restart_cost > 0 and order and plan == "best":
        stable = plan_slot(settings, tables, state, slot, order, free.copy(), blocks, stable=True)
        # Ties go to the stable plan: the same value with fewer restarts.
        if plan_value(settings, state, slot, stable, values) >= \
                plan_value(settings, state, slot, out, values) - 1e-12:
            out = stable
    return out


def finish_slot(settings: LrSettings, tables: JobTables, state: LrState, slot: int,
                out: dict[int, Allocation]) -> None:
    """The slot's allocations ``out`` applied: the work they do, the placements kept, the blocks trimmed. On
    several GPU types a job that runs for the first time is pinned to its workers' type first
    (:func:`primaldual.oasis.lr.type_view.pin_placed`), so its work is counted in that type's worker-slots."""
    if tables.types is not None:
        pin_placed(tables.types, state, out)
    account(settings, state, slot, out)
    state.previous = {i: (slot, a) for i, a in out.items()}
    if slot + 1 < tables.instance.horizon:
        trim_blocks(settings, state, slot + 1)  # the next slot's arrivals are offered before its allocate


def same_plan(one: dict[int, Allocation], other: dict[int, Allocation]) -> bool:
    """Whether two plans of a slot run the same jobs on the same placements (so leave the same state)."""
    return one.keys() == other.keys() and all(a.same_placement(other[i]) for i, a in one.items())


# ------------------------------------------------------------------------------------------ the ledger


def running(state: LrState, slot: int, i: int, r: Reservation) -> bool:
    """Whether job ``i``'s block ``r`` runs from ``slot`` on without a restart (started, or kept)."""
    return r.first < slot or (r.first == slot and state.kept(slot, i, Allocation(r.workers, r.parameter_servers)))


def trim_blocks(settings: LrSettings, state: LrState, slot: int) -> None:
    """Shrink every block to the remaining work: later start if not started, earlier end if running."""
    ledger, restart_cost = state.ledger, settings.restart_cost
    for i, r in list(ledger.reservations.items()):
        if not running(state, slot, i, r):
            k = block_length(state.remaining[i], r.size, restart_cost)
            ledger.release_before(i, r.last - k + 1)
        else:
            ledger.release_after(i, slot + block_length(state.remaining[i], r.size, 0.0) - 1)


def check_promises(settings: LrSettings, state: LrState, slot: int, name: str) -> None:
    """Raise :class:`PromiseBroken` if a promised job's block no longer covers its remaining work by its deadline."""
    for i, deadline in state.deadlines.items():
        if i in state.done:
            continue
        r = state.ledger.reservations.get(i)
        need = float(state.remaining[i])
        if need <= WORK_EPSILON:
            continue
        on = r is not None and running(state, slot, i, r)
        if r is None or r.last > deadline or r.supply(slot, settings.restart_cost, on) < need - WORK_EPSILON:
            raise PromiseBroken(f"{name}: slot {slot}, job {i}: the ledger no longer covers its "
                                f"{need:g} worker-slots by its deadline {deadline}")


# ------------------------------------------------------------------------------------------ accounts


def supplied(settings: LrSettings, state: LrState, slot: int, i: int, allocation: Allocation) -> float:
    """Worker-slots ``allocation`` supplies job ``i`` in ``slot`` (the simulator's restart rule)."""
    restart_cost = settings.restart_cost
    workers = float(allocation.workers.sum())
    # Without restart costs both cases are the same float (x * 1.0 is x), so no placement is compared.
    return workers if restart_cost == 0 or state.kept(slot, i, allocation) else workers * (1.0 - restart_cost)


def account(settings: LrSettings, state: LrState, slot: int, out: dict[int, Allocation]) -> None:
    """Apply this slot's work to the remaining work the way the simulator will, so that arrivals in the next
    slot, which come before its ``allocate``, see current figures."""
    work_left = state.work_left
    for i, allocation in out.items():
        work_left[i] = max(work_left[i] - supplied(settings, state, slot, i, allocation), 0.0)
    state.remaining = np.maximum(np.ceil(work_left - WORK_EPSILON), 0).astype(np.int64)


def plan_value(settings: LrSettings, state: LrState, slot: int, plan: dict[int, Allocation],
               values: dict[int, float]) -> float:
    """``sum_i PV_i min(s_i, W_i) / W_i`` (module docstring)."""
    total = 0.0
    for i, allocation in plan.items():
        if i in values and state.work_left[i] > WORK_EPSILON:
            done = min(supplied(settings, state, slot, i, allocation), float(state.work_left[i]))
            total += values[i] * done / float(state.work_left[i])
    return total


def finish_blocks(settings: LrSettings, tables: JobTables, state: LrState, slot: int,
                  blocks: dict[int, Allocation], free: FreeCapacity) -> None:
    """A block that holds more workers than its job needs to finish in this slot runs only those (restart
    loss included: trimming changes the placement) and frees the rest for others in this slot. The job
    completes in this slot either way, so its promise is untouched."""
    restart_cost = settings.restart_cost
    for i, allocation in blocks.items():
        left = float(state.work_left[i])
        size = int(allocation.workers.sum())
        if left <= WORK_EPSILON or size * (1.0 if state.kept(slot, i, allocation) else 1.0 - restart_cost) < left:
            continue  # not its last slot
        # A margin above the simulator's completion tolerance: the trimmed placement surely finishes the job.
        need = math.ceil((left + 1e-7) / (1.0 - restart_cost))
        if need < size:
            job = tables.instance.jobs[i]
            trimmed = trim(job, allocation, need)
            free.release(job, allocation)
            free.take(job, trimmed)
            blocks[i] = trimmed


# ------------------------------------------------------------------------------------------- plans


def plan_slot(settings: LrSettings, tables: JobTables, state: LrState, slot: int, order: list[int],
              free: FreeCapacity, blocks: dict[int, Allocation], stable: bool) -> dict[int, Allocation]:
    """The stable or the fresh plan (module docstring): ``order``'s jobs grown one after another into ``free``
    (taken from it) by the loops of :func:`primaldual.oasis.lr.reference.grow_plan`, added to a copy of
    ``blocks`` (in the order they were placed) and returned. Under the re-plan's policy, its widths
    (:mod:`primaldual.oasis.lr.replan`) cap a first pass."""
    guide = state.guide if state.policy.order == PLAN_ORDER else None
    caps = guide.caps(slot) if guide is not None else None
    growing = growing_jobs(settings, tables, state, slot, order, caps, stable)
    m, servers = len(order), (free.worker.shape[0], free.ps.shape[0])
    plan = Plan(free.worker, free.ps, np.zeros((m, servers[0]), dtype=np.int64),
                np.zeros((m, servers[1]), dtype=np.int64), np.zeros(m, dtype=bool), np.empty(m, dtype=np.int64),
                np.zeros(1, dtype=np.int64), np.zeros(int(tables.run_jobs.profile.max(initial=-1)) + 1, dtype=bool))
    running = [k for k, i in enumerate(order) if i in blocks] if blocks else []
    for k in running:  # a running block without restart costs: it may grow
        plan.placed[k] = True
        plan.workers[k], plan.parameter_servers[k] = blocks[order[k]].workers, blocks[order[k]].parameter_servers
    tables.code.grow_plan(tables_for(tables, growing), growing, plan, float(settings.restart_cost), bool(stable),
                          caps is not None)
    out = dict(blocks)
    for k in running + plan.sequence[:plan.count[0]].tolist():
        out[order[k]] = Allocation(plan.workers[k], plan.parameter_servers[k])
    return out


def growing_jobs(settings: LrSettings, tables: JobTables, state: LrState, slot: int, order: list[int],
                 caps: dict[int, int] | None, stable: bool) -> Growing:
    """What :func:`primaldual.oasis.lr.reference.grow_plan` reads of ``order``'s jobs: the workers that finish each
    in the slot (more would idle; ``ceil(W_i / (1 - F))`` under restart costs), the caps, and in a stable plan
    the placements of the slot before and of the reservations."""
    jobs = np.array(order, dtype=np.int64)
    restart_cost = settings.restart_cost
    work = state.work_left[jobs] if tables.types is None else tables.types.growth_work(state, jobs)
    left = work / ((1.0 - restart_cost) if restart_cost > 0 else 1.0)
    most = np.minimum(tables.chunks[jobs], np.maximum(np.ceil(left - WORK_EPSILON), 0)).astype(np.int64)
    # A cap below 0 grows nothing, as 0 does; -1 marks "no cap".
    cap = np.array([max(caps.get(i, 0), 0) for i in order], dtype=np.int64) if caps is not None else \
        np.full(len(order), -1, dtype=np.int64)
    servers = (tables.instance.cluster.n_worker_servers, tables.instance.cluster.n_ps_servers)
    kept, reserved = np.zeros(len(order), dtype=bool), np.zeros(len(order), dtype=bool)
    # A fresh plan reads no placement of its jobs' own (kept and reserved stay False): empty rows.
    placements = [np.zeros((len(order) if stable else 0, n), dtype=np.int64) for n in servers + servers]
    if stable:
        position = {i: k for k, i in enumerate(order)}
        for i, (last, allocation) in state.previous.items():
            if last == slot - 1 and i in position:
                kept[position[i]] = True
                placements[0][position[i]] = allocation.workers
                placements[1][position[i]] = allocation.parameter_servers
        for i, r in state.ledger.reservations.items():
            if i in position:
                reserved[position[i]] = True
                placements[2][position[i]] = r.workers
                placements[3][position[i]] = r.parameter_servers
    types = ONE_TYPE if tables.types is None else (tables.types.server_type, state.pinned[jobs],
                                                   tables.types.ranked[jobs], tables.types.work[jobs])
    return Growing(jobs, most, cap, state.work_left[jobs], kept, reserved, *placements, *types)


def tables_for(tables: JobTables, growing: Growing) -> RunJobs:
    """The run's job arrays, with ``Z`` tables long enough for every growing job: the run's own (capped,
    :func:`primaldual.simulation.placement.ps_needed_table`) unless a job may grow past its table (more than
    4,096 workers), which then gets its full table, bit for bit the scalar calls'."""
    run = tables.run_jobs
    short = growing.most >= run.ps_start[growing.order + 1] - run.ps_start[growing.order]
    if not short.any():
        return run
    needed = list(tables.ps_needed)
    for i, most in zip(growing.order[short].tolist(), growing.most[short].tolist()):
        needed[i] = tables.ps_needed_upto(i, most)
    return run._replace(ps_needed=np.concatenate(needed),
                        ps_start=np.cumsum([0] + [len(t) for t in needed]).astype(np.int64))


__all__ = ["PLANS", "account", "allocate_slot", "check_promises", "finish_blocks", "finish_slot", "growing_jobs",
           "plan_slot", "plan_value", "policy_plan", "prepare_slot", "running", "same_plan", "supplied", "tables_for",
           "trim_blocks"]
