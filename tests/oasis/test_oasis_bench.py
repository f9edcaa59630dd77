"""``primaldual bench oasis``: runs, agrees with its pure-Python reference, prints JSON (no timing asserted)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from primaldual.evaluation.bench.oasis_decisions import same_answer as _same_answer
from primaldual.cli import main
from primaldual.dual import kernel
from primaldual.dual.subroutine import best_schedule
from primaldual.core.generate import generate
from primaldual.oasis.engine import OnlineEngine, arrival_order
from primaldual.oasis.prices import compute_constants


def test_the_reference_agrees_with_the_kernel_along_a_run():
    """The benchmark times the reference against the kernel: they agree bit for bit job by job along an OASiS
    run (paper preset, 12 jobs), with and without the early stop."""
    instance = generate("paper", 5, jobs=12)
    engine = OnlineEngine(instance, compute_constants(instance))
    state = engine.state
    for i in arrival_order(instance):
        arguments = (instance, i, state.worker_prices, state.ps_prices, state.worker_free, state.ps_free)
        for early_stop in (True, False):
            compiled = best_schedule(*arguments, early_stop=early_stop)
            with kernel.using("reference"):
                plain = best_schedule(*arguments, early_stop=early_stop)
            assert _same_answer(compiled, plain)
        engine.decide(i)
    assert engine.decisions


def test_bench_cli_json(capsys):
    assert main(["bench", "oasis", "--quick", "--jobs", "20", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    paper, target = figures["paper"], figures["target"]
    assert paper["jobs"] == 20 and paper["reference_mismatches"] == 0 and paper["reference_jobs"] == 2
    for key in ("decision_ms_median", "decision_ms_p99", "speedup_median", "subroutine_full_ms_median",
                "run_seconds", "oasis_utility", "greedy_utility", "ratio_upper_bound"):
        assert np.isfinite(paper[key])
    assert target["horizon"] == 100 and target["worker_servers"] == 100 and target["max_chunks"] <= 16
    assert np.isfinite(target["decision_ms_median"])


def test_bench_cli_text(capsys):
    assert main(["bench", "oasis", "--quick", "--jobs", "10", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "median" in out and "plain-Python reference" in out and "target size" in out


@pytest.mark.slow  # the quality benchmark end to end (3 s)
def test_quality_benchmark_on_two_tiny_instances():
    """``bench oasis --quality``'s library: every scheduler verifies, RRH is its own reference, no promise
    is broken, OPT/ALG >= 1 against a proven optimum."""
    from primaldual.evaluation.bench.oasis_quality import run_quality

    figures = run_quality(["tiny"], 100, 2, (0.0, 0.1), time_limit=20.0).to_dict()
    data = figures["sets"]["tiny"]
    assert data["seeds"] == [100, 101] and data["opt_proven"] == 2
    for cost in ("0.0", "0.1"):
        rows = data["by_restart_cost"][cost]
        assert rows["rrh"]["vs_rrh_total"] == pytest.approx(1.0)
        assert rows["oasis-lr"]["promises_broken"] == 0 and rows["oasis-p"]["promises_broken"] == 0
        assert rows["rrh"]["promises_broken"] is None
        for row in rows.values():
            assert row["mean_opt_over_alg"] is None or row["mean_opt_over_alg"] >= 1.0 - 1e-6  # None: some ALG = 0
        # The headroom is the bound over RRH: at least every scheduler's total over RRH's.
        headroom = rows["rrh"]["headroom"][0]
        assert headroom >= max(row["vs_rrh_total"] for row in rows.values()) - 1e-9
    assert data["bound_proven_by_restart_cost"] == {"0.0": 2, "0.1": 2}
    # At F > 0 the bound is the start-cost relaxation's, below OPT at F = 0 (Lemma R), above every F-run.
    for instance in data["instances"]:
        (at_zero, _), (at_cost, _) = instance["opt_by_restart_cost"]["0.0"], instance["opt_by_restart_cost"]["0.1"]
        assert at_cost <= at_zero + 1e-9
        assert all(run["utility"] <= at_cost + 1e-9 for run in instance["runs"]["0.1"].values())


def test_compare_lr_cli_json(capsys):
    """``bench oasis --compare-lr``: both figures per instance, every job of oasis-lr timed once."""
    assert main(["bench", "oasis", "--compare-lr", "--seeds", "3", "--jobs", "12", "--repetitions", "2",
                 "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    (row,) = figures["instances"]
    assert row["seed"] == 3 and row["jobs"] == 12 and row["repetitions"] == 2
    for key in ("wall_ratio_median", "cpu_ratio_median", "scheduler_ratio_median", "decision_ms_median",
                "decision_ms_p90", "oasis_decision_ms_median", "floor_seconds", "report_seconds"):
        assert np.isfinite(row[key]) and row[key] >= 0, key
    assert row["wall_ratio_min"] <= row["wall_ratio_median"] <= row["wall_ratio_max"]
    assert figures["wall_ratio_median"] == row["wall_ratio_median"]


@pytest.mark.parametrize("flags, field", [(["--seeds", "x"], "--seeds"), (["--repetitions", "0"], "--repetitions"),
                                          (["--restart-cost", "1"], "--restart-cost"), (["--quality"], "--compare-lr")])
def test_compare_lr_refuses_bad_flags(flags, field, capsys):
    assert main(["bench", "oasis", "--compare-lr", *flags]) == 2
    assert field in capsys.readouterr().err


def test_headroom_share_by_hand():
    """The share of the headroom over RRH, in totals: (9 + 11 - 10 - 10) / (12 + 12 - 20) = 0 and so on."""
    from primaldual.evaluation.bench.oasis_quality import headroom_share

    rrh, bound = np.array([10.0, 10.0]), np.array([12.0, 12.0])
    assert headroom_share(np.array([9.0, 11.0]), rrh, bound) == 0.0
    assert headroom_share(np.array([11.0, 11.0]), rrh, bound) == 0.5
    assert headroom_share(bound, rrh, bound) == 1.0
    assert headroom_share(np.array([9.0, 9.0]), rrh, bound) == -0.5
    assert headroom_share(rrh, rrh, rrh) is None
