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
dense one that loses much of its utility with every slot of waiting. The offline optimum can do the reverse: delay a
flat job a little to finish one that decays fast earlier (``proofs/oasis-lr.md``). The added term is what one slot of
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

from primaldual.oasis.ledger import WORK_EPSILON
from primaldual.oasis.lr.settings import ORDERS, PLAN_ORDER, LrSettings  # noqa: F401 - re-exported
from primaldual.oasis.lr.state import JobTables, LrState, PresentValues


def present_values(tables: JobTables, state: LrState, slot: int, candidates: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Each job's present value (``f_i`` at full speed from now, discounted for the risk of the slots still
    to run, as RRH) and that value per remaining resource-time (remaining work times the dominant share of
    one worker). Kept for the slot in ``state.present`` (:class:`primaldual.oasis.lr.state.PresentValues`): the
    pending jobs are ranked when offered and again for execution, and a job's figures change only with its
    remaining work, so only the jobs whose work left moved are computed, in one vector call (elementwise: a
    job's figures do not depend on which others are computed with it)."""
    known = state.present
    if known is None or known.slot != slot:
        known = state.present = PresentValues.empty(slot, tables.instance.n_jobs)
    jobs = np.asarray(candidates, dtype=np.int64)
    work_left = state.work_left
    missing = jobs[known.work[jobs] != work_left[jobs]]  # NaN: never computed in this slot
    if missing.size:
        instance = tables.instance
        remaining = np.maximum(work_left[missing], 1e-9)
        needed = np.maximum(-(-np.ceil(remaining - WORK_EPSILON) // tables.chunks[missing]), 1)
        # One vector call per utility family: the values of the jobs' own calls, bit for bit (UtilityTable).
        value = tables.utilities.at(missing, slot + needed - 1 - instance.arrivals[missing])
        value = value / (1.0 + state.policy.discount_rate * needed)
        density = value / (np.maximum(remaining, 1.0) * np.maximum(tables.unit[missing], 1e-12))
        known.work[missing], known.value[missing], known.density[missing] = work_left[missing], value, density
    return known.value[jobs], known.density[jobs]


def by_key(jobs: list[int], key: np.ndarray) -> list[int]:
    """``jobs`` by decreasing ``key`` (aligned with them), ties to the lower job index: the permutation of
    sorting the pairs ``(-key, job)``, from one stable ``lexsort`` instead of a Python key per job (keys are
    never NaN, so both orders are total and agree)."""
    if len(jobs) < 2:
        return list(jobs)
    array = np.asarray(jobs, dtype=np.int64)
    return array[np.lexsort((array, -np.asarray(key, dtype=float)))].tolist()


def urgency_keys(settings: LrSettings, tables: JobTables, state: LrState, slot: int,
                 candidates: list[int]) -> np.ndarray:
    """``k_i`` of the module docstring for each of ``candidates``."""
    instance = tables.instance
    jobs = np.asarray(candidates, dtype=np.int64)
    remaining = np.maximum(state.work_left[jobs], 1e-9)
    running = np.array([state.previous.get(i, (-2,))[0] == slot - 1 for i in candidates], dtype=bool)
    restart = np.where(running, 0.0, settings.restart_cost)
    needed = np.maximum(np.ceil(remaining / tables.chunks[jobs] + restart - WORK_EPSILON), 1).astype(np.int64)
    completion = slot + needed - 1
    # One vector call per utility family: the values of the jobs' own calls, bit for bit (UtilityTable).
    now = tables.utilities.at(jobs, completion - instance.arrivals[jobs])
    later = tables.utilities.at(jobs, completion + 1 - instance.arrivals[jobs])
    now[completion >= instance.horizon] = 0.0
    later[completion + 1 >= instance.horizon] = 0.0
    key = now / (1.0 + state.policy.discount_rate * needed) + (now - later)
    return key / (np.maximum(remaining, 1.0) * np.maximum(tables.unit[jobs], 1e-12))


def rerank(order_rule: str, order: list[int], values: dict[int, float], work_left: np.ndarray,
           urgency: np.ndarray | None = None) -> list[int]:
    """``order`` (the density order) re-ranked by ``order_rule`` (module docstring; ties go to the lower
    index): ``urgency`` are the urgency keys of ``order``'s jobs (needed only for that rule), ``values`` their
    present values and ``work_left`` every job's remaining work."""
    if order_rule == "density" or len(order) < 2:
        return order
    if order_rule == "urgency":
        key = urgency
    elif order_rule == "value":
        key = np.array([values[i] for i in order])
    else:  # work
        key = np.array([values[i] / max(float(work_left[i]), 1.0) for i in order])
    return by_key(order, key)


def guided(guide, slot: int, order: list[int]) -> list[int]:
    """The re-plan's order (:mod:`primaldual.oasis.lr.replan`): the jobs the guide runs in ``slot``, widest
    first, then the rest; each group in ``order`` (the density order). Past the guide's window, ``order``."""
    if guide is None or not guide.covers(slot):
        return order
    widths = np.array([guide.width(i, slot) for i in order])
    running = widths > 1e-6
    position = np.arange(len(order))
    ranked = np.lexsort((position, -np.where(running, widths, 0.0), ~running))
    return [order[k] for k in ranked.tolist()]


def growth_order(settings: LrSettings, tables: JobTables, state: LrState, slot: int,
                 blocks: dict) -> tuple[list[int], dict[int, float]]:
    """The jobs that grow into the free capacity, in the policy's order: admitted jobs outside their block
    and pending jobs (and, without restart costs, running blocks); and each one's present value."""
    candidates = [i for i in state.deadlines if i not in state.done and (i not in blocks or settings.restart_cost == 0)]
    if settings.pending_tier:
        candidates += [i for i in state.pending if i not in blocks]
    if not candidates:
        return [], {}
    value, density = present_values(tables, state, slot, candidates)
    order = by_key(candidates, density)
    values = dict(zip(candidates, value.tolist()))
    rule = state.policy.order
    if rule == PLAN_ORDER:
        return guided(state.guide, slot, order), values
    urgency = urgency_keys(settings, tables, state, slot, order) if rule == "urgency" and len(order) > 1 \
        else None
    return rerank(rule, order, values, state.work_left, urgency), values


__all__ = ["ORDERS", "by_key", "growth_order", "guided", "present_values", "rerank", "urgency_keys"]
