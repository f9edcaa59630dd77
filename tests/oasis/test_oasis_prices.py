"""Price constants and price state (primaldual.oasis.prices): formulas, conditions of the theorem, edge cases."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from oasis_helpers import (
    brute_force_best,
    brute_force_optimum,
    make_instance,
    make_job,
    small_demand_instance,
    unit_jobs_instance,
)
from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.oasis.engine import OnlineEngine, arrival_order
from primaldual.oasis.prices import (
    PriceConstants,
    PriceState,
    compute_constants,
    fastest_standalone_workers,
    fit_counts,
    standalone_utilities,
)
from primaldual.core.utility import Constant


def test_constants_of_a_hand_computed_instance():
    """L, hat U, eps, U, alpha, 2 alpha and 1 + ln(U/L) for an instance small enough to compute by hand."""
    instance = unit_jobs_instance([10.0, 20.0], gpu_capacity=100, ps_cpu_capacity=1000.0)
    constants = compute_constants(instance, rule="capacity")
    # One slot; capacities 100 GPU (worker) + 1000 CPU (PS); the best job alone earns 20.
    lower = 20.0 / (2 * 1 * 1100.0)
    assert constants.lower == pytest.approx(lower)
    assert constants.opt_lower_bound == 20.0
    assert constants.worker_value_density.tolist() == [20.0, 0.0]
    assert constants.ps_value_density.tolist() == [0.0, 20.0]
    assert constants.worker_demand_fraction.tolist() == pytest.approx([1 / 100, 0.0])
    assert constants.ps_demand_fraction.tolist() == pytest.approx([0.0, 1 / 1000])
    gpu_upper = lower * (20.0 / lower) ** (1 / (1 - 0.01))
    cpu_upper = lower * (20.0 / lower) ** (1 / (1 - 0.001))
    assert constants.worker_upper.tolist() == pytest.approx([gpu_upper, lower])  # nobody needs worker CPU
    assert constants.ps_upper.tolist() == pytest.approx([lower, cpu_upper])
    alpha = math.log(gpu_upper / lower)
    assert constants.alpha == pytest.approx(alpha)
    assert constants.two_alpha == pytest.approx(2 * alpha)
    assert constants.online_lower_bound == pytest.approx(1 + alpha)
    assert constants.alpha_discrete == pytest.approx(math.expm1(alpha * 0.01) / 0.01)
    assert constants.initial_dual == pytest.approx(10.0)  # = opt_lower_bound / (2 eta)
    assert constants.kappa == pytest.approx(0.5)
    assert constants.small_demand_holds
    assert constants.theorem_ratio_bound == pytest.approx(2 * constants.alpha_discrete)
    data = constants.to_dict()
    json.dumps(data, allow_nan=False)
    for key in ("lower", "worker_upper", "ps_upper", "eta", "price_scale", "alpha", "two_alpha",
                "alpha_discrete", "online_lower_bound", "small_demand_holds", "theorem_ratio_bound"):
        assert key in data
    assert data["worker_upper"]["gpu"] == pytest.approx(gpu_upper)


def test_alpha_discrete_tends_to_alpha_and_bounds_it_from_above():
    def constants_with(eps):
        return PriceConstants(("gpu",), 1.0, np.array([math.e ** 10]), np.array([1.0]),
                              worker_value_density=[1.0], ps_value_density=[0.0],
                              worker_demand_fraction=[eps], ps_demand_fraction=[0.0])

    alphas = [constants_with(eps).alpha_discrete for eps in (0.5, 0.1, 0.01, 1e-4, 1e-7)]
    assert all(a >= 10.0 for a in alphas)
    assert alphas == sorted(alphas, reverse=True)
    assert alphas[-1] == pytest.approx(10.0, rel=1e-5)
    assert constants_with(0.0).alpha_discrete == pytest.approx(10.0)


def test_alpha_is_at_least_one():
    """alpha = max(1, ln(U/L)): with U/L < e the log ratio is below 1 and alpha (hence 2 alpha and
    alpha_discrete) is 1, which Lemma 7 needs for the mu_i term; the online lower bound keeps 1 + ln(U/L)."""
    constants = PriceConstants(("gpu",), 1.0, np.array([2.0]), np.array([1.5]),
                               worker_value_density=[2.0], ps_value_density=[1.5],
                               worker_demand_fraction=[0.1], ps_demand_fraction=[0.1])
    assert constants.max_log_ratio == pytest.approx(math.log(2.0))
    assert constants.alpha == 1.0 and constants.two_alpha == 2.0
    assert constants.alpha_discrete == 1.0
    assert constants.online_lower_bound == pytest.approx(1.0 + math.log(2.0))


def test_eta_and_price_scale():
    instance = small_demand_instance(0, n_jobs=20)
    base = compute_constants(instance, rule="capacity")
    halved = compute_constants(instance, eta=2.0, rule="capacity")
    assert halved.lower == pytest.approx(base.lower / 2)
    assert halved.kappa == pytest.approx(0.25)
    scaled = compute_constants(instance, price_scale=3.0, rule="capacity")
    assert scaled.lower == pytest.approx(3 * base.lower)
    np.testing.assert_allclose(scaled.worker_upper, 3 * base.worker_upper)
    np.testing.assert_allclose(scaled.ps_upper, 3 * base.ps_upper)
    assert scaled.alpha == pytest.approx(base.alpha)
    assert scaled.price_scale == 3.0
    # Scaling up keeps (C1) but breaks kappa < 1 at scale 2 eta; scaling down breaks (C1).
    assert compute_constants(instance, price_scale=2.0, rule="capacity").theorem_ratio_bound is None
    assert not compute_constants(instance, price_scale=0.5, rule="capacity").small_demand_holds


def test_overrides_are_used_and_checked():
    instance = unit_jobs_instance([10.0, 20.0])
    constants = compute_constants(instance, lower=0.5, worker_upper={"gpu": 40.0}, ps_upper=30.0)
    assert constants.lower == 0.5 and constants.source == "override"
    assert constants.worker_upper.tolist() == [40.0, 0.5]  # cpu keeps its computed value (= L)
    assert constants.ps_upper.tolist() == [30.0, 30.0]
    assert constants.alpha == pytest.approx(math.log(80.0))
    for kwargs, message in (
        (dict(lower=-1.0), "lower"),
        (dict(lower=0.5, worker_upper=0.1), "must be >= L"),
        (dict(rule="mixed"), "rule"),
        (dict(worker_upper={"tpu": 3.0}), "unknown resources"),
        (dict(eta=0.0), "eta"),
        (dict(price_scale=float("nan")), "price_scale"),
    ):
        with pytest.raises(InputError, match=message):
            compute_constants(instance, **kwargs)


def test_paper_preset_violates_the_small_demand_assumption_and_says_so():
    """One job can fill a whole 8-GPU server: eps = 1, the constants fall back to the paper's U = hat U and
    the theorem is reported as not applicable (no bound is claimed)."""
    constants = compute_constants(generate("paper", 0, jobs=40))
    assert constants.worker_demand_fraction[constants.resources.index("gpu")] == 1.0
    assert not constants.small_demand_holds
    assert constants.theorem_ratio_bound is None
    gpu = constants.resources.index("gpu")
    assert constants.worker_upper[gpu] == pytest.approx(constants.worker_value_density[gpu])
    assert constants.to_dict()["theorem_ratio_bound"] is None


@pytest.mark.parametrize("seed", range(12))
def test_standalone_utility_is_the_best_any_schedule_earns(seed):
    """f_i^alone equals the best utility over every capacity-respecting schedule of job i (enumerated), so
    OPT >= max_i f_i^alone and hat U bounds every schedule's utility per unit (Lemma 5)."""
    instance = generate("tiny", seed)
    shape_w = (instance.horizon,) + instance.cluster.worker_capacity.shape
    shape_ps = (instance.horizon,) + instance.cluster.ps_capacity.shape
    zero_w, zero_ps = np.zeros(shape_w), np.zeros(shape_ps)
    free_w = np.broadcast_to(instance.cluster.worker_capacity, shape_w)
    free_ps = np.broadcast_to(instance.cluster.ps_capacity, shape_ps)
    alone = standalone_utilities(instance)
    for i in range(instance.n_jobs):
        _, best_utility = brute_force_best(instance, i, zero_w, zero_ps, free_w, free_ps)
        assert alone[i] == pytest.approx(max(best_utility, 0.0), abs=1e-12)


