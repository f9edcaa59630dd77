"""The dual subroutine's cost floor (primaldual.dual.cost_floor) and the pre-test that reads it
(``primaldual.dual.reference.cannot_pay``): on hand-computed cases, and on
tiny random instances against the subroutine it stands in for and against a brute force over every schedule."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from oasis_helpers import brute_force_best, make_instance, make_job
from primaldual.core.utility import Constant, LinearDecay, Step
from primaldual.dual import reference
from primaldual.dual.cost_floor import RHO_TABLE_WORKERS, cost_floor_of, least_prices, ps_per_worker
from primaldual.dual.subroutine import best_schedule


def cannot_pay(job, work: int, start: int, horizon: int, least) -> bool:
    """The pre-test as OASiS-LR's offer makes it (:func:`primaldual.oasis.lr.reference.offer`): the job's utility
    over the window from ``start``, its cost floor there, :func:`primaldual.dual.reference.cannot_pay`."""
    start = max(start, job.arrival)
    utility = np.asarray(job.utility(start - job.arrival + np.arange(max(horizon - start, 0))), dtype=float)
    floor = cost_floor_of(job, work, least, start) if start < horizon else 0.0
    return bool(reference.cannot_pay(utility, work, int(min(job.chunks, work)), floor))


def _flat_prices(instance, worker_price: float, ps_price: float):
    cluster = instance.cluster
    return (np.full((instance.horizon,) + cluster.worker_capacity.shape, worker_price),
            np.full((instance.horizon,) + cluster.ps_capacity.shape, ps_price))


def _one_job(horizon: int = 4):
    """4 worker-slots, at most 2 workers, ``Z(D) = ceil(D / 2)``, one GPU per worker and one CPU per PS, worth
    10 whenever it completes."""
    job = make_job(0, 4, 2, (1.0, 0.0), (0.0, 1.0), Constant(10.0), bandwidth_ratio=0.5)
    return make_instance([job], [[4.0, 4.0]], [[0.0, 4.0]], horizon)


def test_cannot_pay_by_hand():
    """Floor = 4 worker-slots x the GPU price + 4 x 1/2 PS-slots x the CPU price (shrunk by 1e-6 and 1e-9).
    GPU price 3, CPU price 0: floor 12 > 10, True, and the best schedule (2 + 2 workers) pays 10 - 12 < 0.
    GPU price 2: floor 8 < 10, False, and the best schedule pays 10 - 8 = 2 > 0. At zero prices the window
    decides: 2 slots at 2 workers are needed, so from slot 3 of 4 (or from the horizon on) it is True."""
    instance = _one_job()
    job = instance.jobs[0]
    for price, expected, payoff in [(3.0, True, -2.0), (2.0, False, 2.0)]:
        worker_prices, ps_prices = _flat_prices(instance, price, 0.0)
        least = least_prices(worker_prices, ps_prices)
        assert cannot_pay(job, 4, 0, instance.horizon, least) is expected
        free = (instance.cluster.worker_capacity, instance.cluster.ps_capacity)
        full = best_schedule(instance, 0, worker_prices, ps_prices, *free, early_stop=False)
        assert math.isclose(full.payoff, payoff)
    # The PS term counts too: CPU price 5 adds 4 x 1/2 x 5 = 10 to the floor of 8.
    least = least_prices(*_flat_prices(instance, 2.0, 5.0))
    assert cannot_pay(job, 4, 0, instance.horizon, least) is True
    least = least_prices(*_flat_prices(instance, 0.0, 0.0))
    assert cannot_pay(job, 4, 2, instance.horizon, least) is False  # slots 2 and 3: just in time
    assert cannot_pay(job, 4, 3, instance.horizon, least) is True  # one slot left: 2 workers do 2 of 4
    assert cannot_pay(job, 4, 4, instance.horizon, least) is True  # no slot left
    assert cannot_pay(job, 0, 0, instance.horizon, least) is True  # no work: nothing to offer
    assert cannot_pay(job, 2, 3, instance.horizon, least) is False  # 2 worker-slots left fit in the last slot


@st.composite
def tiny_offers(draw):
    """A one-job instance (1-2 servers per pool, 1-4 slots, a few workers), random per-slot prices, and an
    offer: a start slot and the worker-slots still to do (as OASiS-LR re-offers a pending job)."""
    horizon = draw(st.integers(1, 4))
    arrival = draw(st.integers(0, horizon - 1))
    chunks = draw(st.integers(1, 2))
    work = draw(st.integers(1, 3))
    utility = draw(st.sampled_from([Constant(9.0), LinearDecay(12.0, 3.0), Step(15.0, 1), Constant(30.0)]))
    job = make_job(arrival, work, chunks, (1.0, draw(st.sampled_from([0.0, 0.5]))), (0.0, 1.0), utility,
                   bandwidth_ratio=draw(st.sampled_from([0.25, 0.5, 1.0])))
    n_worker, n_ps = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    instance = make_instance([job], [[2.0, 2.0]] * n_worker, [[0.0, 2.0]] * n_ps, horizon)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # Prices of at least half their scale, so that the floor (from the least prices) often decides alone.
    scale = draw(st.sampled_from([1.0, 4.0, 10.0]))
    worker_prices = rng.uniform(scale / 2, scale, size=(horizon, n_worker, 2))
    ps_prices = rng.uniform(0.0, draw(st.sampled_from([1.0, 10.0])), size=(horizon, n_ps, 2))
    if draw(st.booleans()):  # the whole job at its arrival, which the brute force can check
        start, left = arrival, work
    else:
        start, left = draw(st.integers(0, horizon)), draw(st.integers(0, work))
    return instance, worker_prices, ps_prices, start, left


@settings(max_examples=400, derandomize=True, deadline=None)
@given(tiny_offers())
def test_cannot_pay_is_the_subroutine_s_answer_without_its_search(case):
    """``cannot_pay`` is True exactly when ``best_schedule`` with the floor returns before any search (no
    completion cost computed, ``mu = 0``); when True, the full search (no early stop, no floor) finds no
    schedule of positive payoff; and for a whole job offered at its arrival, neither does a brute force over
    every schedule."""
    instance, worker_prices, ps_prices, start, left = case
    job = instance.jobs[0]
    least = least_prices(worker_prices, ps_prices)
    free = (instance.cluster.worker_capacity, instance.cluster.ps_capacity)
    said = cannot_pay(job, left, start, instance.horizon, least)
    at_zero = cannot_pay(job, left, start, instance.horizon, least_prices(0 * worker_prices, 0 * ps_prices))
    event("cannot_pay False" if not said else "cannot_pay True by the window" if at_zero else
          "cannot_pay True by the floor")
    cut = best_schedule(instance, 0, worker_prices, ps_prices, *free, work=left, start=start, cost_floor=least)
    assert said == bool(np.isnan(cut.completion_costs).all())  # returned before searching any slot
    if not said:
        return
    assert cut.mu == 0.0
    full = best_schedule(instance, 0, worker_prices, ps_prices, *free, work=left, start=start, early_stop=False)
    assert full.mu == 0.0 and full.payoff <= 0.0
    if start <= job.arrival and left == instance.work_units[0]:
        worker_free = np.broadcast_to(free[0], worker_prices.shape)
        ps_free = np.broadcast_to(free[1], ps_prices.shape)
        best, _ = brute_force_best(instance, 0, worker_prices, ps_prices, worker_free, ps_free)
        event("brute force")
        assert best <= 0.0


def test_the_floor_counts_whole_parameter_servers():
    """One worker at a time (N = 1), ``b / B = 1/4``: every slot that runs the worker needs a whole PS, so 4
    worker-slots need 4 PS-slots, not 1. At a PS price of 3 (workers free) the floor is 12 > 10 and the job
    cannot pay; with ``V b / B`` PS-slots the floor was 3 and the subroutine searched. The full search
    agrees: its best schedule pays 10 - 12."""
    job = make_job(0, 4, 1, (1.0, 0.0), (0.0, 1.0), Constant(10.0), bandwidth_ratio=0.25)
    instance = make_instance([job], [[4.0, 4.0]], [[0.0, 4.0]], 6)
    assert ps_per_worker(job, 1) == 1.0
    worker_prices, ps_prices = _flat_prices(instance, 0.0, 3.0)
    least = least_prices(worker_prices, ps_prices)
    assert math.isclose(cost_floor_of(job, 4, least, 0), 12.0, rel_tol=1e-5)
    assert cannot_pay(job, 4, 0, instance.horizon, least) is True
    free = (instance.cluster.worker_capacity, instance.cluster.ps_capacity)
    full = best_schedule(instance, 0, worker_prices, ps_prices, *free, early_stop=False)
    assert math.isclose(full.payoff, -2.0) and full.mu == 0.0


@given(ratio=st.floats(0.01, 1.0), chunks=st.integers(1, 3 * RHO_TABLE_WORKERS // 2))
@settings(max_examples=60, deadline=None)
def test_ps_per_worker_is_the_least_ps_need_per_worker(ratio, chunks):
    """``rho(m)`` is the least ``Z(D) / D`` over ``D = 1..m`` up to the table's end, and beyond it no more than
    that and at least ``b / B``: a lower bound on the PS-slots per worker-slot either way."""
    job = make_job(0, 4 * chunks, chunks, (1.0, 0.0), (0.0, 1.0), Constant(10.0), bandwidth_ratio=ratio)
    per_worker = [job.min_parameter_servers(d) / d for d in range(1, chunks + 1)]
    for most in range(1, chunks + 1):
        rho = ps_per_worker(job, most)
        assert rho <= min(per_worker[:most])
        assert rho >= ratio * (1 - 1e-9)
        if most <= RHO_TABLE_WORKERS:
            assert rho == min(per_worker[:most])


@settings(max_examples=300, derandomize=True, deadline=None)
@given(tiny_offers())
def test_the_floor_is_below_every_completion_cost(case):
    """The floor at the offer's first slot is at most the least cost of covering the work by any slot, as the
    full search (no early stop, no floor) computes it, and at most the brute force's cost of every schedule
    that pays (a whole job at its arrival): what lets the search stop, or not start, without changing ``mu``."""
    instance, worker_prices, ps_prices, start, left = case
    job = instance.jobs[0]
    first = max(start, job.arrival)
    if left < 1 or first >= instance.horizon:
        return
    least = least_prices(worker_prices, ps_prices)
    floor = cost_floor_of(job, left, least, first)
    free = (instance.cluster.worker_capacity, instance.cluster.ps_capacity)
    full = best_schedule(instance, 0, worker_prices, ps_prices, *free, work=left, start=start, early_stop=False)
    costs = full.completion_costs[first:]
    finite = costs[np.isfinite(costs)]
    event("some schedule" if finite.size else "no schedule")
    assert (floor <= finite).all()
