"""``reproduce``'s heterogeneous section (issue 64): Gavel's comparison as a check that can fail, its summary lines,
and the quick section run end to end (slow tier)."""

from __future__ import annotations

import copy
import json

import pytest

from primaldual.reproduce.experiments import HETERO_SCHEDULERS
from primaldual.reproduce.hetero_report import hetero_checks, hetero_lines, mean_jct
from primaldual.simulation.scheduler import scheduler_class


def _row(utility: float, jct: list[float]) -> dict:
    return {"ran": True, "verified": True, "utility": utility, "ratio": [1.2, 1.5], "admitted": len(jct),
            "completed": len(jct), "completed_jobs": list(range(len(jct))), "jct": jct,
            "slowdown": [1.0] * len(jct), "jain_slowdown": 1.0, "seconds": 0.1}


RECORD = {"case": "philly:0/x busiest 6 h on v100:1,k80:1", "restart_cost": 0.0, "window": [0, 6], "jobs": 3,
          "slots": 6, "gpus": 16, "opt": {"low": 12.0, "high": 15.0, "width": 0.2, "high_method": "solver",
                                           "time_limited": False, "status": "feasible"},
          "schedulers": {"las": _row(10.0, [4.0, 2.0]), "gavel-las": _row(12.0, [2.0, 1.0, 3.0])}}


def test_every_scheduler_of_the_section_handles_gpu_types():
    assert {"las", "gavel-las", "gavel-ftf", "oasis", "oasis-lr", "oasis-p", "rrh"} <= set(HETERO_SCHEDULERS)
    assert all(scheduler_class(name).handles_gpu_types for name in HETERO_SCHEDULERS)


def test_gavel_s_comparison_passes_and_fails_on_the_mean_jct():
    outcomes = {o.result: o for o in hetero_checks([RECORD])}
    gavel = outcomes["Gavel: awareness lowers mean JCT"]
    assert gavel.passed and "1.5 vs 3.0" in gavel.measured  # jobs 0 and 1, which both complete
    assert outcomes["feasibility (heterogeneous)"].passed and outcomes["OPT bound on heterogeneous"].passed
    slower = copy.deepcopy(RECORD)
    slower["schedulers"]["gavel-las"]["jct"] = [5.0, 5.0, 0.5]  # faster on average, slower on the shared jobs
    failed = {o.result: o for o in hetero_checks([slower])}["Gavel: awareness lowers mean JCT"]
    assert failed.failed and RECORD["case"] in failed.why
    assert mean_jct(RECORD["schedulers"]["las"]) == 3.0 and mean_jct({"ran": False}) is None


def test_summary_lines_give_each_scheduler_s_mean_jct():
    lines = hetero_lines([RECORD])
    assert "## Heterogeneous GPUs (V100, P100, K80)" in lines
    assert "| las | 10.0 ([1.200, 1.500]) | 2 | 3.0 |" in lines
    assert "| gavel-las | 12.0 ([1.200, 1.500]) | 3 | 2.0 |" in lines and hetero_lines([]) == []


@pytest.mark.slow  # about 45 s: the quick case (b436b2's busiest day on v100:5,p100:5,k80:5) at F = 0 and 0.1
def test_the_quick_section_runs_verifies_and_reports(tmp_path, capsys):
    from primaldual.cli import main

    out = tmp_path / "repro"
    code = main(["reproduce", "--quick", "--sections", "hetero", "--out", str(out), "--no-progress", "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and printed["sections"] == ["hetero"]
    outcomes = {o["result"]: o for o in printed["outcomes"]}
    assert outcomes["feasibility (heterogeneous)"]["verdict"] == "PASS"
    assert outcomes["OPT bound on heterogeneous"]["verdict"] == "PASS"
    records = [json.loads(line) for line in (out / "hetero.jsonl").read_text().splitlines()]
    assert [r["restart_cost"] for r in records] == [0.0, 0.1]
    assert set(records[0]["schedulers"]) == set(HETERO_SCHEDULERS)
    assert "## Heterogeneous GPUs (V100, P100, K80)" in (out / "summary.md").read_text()
