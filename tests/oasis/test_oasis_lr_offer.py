"""OASiS-LR's offer as one kernel call (:func:`primaldual.oasis.lr.reference.offer`), checked at every offer of
real runs against what it replaces: the dual subroutine's answer (:func:`primaldual.dual.subroutine.best_schedule`
with the cost floor), the deadline computed by numpy from the job's own utility calls, and a block that fits the
ledger's free amounts, covers the work and ends by the deadline; and the same tuple, float for float, as Python
and compiled."""

from __future__ import annotations

import numpy as np
import pytest

from primaldual.core.generate import generate
from primaldual.core.standalone import FIT_TOLERANCE
from primaldual.dual import kernel
from primaldual.dual.cost_floor import cost_floor_of
from primaldual.dual.subroutine import best_schedule, least_prices
from primaldual.oasis.lr import admission, reference
from primaldual.oasis.lr.reference import BLOCK, NO_OFFER, UNPLACED, block_length
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate


def numpy_deadline(job, planned: int, horizon: int, delta: float) -> int:
    """The deadline rule by numpy over the job's own utility calls (the formula the kernel's loop replaced)."""
    target = (1.0 - delta) * float(job.utility(planned - job.arrival))
    slots = np.arange(planned, horizon)
    ok = np.asarray(job.utility(slots - job.arrival), dtype=float) >= target * (1 - 1e-12)
    return int(slots[ok][-1]) if ok.any() else planned


def check_block(instance, reserved, i: int, work: int, answer, placement, restart_cost: float) -> None:
    """The block fits what the ledger leaves free in every one of its slots and covers ``work`` by its deadline."""
    _, _, deadline, _, first, last = answer
    job = instance.jobs[i]
    workers, parameter_servers = placement
    count = int(workers.sum())
    assert 1 <= count <= job.chunks and last <= min(deadline, instance.horizon - 1)
    assert last - first + 1 == block_length(work, count, restart_cost)
    assert parameter_servers.sum() >= job.min_parameter_servers(count)
    for used, capacity, units, demand in ((reserved.worker_used, reserved.worker_capacity, workers, job.worker_demand),
                                          (reserved.ps_used, reserved.ps_capacity, parameter_servers, job.ps_demand)):
        need = units[:, None] * demand[None, :]
        assert (need[None] <= capacity[None] - used[first:last + 1] + FIT_TOLERANCE).all()


@pytest.mark.parametrize("preset,seed,restart_cost", [("paper", 3, 0.0), ("paper", 4, 0.1), ("small", 5, 0.0)])
def test_every_offer_is_the_subroutine_s_answer_and_a_block_that_fits(monkeypatch, preset, seed, restart_cost):
    instance = generate(preset, seed, jobs=30)
    compiled = kernel.compiled(reference)
    seen = {"offers": 0, "searched": 0, "blocks": 0}
    offered = []

    def spy_offered_job(tables, i, slot, remaining, cost, gpu_type=-1):
        offered.append((i, slot, remaining))
        return offered_job(tables, i, slot, remaining, cost, gpu_type)

    def spy_offer(market, reserved, job, rules, placement):
        i, slot, remaining = offered[-1]
        other = tuple(np.empty_like(p) for p in placement)
        answer = reference.offer(market, reserved, job, rules, placement)
        assert compiled.offer(market, reserved, job, rules, other) == answer
        least = least_prices(market.worker_prices, market.ps_prices)
        assert rules.floor == cost_floor_of(instance.jobs[i], remaining, least, slot)
        result = best_schedule(instance, i, *market, work=remaining, start=slot, cost_floor=least, plan=False)
        assert answer[1] == result.mu
        seen["offers"] += 1
        if answer[0] != NO_OFFER and answer[0] != UNPLACED:
            earliest_end = slot + block_length(remaining, job.block_workers, rules.restart_cost) - 1
            planned = max(result.completion_slot, earliest_end)
            assert answer[2] == numpy_deadline(instance.jobs[i], planned, instance.horizon, rules.delta)
            seen["searched"] += 1
        if answer[0] == BLOCK:
            assert all(np.array_equal(a, b) for a, b in zip(placement, other))
            check_block(instance, reserved, i, remaining, answer, placement, rules.restart_cost)
            assert rules.earliest <= answer[4]
            seen["blocks"] += 1
        return answer

    offered_job = admission.offered_job
    monkeypatch.setattr(admission, "offered_job", spy_offered_job)
    scheduler = make_scheduler("oasis-lr", eta=0.25)  # a low reserve price: many admissions to check

    def started(inst, start=scheduler.start):
        start(inst)
        object.__setattr__(scheduler.tables, "code", _Spy(scheduler.tables.code, spy_offer))  # a frozen dataclass

    scheduler.start = started
    simulate(instance, scheduler, restart_cost=restart_cost)
    assert seen["offers"] > 0 and seen["searched"] > 0 and seen["blocks"] > 0


class _Spy:
    """A run's kernel namespace with its ``offer`` replaced."""

    def __init__(self, code, offer):
        self._code, self.offer = code, offer

    def __getattr__(self, name):
        return getattr(self._code, name)
