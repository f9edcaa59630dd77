"""``reproduce``'s trace section on miniature cases: records, checks that can fail, summary lines, figures,
reuse on a rerun; Jain's index by hand."""

from __future__ import annotations

import copy
import json

import pytest

from primaldual.reproduce.experiments import TraceCase, TraceSettings
from primaldual.reproduce.trace_report import trace_checks, trace_figures, trace_lines, versus_rrh
from primaldual.reproduce.traces import jain_index, run_traces

MINI = TraceSettings(windows=(TraceCase("philly:0/b436b2", busiest=6.0),), whole=(TraceCase("philly:0/23dbec"),),
                     schedulers=("oasis-lr", "rrh", "fifo"), cg_time_limit=10.0, pooled_lp_time_limit=10.0)


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    out = tmp_path_factory.mktemp("traces")
    return out, run_traces(MINI, out / "traces.jsonl", (0.0, 0.1), log=lambda message: None)


def test_jain_index_by_hand():
    assert jain_index([2, 2, 2]) == pytest.approx(1.0)
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_index([1, 3]) == pytest.approx(16 / 20)
    assert jain_index([float("nan"), 1, 1]) == pytest.approx(1.0) and jain_index([]) is None


def test_every_case_at_both_costs_verifies_and_its_bound_holds(traced):
    out, records = traced
    assert [(r["case"], r["restart_cost"]) for r in records] == [
        ("philly:0/b436b2 busiest 6 h", 0.0), ("philly:0/b436b2 busiest 6 h", 0.1),
        ("philly:0/23dbec", 0.0), ("philly:0/23dbec", 0.1)]
    window, whole = records[0], records[2]
    assert window["window"][1] == 6 and window["opt"]["status"] in ("optimal", "feasible")
    assert whole["window"] is None and whole["opt"]["high_method"] in ("standalone", "pooled-lp")
    for record in records:
        assert set(record["schedulers"]) == set(MINI.schedulers)
        for row in record["schedulers"].values():
            assert row["verified"] and row["utility"] <= record["opt"]["high"] * (1 + 1e-9)
            assert row["ratio"][0] >= 1 - 1e-9 and len(row["jct"]) == row["completed"]
    outcomes = {o.result: o for o in trace_checks(records)}
    assert outcomes["feasibility (traces)"].passed and outcomes["OPT bound on traces"].passed
    assert "OPT interval on trace windows" in outcomes


def test_a_bound_below_a_utility_and_an_unverified_schedule_fail(traced):
    _, records = traced
    broken = copy.deepcopy(records)
    broken[2]["opt"]["high"] = 0.5 * broken[2]["schedulers"]["rrh"]["utility"]
    broken[3]["schedulers"]["fifo"]["verified"] = False
    outcomes = {o.result: o for o in trace_checks(broken)}
    assert not outcomes["OPT bound on traces"].passed and "philly:0/23dbec" in outcomes["OPT bound on traces"].why
    assert outcomes["feasibility (traces)"].failed and "fifo" in outcomes["feasibility (traces)"].why


def test_summary_lines_figures_and_the_reading_against_rrh(traced, tmp_path):
    _, records = traced
    text = "\n".join(trace_lines(records))
    assert "## Real arrivals (Philly traces)" in text and "philly:0/23dbec" in text and "Jain" in text
    tally = versus_rrh(records)["oasis-lr"]
    assert len(tally["wins"]) + len(tally["ties"]) + len(tally["losses"]) == len(records)
    best = versus_rrh(records, "best-baseline")["oasis-lr"]  # rrh and fifo are the baselines here
    assert len(best["wins"]) <= len(tally["wins"]) and "Against the best baseline" in text
    figures = trace_figures(records, tmp_path)
    assert sorted(p.name for p in figures) == ["traces-cdf-restart-0.1.png", "traces-cdf-restart-0.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in figures)


def test_a_rerun_reuses_the_proven_cases(traced):
    out, records = traced
    messages = []
    again = run_traces(MINI, out / "traces.jsonl", (0.0, 0.1), log=messages.append)
    recomputed = {m.split(": ", 2)[2] for m in messages}
    assert all(r["opt"]["time_limited"] for r in records if any(r["case"] in m for m in recomputed))
    assert [json.dumps(r["schedulers"]["rrh"]["utility"]) for r in again] == \
        [json.dumps(r["schedulers"]["rrh"]["utility"]) for r in records]


def test_skip_tight_solve_solves_only_an_open_interval(traced):
    from dataclasses import replace

    from primaldual.reproduce.traces import run_case

    _, records = traced
    solved = records[0]  # the same window at cost 0, solved by column generation
    quick = run_case(MINI.windows[0], replace(MINI, skip_tight_solve=True), 0.0)
    assert quick["opt"]["low"] == pytest.approx(solved["opt"]["low"])
    if solved["opt"]["width"] <= 1e-4 and solved["opt"]["high_method"] == "standalone":
        assert quick["opt"]["status"] == "proven by the standalone bound" and quick["opt"]["seconds"] is None
    else:
        assert quick["opt"]["status"] in ("optimal", "feasible")
