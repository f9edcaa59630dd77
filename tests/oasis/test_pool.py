"""The ``Pool`` value and the per-pool price state: one loop over both pools, the twin names kept as views."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oasis_helpers import make_instance, make_job
from primaldual.core.generate import generate
from primaldual.core.metrics import RunMetrics, compute_metrics, schedule_load
from primaldual.oasis.engine import run_greedy, run_oasis
from primaldual.core.pool import POOL_NAMES, cluster_pools
from primaldual.oasis.prices import PriceState, compute_constants
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.utility import Constant


def two_pool_instance():
    jobs = [make_job(0, 4, 2, [1.0, 2.0], [0.0, 1.5], Constant(5.0)),
            make_job(1, 3, 3, [2.0, 0.5], [0.0, 0.5], Constant(3.0))]
    return make_instance(jobs, [[4.0, 8.0], [2.0, 0.0]], [[0.0, 4.0]], horizon=4)


def test_cluster_pools_read_the_cluster_and_the_jobs():
    instance = two_pool_instance()
    worker, ps = cluster_pools(instance)
    assert (worker.name, ps.name) == POOL_NAMES == tuple(pool.name for pool in instance.pools)
    assert worker.capacity is instance.cluster.worker_capacity and ps.capacity is instance.cluster.ps_capacity
    assert (worker.n_servers, ps.n_servers) == (2, 1)
    job = instance.jobs[0]
    assert worker.demand(job) is job.worker_demand and ps.demand(job) is job.ps_demand
    plan = JobSchedule(np.ones((4, 2), dtype=np.int64), np.zeros((4, 1), dtype=np.int64))
    assert worker.counts(plan) is plan.workers and ps.counts(plan) is plan.parameter_servers
    np.testing.assert_array_equal(worker.demand_matrix(instance), [[1.0, 2.0], [2.0, 0.5]])
    np.testing.assert_array_equal(ps.demand_matrix(instance), [[0.0, 1.5], [0.0, 0.5]])
    assert [(p.capacity_equation, p.arrival_equation, p.count_equation) for p in (worker, ps)] == [
        ("(4)", "(9)", "(12)"), ("(5)", "(10)", "(13)")]


def test_price_state_twin_names_are_views_of_the_pool_states():
    instance = two_pool_instance()
    state = PriceState(instance, compute_constants(instance))
    worker, ps = state.pools
    for name, pool_state in (("worker", worker), ("ps", ps)):
        for part in ("used", "free", "prices", "capacity"):
            assert getattr(state, f"{name}_{part}") is getattr(pool_state, part)
    with pytest.raises(AttributeError):
        state.worker_used = np.zeros(1)  # read-only: the arrays live in the pool states


def test_a_state_without_constants_holds_amounts_only():
    instance = two_pool_instance()
    state = PriceState(instance, None)
    workers = np.zeros((4, 2), dtype=np.int64)
    workers[1, 0] = 2
    parameter_servers = np.zeros((4, 1), dtype=np.int64)
    parameter_servers[1, 0] = 1
    assert state.commit(instance.jobs[0], workers, parameter_servers) == 0.0
    assert state.worker_prices is None and state.price_term() == 0.0
    np.testing.assert_array_equal(state.worker_used[1, 0], [2.0, 4.0])
    np.testing.assert_array_equal(state.ps_free[1, 0], [0.0, 2.5])


@st.composite
def allocations(draw):
    """A few random allocations (any counts; capacities may be exceeded, the state does not judge)."""
    instance = generate("tiny", draw(st.integers(0, 20)), jobs=6)
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    cluster = instance.cluster
    out = []
    for i in range(instance.n_jobs):
        out.append((i, rng.integers(0, 3, (instance.horizon, cluster.n_worker_servers)),
                    rng.integers(0, 2, (instance.horizon, cluster.n_ps_servers))))
    return instance, out


@settings(max_examples=25, derandomize=True, deadline=None)
@given(allocations())
def test_commits_match_prices_recomputed_from_scratch(case):
    """After any sequence of commits, each pool's amounts are the sum of what was committed, ``free`` is
    capacity minus them, the prices are ``L (U/L)^(used/c)`` computed directly, and the commits' increases
    add up to the change of the price term."""
    instance, commits = case
    constants = compute_constants(instance)
    state = PriceState(instance, constants)
    start = state.price_term()
    increases = sum(state.commit(instance.jobs[i], y, z) for i, y, z in commits)
    for pool_state, lower, log_ratio, index in (
        (state.pools[0], constants.worker_lower, constants.worker_log_ratio, 1),
        (state.pools[1], constants.ps_lower, constants.ps_log_ratio, 2),
    ):
        demand = pool_state.pool.demand
        used = sum(c[index][:, :, None] * demand(instance.jobs[c[0]])[None, None, :] for c in commits)
        capacity = pool_state.pool.capacity[None]
        np.testing.assert_allclose(pool_state.used, used, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(pool_state.free, capacity - used, rtol=1e-12, atol=1e-9)
        share = np.where(capacity > 0, used / np.where(capacity > 0, capacity, 1.0), 0.0)
        np.testing.assert_allclose(pool_state.prices, lower * (np.exp(log_ratio) ** share), rtol=1e-9)
    assert increases == pytest.approx(state.price_term() - start, rel=1e-9, abs=1e-9)


def test_metrics_json_keeps_its_key_order():
    """The run files' key order (the JSON form is written in field order, ``extra`` last)."""
    instance = generate("tiny", 3)
    metrics = compute_metrics(instance, run_oasis(instance).schedule, extra={"restarts": 4})
    keys = list(metrics.to_dict())
    assert keys == ["utility", "admitted", "started", "completed", "unfinished", "abandoned", "mean_jct", "jct",
                    "completion_slots", "job_utilities", "utilisation", "wasted_worker_slots",
                    "scheduler_seconds", "restarts"]
    assert all(isinstance(k, str) for k in metrics.to_dict()["jct"])
    with pytest.raises(TypeError):
        RunMetrics(0.0, 0, 0)  # keyword-only: the field order is the JSON order, not a call signature


