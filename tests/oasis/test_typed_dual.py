"""The dual subroutine on heterogeneous clusters (primaldual.dual.typed) against brute-force enumeration of every
schedule of a tiny job: its schedules verify, its ``mu`` is at most the true one, the relaxed ``mu`` at least."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from oasis_helpers import make_job, slot_options
from primaldual.core.instance import Cluster, Instance
from primaldual.core.schedule import Schedule
from primaldual.core.verify import verify
from primaldual.dual import kernel
from primaldual.dual.subroutine import best_schedule
from primaldual.core.utility import Constant, LinearDecay, Sigmoid

TYPES = ("fast", "slow")


@st.composite
def typed_cases(draw, widths=st.integers(1, 3)):
    """One job on 2-3 worker servers of two types (the slow one 1-3x slower), 1-3 slots, random prices and
    residual capacities, as tests/oasis/test_oasis_dual.py's tiny cases."""
    n_worker_servers = draw(st.integers(2, 3))
    worker_types = ("fast", "slow") + tuple(draw(st.sampled_from(TYPES)) for _ in range(n_worker_servers - 2))
    horizon = draw(st.integers(1, 3))
    arrival = draw(st.integers(0, horizon - 1))
    chunks = draw(widths)
    work = draw(st.integers(1, chunks * (horizon - arrival)))
    slowdown = draw(st.sampled_from([1.0, 1.25, 1.5, 2.0, 3.0]))
    kind = draw(st.sampled_from(["sigmoid", "linear", "constant"]))
    value = draw(st.floats(0.5, 40.0))
    utility = {"sigmoid": Sigmoid(value, 1.0, 1.0), "linear": LinearDecay(value, 3.0), "constant": Constant(value)}
    job = make_job(arrival, work, chunks, [1.0, 1.0], [0.0, 1.0], utility[kind], bandwidth_ratio=0.5)
    seconds = job.compute_seconds
    job = dataclasses.replace(job, compute_seconds_by_type={"fast": seconds, "slow": seconds * slowdown})
    worker_capacity = [[draw(st.sampled_from([0.0, 2.0, 3.0, 3.0])), 4.0] for _ in range(n_worker_servers)]
    cluster = Cluster(("gpu", "cpu"), np.asarray(worker_capacity), np.asarray([[0.0, 4.0]]), worker_types=worker_types,
                      gpu_types=TYPES)
    instance = Instance(cluster, (job,), horizon, 1.0)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    worker_prices = rng.uniform(0.0, 6.0, size=(horizon, n_worker_servers, 2))
    ps_prices = rng.uniform(0.0, 10.0, size=(horizon, 1, 2))
    shares = [0.0, 0.5, 1.0, 1.0, 1.0, 1.0]
    worker_free = np.asarray(worker_capacity)[None] * rng.choice(shares, size=(horizon, n_worker_servers, 1))
    ps_free = np.asarray([[0.0, 4.0]])[None] * rng.choice(shares, size=(horizon, 1, 1))
    return instance, worker_prices, ps_prices, worker_free, ps_free


def brute_force_typed(instance, worker_prices, ps_prices, worker_free, ps_free, start=None, left=1.0) -> float:
    """The best payoff over every schedule from ``start`` (the arrival) of ``left`` of the work: per slot every
    placement on one type's servers (Gavel's rule), progress ``sum D / W^g >= left`` exactly as the verifier counts
    it with ``1 - left`` done before; ``-inf`` if none."""
    job, types = instance.jobs[0], instance.cluster.worker_type_index
    work = instance.work_by_type[0]
    first = job.arrival if start is None else start
    per_slot = []
    for t in range(first, instance.horizon):
        cheapest = {}  # (progress of the slot) -> least cost
        for y, _, cost in slot_options(job, worker_prices[t], ps_prices[t], worker_free[t], ps_free[t], job.chunks):
            used = {int(types[h]) for h in range(len(y)) if y[h] > 0}
            if len(used) > 1:
                continue
            progress = sum(y) / work[used.pop()] if used else 0.0
            cheapest[progress] = min(cost, cheapest.get(progress, math.inf))
        per_slot.append(sorted(cheapest.items()))
    best = -math.inf
    for choice in itertools.product(*per_slot):
        if (1.0 - left) + sum(p for p, _ in choice) < 1.0 - 1e-9:
            continue
        last = max(s for s, (p, _) in enumerate(choice) if p > 0)
        best = max(best, float(job.utility(first - job.arrival + last)) - sum(c for _, c in choice))
    return best


def _payoff(instance, result, worker_prices, ps_prices) -> float:
    """Utility minus the schedule's cost at the prices, recomputed from its counts on servers."""
    job, schedule = instance.jobs[0], result.schedule
    cost = float(np.einsum("th,thr,r->", schedule.workers, worker_prices, job.worker_demand))
    cost += float(np.einsum("tk,tkr,r->", schedule.parameter_servers, ps_prices, job.ps_demand))
    return float(job.utility(result.completion_slot - job.arrival)) - cost


