"""``reproduce``'s trace section on miniature cases: records, checks that can fail, summary lines, figures,
reuse on a rerun; Jain's index by hand."""

from __future__ import annotations

import copy
import json
import math
import re

import pytest

from primaldual.reproduce.experiments import TraceCase, TraceSettings
from primaldual.reproduce.trace_report import trace_checks, trace_figures, trace_lines, versus_rrh
from primaldual.reproduce.traces import jain_index, run_traces
from primaldual.views.figure_data import read_csv

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
    figures = trace_figures(records, tmp_path / "figures")
    assert sorted(p.name for p in figures) == ["traces-cdf-restart-0.1.png", "traces-cdf-restart-0.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in figures)
    # Drawn by the view from a CSV of exactly its numbers, beside a PDF; the CSV holds every completed job.
    for path, caption in figures.items():
        assert path.with_suffix(".pdf").read_bytes()[:4] == b"%PDF"
        data = read_csv(path.with_suffix(".csv"))
        assert data.kind == "trace-cdf" and data.meta["caption"] == caption and "Philly traces" in caption
        chosen = [r for r in records if f"restart-{r['restart_cost']:g}.png" in path.name]
        for name in MINI.schedulers:
            jct = sorted(j for r in chosen for j in r["schedulers"][name]["jct"])
            xs = data.column("x", {"panel": "jct", "scheduler": name})
            assert xs[1:len(jct) + 1] == jct and (xs[0] == jct[0] if jct else math.isnan(xs[0]))
    # The trace figure at restart cost 0 is a headline figure: embedded in summary.md and figures.md with its
    # caption, PDF and CSV, like the others; the one at 0.1 is linked with its PDF and CSV.
    from dataclasses import replace

    from primaldual.reproduce import QUICK, Reproduction, write_summary
    from primaldual.reproduce.index import write_index

    settings = replace(QUICK, name="mini", traces=MINI)
    outcomes = trace_checks(records)
    headline = write_index(tmp_path, settings, outcomes, list(figures))
    assert [p.name for p in headline] == ["traces-cdf-restart-0.png"]
    index = (tmp_path / "figures.md").read_text()
    assert "![traces-cdf-restart-0](figures/traces-cdf-restart-0.png)" in index
    assert "[figures/traces-cdf-restart-0.csv](figures/traces-cdf-restart-0.csv)" in index
    assert "feasibility (traces): **PASS**" in index
    reproduction = Reproduction(tmp_path, outcomes, list(figures), 0.0, 0, 0,
                                extra={"headline": headline, "traces": records,
                                       "captions": {str(p): c for p, c in figures.items()}})
    summary = write_summary(reproduction, settings).read_text()
    embedded = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", summary)
    assert embedded == ["figures/traces-cdf-restart-0.png"]
    assert f"*{figures[tmp_path / 'figures' / 'traces-cdf-restart-0.png']}*" in summary
    linked = re.findall(r"\]\((figures/[^)]+)\)", summary)
    assert "figures/traces-cdf-restart-0.1.png" in linked
    for png in {p for p in linked if p.endswith(".png")}:
        # Every figure summary.md embeds or links has its PDF and CSV beside it, and summary.md links both.
        for suffix in (".pdf", ".csv"):
            assert (tmp_path / png).with_suffix(suffix).is_file() and png[:-4] + suffix in linked


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


@pytest.mark.slow  # a whole quick traces section (7 s)
def test_sections_traces_runs_and_reports_only_the_trace_section(tmp_path, capsys):
    """``reproduce --quick --sections traces`` (about 10 s): only traces.jsonl and the trace figures are made,
    and summary.md, summary.json and figures.md report that section alone, naming it; a rerun reuses the
    records of traces.jsonl."""
    from primaldual.cli import main

    out = tmp_path / "repro"
    command = ["reproduce", "--quick", "--sections", "traces", "--out", str(out), "--no-progress", "--json"]
    code = main(command)
    printed = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and printed["sections"] == ["traces"]
    assert sorted(p.name for p in out.iterdir()) == ["figures", "figures.md", "summary.json", "summary.md",
                                                     "traces.jsonl"]
    records = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    assert {o["result"] for o in printed["outcomes"]} == {o.result for o in trace_checks(records)}
    summary = (out / "summary.md").read_text()
    assert "Sections run: **traces**; not run, so not reported here: ratios, paper, lbbsp, hetero." in summary
    assert "## Real arrivals (Philly traces)" in summary and "## Mean OPT/ALG per set" not in summary
    assert "total utility (mean over seeds)" not in summary and "LB-BSP" not in summary
    assert "sweep records" not in summary and "wall time" in summary
    data = json.loads((out / "summary.json").read_text())
    assert data["sections"] == ["traces"] and data["ratios"] == {} and data["utility"] == {}
    assert [r["case"] for r in data["traces"]] == [r["case"] for r in records]
    assert "--sections traces" in (out / "figures.md").read_text()
    assert all(p.name.startswith("traces-cdf") for p in (out / "figures").iterdir())
    # A rerun reuses every record that no time limit stopped (traces.jsonl only grows by the recomputed ones).
    before = (out / "traces.jsonl").read_text()
    assert main(command) in (0, 1)
    after = (out / "traces.jsonl").read_text()
    assert after.startswith(before) and not (out / "results.jsonl").exists()
    assert after == before or any(r["opt"]["time_limited"] for r in records)
