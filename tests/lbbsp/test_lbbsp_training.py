"""Real data-parallel training: same trajectory for BSP and LB-BSP, gradient check, CLI, expectations."""

import json

import numpy as np
import pytest

from primaldual.cli import main
from primaldual.lbbsp.expected import expectations
from primaldual.lbbsp.traces import load_trace
from primaldual.lbbsp.training import (compare, cross_entropy, load_digits_data, softmax_gradient,
                                       straggler_slowdowns)


def test_softmax_gradient_matches_finite_differences():
    features, labels = load_digits_data()
    rng = np.random.default_rng(0)
    weights = rng.normal(0, 0.1, size=(features.shape[1], 10))
    rows = rng.choice(len(labels), 50, replace=False)
    gradient = softmax_gradient(weights, features[rows], labels[rows])
    for (i, j) in [(0, 0), (10, 3), (64, 9)]:
        step = np.zeros_like(weights)
        step[i, j] = 1e-6
        numeric = (cross_entropy(weights + step, features[rows], labels[rows])
                   - cross_entropy(weights - step, features[rows], labels[rows])) / 2e-6
        assert gradient[i, j] == pytest.approx(numeric, rel=1e-4, abs=1e-8)


def test_slowdowns_replay_the_trace_relative_to_the_fastest():
    trace = load_trace("pai:job_1")
    slowdown = straggler_slowdowns(trace, 3, 5, 2.0)
    first = trace.times[0, :3] / trace.times[0, :3].min()
    assert slowdown[0].tolist() == pytest.approx([2.0 * first[0], first[1], first[2]])


@pytest.mark.slow  # real data-parallel training, two runs (4 s)
def test_small_run_same_losses_and_lbbsp_moves_load_off_the_straggler():
    result = compare(2, 12, load_trace("pai:job_1"), straggler_factor=3.0, global_batch=64,
                     per_sample_seconds=0.001)
    # Weighted aggregation: identical SGD trajectory per iteration (digest 5.2) whatever the batches.
    assert result["max_loss_difference_per_iteration"] < 1e-9
    assert result["final_loss"]["bsp"] == pytest.approx(result["final_loss"]["lbbsp"], abs=1e-9)
    assert result["final_batch"]["bsp"] == [32, 32]
    assert result["final_batch"]["lbbsp"][0] < 24          # worker 0 is the 3x straggler
    losses = result["loss_curves"]["bsp"]["loss"]
    assert losses[-1] < losses[0] < np.log(10)


def test_cli_train_bad_input(capsys):
    assert main(["lbbsp", "train", "--workers", "1"]) == 2
    assert "--workers: must be an integer in 2..64" in capsys.readouterr().err
    assert main(["lbbsp", "train", "--straggle", "pai:nope"]) == 2


# Slow: two replays of PAI job 1 (2.3 s). The fast tier replays job 1 the same way and checks its 5% gap to the
# oracle (tests/lbbsp/test_lbbsp_replay.py, test_pai_jobs_within_5_percent_and_half_the_oracle_gain[1]).
@pytest.mark.slow
def test_expectations_replay_checks_hold():
    checks = expectations()
    assert len(checks) == 10
    for check in checks[:2]:
        measured, ok = check.check()
        assert ok, (check.name, measured)


@pytest.mark.benchmark
def test_cli_train_must_show(capsys):
    assert main(["lbbsp", "train", "--workers", "4", "--iterations", "60", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["wall_clock_seconds"]) == {"bsp", "lbbsp"} and set(out["final_loss"]) == {"bsp", "lbbsp"}
