"""What no causal rule can reach (proofs/lbbsp.md) and the hindsight references (primaldual/lbbsp/limits.py)."""

import itertools

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.cli import main
from primaldual.lbbsp.generators import generated
from primaldual.lbbsp.limits import causal_lower_bound, mixture_limits, static_split_batches
from primaldual.lbbsp.replay import _predictions, _run_cpu, make_law, replay
from primaldual.lbbsp.predictors.robust_lp import robust_shares
from primaldual.lbbsp.traces import WorkerTrace

from lbbsp_strategies import scenario_objective


def _permutation_closed(rng, workers: int, base_rows: int, sigma: float) -> np.ndarray:
    """Every permutation of each of ``base_rows`` random cost vectors: an exactly exchangeable scenario set."""
    base = np.exp(sigma * rng.normal(size=(base_rows, workers)))
    return np.array([row[list(order)] for row in base for order in itertools.permutations(range(workers))])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 4), st.integers(1, 3), st.sampled_from([0.0, 0.5]),
       st.booleans())
def test_lemma_1_equal_split_is_optimal_on_exchangeable_scenarios(seed, workers, base_rows, tail, normalise):
    # proofs/lbbsp.md, Lemma 1: on a permutation-closed scenario set the objective is symmetric and convex,
    # so the equal split attains the LP's optimum (the optimum need not be unique; its value is).
    rng = np.random.default_rng(seed)
    costs = _permutation_closed(rng, workers, base_rows, 1.0)
    equal = np.full(workers, 1.0 / workers)
    optimum = scenario_objective(costs, robust_shares(costs, tail, normalise), tail, normalise)
    assert scenario_objective(costs, equal, tail, normalise) <= optimum * (1 + 1e-7) + 1e-9
    # Symmetry and midpoint convexity, checked directly on two random splits.
    x, y = rng.dirichlet(np.ones(workers)), rng.dirichlet(np.ones(workers))
    value = scenario_objective(costs, x, tail, normalise)
    assert scenario_objective(costs, x[rng.permutation(workers)], tail, normalise) == pytest.approx(value)
    assert scenario_objective(costs, (x + y) / 2, tail, normalise) <= \
        (value + scenario_objective(costs, y, tail, normalise)) / 2 + 1e-12


def test_lemma_3_bound_hand_computed():
    # Equal predictable parts: the bound is M / n, BSP's own expected time (Lemma 1 again).
    assert causal_lower_bound(np.ones(4), 1.8) == pytest.approx(1.8 / 4)
    # No noise (M = 1): the oracle on p, 1 / sum(1/p).
    assert causal_lower_bound(np.array([1.0, 2.0, 4.0]), 1.0) == pytest.approx(1.0 / 1.75)
    # p = (1, 2), M = 1.5: y1 = t, y2 = 2 (1 - t), t = M (2 - t) / 2 -> t = 2M / (2 + M) = 6/7.
    assert causal_lower_bound(np.array([2.0, 1.0]), 1.5) == pytest.approx(6 / 7)
    # M >= n: all the work on the cheapest worker, value M min(p) / n.
    assert causal_lower_bound(np.array([1.0, 3.0]), 2.5) == pytest.approx(1.25)
    with pytest.raises(ValueError, match="noise_mean_max"):
        causal_lower_bound(np.ones(2), 0.9)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 3), st.floats(1.0, 4.0))
def test_lemma_3_bound_is_the_minimum_of_its_program_on_a_grid(seed, workers, noise_mean_max):
    persistent = np.exp(np.random.default_rng(seed).normal(size=workers))
    bound = causal_lower_bound(persistent, noise_mean_max)
    # Brute force over y = p * x on a grid of splits x (sum y / p = 1 holds by construction).
    grid = [np.array(c) / 60 for c in itertools.product(range(61), repeat=workers) if sum(c) == 60]
    values = [max(np.max(persistent * x), noise_mean_max * np.mean(persistent * x)) for x in grid]
    assert bound <= min(values) + 1e-9
    assert bound >= min(values) - 0.05 * noise_mean_max * persistent.max()  # grid step 1/60


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 4), st.integers(1, 3), st.floats(0.1, 1.5))
def test_lemma_3_no_split_beats_the_bound_on_exchangeable_noise(seed, workers, base_rows, sigma):
    # proofs/lbbsp.md, Lemma 3: costs p_i e_i with e exchangeable (a permutation-closed set, scaled to mean 1):
    # the best split's expected time (the unnormalised scenario LP, which sees the whole law) is at least the
    # bound, and at most the proportional rule on p.
    rng = np.random.default_rng(seed)
    noise = _permutation_closed(rng, workers, base_rows, sigma)
    noise /= noise.mean()
    persistent = np.exp(rng.normal(size=workers))
    costs = persistent * noise
    best = scenario_objective(costs, robust_shares(costs, normalise=False), normalise=False)
    bound = causal_lower_bound(persistent, float(noise.max(axis=1).mean()))
    proportional = (1 / persistent) / np.sum(1 / persistent)
    assert bound <= best * (1 + 1e-7) + 1e-12
    assert best <= scenario_objective(costs, proportional, normalise=False) * (1 + 1e-7)


def _member_means(trace: WorkerTrace) -> tuple[float, dict, float]:
    law = make_law(trace, None, 0.0)
    members = {}
    predicted = _predictions(law, "select", 0, members)
    members["select"] = predicted
    bsp = float(np.mean(trace.times.max(axis=1)))
    means = {label: float(np.mean(_run_cpu(law, p)[1])) for label, p in members.items()}
    oracle = float(np.mean(1.0 / np.sum(1.0 / trace.times, axis=1)))  # continuous oracle: n * per-worker x0
    return bsp, means, oracle * trace.n_workers