@pytest.mark.parametrize("seed", range(15))
def test_initial_dual_bound(seed):
    """Lemma 5: D_0 = L T sum c = opt_lower_bound / (2 eta) <= OPT / 2 (brute-force OPT of tiny instances)."""
    instance = generate("tiny", seed)
    optimum = brute_force_optimum(instance)
    for eta in (1.0, 3.0):
        constants = compute_constants(instance, eta=eta, rule="capacity")
        state = PriceState(instance, constants)
        assert state.price_term() == pytest.approx(constants.initial_dual)
        assert constants.initial_dual == pytest.approx(constants.opt_lower_bound / (2 * eta))
        assert constants.initial_dual <= optimum / (2 * eta) + 1e-12


def test_price_state_follows_the_exponential_and_reports_the_dual_increase():
    job = make_job(0, 4, 2, [1.0, 2.0], [0.0, 1.0], Constant(10.0))
    instance = make_instance([job], [[4.0, 8.0], [0.0, 8.0]], [[0.0, 4.0]], horizon=3)
    constants = PriceConstants(("gpu", "cpu"), 0.5, np.array([8.0, 2.0]), np.array([1.0, 4.0]))
    state = PriceState(instance, constants)
    workers = np.array([[2, 0], [0, 0], [1, 0]])
    parameter_servers = np.array([[1], [0], [1]])
    before = state.price_term()
    increase = state.commit(job, workers, parameter_servers)
    used_w = workers[:, :, None] * job.worker_demand
    expected_w = np.where(instance.cluster.worker_capacity > 0,
                          0.5 * np.power(np.array([8.0, 2.0]) / 0.5,
                                         used_w / np.where(instance.cluster.worker_capacity > 0,
                                                           instance.cluster.worker_capacity, 1.0)),
                          0.5)
    np.testing.assert_allclose(state.worker_prices, expected_w, rtol=1e-13)
    expected_ps = 0.5 * np.power(np.array([1.0, 4.0]) / 0.5, parameter_servers[:, :, None] * job.ps_demand
                                 / np.where(instance.cluster.ps_capacity > 0, instance.cluster.ps_capacity, 1.0))
    expected_ps = np.where(instance.cluster.ps_capacity > 0, expected_ps, 0.5)
    np.testing.assert_allclose(state.ps_prices, expected_ps, rtol=1e-13)
    assert state.worker_prices[:, 1, 0].tolist() == [0.5, 0.5, 0.5]  # zero GPU capacity: never raised
    assert increase == pytest.approx(state.price_term() - before, rel=1e-12)
    np.testing.assert_allclose(state.worker_free, instance.cluster.worker_capacity - used_w)


