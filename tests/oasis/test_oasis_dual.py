"""The dual subroutine (primaldual.dual.subroutine) against brute-force enumeration of every schedule of a tiny job."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from oasis_helpers import (
    brute_force_best,
    brute_force_lexicographic,
    completion_costs_by_enumeration,
    make_instance,
    make_job,
)
from primaldual.dual import reference
from primaldual.dual.subroutine import best_schedule
from primaldual.core.utility import Constant, LinearDecay, Sigmoid, Step

TOLERANCE = 1e-9


@st.composite
def utilities(draw):
    kind = draw(st.sampled_from(["sigmoid", "linear", "step", "constant"]))
    value = draw(st.floats(0.5, 60.0))
    if kind == "sigmoid":
        return Sigmoid(value, draw(st.floats(0.0, 4.0)), draw(st.floats(-1.0, 3.0)))
    if kind == "linear":
        return LinearDecay(value, draw(st.floats(0.5, 4.0)))
    if kind == "step":
        return Step(value, draw(st.integers(0, 3)))
    return Constant(value)


@st.composite
def tiny_cases(draw):
    """A one-job instance with 1-2 servers per pool, 1-3 slots, random prices and residual capacities.

    PS prices reach 25 while worker prices stay below 8, and the worker-to-PS bandwidth ratio b/B is drawn
    from {1/4, 1/3, 1/2, 2/3, 1}, so the slot cost ``c_t(D)`` is often non-convex in ``D``. Zero capacities,
    zero residuals and work beyond what the slots left can supply make about half of the examples infeasible
    (``--hypothesis-show-statistics``: about 50% no schedule, 31% mu = 0 with a schedule, 17% mu > 0, 14%
    non-convex), so both branches of the subroutine are exercised.
    """
    n_worker_servers = draw(st.integers(1, 2))
    n_ps_servers = draw(st.integers(1, 2))
    horizon = draw(st.integers(1, 3))
    arrival = draw(st.integers(0, horizon - 1))
    chunks = draw(st.integers(1, 3))
    work = draw(st.integers(1, 2 * chunks))
    ratio = draw(st.sampled_from([0.25, 1 / 3, 0.5, 2 / 3, 1.0]))
    worker_demand = [draw(st.sampled_from([0.0, 1.0, 1.0, 2.0])), draw(st.sampled_from([0.5, 1.0]))]
    ps_demand = [0.0, draw(st.sampled_from([0.0, 1.0, 1.0, 2.0]))]
    worker_capacity = [[draw(st.sampled_from([0.0, 2.0, 3.0, 4.0, 4.0])), draw(st.sampled_from([2.0, 3.0, 4.0]))]
                       for _ in range(n_worker_servers)]
    ps_capacity = [[0.0, draw(st.sampled_from([0.0, 2.0, 3.0, 4.0, 4.0]))] for _ in range(n_ps_servers)]
    utility = draw(utilities())
    job = make_job(arrival, work, chunks, worker_demand, ps_demand, utility, bandwidth_ratio=ratio)
    instance = make_instance([job], worker_capacity, ps_capacity, horizon)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    worker_prices = rng.uniform(0.0, 8.0, size=(horizon, n_worker_servers, 2))
    ps_prices = rng.uniform(0.0, 25.0, size=(horizon, n_ps_servers, 2))
    # Residual capacity: a random part of each server already used by earlier jobs.
    shares = [0.0, 0.5, 1.0, 1.0, 1.0]
    worker_free = np.asarray(worker_capacity)[None] * rng.choice(shares, size=(horizon, n_worker_servers, 1))
    ps_free = np.asarray(ps_capacity)[None] * rng.choice(shares, size=(horizon, n_ps_servers, 1))
    return instance, worker_prices, ps_prices, worker_free, ps_free


def slot_cost_table(instance, worker_prices, ps_prices, worker_free, ps_free) -> np.ndarray:
    """Step (a) of job 0 in every slot from its arrival, ``c_t(D)`` for ``D = 0..N``, by the reference."""
    job = instance.jobs[0]
    max_workers = int(min(job.chunks, instance.work_units[0]))
    ps_needed = np.asarray(job.min_parameter_servers(np.arange(max_workers + 1)), dtype=np.int64)
    ps_max = int(min(ps_needed.max(), max_workers))
    worker_free, ps_free = (np.broadcast_to(free, prices.shape) for free, prices in
                            ((worker_free, worker_prices), (ps_free, ps_prices)))
    return np.array([reference.slot_costs(worker_prices[t], ps_prices[t], worker_free[t], ps_free[t],
                                          job.worker_demand, job.ps_demand, ps_needed, ps_max)
                     for t in range(job.arrival, instance.horizon)])


def cover_table(cost: np.ndarray, work: int, utility: np.ndarray) -> tuple[np.ndarray, int, list[int]]:
    """Steps (b)-(c) of the reference over a table of slot costs, without the early stop: ``C(s)`` per slot,
    the earliest best slot and its workers per slot."""
    n_slots = cost.shape[0]
    before, row = np.full(work + 1, np.inf), np.full(work + 1, np.inf)
    before[0] = 0.0
    choice = np.zeros((n_slots, work + 1), dtype=np.int64)
    totals, reach = [], 0
    for s in range(n_slots):
        reach = reference.dp_step(before, reach, cost[s], work, row, choice[s])
        totals.append(row[work] if reach == work else np.inf)
        before, row = row, before
    payoff = utility - np.array(totals)
    best = int(payoff.argmax())
    return np.array(totals), best, reference.workers_per_slot(choice, best, work, n_slots)[: best + 1].tolist()


def schedule_payoff(instance, result, worker_prices, ps_prices):
    """Utility minus cost of the returned schedule, recomputed from its counts."""
    job = instance.jobs[0]
    y = result.schedule.workers
    z = result.schedule.parameter_servers
    cost = float(np.einsum("th,thr,r->", y, worker_prices, job.worker_demand))
    cost += float(np.einsum("tk,tkr,r->", z, ps_prices, job.ps_demand))
    last = int(np.flatnonzero(y.sum(axis=1))[-1])
    return float(job.utility(last - job.arrival)) - cost


def check_schedule_respects(instance, result, worker_free, ps_free):
    """Eqs. (2), (3), (6), (7), (9), (10) and the residual capacities, checked directly."""
    job = instance.jobs[0]
    y = result.schedule.workers
    z = result.schedule.parameter_servers
    assert np.all(y >= 0) and np.all(z >= 0)
    assert y.sum() >= instance.work_units[0]  # (2)
    assert np.all(y.sum(axis=1) <= job.chunks)  # (3)
    per_slot_y, per_slot_z = y.sum(axis=1), z.sum(axis=1)
    assert np.all(per_slot_y * job.worker_bandwidth_gbps <= per_slot_z * job.ps_bandwidth_gbps + 1e-9)  # (6)
    assert np.all(per_slot_z <= per_slot_y)  # (7)
    assert not y[: job.arrival].any() and not z[: job.arrival].any()  # (9)-(10)
    assert np.all(y[:, :, None] * job.worker_demand <= worker_free + 1e-9)
    assert np.all(z[:, :, None] * job.ps_demand <= ps_free + 1e-9)


@settings(max_examples=500, derandomize=True, deadline=None)
@given(tiny_cases())
def test_best_schedule_matches_brute_force(case):
    """Lemma 1: mu and the best payoff equal the maximum over every schedule (any over-cover of the work,
    any PS count allowed by (6)-(7), any placement), and the schedule returned attains it."""
    instance, worker_prices, ps_prices, worker_free, ps_free = case
    expected, _ = brute_force_best(instance, 0, worker_prices, ps_prices, worker_free, ps_free)
    result = best_schedule(instance, 0, worker_prices, ps_prices, worker_free, ps_free, early_stop=False)
    table = slot_cost_table(instance, worker_prices, ps_prices, worker_free, ps_free)
    finite = np.where(np.isfinite(table), table, np.nan)
    if np.any(np.diff(finite, n=2, axis=1) < -1e-12):
        event("slot cost non-convex in D")
    if expected == -math.inf:
        event("no feasible schedule")
        assert not result.feasible and result.schedule is None and result.mu == 0.0
        return
    event("mu > 0" if expected > 0 else "mu = 0, feasible")
    assert result.feasible
    assert result.payoff == pytest.approx(expected, abs=TOLERANCE * max(1.0, abs(expected)))
    assert result.mu == max(0.0, result.payoff)
    assert schedule_payoff(instance, result, worker_prices, ps_prices) == pytest.approx(result.payoff, abs=1e-9)
    assert result.completion_slot == int(np.flatnonzero(result.schedule.workers_per_slot)[-1])
    check_schedule_respects(instance, result, worker_free, ps_free)
    # The early stop changes neither mu nor, when the job is admitted, the schedule.
    stopped = best_schedule(instance, 0, worker_prices, ps_prices, worker_free, ps_free)
    assert stopped.mu == result.mu
    if result.mu > 0:
        assert np.array_equal(stopped.schedule.workers, result.schedule.workers)
        assert np.array_equal(stopped.schedule.parameter_servers, result.schedule.parameter_servers)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(tiny_cases())
def test_completion_costs_match_enumeration(case):
    """Step (b): C_i(t) from the one forward pass equals the cheapest cover of the work within slots a..t."""
    instance, worker_prices, ps_prices, worker_free, ps_free = case
    expected = completion_costs_by_enumeration(instance, 0, worker_prices, ps_prices, worker_free, ps_free)
    result = best_schedule(instance, 0, worker_prices, ps_prices, worker_free, ps_free, early_stop=False)
    arrival = instance.jobs[0].arrival
    assert np.all(np.isnan(result.completion_costs[:arrival]))
    got = result.completion_costs[arrival:]
    for value, want in zip(got, expected):
        if want == math.inf:
            assert value == math.inf
        else:
            assert value == pytest.approx(want, abs=1e-9)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(tiny_cases())
def test_greedy_objective_matches_brute_force(case):
    """objective="utility" (the greedy ablation): the highest utility over all schedules, and among those the
    least cost at the tie-break prices; the job pays nothing."""
    instance, worker_prices, _, worker_free, ps_free = case
    tie_worker = np.broadcast_to(worker_prices[:1], worker_prices.shape)  # same tie-break prices every slot
    tie_ps = np.ones(ps_free.shape)
    best_value, best_cost = brute_force_lexicographic(instance, 0, tie_worker, tie_ps, worker_free, ps_free)
    result = best_schedule(instance, 0, tie_worker, tie_ps, worker_free, ps_free, objective="utility")
    if best_value == -math.inf:
        assert not result.feasible
        return
    assert result.utility == pytest.approx(best_value, abs=1e-12)
    assert result.tie_break_cost == pytest.approx(best_cost, abs=1e-9)
    assert result.cost == 0.0 and result.payoff == result.utility and result.mu == max(0.0, result.utility)
    check_schedule_respects(instance, result, worker_free, ps_free)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 4),
    st.integers(0, 7),
    st.integers(0, 2**32 - 1),
)
def test_cheapest_fill_matches_enumeration(n_servers, n_slots, max_units, seed):
    """Step (a): filling the cheapest servers first is optimal for every count, +inf where it cannot fit."""
    rng = np.random.default_rng(seed)
    prices = rng.choice([0.5, 1.0, 2.5, 7.0], size=(n_slots, n_servers))  # ties on purpose
    caps = rng.integers(0, 4, size=(n_slots, n_servers))
    for s in range(n_slots):
        # One resource, demand 1: the cap is the free amount itself.
        unit_prices, free = prices[s][:, None], caps[s][:, None].astype(float)
        cost = reference.pool_costs(unit_prices, free, np.array([1.0]), max_units)
        for units in range(max_units + 1):
            best = math.inf
            for vector in itertools.product(*(range(c + 1) for c in caps[s])):
                if sum(vector) == units:
                    best = min(best, float(np.dot(vector, prices[s])))
            if best == math.inf:
                assert cost[units] == math.inf
            else:
                assert cost[units] == pytest.approx(best, abs=1e-12)
                target = np.zeros(n_servers, dtype=np.int64)
                reference.fill(unit_prices, free, np.array([1.0]), max_units, units, target)
                assert target.sum() == units and np.all(target <= caps[s])
                assert float(np.dot(target, prices[s])) == pytest.approx(best, abs=1e-12)


def nonconvex_instance():
    """b/B = 1/2, so Z(D) = ceil(D/2): the 1st and 3rd workers of a slot bring a PS, the 2nd does not."""
    job = make_job(0, 4, 3, [1.0, 0.0], [0.0, 1.0], Constant(100.0), bandwidth_ratio=0.5)
    return make_instance([job], [[4.0, 4.0]], [[0.0, 4.0]], horizon=2)


def test_slot_cost_is_not_convex_and_the_dp_still_finds_the_optimum():
    """With an expensive PS the marginal cost of a worker goes 1+10, 1, 1+10: not convex in D. Covering 4
    units in 2 slots, filling slot 0 first (3 + 1 workers: 23 + 11) costs 34, the DP's 2 + 2 costs 24."""
    instance = nonconvex_instance()
    worker_prices = np.array([[[1.0, 0.0]], [[1.0, 0.0]]])
    ps_prices = np.array([[[0.0, 10.0]], [[0.0, 10.0]]])
    free_w = np.broadcast_to(instance.cluster.worker_capacity, (2, 1, 2))
    free_ps = np.broadcast_to(instance.cluster.ps_capacity, (2, 1, 2))
    table = slot_cost_table(instance, worker_prices, ps_prices, free_w, free_ps)
    np.testing.assert_allclose(table, [[0.0, 11.0, 12.0, 23.0]] * 2)
    marginal = np.diff(table[0])
    assert marginal[1] < marginal[0] and marginal[2] > marginal[1]  # not convex
    result = best_schedule(instance, 0, worker_prices, ps_prices, free_w, free_ps, early_stop=False)
    expected, _ = brute_force_best(instance, 0, worker_prices, ps_prices, free_w, free_ps)
    assert result.payoff == pytest.approx(expected) == pytest.approx(100.0 - 24.0)
    assert result.workers_per_slot.tolist() == [2, 2]
    assert result.parameter_servers_per_slot.tolist() == [1, 1]


