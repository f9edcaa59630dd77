"""Prices as a strategy of the online engine: exponential (OASiS), zero (greedy), learned floor."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oasis_helpers import brute_force_best, make_instance, make_job
from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.oasis.engine import OnlineEngine, arrival_order, run_greedy, run_oasis
from primaldual.oasis.strategy import ExponentialPrices, LearnedFloorPrices, PriceStrategy, ZeroPrices
from primaldual.oasis.prices import compute_constants
from primaldual.core.utility import Constant
from primaldual.core.verify import verify


def run(instance, prices, name="run"):
    engine = OnlineEngine(instance, prices)
    for i in arrival_order(instance):
        engine.decide(i)
    return engine


def strategies(instance):
    constants = compute_constants(instance)
    return [ExponentialPrices(constants), ZeroPrices(), LearnedFloorPrices(constants, window=5)]


def test_every_strategy_satisfies_the_protocol():
    instance = generate("tiny", 0)
    for prices in strategies(instance):
        assert isinstance(prices, PriceStrategy)
        assert prices.objective in ("payoff", "utility")


def test_exponential_prices_are_run_oasis_and_constants_mean_exponential():
    instance = generate("small", 1, jobs=20)
    constants = compute_constants(instance, rule="share")  # oasis's default rule
    reference = run_oasis(instance)
    for prices in (ExponentialPrices(constants), constants):
        result = run(instance, prices).result("oasis")
        assert json.dumps(result.to_dict()) == json.dumps(reference.to_dict())
        assert np.array_equal(result.worker_prices, reference.worker_prices)


def test_zero_prices_are_run_greedy_and_never_charge():
    instance = generate("small", 2, jobs=20)
    engine = run(instance, ZeroPrices())
    result = engine.result("greedy")
    assert json.dumps(result.to_dict()) == json.dumps(run_greedy(instance).to_dict())
    for decision in result.decisions:
        assert decision.price_increase == 0.0 and (decision.cost == 0.0 or not decision.feasible)
        assert decision.admitted == (decision.feasible and decision.utility > 0)
    # The amounts still track what was committed: free = capacity - used.
    np.testing.assert_allclose(engine.state.worker_free, instance.cluster.worker_capacity - engine.state.worker_used)
    with pytest.raises(InputError, match="no certificate"):
        engine.certificate()


def test_learned_floor_prices_read_the_exponential_prices_plus_the_floor():
    """Three jobs arrive together and need more than the window's pooled capacity: the pooled LP is tight, so
    the floor is positive (the marginal job's value density); the subroutine at the floored prices is exact."""
    jobs = [make_job(3, 4, 2, [1.0, 1.0], [0.0, 1.0], Constant(value)) for value in (100.0, 10.0, 10.0)]
    instance = make_instance(jobs, [[2.0, 2.0]], [[0.0, 2.0]], horizon=6)
    constants = compute_constants(instance)
    prices = LearnedFloorPrices(constants, window=4)
    engine = OnlineEngine(instance, prices)
    for i in arrival_order(instance):
        worker, ps = prices.read(engine.state, instance.jobs[i].arrival)
        np.testing.assert_array_equal(worker, engine.state.worker_prices + prices.floor.worker)
        np.testing.assert_array_equal(ps, engine.state.ps_prices + prices.floor.ps)
        expected, _ = brute_force_best(instance, i, worker, ps, engine.state.worker_free.copy(),
                                       engine.state.ps_free.copy())
        assert engine.decide(i).mu == pytest.approx(max(0.0, expected), abs=1e-9)
    assert prices.floor.worker.max() > 0  # contention: the floor is positive
    assert [d.admitted for d in engine.decisions.values()] == [True, False, False]
    assert verify(instance, engine.schedule("floor")).feasible
    with pytest.raises(InputError, match="no certificate"):
        engine.certificate()
    result = engine.result("floor")
    assert result.certificate is None and result.constants is constants
    np.testing.assert_array_equal(result.worker_prices, engine.state.worker_prices + prices.floor.worker)


@pytest.mark.parametrize("window", [0, -3, 2.5, True, "30"])
def test_learned_floor_refuses_a_bad_window(window):
    with pytest.raises(InputError, match="^window: must be an integer >= 1"):
        LearnedFloorPrices(compute_constants(generate("tiny", 0)), window=window)


def test_learned_floor_is_oasis_while_the_floor_is_zero():
    """One job per slot far below capacity: the pooled LP is slack, its duals (the floor) are 0, and the
    floored prices are OASiS's exactly."""
    jobs = [make_job(t, 2, 1, [1.0, 1.0], [0.0, 0.5], Constant(5.0)) for t in range(4)]
    instance = make_instance(jobs, [[8.0, 8.0]], [[0.0, 8.0]], horizon=6)
    constants = compute_constants(instance, rule="share")  # oasis's default rule
    prices = LearnedFloorPrices(constants)
    floored = run(instance, prices).result("oasis")
    assert prices.highest.worker.max() == 0 and prices.highest.ps.max() == 0
    assert json.dumps([d.to_dict() for d in floored.decisions]) == \
        json.dumps([d.to_dict() for d in run_oasis(instance).decisions])


@settings(max_examples=15, derandomize=True, deadline=None)
@given(st.integers(0, 40), st.sampled_from(["exponential", "zero", "learned-floor"]))
def test_every_strategy_gives_feasible_schedules_and_consistent_amounts(seed, name):
    """Whatever the prices, the engine commits within the residual capacity: the schedule verifies, the
    amounts are exactly what the plans hold, and every decision's dual increase is ``mu + price increase``."""
    instance = generate("tiny", seed, jobs=8)
    prices = {p.name: p for p in strategies(instance)}[name]
    engine = run(instance, prices)
    schedule = engine.schedule(name)
    assert verify(instance, schedule).feasible
    for pool_state in engine.state.pools:
        used = np.zeros_like(pool_state.used)
        for i, plan in schedule.assignments.items():
            used += pool_state.pool.counts(plan)[:, :, None] * pool_state.pool.demand(instance.jobs[i])
        np.testing.assert_allclose(pool_state.used, used, rtol=1e-12, atol=1e-12)
    for decision in engine.decisions.values():
        expected = decision.mu + decision.price_increase if decision.admitted else 0.0
        assert decision.dual_increase == pytest.approx(expected, rel=1e-12)