@pytest.mark.parametrize("make", [
    lambda: generate("small", 2),
    lambda: small_demand_instance(1, n_jobs=80, capacity=20.0),
    lambda: generate("paper", 1, jobs=40),
])
def test_prices_never_decrease(make):
    """Prices only rise, and they rise exactly where an admitted job allocated a resource with U > L."""
    instance = make()
    engine = OnlineEngine(instance, compute_constants(instance))
    worker, ps = engine.state.worker_prices.copy(), engine.state.ps_prices.copy()
    raised = 0
    for i in arrival_order(instance):
        decision = engine.decide(i)
        new_worker, new_ps = engine.state.worker_prices, engine.state.ps_prices
        assert np.all(new_worker >= worker) and np.all(new_ps >= ps)
        if decision.admitted:
            plan = engine.plans[i]
            touched = (plan.workers[:, :, None] * instance.jobs[i].worker_demand) > 0
            grows = touched & (engine.constants.worker_log_ratio > 0)
            assert np.all(new_worker[grows] > worker[grows])
            assert np.all(new_worker[~touched] == worker[~touched])
            raised += int(grows.any())
        else:
            assert np.array_equal(new_worker, worker) and np.array_equal(new_ps, ps)
        worker, ps = new_worker.copy(), new_ps.copy()
    assert raised > 0