@settings(max_examples=300)
@given(typed_cases())
def test_typed_subroutine_brackets_the_brute_force(case):
    instance, worker_prices, ps_prices, worker_free, ps_free = case
    truth = brute_force_typed(instance, worker_prices, ps_prices, worker_free, ps_free)
    inner = best_schedule(instance, 0, worker_prices, ps_prices, worker_free, ps_free, early_stop=False)
    outer = best_schedule(instance, 0, worker_prices, ps_prices, worker_free, ps_free, early_stop=False, relaxed=True)
    event("no schedule" if truth == -math.inf else ("inner exact" if math.isclose(inner.payoff, truth) else "inner below"))
    assert inner.payoff <= truth + 1e-9  # its schedules are feasible: never better than the best one
    assert outer.payoff >= truth - 1e-9  # the relaxation ranges over every feasible schedule
    assert inner.mu <= max(truth, 0.0) + 1e-9 <= outer.mu + 2e-9
    if inner.feasible:
        report = verify(instance, Schedule({0: inner.schedule}))
        assert not [v for v in report.violations if v.kind in ("work", "one_type")], report.violations
        assert math.isclose(_payoff(instance, inner, worker_prices, ps_prices), inner.payoff, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=40)
@given(typed_cases(widths=st.integers(4, 5)))
def test_the_outer_search_of_wide_jobs_still_bounds_the_brute_force(case):
    """From 4 workers on, the outer search counts one unit per slowest worker (``Q = ceil(W^slowest)``,
    typed.job_units): coarser, still at least the truth; the inner one keeps 4 units a worker."""
    instance, worker_prices, ps_prices, worker_free, ps_free = case
    truth = brute_force_typed(instance, worker_prices, ps_prices, worker_free, ps_free)
    inner = best_schedule(instance, 0, worker_prices, ps_prices, worker_free, ps_free, early_stop=False)
    outer = best_schedule(instance, 0, worker_prices, ps_prices, worker_free, ps_free, early_stop=False, relaxed=True)
    assert inner.payoff <= truth + 1e-9 <= outer.payoff + 2e-9
    assert inner.mu <= max(truth, 0.0) + 1e-9 <= outer.mu + 2e-9


@settings(max_examples=150)
@given(typed_cases(), st.data())
def test_a_re_offer_from_a_start_with_work_done_brackets_the_brute_force(case, data):
    """Lemma 1h' (proofs/oasis.md section 2b): from slot ``start`` with ``left`` of the work left, the inner search's
    plan finishes the job with the work done counted (the verifier) and is never better than the best schedule of
    the remaining work; the relaxed one is never worse."""
    instance, worker_prices, ps_prices, worker_free, ps_free = case
    job = instance.jobs[0]
    start = data.draw(st.integers(job.arrival, instance.horizon - 1))
    left = data.draw(st.sampled_from([1.0, 0.9, 0.75, 2 / 3, 0.5, 0.3, 0.1, 0.01]))
    truth = brute_force_typed(instance, worker_prices, ps_prices, worker_free, ps_free, start, left)
    answers = [best_schedule(instance, 0, worker_prices, ps_prices, worker_free, ps_free, early_stop=early, start=start,
                             fraction_left=left, relaxed=relaxed, cost_floor=early)
               for relaxed in (False, True) for early in (False, True)]
    inner, inner_early, outer, outer_early = answers
    event("no schedule" if truth == -math.inf else ("inner exact" if math.isclose(inner.payoff, truth) else "inner below"))
    assert inner.payoff <= truth + 1e-9 <= outer.payoff + 2e-9
    assert inner.mu <= max(truth, 0.0) + 1e-9 <= min(outer.mu, outer_early.mu) + 2e-9
    assert math.isclose(inner_early.mu, inner.mu, rel_tol=1e-9, abs_tol=1e-9)
    if inner.feasible:
        assert inner.workers_per_slot[:start].sum() == 0
        report = verify(instance, Schedule({0: inner.schedule}))
        supplied = sum(inner.schedule.workers[t].sum() / instance.work_by_type[0][inner.types_per_slot[t]]
                       for t in range(instance.horizon) if inner.types_per_slot[t] >= 0)
        assert (1.0 - left) + supplied >= 1.0 - 1e-9
        assert not [v for v in report.violations if v.kind == "one_type"], report.violations
        assert math.isclose(_payoff(instance, inner, worker_prices, ps_prices), inner.payoff, rel_tol=1e-9,
                            abs_tol=1e-9)


@settings(max_examples=60)
@given(typed_cases())
def test_typed_kernel_compiled_equals_reference(case):
    instance, worker_prices, ps_prices, worker_free, ps_free = case
    answers = []
    for mode in ("reference", "compiled"):
        with kernel.using(mode):
            result = best_schedule(instance, 0, worker_prices, ps_prices, worker_free, ps_free)
        answers.append((result.payoff, result.completion_slot, result.workers_per_slot.tobytes(),
                        None if result.types_per_slot is None else result.types_per_slot.tobytes()))
    assert answers[0] == answers[1]


