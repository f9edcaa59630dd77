"""Weighted gradient aggregation: equal to the single-batch gradient for any split; plain mean is not."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.lbbsp.aggregation import (KINDS, compare_aggregations, global_batches, mean_aggregate,
                                          mean_gradient, split_batch, synthetic_regression, train_data_parallel,
                                          train_single_batch, weighted_aggregate)

DATA = {kind: synthetic_regression(kind, samples=600, dimension=4, seed=1) for kind in KINDS}


@st.composite
def splits(draw, total=120):
    workers = draw(st.integers(1, 8))
    cuts = sorted(draw(st.lists(st.integers(1, total - 1), min_size=workers - 1, max_size=workers - 1, unique=True)))
    return np.diff([0, *cuts, total])


@settings(derandomize=True, max_examples=80, deadline=None)
@given(kind=st.sampled_from(KINDS), sizes=splits(), seed=st.integers(0, 1000))
def test_weighted_aggregate_equals_single_batch_gradient_for_any_split(kind, sizes, seed):
    data = DATA[kind]
    rng = np.random.default_rng(seed)
    rows = rng.choice(data.n_samples, size=int(sizes.sum()), replace=False)
    weights = rng.normal(size=data.features.shape[1])
    local = [mean_gradient(kind, weights, data.features[p], data.targets[p]) for p in split_batch(rows, sizes)]
    single = mean_gradient(kind, weights, data.features[rows], data.targets[rows])
    np.testing.assert_allclose(weighted_aggregate(local, sizes), single, rtol=1e-12, atol=1e-14)
    if len(set(sizes.tolist())) > 1:
        assert np.max(np.abs(mean_aggregate(local) - single)) > 1e-9


def _unequal_schedule(iterations, seed, total=96, workers=5):
    rng = np.random.default_rng(seed)
    schedule = []
    for _ in range(iterations):
        cuts = np.sort(rng.choice(np.arange(1, total), size=workers - 1, replace=False))
        schedule.append(np.diff([0, *cuts, total]))
    return np.array(schedule)


def test_weighted_trajectory_is_single_batch_sgd_and_mean_is_not():
    for kind in KINDS:
        check = compare_aggregations(DATA[kind], _unequal_schedule(60, seed=2), learning_rate=0.1, seed=7)
        assert check.weighted_max_deviation < 1e-12
        assert check.mean_max_deviation > 1e-4
        assert check.final_loss_weighted == check.final_loss_single or abs(
            check.final_loss_weighted - check.final_loss_single) < 1e-12


def test_equal_batches_make_mean_and_weighted_agree():
    schedule = np.full((30, 4), 24)
    data = DATA["least_squares"]
    weighted = train_data_parallel(data, schedule, 0.05, "weighted", seed=0)
    mean = train_data_parallel(data, schedule, 0.05, "mean", seed=0)
    np.testing.assert_allclose(weighted.weights, mean.weights, rtol=1e-12, atol=1e-14)
    assert weighted.losses[-1] < weighted.losses[0]      # it is really training


def test_sampler_draws_a_permutation_per_epoch():
    batches = global_batches(100, 25, 8, seed=0)
    for epoch in range(2):
        assert sorted(batches[4 * epoch:4 * epoch + 4].ravel().tolist()) == list(range(100))
    single = train_single_batch(DATA["logistic"], 25, 8, 0.1, seed=0)
    assert single.weights.shape == (9, DATA["logistic"].features.shape[1])
