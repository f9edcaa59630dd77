"""The law-aware reference (an upper reference: it knows the coming CoV) on the CoV law (proofs/lbbsp.md section 5) and ``lbbsp sweep``."""

import json

import numpy as np
import pytest

from primaldual.cli import main
from primaldual.lbbsp.cpu import equal_batches, proportional_batches
from primaldual.lbbsp.law_aware import (cov_law_aware_batches, cov_row_levels, cov_scenarios,
                                        law_aware_batches)
from primaldual.lbbsp.replay import replay
from primaldual.lbbsp.sweep import sweep
from primaldual.lbbsp.traces import cov_times, cov_trace


def test_hand_computed_two_scenario_law():
    # Next costs (1, 1) or (1, 3), each with probability 1/2. For x = worker 0's share, the expected time
    # 0.5 max(x, 1 - x) + 0.5 max(x, 3 (1 - x)) is 1.5 - x on [1/2, 3/4] and x above: minimum 0.75 at x = 3/4.
    batches = law_aware_batches(lambda t: np.array([[1.0, 1.0], [1.0, 3.0]]), iterations=3, global_batch=4)
    assert batches.tolist() == [[3, 1]] * 3


def test_levels_reproduce_the_trace():
    levels, target = cov_row_levels(7, seed=3, max_iterations=50)
    assert np.array_equal(cov_times(levels, target), cov_trace(7, seed=3, max_iterations=50).times)


def test_never_uses_the_coming_draw():
    # The decision at t sees levels[t - 1] only: redrawing the levels from t0 on leaves batches 0..t0 unchanged.
    levels, target = cov_row_levels(4, seed=0, max_iterations=30)
    changed = levels.copy()
    changed[12:] = np.random.default_rng(9).normal(size=changed[12:].shape)
    before = cov_law_aware_batches(levels, target, 640, samples=40)
    after = cov_law_aware_batches(changed, target, 640, samples=40)
    assert np.array_equal(before[:13], after[:13]) and not np.array_equal(before[13:], after[13:])


def test_without_the_schedule_the_rule_uses_the_measured_spread():
    # known_target=False: the decision at t sees target[t - 1] (measured at the barrier), not target[t].
    levels, target = cov_row_levels(4, seed=0, max_iterations=20)
    changed = target.copy()
    changed[10:] = 3.0 - changed[10:]
    before = cov_law_aware_batches(levels, target, 640, samples=30, known_target=False)
    after = cov_law_aware_batches(levels, changed, 640, samples=30, known_target=False)
    assert np.array_equal(before[:11], after[:11]) and not np.array_equal(before[11:], after[11:])
    # At t = 0 nothing was measured: the assumed spread is 0, so every scenario is all ones and the split equal.
    assert before[0].tolist() == [64] * 10


def test_stationary_draws_at_the_first_iteration():
    rng = np.random.default_rng(0)
    draws = cov_scenarios(None, 0.0, 500, rng, workers=4)
    assert np.all(draws == 1.0)  # target CoV 0: no spread whatever the levels
    # With a target, each draw meets it exactly (the generator's own map).
    draws = cov_scenarios(np.zeros(4), 1.2, 200, rng, workers=4)
    spread = draws.std(axis=1, ddof=1) / draws.mean(axis=1)
    assert np.allclose(spread, 1.2, rtol=1e-6)


def test_law_aware_split_beats_simple_rules_out_of_sample():
    # Fresh draws of the same conditional law score the split fitted on 200 draws against the equal split and
    # the proportional rule on the last times: the law-aware split must not lose beyond the Monte-Carlo error.
    levels, target = cov_row_levels(4, seed=0, max_iterations=60)
    times = cov_times(levels, target)
    for t in (20, 40, 59):
        draws = np.random.default_rng(t)
        fitted = law_aware_batches(lambda _: cov_scenarios(levels[t - 1], target[t], 200, draws, workers=10), 1, 640)[0]
        fresh = cov_scenarios(levels[t - 1], target[t], 4000, np.random.default_rng(100 + t), workers=10)
        score = {name: float(np.mean(np.max(fresh * batch, axis=1))) for name, batch in {
            "law_aware": fitted, "equal": equal_batches(10, 640),
            "last": proportional_batches(1.0 / times[t - 1], 640)}.items()}
        assert score["law_aware"] <= 1.01 * min(score["equal"], score["last"])


