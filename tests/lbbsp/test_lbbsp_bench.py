"""The function ``primaldual bench lbbsp`` calls: figures present, paper numbers next to ours."""

from primaldual.lbbsp.bench import format_benchmark, run_benchmark


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
