"""The hazard rule (primaldual/lbbsp/hazard.py) and weighted scenarios in robust_shares."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.lbbsp.cpu import proportional_batches
from primaldual.lbbsp.predictors.hazard import SwapHazardPredictor
from primaldual.lbbsp.predictors.robust_lp import robust_shares

from lbbsp_strategies import scenario_objective


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.lists(st.integers(1, 4), min_size=2, max_size=5))
def test_integer_weights_equal_repeated_scenarios(seed, counts):
    # Second path: weight k / K on a scenario is the same law as repeating it k times among K rows.
    costs = np.exp(np.random.default_rng(seed).normal(0, 1, size=(len(counts), 3)))
    weighted = robust_shares(costs, weights=np.array(counts) / sum(counts))
    repeated = np.repeat(costs, counts, axis=0)
    assert scenario_objective(repeated, weighted) == pytest.approx(
        scenario_objective(repeated, robust_shares(repeated)), rel=1e-7, abs=1e-9)
    grid = [np.array([a, b, 30 - a - b]) / 30 for a, b in itertools.product(range(31), repeat=2) if a + b <= 30]
    assert scenario_objective(repeated, weighted) <= min(scenario_objective(repeated, g) for g in grid) + 1e-7


def test_bad_weights_are_rejected():
    with pytest.raises(ValueError, match="weights"):
        robust_shares(np.ones((2, 2)), weights=np.array([0.7, 0.7]))
    with pytest.raises(ValueError, match="weights"):
        robust_shares(np.ones((2, 2)), tail=0.5, weights=np.array([0.5, 0.5]))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(0.05, 20.0), min_size=2, max_size=10), st.integers(2, 15))
def test_constant_speeds_give_the_proportional_rule(speed, iterations):
    speed = np.array(speed)
    model = SwapHazardPredictor(speed.size)
    for _ in range(iterations):
        model.observe(speed)
    # The slowest stays slowest at every barrier: the only scenario is the last costs.
    assert np.array_equal(proportional_batches(model.predict(), 64 * speed.size),
                          proportional_batches(speed, 64 * speed.size))


def test_moving_slowness_is_hedged_where_a_point_predictor_is_not():
    # The 10x slowness alternates between workers 0 and 1: every barrier records a move to rank 1. The last
    # value gives worker 1 (fast in the last measurement) 10/21 of the batch; the learned hazard says it is
    # the next slow one, and worker 0 the next fast one.
    model = SwapHazardPredictor(3)
    for t in range(20):
        model.observe(1.0 / np.array([10.0, 1.0, 1.0] if t % 2 else [1.0, 10.0, 1.0]))
    shares = model.predict() / model.predict().sum()
    assert shares[1] < 0.1 and shares[0] > 0.4 and shares[2] > 0.4
    # The scenarios: the last costs (1/20: the prior's "stays slowest") and the swap of ranks 0 and 1 (19/20).
    expected = robust_shares(np.array([[10.0, 1.0, 1.0], [1.0, 10.0, 1.0]]), normalise=False,
                             weights=np.array([1 / 20, 19 / 20]))
    assert shares == pytest.approx(expected, abs=1e-7)


def test_onsets_learned_in_calm_periods_are_hedged():
    # Every 4th iteration worker 0 (the slowest by a hair in calm iterations) spikes 20x.
    model = SwapHazardPredictor(4)
    calm = np.array([1.02, 1.0, 1.0, 1.0])
    for t in range(42):  # ends on two calm iterations
        model.observe(1.0 / (np.array([20.0, 1.0, 1.0, 1.0]) if t % 4 == 3 else calm))
    # In a calm iteration the proportional rule gives worker 0 almost a quarter; the hazard rule much less.
    shares = model.predict() / model.predict().sum()
    assert shares[0] < 0.1 < 0.24 < (1 / calm / np.sum(1 / calm))[0]
    without = SwapHazardPredictor(4, onsets=False)
    for t in range(42):  # ends on two calm iterations
        without.observe(1.0 / (np.array([20.0, 1.0, 1.0, 1.0]) if t % 4 == 3 else calm))
    assert (without.predict() / without.predict().sum())[0] > 0.2