def test_hand_case_one_slow_worker_or_two_fast():
    """Work 2 on the fast type (4 on the slow one), 2 chunks, one slot each way: the fast server (price 1 per GPU)
    finishes in slot 0 for a cost of 2 + PS; the slow one cannot finish in one slot at all."""
    job = make_job(0, 2, 2, [1.0, 0.0], [0.0, 0.0], Constant(10.0), bandwidth_ratio=0.5)
    job = dataclasses.replace(job, compute_seconds_by_type={"fast": job.compute_seconds,
                                                            "slow": 2 * job.compute_seconds})
    cluster = Cluster(("gpu", "cpu"), np.array([[2.0, 0.0], [2.0, 0.0]]), np.array([[0.0, 1.0]]),
                      worker_types=("slow", "fast"), gpu_types=TYPES)
    instance = Instance(cluster, (job,), 1, 1.0)
    prices = np.ones((1, 2, 2))
    result = best_schedule(instance, 0, prices, np.zeros((1, 1, 2)), cluster.worker_capacity, cluster.ps_capacity)
    assert result.feasible and result.payoff == 8.0
    assert result.schedule.workers[0].tolist() == [0, 2] and result.types_per_slot.tolist() == [0]


def test_a_plan_stops_where_its_work_is_done():
    """Q = 4 ceil(3.5) = 16 units; one fast worker (W = 3) makes floor(16 / 3) = 5 of them, so the programme
    needs 4 slots, but 3 slots already do the job (3 x 1/3): the plan is cut after the third, and costs 3 slots."""
    job = make_job(0, 3, 1, [1.0, 0.0], [0.0, 0.0], Constant(10.0), bandwidth_ratio=0.5)
    job = dataclasses.replace(job, compute_seconds_by_type={"fast": job.compute_seconds,
                                                            "slow": job.compute_seconds * 3.5 / 3})
    cluster = Cluster(("gpu", "cpu"), np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[0.0, 1.0]]),
                      worker_types=("fast", "slow"), gpu_types=TYPES)
    instance = Instance(cluster, (job,), 5, 1.0)
    result = best_schedule(instance, 0, np.ones((5, 2, 2)), np.zeros((5, 1, 2)), cluster.worker_capacity,
                           cluster.ps_capacity)
    assert result.workers_per_slot.tolist() == [1, 1, 1, 0, 0] and result.completion_slot == 2
    assert result.cost == 3.0 and result.payoff == 7.0
    assert verify(instance, Schedule({0: result.schedule})).feasible


def push_step(before, reach, cost, units, resolution):
    """Step (b) as proofs/oasis.md section 2b states it, pushed from each reachable ``v'`` (types, then counts, in
    index order; the first minimum kept): the values, the pairs ``g (N + 1) + D`` and the ``v'`` of each state."""
    row = np.full(resolution + 1, np.inf)
    pair = np.full(resolution + 1, -1)
    came_from = np.full(resolution + 1, -1)
    for v in range(reach + 1):
        for g, d in itertools.product(range(cost.shape[0]), range(cost.shape[1])):
            after = min(resolution, v + units[g, d])
            if before[v] < np.inf and cost[g, d] < np.inf and before[v] + cost[g, d] < row[after]:
                row[after], pair[after], came_from[after] = before[v] + cost[g, d], g * cost.shape[1] + d, v
    return row, pair, came_from


@st.composite
def dp_rows(draw):
    """A row ``F_{s-1}`` (``+inf`` past its reach and here and there), a slot's costs (``+inf`` where a count does
    not fit, ties on purpose: few distinct values) and units as floor or ceil of ``D Q / W^g``."""
    n_types, width, resolution = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 14))
    values = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, np.inf])
    reach = draw(st.integers(0, resolution))
    before = np.array([draw(values) for _ in range(resolution + 1)])
    before[reach + 1:], before[0] = np.inf, draw(st.sampled_from([0.0, 1.0]))
    cost = np.array([[draw(values) for _ in range(width)] for _ in range(n_types)])
    cost[:, 0] = 0.0
    units = np.array([[d * draw(st.integers(1, 5)) for d in range(width)] for _ in range(n_types)])
    return before, reach, cost, np.maximum.accumulate(units, axis=1), resolution


@settings(max_examples=200)
@given(dp_rows())
def test_pulled_step_is_the_pushed_programme(case):
    """typed_dp_step pulls each state from the pairs in :func:`pull_order` (docstring): the same values, the same
    first-minimum pair in every reached state, and the ``v'`` of ``Q`` (below ``Q`` it is ``v - u_g(D)``)."""
    from primaldual.dual import typed

    before, reach, cost, units, resolution = case
    row, pointers = np.empty(resolution + 1), np.zeros(resolution + 1, dtype=np.int64)
    most, came_from = typed.typed_dp_step(before, reach, cost, units, resolution, row, pointers)
    want, pair, want_from = push_step(before, reach, cost, units, resolution)
    assert most == min(resolution, reach + units.max())
    np.testing.assert_array_equal(row, want)
    reached = want < np.inf
    np.testing.assert_array_equal(pointers[reached], pair[reached])
    assert came_from == want_from[resolution]
    for v in np.flatnonzero(reached[:resolution]).tolist():
        g, d = divmod(int(pointers[v]), cost.shape[1])
        assert want_from[v] == v - units[g, d]
