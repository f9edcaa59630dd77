"""OASiS-LR's execution and offers (primaldual.oasis.lr.execution, primaldual.oasis.lr.scheduler): hand-computed cases.

Each case fails on the behaviour it replaced (named in its docstring).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oasis_helpers import make_instance, make_job
from primaldual.simulation.placement import FreeCapacity
from primaldual.core.generate import generate
from primaldual.oasis.ledger import Reservation
from primaldual.oasis.lr.execution import finish_blocks
from primaldual.simulation.scheduler import Allocation, make_scheduler
from primaldual.simulation.simulator import simulate
from primaldual.core.utility import Constant, LinearDecay
from primaldual.core.verify import verify


def one_server(jobs, gpus=4.0, horizon=8):
    return make_instance(jobs, [[gpus, 0.0]], [[0.0, 8.0]], horizon=horizon)


def test_a_block_runs_only_the_workers_that_finish_its_job_in_its_last_slot():
    """A block of 4 workers whose job has 1.5 worker-slots left, F = 0.1: 2 workers supply 1.8 after the
    restart that trimming is, so the block runs 2 and frees 2 (before: it held all 4 and the others waited)."""
    instance = one_server([make_job(0, 8, 4, [1.0, 0.0], [0.0, 1.0], Constant(10.0))])
    scheduler = make_scheduler("oasis-lr")
    scheduler.start(instance)
    scheduler.set_restart_cost(0.1)
    placement = Allocation(np.array([4]), np.array([2]))
    state = scheduler.state
    state.previous = {0: (2, placement)}
    state.work_left = np.array([1.5])
    blocks = {0: placement}
    free = FreeCapacity(instance.cluster)
    free.take(instance.jobs[0], placement)
    finish_blocks(scheduler.settings, scheduler.tables, state, 3, blocks, free)
    assert blocks[0].workers.tolist() == [2] and blocks[0].parameter_servers.tolist() == [1]
    assert free.worker[0, 0] == pytest.approx(2.0)
    # 3.7 worker-slots left: 4 kept workers are needed (a trim to 4 / 0.9 -> 5 would not be a trim).
    state.work_left = np.array([3.7])
    blocks = {0: placement}
    finish_blocks(scheduler.settings, scheduler.tables, state, 3, blocks, FreeCapacity(instance.cluster))
    assert blocks[0] is placement


def test_a_deadline_leaves_room_for_the_restart_of_a_block():
    """8 worker-slots, N = 4, f = 10 (1 - d/4), F = 0.1. The restart-free plan completes in slot 1 (f = 7.5);
    a block needs ceil(8/4 + 0.1) = 3 slots, so it cannot end before slot 2 (f = 5). The deadline keeps
    (1 - delta) of f(2): slot 2, and the job gets its promise. Before, the deadline came from the plan alone,
    (1 - delta) 7.5 = 6 > f(2), i.e. slot 1, and no block could ever meet it. The block must start at once, so
    it needs immediate blocks, which the default allows (the option refusing them: test_oasis_lr_win.py)."""
    instance = one_server([make_job(0, 8, 4, [1.0, 0.0], [0.0, 1.0], LinearDecay(10.0, 4.0))])
    scheduler = make_scheduler("oasis-lr", eta=8.0, learned_floor=False)
    result = simulate(instance, scheduler, restart_cost=0.1)
    assert scheduler.state.deadlines == {0: 2}
    assert result.promises == {"made": 1, "kept": 1, "broken": 0}
    assert result.metrics.completion_slots == {0: 2}
    assert result.schedule.meta["promised_deadlines"] == {"0": 2}


def test_a_batch_is_offered_densest_first():
    """Two jobs arrive together; the later index is 20x denser. It is offered first (before: index order)."""
    jobs = [make_job(0, 4, 2, [1.0, 0.0], [0.0, 1.0], LinearDecay(2.0, 8.0)),
            make_job(0, 4, 2, [1.0, 0.0], [0.0, 1.0], LinearDecay(40.0, 8.0))]
    scheduler = make_scheduler("oasis-lr")
    scheduler.start(one_server(jobs, gpus=2.0))
    offered = []
    scheduler._admit = lambda slot, i: offered.append(i) or False
    scheduler.on_arrival(0, [0, 1])
    assert offered == [1, 0]


def test_the_next_slots_arrivals_see_the_room_that_work_done_freed():
    """One server, 2 GPUs, T = 6. Job 0 (10 (1 - d/10), 4 worker-slots, N = 2) is promised slot 2 with a
    block over slots 1..2; it runs 2 workers in slot 0 best-effort, so after slot 0 its block needs only slot
    1. Job 1 (worth 10 whenever, 8 worker-slots, N = 2) arrives in slot 1, before that slot's allocate: it
    sees slots 2..5 free and gets a promise (before, the ledger was trimmed only in allocate, job 1 saw 6
    free worker-slots for its 8, had mu = 0 and no promise)."""
    jobs = [make_job(0, 4, 2, [1.0, 0.0], [0.0, 1.0], LinearDecay(10.0, 10.0)),
            make_job(1, 8, 2, [1.0, 0.0], [0.0, 1.0], Constant(10.0))]
    instance = one_server(jobs, gpus=2.0, horizon=6)
    scheduler = make_scheduler("oasis-lr", eta=8.0, learned_floor=False)
    result = simulate(instance, scheduler)
    assert scheduler.state.deadlines == {0: 2, 1: 5}
    assert result.promises == {"made": 2, "kept": 2, "broken": 0}
    assert result.metrics.completion_slots == {0: 1, 1: 5}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), cost=st.sampled_from([0.0, 0.05, 0.1, 0.2]),
       eta=st.sampled_from([0.05, 0.25, 1.0]))
def test_no_promise_is_broken_under_heavy_contention(seed, cost, eta):
    """G1 on 20-job ``small`` instances (heavy contention, where re-packs and trims happen), with and without
    restart costs, at the default eta and at larger ones (a lower reserve price: more promises to keep); the
    schedule verifies and records the promised deadlines for the Gantt view."""
    instance = generate("small", seed, jobs=20)
    scheduler = make_scheduler("oasis-lr", eta=eta)
    result = simulate(instance, scheduler, restart_cost=cost)
    assert result.promises["broken"] == 0 and result.promises["kept"] == result.promises["made"]
    assert verify(instance, result.schedule).feasible
    assert result.schedule.meta["promised_deadlines"] == {str(i): d for i, d in scheduler.state.deadlines.items()}


def test_stable_and_fresh_plans_are_both_kept_within_capacity():
    """The slot's plan (stable or fresh) respects the capacity the blocks leave: every run verifies, and with
    F = 0 the execution is the fresh plan (RRH's first fit in present-value order), as before restart costs."""
    instance = generate("small", 7, jobs=20)
    for cost in (0.0, 0.1):
        result = simulate(instance, "oasis-lr", restart_cost=cost)
        assert verify(instance, result.schedule).feasible
    plain = simulate(instance, make_scheduler("oasis-lr", eta=1e-6, order="density", lookahead=False))  # RRH's order
    assert plain.promises["made"] == 0
    assert plain.utility == pytest.approx(simulate(instance, "rrh").utility)


def test_reservation_supply_is_what_the_engine_checks():
    """A kept block placement supplies its workers in full; a moved one loses F of them once."""
    block = Reservation(0, np.array([2]), np.array([1]), 3, 5)
    assert block.supply(3, 0.1, running_since=False) == pytest.approx(3 * 2 - 0.2)
    assert block.supply(4, 0.1, running_since=True) == pytest.approx(2 * 2)


@pytest.mark.parametrize("seed", range(4))
def test_skipping_the_subroutine_only_when_it_would_find_mu_zero(seed):
    """At every offer of an OASiS-LR run, the subroutine with the cost floor (as OASiS-LR calls it) finds the
    same ``mu`` as without it; where the floor skips the search entirely (no schedule, ``feasible`` False) the
    full search finds ``mu = 0``. On 20-job ``small`` instances, where the learned floor makes many offers
    unprofitable."""
    from primaldual.dual.subroutine import best_schedule, least_prices

    instance = generate("small", 300 + seed, jobs=20)
    scheduler = make_scheduler("oasis-lr")
    skipped, offers = [], []

    def check(slot, i):
        worker_prices, ps_prices = scheduler.prices(slot)
        free = scheduler.free(slot)
        work = int(scheduler.state.remaining[i])
        plain = best_schedule(instance, i, worker_prices, ps_prices, *free, work=work, start=slot)
        cut = best_schedule(instance, i, worker_prices, ps_prices, *free, work=work, start=slot,
                            cost_floor=least_prices(worker_prices, ps_prices))
        assert cut.mu == plain.mu
        if cut.mu > 0:
            assert np.array_equal(cut.schedule.workers, plain.schedule.workers)
        if not cut.feasible and plain.feasible:
            skipped.append(i)
        offers.append(i)
        return admit(slot, i)

    admit = scheduler._admit
    scheduler._admit = check
    simulate(instance, scheduler, restart_cost=0.1)
    assert offers and skipped  # the floor does skip searches on these instances


@pytest.mark.parametrize("price", [0.05, 0.5, 5.0])
def test_the_cost_floor_stops_the_subroutine_early_without_changing_mu(price):
    """``best_schedule(..., cost_floor=True)``, whose floor is a true lower bound on every schedule's cost (work
    times the cheapest worker price per resource, plus the PS-slots eq. (6) needs times the cheapest PS price),
    finds the same ``mu`` and, when ``mu > 0``, the same schedule, and searches no more slots than without it."""
    from primaldual.dual.subroutine import best_schedule

    instance = generate("small", 11, jobs=20)
    cluster = instance.cluster
    worker_prices = np.full((instance.horizon,) + cluster.worker_capacity.shape, price)
    ps_prices = np.full((instance.horizon,) + cluster.ps_capacity.shape, price)
    searched_less = 0
    for i in range(instance.n_jobs):
        plain = best_schedule(instance, i, worker_prices, ps_prices, cluster.worker_capacity, cluster.ps_capacity)
        cut = best_schedule(instance, i, worker_prices, ps_prices, cluster.worker_capacity, cluster.ps_capacity,
                            cost_floor=True)
        assert cut.mu == plain.mu
        if plain.mu > 0:
            assert cut.completion_slot == plain.completion_slot and cut.payoff == plain.payoff
        searched = lambda r: int(np.isfinite(r.completion_costs).sum() + np.isinf(r.completion_costs).sum())
        assert searched(cut) <= searched(plain)
        searched_less += searched(cut) < searched(plain)
    assert searched_less > 0 or price == 0.05


def test_the_timing_of_oasis_lr_against_oasis_is_reported_from_one_process():
    """``bench oasis --quality`` with the ``paper`` set records the whole-run ratio and the per-job decision
    milliseconds of ``bench oasis --compare-lr`` (figures only: no wall-clock assertion)."""
    from primaldual.evaluation.bench.oasis_lr_speed import time_lr

    instance = generate("tiny", 5)
    timing = time_lr(instance, repetitions=1).to_dict()
    assert timing["jobs"] == instance.n_jobs and timing["decision_ms_median"] >= 0.0
    assert timing["wall_ratio_min"] <= timing["wall_ratio_median"] <= timing["wall_ratio_max"]
    assert timing["oasis_utility"] >= 0.0 and timing["oasis_lr_utility"] >= 0.0