def test_lemma_2_monte_carlo_no_bank_member_beats_bsp_on_iid_traces():
    # proofs/lbbsp.md, Lemma 2: on i.i.d. traces no causal rule beats BSP in expectation. Over 12 traces the
    # mean relative gain of every member of select's bank (and of select) must not exceed 3 standard errors,
    # while the clairvoyant oracle gains > 1.5x.
    runs = [_member_means(generated("iid", workers=4, iterations=60, seed=seed)) for seed in range(12)]
    for label in runs[0][1]:
        gains = np.array([bsp / means[label] - 1.0 for bsp, means, _ in runs])
        assert gains.mean() <= 3 * gains.std(ddof=1) / np.sqrt(gains.size) + 1e-12, label
    assert min(bsp / oracle for bsp, _, oracle in runs) > 1.5


def test_the_same_statistic_detects_a_persistent_gain():
    # Power check for the test above: on unequal persistent workers every member but the equal split gains.
    runs = [_member_means(generated("persistent", workers=4, iterations=60, seed=seed)) for seed in range(4)]
    for label in runs[0][1]:
        gains = np.array([bsp / means[label] - 1.0 for bsp, means, _ in runs])
        detected = gains.mean() > 3 * gains.std(ddof=1) / np.sqrt(gains.size)
        assert detected == (label != "equal"), label


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 8))
def test_static_split_beats_every_static_split_on_a_grid(seed, iterations):
    rng = np.random.default_rng(seed)
    times = np.exp(rng.normal(size=(iterations, 3)))
    law = make_law(WorkerTrace("t", times, np.arange(iterations), np.arange(3)), 60, 0.0)
    batches = static_split_batches(law)
    assert batches.sum() == 60 and np.all(batches >= 1)
    total = np.mean(np.max(times * batches / 20, axis=1))
    grid = [np.array([a, b, 60 - a - b]) for a in range(1, 59) for b in range(1, 60 - a)]
    best = min(np.mean(np.max(times * g / 20, axis=1)) for g in grid)
    # Rounding the continuous optimum moves each batch by < 1 sample: within one sample's largest cost.
    assert best - 1e-9 <= total <= best + np.max(times) / 20


def test_replay_reports_the_references_and_they_agree_with_the_separate_runs():
    trace = generated("several", workers=5, iterations=80, seed=3)
    result = replay(trace, predictors=("select", "last", "ewma"), gpu=False)
    summary = result.summary()
    references = summary["hindsight_references"]
    assert set(references) == {"best_static_split", "best_bank_member"}
    # The bank's last-value and EWMA 0.5 members are the separately run predictors: the best member is at
    # least as fast as both.
    best = references["best_bank_member"]["speedup"]
    assert best >= summary["speedups"]["lbbsp_cpu[last]"] - 1e-12
    assert best >= summary["speedups"]["lbbsp_cpu[ewma]"] - 1e-12
    for reference in references.values():
        assert reference["speedup"] <= summary["oracle_speedup"] + 1e-12
        assert reference["lbbsp_over_reference_percent"] == pytest.approx(
            100 * (summary["speedup"] / reference["speedup"] - 1))
    assert "hindsight_references" not in replay(trace, predictors=("last",), gpu=False,
                                                references=False).summary()


def test_mixture_limits_endpoints():
    # No persistent part: Lemma 2, nothing to gain (the bound's share is 0 up to the bisection).
    flat = mixture_limits(4, 0.0, 0.5, draws=2, samples=3000, fit_samples=500)["share_of_oracle_gain"]
    assert abs(flat["bound"]["max"]) < 1e-6 and flat["law_aware_split"]["max"] <= 0.02
    # Almost no noise: the proportional rule on p is almost the oracle.
    calm = mixture_limits(4, 0.5, 0.01, draws=2, samples=3000, fit_samples=500)["share_of_oracle_gain"]
    assert calm["proportional_on_p"]["min"] > 0.9 and calm["bound"]["min"] > 0.9
    # In between, on every draw, the fitted split stays below that draw's bound (up to the Monte-Carlo error of
    # its held-out score).
    mixed = mixture_limits(6, 0.3, 0.3, draws=3, samples=4000, fit_samples=800)
    assert len(mixed["per_draw"]) == 3
    for row in mixed["per_draw"]:
        assert row["law_aware_split"] <= row["bound"] + 0.05


def test_cli_limits_json(capsys):
    assert main(["lbbsp", "limits", "--draws", "1", "--workers", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["draws"] == 1 and out["workers"] == 4 and len(out["per_draw"]) == 1
    shares = out["share_of_oracle_gain"]
    assert set(shares) == {"bound", "law_aware_split", "proportional_on_p"}
    row = out["per_draw"][0]
    assert row["bound"] >= row["law_aware_split"] - 0.05  # the held-out score's Monte-Carlo error, as above
    assert row["bound"] >= row["proportional_on_p"] - 1e-9  # the proportional rule's expectation is exact


@pytest.mark.parametrize("argv, message", [
    (["--workers", "1"], "--workers: must be an integer in 2..1000"),
    (["--noise-sigma", "0"], "--noise-sigma: must be a number in (0, 3]"),
    (["--persistent-sigma", "nan"], "--persistent-sigma: must be a number in [0, 3]"),
    (["--draws", "0"], "--draws: must be an integer in 1..1000"),
    (["--workers", "100000"], "--workers: must be an integer in 2..1000"),
    (["--draws", "100001"], "--draws: must be an integer in 1..1000"),
])
def test_cli_limits_bad_input(argv, message, capsys):
    assert main(["lbbsp", "limits", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
