"""Verdicts that cannot flatter: "A beats B" needs a margin and an interval that excludes 0; ties are TIE;
an uncontended point is not judged; one seed is never a win; the LB-BSP gain has a tolerance inside the effect."""

from __future__ import annotations

import math

import pytest

from primaldual.reproduce.checks import best_claim
from primaldual.reproduce.claims import BEATS_MARGIN, compare_all, judge
from primaldual.reproduce.experiments import BASELINES
from primaldual.reproduce.lbbsp import GAIN_TOLERANCE, lbbsp_checks
from primaldual.sweep.records import typed
from primaldual.sweep.statistics import paired_advantage, t_interval


def _records(utilities: dict[int, dict[str, list[float]]]):
    """One record per (jobs, seed): ``utilities[jobs][name][seed]``."""
    out = []
    for jobs, row in utilities.items():
        seeds = len(next(iter(row.values())))
        for seed in range(seeds):
            out.append({"key": f"{jobs}-{seed}", "spec": {"preset": "paper", "jobs": jobs, "seed": seed},
                        "opt": {}, "ratios": {},
                        "schedulers": {name: {"utility": values[seed], "feasible": True}
                                       for name, values in row.items()}})
    return typed(out)


def _row(oasis, others):
    return {"oasis": oasis, **{name: others for name in BASELINES}}


def test_the_t_interval_matches_a_hand_computation():
    interval = t_interval([1.0, 2.0, 3.0])
    # mean 2, s = 1, t_{0.975, 2} = 4.302653: half-width 4.302653 / sqrt(3)
    assert interval.mean == 2.0 and interval.high - 2.0 == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert t_interval([5.0]).low == t_interval([5.0]).high == 5.0 and not t_interval([5.0]).excludes_zero()


def test_a_win_needs_the_margin_and_an_interval_excluding_zero():
    assert judge(paired_advantage([110, 111, 109], [100, 100, 100])) == "win"
    assert judge(paired_advantage([100.5, 100.6, 100.4], [100, 100, 100])) == "tie"  # within the margin
    assert judge(paired_advantage([150, 60, 120], [100, 100, 100])) == "tie"  # the interval holds 0
    assert judge(paired_advantage([200.0], [100.0])) == "tie"  # one seed: no interval, never a win
    assert judge(paired_advantage([90, 89, 91], [100, 100, 100])) == "loss"
    assert BEATS_MARGIN <= 0.01


def test_an_uncontended_point_is_a_tie_not_a_win():
    records = _records({100: _row([5.0, 6.0, 7.0], [5.0, 6.0, 7.0])})
    claim = best_claim(records, "jobs", "oasis")
    assert claim.verdict == "TIE" and not claim.passed and "1 uncontended" in claim.measured


def test_the_claim_is_reproduced_only_where_every_baseline_is_beaten():
    win = {100: _row([5.0, 6.0, 7.0], [5.0, 6.0, 7.0]), 300: _row([120.0, 130.0, 125.0], [100.0, 101.0, 99.0])}
    assert best_claim(_records(win), "jobs", "oasis").verdict == "REPRODUCED"
    close = {300: _row([100.5, 101.5, 99.5], [100.0, 101.0, 99.0])}  # +0.5%: inside the 1% margin
    assert best_claim(_records(close), "jobs", "oasis").verdict == "TIE"
    lose = {300: {**_row([120.0, 130.0, 125.0], [100.0, 101.0, 99.0]), "rrh": [140.0, 150.0, 145.0]}}
    claim = best_claim(_records(lose), "jobs", "oasis")
    assert claim.verdict == "NOT REPRODUCED" and "over rrh at jobs = 300" in claim.measured


def test_the_variant_is_its_own_line():
    row = {**_row([120.0, 130.0, 125.0], [100.0, 101.0, 99.0]), "oasis-lr": [90.0, 91.0, 89.0]}
    records = _records({300: row})
    paper, variant = best_claim(records, "jobs", "oasis"), best_claim(records, "jobs", "oasis-lr")
    assert paper.kind == "paper" and paper.result.startswith("paper: oasis best")
    assert variant.kind == "variant" and variant.verdict == "NOT REPRODUCED"
    comparisons, contended, _ = compare_all(records, "jobs", "oasis", BASELINES)
    assert contended == 1 and {c.baseline for c in comparisons} == set(BASELINES)


def test_the_lbbsp_gain_tolerance_is_inside_the_effect():
    def runs(speedups):
        return {str(k): {"scenarios": {"cpu": {"lbbsp_speedup": s, "oracle_speedup": s + 0.1,
                                               "paper_improvement_percent": 38.7, "lbbsp_method": "lbbsp_cpu"}}}
                for k, s in enumerate(speedups)}

    def claim(speedups):
        return next(o for o in lbbsp_checks(runs(speedups)) if o.kind == "paper")

    assert GAIN_TOLERANCE < 1.0
    assert claim([1.38, 1.39, 1.40]).verdict == "REPRODUCED"
    # 58%: once "the same order" (within 0.5x-2x), now a miss.
    assert claim([1.58, 1.59, 1.57]).verdict == "NOT REPRODUCED"
    assert claim([1.39]).verdict == "NOT REPRODUCED"  # one seed: no interval


def test_the_t_quantile_beyond_the_table_continues_it():
    from primaldual.sweep.statistics import t_quantile

    assert t_quantile(31) == 2.042272 and t_quantile(32) == pytest.approx(2.039513, abs=1e-6)
    assert t_quantile(101) == pytest.approx(1.983972, abs=1e-6) and t_quantile(10**6) == pytest.approx(1.959964, abs=1e-5)


def test_an_infinite_worst_prints_as_json(tmp_path, capsys, monkeypatch):
    # A sweep where a scheduler earns nothing on some instance: worst is inf, printed as null beside the count.
    import json

    from primaldual.commands import ratio
    from primaldual.sweep.summary import summarize

    record = {"opt": {"status": "optimal"}, "schedulers": {"fifo": {"utility": 0.0}},
              "ratios": {"fifo": {"point": None, "lower": None, "upper": None}}}

    class Result:
        records, computed, skipped = [record], 1, 0

    monkeypatch.setattr(ratio, "run_sweep", lambda specs, out, args: Result())
    assert summarize([record])["schedulers"]["fifo"]["worst"] == math.inf
    from primaldual.cli import main

    assert main(["ratio", "--preset", "tiny", "--instances", "1", "--no-opt", "--out", str(tmp_path / "r.jsonl"),
                 "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["schedulers"]["fifo"]
    assert row["worst"] is None and row["unbounded"] == 1