def test_fit_counts_tolerance_zero_capacity_and_zero_demand():
    assert fit_counts(np.array([[0.3, 5.0]]), np.array([0.1, 1.0]), 10).tolist() == [3]
    assert fit_counts(np.array([[0.0, 5.0]]), np.array([1.0, 1.0]), 10).tolist() == [0]
    assert fit_counts(np.array([[0.0, 5.0]]), np.array([0.0, 2.0]), 10).tolist() == [2]
    assert fit_counts(np.array([[0.0, 0.0]]), np.array([0.0, 0.0]), 7).tolist() == [7]
    assert fit_counts(np.array([[-1e-3, 5.0]]), np.array([1.0, 1.0]), 7).tolist() == [0]


def test_fastest_standalone_workers_respects_ps_capacity():
    # 3 worker servers fit 2 workers each, but only 2 PSs fit and b/B = 1/2: at most 4 workers per slot.
    job = make_job(0, 12, 8, [1.0, 1.0], [0.0, 2.0], Constant(1.0), bandwidth_ratio=0.5)
    instance = make_instance([job], [[2.0, 2.0]] * 3, [[0.0, 4.0]], horizon=5)
    assert fastest_standalone_workers(instance, 0) == 4
    assert standalone_utilities(instance)[0] == 1.0  # 12 units in 3 slots <= 5


def test_density_rule_per_pool_and_resource_by_hand():
    """Item 1 of issue 10: L^r per pool and resource from the least value density per unit of resource-slot,
    U^r from the largest value density per unit, each in the resource's own unit; D_0 and kappa follow."""
    instance = unit_jobs_instance([10.0, 20.0], gpu_capacity=100, ps_cpu_capacity=1000.0)
    constants = compute_constants(instance)  # rule="density" is the default
    assert constants.rule == "density"
    # Each job: 1 worker-slot of 1 GPU, its PS needs 1 CPU (b/B = 1); the least value density is 10 per unit.
    assert constants.worker_lower[0] == pytest.approx(10.0 / 4)
    assert constants.ps_lower[1] == pytest.approx(10.0 / 4)
    # Nobody demands worker CPU or PS GPU: the least defined value, a constant price (U = L).
    assert constants.worker_lower[1] == pytest.approx(10.0 / 4) and constants.worker_upper[1] == constants.worker_lower[1]
    gpu_upper = 2.5 * (20.0 / 2.5) ** (1 / (1 - 0.01))
    assert constants.worker_upper[0] == pytest.approx(gpu_upper)
    assert constants.worker_log_ratio[0] == pytest.approx(math.log(gpu_upper / 2.5))
    # D_0 = sum_r L^r T sum c^r over both pools (T = 1).
    assert constants.initial_dual == pytest.approx(2.5 * 100 + 2.5 * 0 + 2.5 * 0 + 2.5 * 1000)
    state = PriceState(instance, constants)
    assert state.price_term() == pytest.approx(constants.initial_dual)
    data = constants.to_dict()
    assert data["rule"] == "density" and data["worker_lower"]["gpu"] == pytest.approx(2.5)
    json.dumps(data, allow_nan=False)


@pytest.mark.parametrize("seed", range(4))
def test_density_rule_charges_at_most_a_quarter_on_an_empty_cluster(seed):
    """With eta = 1 no job pays more than a quarter of its standalone utility on the empty cluster at its
    fastest standalone schedule, whatever the units of the resources (the mixed-unit L overcharged or
    undercharged by orders of magnitude)."""
    instance = generate("small", seed)
    constants = compute_constants(instance)
    alone = standalone_utilities(instance)
    for i, job in enumerate(instance.jobs):
        if alone[i] <= 0:
            continue
        work = float(instance.work_units[i])
        ratio = job.worker_bandwidth_gbps / job.ps_bandwidth_gbps
        # Pooled resource-slots of the job at L (PS count rounded up adds at most a factor per unit).
        cost = work * (constants.worker_lower @ job.worker_demand) + work * ratio * (constants.ps_lower @ job.ps_demand)
        demanded = (job.worker_demand > 0).sum() + (job.ps_demand > 0).sum()
        assert cost <= alone[i] * demanded / 4 * (1 + 1e-9)