def test_dp_takes_the_cheaper_late_slot_when_it_pays():
    """Prices far lower in slot 1 make the job wait when the utility loss is smaller than the saving."""
    job = make_job(0, 2, 2, [1.0, 0.0], [0.0, 1.0], LinearDecay(10.0, 10.0), bandwidth_ratio=0.5)
    instance = make_instance([job], [[4.0, 4.0]], [[0.0, 4.0]], horizon=2)
    worker_prices = np.array([[[4.0, 0.0]], [[0.1, 0.0]]])
    ps_prices = np.full((2, 1, 2), 0.1)
    free_w = np.broadcast_to(instance.cluster.worker_capacity, (2, 1, 2))
    free_ps = np.broadcast_to(instance.cluster.ps_capacity, (2, 1, 2))
    result = best_schedule(instance, 0, worker_prices, ps_prices, free_w, free_ps)
    # Slot 0: 10 - (8 + 0.1) = 1.9; slot 1: 9 - (0.2 + 0.1) = 8.7.
    assert result.completion_slot == 1 and result.payoff == pytest.approx(8.7)
    assert result.workers_per_slot.tolist() == [0, 2]


def test_zero_capacity_resource_is_unusable_and_zero_demand_is_free():
    """A server without GPUs never hosts a GPU worker, however cheap; a job that needs no GPU may use it and
    its GPU price costs that job nothing."""
    gpu_job = make_job(0, 2, 2, [1.0, 1.0], [0.0, 1.0], Constant(50.0))
    cpu_job = make_job(0, 2, 2, [0.0, 1.0], [0.0, 1.0], Constant(50.0))
    capacity = [[0.0, 8.0], [4.0, 8.0]]  # server 0 has no GPU
    instance = make_instance([gpu_job, cpu_job], capacity, [[0.0, 8.0]], horizon=1)
    worker_prices = np.array([[[1000.0, 0.01], [5.0, 1.0]]])  # server 0's GPU price is huge, its CPU cheap
    ps_prices = np.full((1, 1, 2), 0.5)
    free_w = np.asarray(capacity)[None]
    free_ps = np.asarray(instance.cluster.ps_capacity)[None]
    gpu = best_schedule(instance, 0, worker_prices, ps_prices, free_w, free_ps)
    assert gpu.schedule.workers[0].tolist() == [0, 2]
    assert gpu.cost == pytest.approx(2 * (5.0 + 1.0) + 0.5)
    cpu = best_schedule(instance, 1, worker_prices, ps_prices, free_w, free_ps)
    assert cpu.schedule.workers[0].tolist() == [2, 0]  # the GPU price of 1000 does not count
    assert cpu.cost == pytest.approx(2 * 0.01 + 0.5)


