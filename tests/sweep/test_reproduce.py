"""``reproduce``: every figure and summary.md on miniature settings, checks that can fail, exit codes."""

from __future__ import annotations

import copy
import json

import pytest

from primaldual.reproduce import (
    BASELINES, SCHEDULERS, Outcome, Settings, lbbsp_checks, paper_checks, ratio_checks, reproduce, restart_checks,
)

MINI = Settings(
    name="mini",
    tiny_instances=3,
    small_instances=1,
    small_time_limit=60.0,
    paper_jobs=(8, 16),
    paper_seeds=(0,),
    paper_jobs_without_dorm=(24,),
    capacity_jobs=8,
    capacity_scales=(0.5, 1.0),
    capacity_seeds=(0,),
    lbbsp_seeds=(0,),
    lbbsp_quick=True,
    paper_opt=True,
    paper_time_limit=60.0,
)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The miniature's ``ratio-tiny`` records at both restart costs alone (seconds, not minutes): enough for the
    checks that read only those, so they stay in the fast tier. Returns the folder of ``results.jsonl``."""
    from primaldual.reproduce.experiments import experiment_specs
    from primaldual.sweep import sweep

    out = tmp_path_factory.mktemp("reproduce-tiny")
    specs = [spec for spec in experiment_specs(MINI) if spec.label.startswith("ratio-tiny")]
    assert {spec.label for spec in specs} == {"ratio-tiny", "ratio-tiny-restart-0.1"}
    sweep(specs, out / "results.jsonl", executor=_Inline(), progress=False)
    return out


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    messages = []
    result = reproduce(out, settings=MINI, workers=2, progress=False, log=messages.append)
    return out, result, messages


@pytest.mark.slow  # reads the miniature reproduction (2 min to compute, once per module)
def test_every_figure_and_the_summary_are_written(mini):
    out, result, messages = mini
    names = sorted(p.name for p in result.figures)
    headline = {
        "lbbsp-iteration-time.png",
        "ratio-small-small-ratios.png",
        "ratio-tiny-tiny-ratios.png",
        "utility-vs-capacity-paper-utility-vs-capacity_scale.png",
        "utility-vs-jobs-paper-utility-vs-jobs.png",
        "utility-vs-jobs-paper-opt-band.png",
        "ratio-tiny-restart-0.1-tiny-ratios.png",
        "utility-vs-jobs-restart-0.1-paper-utility-vs-jobs.png",
        "utility-vs-capacity-restart-0.1-paper-utility-vs-capacity_scale.png",
    }
    assert headline <= set(names)
    # The rest are the distribution figures drawn from the records' per-job outcomes, one set per group.
    distributions = ("jct-cdf.png", "fairness.png", "utility-vs-standalone.png", "utilisation.png", "-ratios.png",
                     "-utility-vs-jobs.png", "-utility-vs-capacity_scale.png")
    assert all(name.endswith(distributions) for name in set(names) - headline)
    assert any(name.startswith("ratio-tiny") and name.endswith("jct-cdf.png") for name in names)
    for path in result.figures:
        assert path.read_bytes()[:4] == b"\x89PNG"
    summary = (out / "summary.md").read_text()
    assert "Settings: **mini**" in summary and "| result | expected | measured | verdict |" in summary
    for outcome in result.outcomes:
        assert f"| {outcome.result} | {outcome.expected} | {outcome.measured} | {outcome.verdict} |" in summary
    lbbsp = json.loads((out / "lbbsp.json").read_text())
    assert set(lbbsp["0"]["scenarios"]) == {"gpu", "cpu"}
    assert result.records == 2 * (3 + 1 + 3 + 2) and result.computed == result.records
    # Every scheduler, the three RRH readings among them, in every record; OPT on the paper preset by column
    # generation, and only at restart cost 0 (its bound does not depend on restart costs).
    records = _records(out)
    assert all(set(r["schedulers"]) | {"dorm"} == set(SCHEDULERS) for r in records)
    assert {"rrh-full-reward", "rrh-nonpreemptive", "oasis-lr", "oasis-p", "greedy"} <= set(BASELINES + SCHEDULERS)
    paper = [r for r in records if r["spec"]["label"] == "utility-vs-jobs"]
    assert paper and all(r["opt"]["method"] == "cg" for r in paper)
    assert all(not r["opt"]["computed"] for r in records if r["spec"]["label"] == "utility-vs-jobs-restart-0.1")
    assert "## Mean OPT/ALG per set" in summary and "start-cost relaxation" in summary
    headline = result.extra["headline"]
    assert {p.name for p in headline} >= {"ratio-tiny-tiny-ratios.png", "utility-vs-jobs-paper-utility-vs-jobs.png",
                                         "lbbsp-iteration-time.png"}
    for path in result.figures:
        # Every figure has its PDF and the CSV of its numbers beside it; the headline ones are embedded with
        # their caption, the rest linked.
        assert path.with_suffix(".pdf").read_bytes()[:4] == b"%PDF" and path.with_suffix(".csv").is_file()
        if path in headline:
            assert f"![{path.stem}]({path.relative_to(out)})\n\n*" in summary, path.name
        else:
            assert f"- [{path.stem}]({path.relative_to(out)})" in summary, path.name
    index = (out / "figures.md").read_text()
    assert index.count("- the papers: ") == len(headline) and "primaldual plot --from-csv" in index
    assert "T = 300 slots" in index and "38.7%" in index
    data = json.loads((out / "summary.json").read_text())
    assert data["format"] == "primaldual.reproduction" and "oasis-lr" in data["distributions"]["ratio-tiny"]["schedulers"]
    assert any(o["result"].startswith("LB-BSP lbbsp_replay") for o in data["outcomes"])


@pytest.mark.slow  # reads the miniature reproduction (2 min to compute, once per module)
def test_the_artifact_checks_hold_on_the_miniature(mini):
    _, result, _ = mini
    expectations = {o.result: o for o in result.outcomes if o.kind == "expectation"}
    for name in ("OPT on tiny", "OASiS certificate on tiny", "feasibility (tiny)", "OPT on small",
                 "OASiS certificate on small", "feasibility (small)", "feasibility (paper, jobs)",
                 "OASiS certificate at scale (jobs, paper)", "feasibility (paper, capacity_scale)",
                 "feasibility (tiny, restart 0.1)", "OPT's upper end bounds tiny, restart 0.1",
                 "LB-BSP lbbsp_replay_job_1_speedup"):
        assert expectations[name].passed, expectations[name]
    assert any(o.kind == "paper" for o in result.outcomes)


@pytest.mark.slow  # reads the miniature reproduction (2 min to compute, once per module)
def test_rerun_reuses_every_record(mini):
    out, first, _ = mini
    again = reproduce(out, settings=MINI, workers=1, progress=False, log=lambda message: None)
    assert again.computed == 0 and again.records == first.records
    assert [o.measured for o in again.outcomes if "LB-BSP" not in o.result and "lbbsp" not in o.result.lower()] == [
        o.measured for o in first.outcomes if "LB-BSP" not in o.result and "lbbsp" not in o.result.lower()
    ]


def _records(out):
    from primaldual.sweep.records import read_records

    return list(read_records(out / "results.jsonl").values())


def test_a_certificate_below_opt_fails(tiny_run):
    out = tiny_run
    tiny = [copy.deepcopy(r) for r in _records(out) if r["spec"]["label"] == "ratio-tiny"]
    assert all(o.passed for o in ratio_checks(tiny) if o.result == "OASiS certificate on tiny")
    tiny[1]["opt_interval"]["upper_candidates"]["oasis_certificate"] = tiny[1]["opt_interval"]["low"] * 0.9
    outcome = next(o for o in ratio_checks(tiny) if o.result == "OASiS certificate on tiny")
    assert not outcome.passed and outcome.measured.startswith("2/3 hold")


def test_an_infeasible_schedule_fails(tiny_run):
    out = tiny_run
    tiny = [copy.deepcopy(r) for r in _records(out) if r["spec"]["label"] == "ratio-tiny"]
    tiny[0]["schedulers"]["fifo"]["feasible"] = False
    outcome = next(o for o in ratio_checks(tiny) if o.result == "feasibility (tiny)")
    assert not outcome.passed


@pytest.mark.slow  # reads the miniature reproduction (2 min to compute, once per module)
def test_one_seed_never_reproduces_a_claim_and_a_bound_breach_fails(mini):
    out, _, _ = mini
    jobs = [copy.deepcopy(r) for r in _records(out) if r["spec"]["label"] == "utility-vs-jobs"]
    outcomes = {o.result: o for o in paper_checks(jobs, "jobs")}
    assert outcomes["OASiS certificate at scale (jobs, paper)"].passed
    jobs[0]["schedulers"]["drf"]["utility"] = jobs[0]["schedulers"]["oasis"]["report"]["certificate"]["dual_objective"] * 1.5
    outcomes = {o.result: o for o in paper_checks(jobs, "jobs")}
    # One seed per point gives no interval: the claims cannot be REPRODUCED (tests/sweep/test_verdicts.py).
    for name in ("paper: oasis best (jobs)", "variant: oasis-lr best (jobs)"):
        assert outcomes[name].verdict in ("TIE", "NOT REPRODUCED") and not outcomes[name].passed
    assert outcomes["paper: oasis best (jobs)"].kind == "paper" and outcomes["variant: oasis-lr best (jobs)"].kind == "variant"
    assert not outcomes["OASiS certificate at scale (jobs, paper)"].passed


def test_a_utility_above_the_start_cost_relaxation_fails(tiny_run):
    out = tiny_run
    tiny = [copy.deepcopy(r) for r in _records(out) if r["spec"]["label"] == "ratio-tiny-restart-0.1"]
    # OPT's upper end: the exact restart model's where it proved OPT, else the start-cost relaxation's.
    assert all(r["opt"]["relaxation"] is None or r["opt"]["relaxation"]["name"] == "start-cost" for r in tiny)
    name = "OPT's upper end bounds tiny"
    assert next(o for o in restart_checks(tiny, "tiny") if o.result == name).passed
    tiny[0]["schedulers"]["rrh"]["utility"] = tiny[0]["opt_interval"]["high"] * 1.01
    outcome = next(o for o in restart_checks(tiny, "tiny") if o.result == name)
    runs = sum(len(r["schedulers"]) for r in tiny)  # every scheduler of every record (14 each since issue 52)
    assert not outcome.passed and outcome.measured.startswith(f"{runs - 1}/{runs}")


def test_the_rrh_readings_are_rrh_with_their_parameters():
    from primaldual.core.generate import generate
    from primaldual.reproduce.readings import READINGS
    from primaldual.simulation.scheduler import make_scheduler
    from primaldual.simulation.simulator import simulate

    instance = generate("small", seed=3)
    for name, fixed in READINGS.items():
        assert simulate(instance, name).utility == simulate(instance, make_scheduler("rrh", **fixed)).utility
        with pytest.raises(ValueError, match="fixes"):
            make_scheduler(name, **fixed)


def test_lbbsp_checks_fail_without_a_speedup():
    run = {"scenarios": {"cpu": {
        "lbbsp_speedup": 1.0, "oracle_speedup": 1.2, "paper_improvement_percent": 38.7, "lbbsp_method": "lbbsp_cpu",
    }}}
    outcomes = {o.result: o for o in lbbsp_checks({"0": run})}
    assert not outcomes["LB-BSP faster than BSP (cpu)"].passed
    assert outcomes["oracle bounds LB-BSP (cpu)"].passed
    assert outcomes["paper: LB-BSP gain (cpu)"].verdict == "NOT REPRODUCED"


def test_outcome_verdicts():
    assert Outcome("a", "b", "c", True).verdict == "PASS"
    assert Outcome("a", "b", "c", False).verdict == "FAIL"
    assert Outcome("a", "b", "c", True, kind="paper").verdict == "REPRODUCED"
    assert Outcome("a", "b", "c", False, kind="paper", tie=True).verdict == "TIE"
    assert Outcome("a", "b", "c", False, kind="variant").verdict == "NOT REPRODUCED"


def test_reproduce_cli_bad_input(capsys, tmp_path):
    from primaldual.cli import main

    assert main(["reproduce", "--quick", "--out", str(tmp_path / "x"), "--address", "tcp://127.0.0.1:1"]) == 2
    assert "--address: only meaningful with --executor dask" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert main(["reproduce", "--quick", "--out", str(tmp_path / "x"), "--restart-cost", "1.5"]) == 2
    assert "--restart-cost: must be a number in [0, 1)" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert main(["reproduce", "--quick"]) == 2  # --out may come from --config, so it is checked after reading it
    assert "--out: required" in capsys.readouterr().err


@pytest.mark.parametrize("value, words", [
    ("", "--sections: an empty list"), ("foo", "--sections: must list sections among ratios, paper, lbbsp, traces"),
    ("traces,", "--sections: an empty entry in 'traces,'"), (" , ", "--sections: an empty entry in ' , '"),
    ("ratios,figures", "--sections: must list sections among ratios, paper, lbbsp, traces"),
    ("traces,ratios,traces", "--sections: listed twice: traces"),
    ("ratios, paper", "--sections: ' paper' has spaces around it")])
def test_reproduce_cli_refuses_a_bad_sections_list(value, words, capsys, tmp_path):
    from primaldual.cli import main

    assert main(["reproduce", "--quick", "--out", str(tmp_path / "x"), "--sections", value]) == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "x").exists()


def test_sections_parse_from_the_flag_and_the_config_file(tmp_path, capsys):
    from primaldual.cli import build_parser
    from primaldual.commands._config import apply_config
    from primaldual.commands.reproduce import parse_sections
    from primaldual.reproduce import SECTIONS, ordered_sections

    parser = build_parser()
    args = parser.parse_args(["reproduce", "--out", "x"])
    assert parse_sections(args.sections) == tuple(SECTIONS) == ("ratios", "paper", "lbbsp", "traces", "hetero")
    args = parser.parse_args(["reproduce", "--out", "x", "--sections", "traces,ratios"])
    assert parse_sections(args.sections) == ("traces", "ratios")
    assert ordered_sections(("traces", "ratios")) == ("ratios", "traces")  # they run in SECTIONS' order
    with pytest.raises(ValueError, match="ratios, paper, lbbsp, traces"):
        ordered_sections(("figures",))
    config = tmp_path / "exp.toml"
    for text in ('sections = "lbbsp,traces"', 'sections = ["lbbsp", "traces"]'):
        config.write_text(text + "\n")
        args = parser.parse_args(["reproduce", "--out", "x", "--config", str(config)])
        assert parse_sections(apply_config(args, args.parser).sections) == ("lbbsp", "traces")
    config.write_text('sections = ["traces", "figures"]\nout = "x"\n')
    from primaldual.cli import main

    assert main(["reproduce", "--config", str(config)]) == 2
    assert "--sections: must list sections among" in capsys.readouterr().err


def test_experiment_specs_of_a_section_are_that_sections_labels():
    from primaldual.reproduce.experiments import experiment_specs, spec_section

    everything = experiment_specs(MINI)
    ratios = experiment_specs(MINI, sections=("ratios",))
    paper = experiment_specs(MINI, sections=("paper",))
    assert ratios and paper and len(ratios) + len(paper) == len(everything)
    assert {spec.label for spec in ratios} == {"ratio-tiny", "ratio-small", "ratio-tiny-restart-0.1",
                                               "ratio-small-restart-0.1"}
    assert all(spec_section(spec.label) == "paper" and spec.preset == "paper" for spec in paper)
    assert experiment_specs(MINI, sections=("traces", "lbbsp")) == []


def test_a_time_limited_solve_is_inconclusive_not_a_failure(tiny_run):
    out = tiny_run
    tiny = [copy.deepcopy(r) for r in _records(out) if r["spec"]["label"] == "ratio-tiny"]
    tiny[0]["opt"].update(status="feasible", time_limited=True)
    outcome = next(o for o in ratio_checks(tiny) if o.result == "OPT on tiny")
    assert not outcome.passed and outcome.inconclusive and outcome.verdict == "INCONCLUSIVE (time limit)"
    assert not outcome.failed
    # A solve that ended without proving optimality for another reason is a failure.
    tiny[0]["opt"].update(status="feasible", time_limited=False)
    outcome = next(o for o in ratio_checks(tiny) if o.result == "OPT on tiny")
    assert outcome.verdict == "FAIL" and outcome.failed


def test_a_time_limited_record_is_recomputed_on_the_next_run(tmp_path):
    from primaldual.sweep.records import ResultsFile, read_records
    from primaldual.reproduce import time_limited
    from primaldual.sweep import Spec, deterministic_part, sweep

    specs = [Spec(preset="tiny", seed=seed, schedulers=("fifo",), opt=False) for seed in (1, 2)]
    path = tmp_path / "r.jsonl"
    first = sweep(specs, path, executor=_Inline(), progress=False)
    stale = dict(first.records[0], opt={"computed": True, "status": "feasible", "time_limited": True})
    ResultsFile(path).drop([stale["key"]])
    with ResultsFile(path) as results:
        results.append(stale)
    again = sweep(specs, path, executor=_Inline(), progress=False, redo=time_limited)
    assert again.computed == 1 and again.skipped == 1
    assert [deterministic_part(r) for r in again.records] == [deterministic_part(r) for r in first.records]
    assert not time_limited(read_records(path)[stale["key"]])


class _Inline:
    """An executor that runs each task at once in this process (concurrent.futures protocol)."""

    def submit(self, fn, *args):
        from concurrent.futures import Future

        future = Future()
        future.set_result(fn(*args))
        return future