def test_sweep_rows_agree_with_replay():
    result = sweep("cov", seeds=range(0, 1), jobs=range(4, 6), iterations=40, law_aware_samples=20)
    assert result["traces"] == 2 and [row["job"] for row in result["per_trace"]] == [4, 5]
    for row in result["per_trace"]:
        summary = replay(cov_trace(row["job"], seed=0, max_iterations=40), predictors=("select",),
                         gpu=False).summary()
        assert row["share"] == pytest.approx(summary["share_of_oracle_gain"])
        assert row["oracle_speedup"] == pytest.approx(summary["oracle_speedup"])
        # Recompute the law-aware row from its parts: the rule's batches (20 draws, draws seed 0, the row's
        # schedule) scored under the linear law without overhead, T_t = max_i m_ti x_ti / x0 with x0 = 64.
        trace = cov_trace(row["job"], seed=0, max_iterations=40)
        levels, target = cov_row_levels(row["job"], seed=0, max_iterations=40)
        batches = cov_law_aware_batches(levels, target, 640, samples=20, sample_seed=0)
        speedup = np.mean(trace.times.max(axis=1)) / np.mean(np.max(trace.times * batches / 64, axis=1))
        assert row["law_aware"]["speedup"] == pytest.approx(speedup)
        assert row["law_aware"]["share"] == pytest.approx((speedup - 1) / (row["oracle_speedup"] - 1))
        assert speedup <= row["oracle_speedup"] + 1e-9
    assert result["reaching_half"] == sum(row["share"] >= 0.5 for row in result["per_trace"])
    assert result["summary"]["law_aware"]["reaching_half"] == sum(
        row["law_aware"]["share"] >= 0.5 for row in result["per_trace"])


def test_cli_sweep_json_and_text(capsys, tmp_path):
    assert main(["lbbsp", "sweep", "--kind", "persistent", "--seeds", "500-501", "--iterations", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [row["seed"] for row in out["per_trace"]] == [500, 501] and out["law_aware_samples"] == 0
    assert {"best_bank_member", "best_static_split"} <= set(out["per_trace"][0])
    base = tmp_path / "base.csv"
    rows = [f"{i},{t},{1.0 + i + 0.1 * ((t * (i + 3)) % 7)}" for t in range(30) for i in range(3)]
    base.write_text("worker,iteration,time\n" + "\n".join(rows) + "\n", encoding="utf-8")
    assert main(["lbbsp", "sweep", "--kind", "amplified", "--base", str(base), "--factor", "2", "--seeds", "0",
                 "--global-batch", "30"]) == 0
    text = capsys.readouterr().out
    assert ":x2:seed0" in text and "X = 30" in text and "reaching 0.5" in text


@pytest.mark.parametrize("argv, message", [
    (["--kind", "iid", "--seeds", "a-b"], "--seeds: must be A-B or A with integers"),
    (["--kind", "iid", "--seeds", "3-1"], "--seeds: need 0 <= A <= B"),
    (["--kind", "cov", "--seeds", "0", "--cov-jobs", "98-100"], "--cov-jobs: need 0 <= A <= B <= 99"),
    (["--kind", "iid", "--seeds", "0", "--law-aware-samples", "5"], "--law-aware-samples: only with --kind cov"),
    (["--kind", "cov", "--seeds", "0", "--law-aware-samples", "1"], "--law-aware-samples: must be 0 (off)"),
    (["--kind", "cov", "--seeds", "0", "--sample-seed", "-1"], "--sample-seed: must be an integer in 0..4294967295"),
    (["--kind", "several", "--seeds", "0", "--iterations", "1"], "--iterations: must be an integer in 2..100000"),
    (["--kind", "several", "--seeds", "0", "--workers", "100000"], "--workers: must be an integer in 2..1000"),
    (["--kind", "cov", "--seeds", "0", "--iterations", "100001"], "--iterations: must be an integer in 2..100000"),
    (["--kind", "amplified", "--seeds", "0", "--factor", "0"], "--factor: must be a number in (0, 100]"),
    (["--kind", "amplified", "--seeds", "0", "--global-batch", "5"], "--global-batch: must be an integer >= workers"),
])
def test_cli_sweep_bad_input(argv, message, capsys):
    assert main(["lbbsp", "sweep", *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err and captured.out == ""