def test_cannot_finish_and_cannot_fit_are_infeasible():
    late = make_job(2, 5, 2, [1.0, 1.0], [0.0, 1.0], Constant(5.0))  # 5 units, 2 per slot, 1 slot left
    no_ps = make_job(0, 1, 1, [1.0, 1.0], [0.0, 9.0], Constant(5.0))  # its PS fits on no PS server
    instance = make_instance([late, no_ps], [[4.0, 4.0]], [[0.0, 4.0]], horizon=3)
    prices_w = np.full((3, 1, 2), 0.1)
    prices_ps = np.full((3, 1, 2), 0.1)
    free_w = instance.cluster.worker_capacity
    free_ps = instance.cluster.ps_capacity
    for i in range(2):
        result = best_schedule(instance, i, prices_w, prices_ps, free_w, free_ps)
        assert not result.feasible and result.mu == 0.0 and result.schedule is None and not result.admit


def test_cover_work_back_pointers_rebuild_the_cheapest_cover():
    cost = np.array([[0.0, 1.0, 5.0], [0.0, 3.0, 4.0], [0.0, 0.5, 0.75]])
    totals, best, counts = cover_table(cost, 3, utility=np.array([10.0, 10.0, 10.0]))
    # By slot 0: impossible (3 > 2); by slot 1: 1 + 4 = 5 or 5 + 3 = 8; by slot 2: 1 + 0.75 = 1.75.
    np.testing.assert_allclose(totals, [np.inf, 5.0, 1.75])
    assert best == 2
    assert counts == [1, 0, 2]


def test_ties_put_the_work_early():
    """Equal-cost covers: the back-pointer takes the fewest workers in the later slot (the docstring's tie
    rule), so the job works as early as it can and leaves later capacity to later jobs."""
    cost = np.array([[0.0, 1.0, np.inf], [0.0, 1.0, 2.0]])  # slot 0 takes one worker, slot 1 up to two
    totals, best, counts = cover_table(cost, 2, utility=np.array([10.0, 10.0]))
    # By slot 1 both 1 + 1 and 0 + 2 cost 2.
    assert totals.tolist() == [np.inf, 2.0]
    assert counts == [1, 1]
    # Equal payoffs in two completion slots: the earliest wins (step (c)).
    totals, best, _ = cover_table(np.array([[0.0, 1.0], [0.0, 1.0]]), 1, utility=np.array([5.0, 5.0]))
    assert totals.tolist() == [1.0, 1.0] and best == 0


def test_bad_objective_is_refused():
    from primaldual.core.errors import InputError

    instance = nonconvex_instance()
    with pytest.raises(InputError, match="objective"):
        best_schedule(instance, 0, np.ones((2, 1, 2)), np.ones((2, 1, 2)), np.ones((1, 2)), np.ones((1, 2)),
                      objective="profit")
