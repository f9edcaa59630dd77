"""One evaluation pipeline: compare and a sweep record agree on OPT's interval and every ratio; SolveOptions."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.evaluation.bounds import OptInterval, Ratio, safe_ratio, tight
from primaldual.cli import main
from primaldual.evaluation.compare import compare
from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.offline.options import METHODS, SolveOptions
from primaldual.evaluation.pipeline import evaluate
from primaldual.sweep import Spec, run

SCHEDULERS = ("oasis", "fifo", "drf")


# Slow: the test after it checks the same equality through both commands in the fast tier, on another seed.
@pytest.mark.slow
@pytest.mark.parametrize("seed", [11])
def test_compare_and_a_sweep_record_give_the_same_interval_and_ratios(seed):
    record = run(Spec(preset="tiny", seed=seed, schedulers=SCHEDULERS))
    summary = compare(generate("tiny", seed), list(SCHEDULERS), opt=True,
                      solve=Spec(preset="tiny").solve).summary
    assert summary["opt_interval"] == record["opt_interval"]
    assert {row["scheduler"]: row["ratio"] for row in summary["rows"]} == record["ratios"]


@pytest.mark.slow  # a compare and a ratio of the same instance (3 s)
def test_the_cli_json_of_compare_matches_a_one_instance_ratio(tmp_path, capsys):
    assert main(["ratio", "--preset", "tiny", "--seed", "4", "--instances", "1", "--schedulers", "oasis,fifo",
                 "--workers", "1", "--no-progress", "--out", str(tmp_path / "r.jsonl")]) == 0
    capsys.readouterr()
    assert main(["compare", "--preset", "tiny", "--seed", "4", "--schedulers", "oasis,fifo", "--opt", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    record = json.loads((tmp_path / "r.jsonl").read_text())
    assert summary["opt_interval"] == record["opt_interval"]
    assert {row["scheduler"]: row["ratio"] for row in summary["rows"]} == record["ratios"]


def test_without_a_solver_the_interval_holds_every_schedule_and_names_its_ends():
    instance = generate("small", 5)
    evaluation = evaluate(instance, ["oasis", "fifo", "rrh"])
    interval = evaluation.interval
    assert interval.low_method.startswith("online:") and not interval.proven
    assert interval.high == min(interval.upper_candidates.values())
    assert set(interval.upper_candidates) == {"standalone", "oasis_certificate"}
    for name, outcome in evaluation.outcomes.items():
        assert outcome.feasible and outcome.utility <= interval.high * (1 + 1e-9)
        ratio = evaluation.ratios[name]
        assert ratio.lower == pytest.approx(interval.low / outcome.utility)
    # Only the scheduler that offers bounds has a certified ratio; nothing here names it.
    assert [n for n, r in evaluation.ratios.items() if r.certified is not None] == ["oasis"]


def test_interval_and_ratio_round_trip_through_their_dicts():
    interval = OptInterval(3.0, 4.0, "solver", "standalone", False, {"solver": 3.0}, {"standalone": 4.0})
    assert OptInterval.from_dict(json.loads(json.dumps(interval.to_dict()))) == interval
    ratio = Ratio.of(3.0, 4.0, 2.0)
    assert Ratio.from_dict(ratio.to_dict()) == ratio and ratio.point == 1.5 and ratio.upper == 2.0


@given(st.floats(0, 1e6), st.floats(0, 1e6), st.floats(0, 1e6))
def test_ratio_interval_is_ordered_and_unbounded_only_at_zero(low, width, utility):
    ratio = Ratio.of(low, low + width, utility)
    if utility > 0:
        assert ratio.lower <= ratio.upper
    elif low > 0:
        assert ratio.lower is None and ratio.upper is None
    assert ratio.exact == tight(low, low + width)
    assert safe_ratio(0.0, 0.0) == 1.0


# ------------------------------------------------------------------------------------------ SolveOptions


@settings(max_examples=60)
@given(time_limit=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
       mip_gap=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
       threads=st.one_of(st.none(), st.integers(-3, 64)), method=st.sampled_from(METHODS + ("simplex",)))
def test_solve_options_accept_exactly_their_documented_ranges(time_limit, mip_gap, threads, method):
    valid = ((time_limit is None or (math.isfinite(time_limit) and time_limit > 0))
             and (mip_gap is None or (math.isfinite(mip_gap) and 0 <= mip_gap < 1))
             and (threads is None or threads >= 1) and method in METHODS)
    try:
        options = SolveOptions(time_limit=time_limit, mip_gap=mip_gap, threads=threads, method=method)
    except InputError as error:
        assert not valid
        assert all(problem.startswith("--") for problem in error.problems)
    else:
        assert valid and SolveOptions.from_dict(options.to_dict()) == options
        assert options.method == method  # the options reach solve_offline whole, ilp included


def test_the_default_method_is_auto_and_records_name_the_one_that_ran(capsys):
    assert SolveOptions().method == "auto"
    assert main(["compare", "--preset", "tiny", "--seed", "2", "--schedulers", "fifo", "--opt", "--json"]) == 0
    opt = json.loads(capsys.readouterr().out)["opt"]
    assert opt["method"] == "ilp"  # auto resolved by size; "auto" itself never ran
    assert main(["compare", "--preset", "tiny", "--seed", "2", "--schedulers", "fifo", "--opt", "--method", "cg"]) == 0
    out = capsys.readouterr().out
    assert "OPT: " in out and "(cg, highs)" in out and "solver (cg)" in out


@pytest.mark.parametrize("field, value, flag", [("time_limit", 0, "--time-limit"), ("mip_gap", 1.5, "--gap"),
                                                ("threads", 0, "--threads"), ("method", "nope", "--method")])
def test_a_bad_sweep_spec_fails_before_any_work(field, value, flag):
    with pytest.raises(InputError, match=flag):
        Spec(preset="tiny", **{field: value})


def test_compare_refuses_bad_solve_flags(capsys):
    assert main(["compare", "--preset", "tiny", "--gap", "1.5"]) == 2
    assert "--gap: must be a number in [0, 1)" in capsys.readouterr().err


def test_a_slow_step_is_announced_on_stderr_and_a_quick_one_is_not():
    import io
    import time

    from primaldual.commands._progress import slow_steps

    stream = io.StringIO()
    step = slow_steps("compare", after=0.05, stream=stream)
    with step("a quick step"):
        pass
    assert stream.getvalue() == ""
    with step("solving the offline optimum"):
        time.sleep(0.5)  # ten times the threshold
    lines = stream.getvalue().splitlines()
    assert lines[0] == "compare: solving the offline optimum ..."
    assert lines[1].startswith("compare: solving the offline optimum: done in ")


def test_compare_json_keeps_stdout_clean_of_progress(capsys):
    assert main(["compare", "--preset", "tiny", "--seed", "2", "--schedulers", "fifo", "--opt", "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["format"] == "primaldual.comparison"  # one JSON object, nothing else


def test_the_offline_schedule_is_verified_once_and_the_evaluation_keeps_the_certificates_report(monkeypatch):
    # Issue 53 item 12: the certificate verifies the solver's schedule and the pipeline used to verify it again.
    # The result carries the certificate's report; the evaluation's report is that object, equal to a fresh one.
    from primaldual.core import verify as verify_module
    from primaldual.evaluation import pipeline as pipeline_module
    from primaldual.offline import certify as certify_module

    instance = generate("tiny", 11)
    calls = []
    real = verify_module.verify

    def counted(inst, schedule):
        calls.append(schedule.assignments)
        return real(inst, schedule)

    monkeypatch.setattr(certify_module, "verify", counted)
    monkeypatch.setattr(pipeline_module, "verify", counted)
    evaluation = evaluate(instance, ["fifo"], solve=Spec(preset="tiny").solve.replace(mip_start=False))
    offline = evaluation.offline
    assert offline.incumbent_source == "solver" and offline.verification is not None
    assert evaluation.offline_verification is offline.verification
    assert sum(1 for seen in calls if seen == offline.schedule.assignments) == 1
    assert real(instance, offline.schedule).utility == offline.verification.utility == offline.objective