def test_utilisation_per_pool_by_hand():
    instance = two_pool_instance()
    workers, parameter_servers = np.zeros((4, 2), dtype=np.int64), np.zeros((4, 1), dtype=np.int64)
    workers[0, 0], parameter_servers[0, 0] = 2, 1
    schedule = Schedule({0: JobSchedule(workers, parameter_servers)})
    worker_load, ps_load = schedule_load(instance, schedule)
    np.testing.assert_array_equal(worker_load, [2.0, 4.0])
    np.testing.assert_array_equal(ps_load, [0.0, 1.5])
    utilisation = compute_metrics(instance, schedule).utilisation
    # worker gpu: 2 of (4 + 2) * 4 slots; worker cpu: 4 of 8 * 4; PS gpu has no capacity; PS cpu 1.5 of 4 * 4.
    assert utilisation == {"worker": {"gpu": 2 / 24, "cpu": 4 / 32}, "ps": {"cpu": 1.5 / 16}}


def test_greedy_and_oasis_results_keep_their_exported_fields():
    instance = generate("tiny", 1)
    oasis, greedy = run_oasis(instance), run_greedy(instance)
    assert oasis.worker_prices.shape == (instance.horizon, *instance.cluster.worker_capacity.shape)
    assert oasis.ps_prices.shape == (instance.horizon, *instance.cluster.ps_capacity.shape)
    assert greedy.worker_prices is None and greedy.ps_prices is None and greedy.constants is None
    assert greedy.certificate is None and oasis.certificate is not None
    decision = oasis.decisions[0].to_dict()
    assert list(decision) == ["job", "arrival", "admitted", "feasible", "mu", "payoff", "cost", "utility",
                              "completion_slot", "primal_increase", "dual_increase", "price_increase"]
