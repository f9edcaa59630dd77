"""The function ``primaldual bench lbbsp`` calls: figures present, paper numbers next to ours."""

import pytest

from primaldual.lbbsp.bench import format_benchmark, run_benchmark


@pytest.mark.slow  # the quick benchmark end to end (3.5 s)
def test_quick_benchmark_reports_speedups_and_paper_figures():
    bench = run_benchmark(seed=0, quick=True)
    result = bench.to_dict()
    for name, paper in (("gpu", 54.0), ("cpu", 38.7)):
        scenario = result["scenarios"][name]
        assert scenario["paper_improvement_percent"] == paper
        assert scenario["lbbsp_speedup"] > 1.0 and scenario["oracle_speedup"] >= scenario["lbbsp_speedup"] - 1e-3
        assert scenario["decision_ratio_to_bsp"]["bsp"] == 1.0
        assert set(scenario["mean_iteration_seconds"]) == {"bsp", "lbbsp_gpu", "lbbsp_cpu", "oracle"}
    text = format_benchmark(bench)
    assert "+54.0%" in text and "+38.7%" in text and "gap to oracle" in text
    assert set(result["traces"]) == {"pai:job_1", "pai:job_2", "pai:job_3"}
    for trace in result["traces"].values():
        assert trace["gap_to_oracle_percent"] < 5.0 and trace["share_of_oracle_gain"] >= 0.5
    assert "pai:job_2: LB-BSP (lbbsp_cpu[select])" in text
    _check_the_record_is_flat_and_the_gap_is_the_replays(result["scenarios"]["cpu"])


def _check_the_record_is_flat_and_the_gap_is_the_replays(scenario: dict) -> None:
    """Issue 53 item 13: a scenario's figures are typed parts (setting, gains) and the gap to the oracle is the
    replay's formula; the record the benchmark writes keeps its keys, order and values (one run, shared above)."""
    from primaldual.lbbsp.replay import gap_to_oracle_percent, share_of_gain

    assert list(scenario) == [
        "description", "workers", "global_batch", "iterations", "lbbsp_method", "mean_iteration_seconds",
        "speedup", "lbbsp_speedup", "oracle_speedup", "lbbsp_improvement_percent", "oracle_improvement_percent",
        "paper_improvement_percent", "gap_to_oracle_percent", "share_of_oracle_gain", "decision_seconds",
        "decision_ratio_to_bsp"]
    lbbsp, oracle = scenario["lbbsp_speedup"], scenario["oracle_speedup"]
    assert scenario["gap_to_oracle_percent"] == 100.0 * (oracle / lbbsp - 1.0) == gap_to_oracle_percent(lbbsp, oracle)
    assert scenario["share_of_oracle_gain"] == share_of_gain(lbbsp, oracle)

