"""Trace input and paths (issue 43): no traceback, no hang, never an input overwritten, one line per refusal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from primaldual.cli import main
from primaldual.core.numerals import read_integer, read_number
from primaldual.traces import read_csv, read_gavel

LINE7 = "ResNet-50 (batch size 128)\tcd x && python3 main.py\t--num_steps\t1\t{steps}\t{arrival}\t{gpus}\n"


def refused(capsys, argv, expected: str) -> str:
    """Exit 2 with one line of at most 300 characters holding ``expected``; returns the line."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:  # argparse's own refusals (a flag's type) exit from inside the parser
        code = stop.code
    assert code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) <= 300, lines
    assert expected in lines[0], lines[0]
    return lines[0]


# ------------------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("text", ["1_000", "\uff11\uff12", "\u0661\u0662", "0x10", "1e", "--1", ""])
def test_only_ascii_decimal_numbers_are_read(text):
    assert read_number(text) is None
    assert read_integer(text) is None


@given(st.integers(-10**30, 10**30))
def test_every_ascii_integer_reads_back(value):
    assert read_integer(str(value)) == value
    assert read_number(str(value)) == float(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_repr_reads_back(value):
    assert read_number(repr(value)) == value


@pytest.mark.parametrize("field,text", [("steps", "1_000"), ("arrival", "\uff11\uff12"), ("gpus", "\u0661")])
def test_a_gavel_field_in_other_digits_is_refused(field, text):
    values = {"steps": 1000, "arrival": 0, "gpus": 1, field: text}
    with pytest.raises(Exception, match="ASCII decimal"):
        read_gavel(LINE7.format(**values), "t.trace")


@pytest.mark.parametrize("argv", [
    ["trace", "busiest", "philly:0/23dbec", "--hours", "1_0"],
    ["trace", "busiest", "philly:0/23dbec", "--seed", "\uff10"],
    ["trace", "import", "philly:0/23dbec", "--window", "1_0:5", "-o", "x.json"],
    ["trace", "import", "philly:0/23dbec", "--utility", "step:slack=1_5", "-o", "x.json"],
    ["generate", "--jobs", "1_0"],
])
def test_a_flag_in_other_digits_is_refused(capsys, tmp_path, argv):
    refused(capsys, [a.replace("x.json", str(tmp_path / "x.json")) for a in argv], "ASCII decimal")


# ------------------------------------------------------------------------------------------- paths


def _instance(tmp_path, capsys) -> str:
    trace = tmp_path / "t.trace"
    trace.write_text(LINE7.format(steps=1000, arrival=0, gpus=1))
    path = tmp_path / "i.json"
    assert main(["trace", "import", str(trace), "-o", str(path)]) == 0
    capsys.readouterr()
    return str(path)


@pytest.mark.parametrize("argv", [
    ["trace", "import", "{long}", "-o", "x.json"], ["trace", "busiest", "{long}"],
    ["trace", "import", "philly:0/23dbec", "-o", "{long}"], ["run", "{instance}", "--scheduler", "rrh", "-o", "{long}"],
    ["verify", "{long}", "{long}"], ["solve", "{instance}", "-o", "{long}"],
])
def test_a_name_longer_than_255_bytes_is_refused_by_every_command(capsys, tmp_path, argv):
    values = {"long": str(tmp_path / ("a" * 300 + ".json")), "instance": _instance(tmp_path, capsys)}
    argv = [a.format(**values).replace("x.json", str(tmp_path / "x.json")) for a in argv]
    refused(capsys, argv, "at most 255 bytes, got one of 305 bytes")


@pytest.mark.parametrize("argv", [
    ["trace", "import", "{trace}", "-o", "{trace}"],
    ["run", "{instance}", "--scheduler", "rrh", "-o", "{instance}"],
    ["run", "{instance}", "--scheduler", "rrh", "-o", "{folder}/new/../i.json"],
    ["solve", "{instance}", "-o", "{instance}"],
    ["solve", "{instance}", "--write-mps", "{instance}"],
    ["trace", "import", "{trace}", "-o", "{link}"],
])
def test_an_output_naming_an_input_is_refused_and_the_input_kept(capsys, tmp_path, argv):
    instance = _instance(tmp_path, capsys)
    (tmp_path / "link.trace").symlink_to(tmp_path / "t.trace")
    values = {"trace": str(tmp_path / "t.trace"), "instance": instance, "folder": str(tmp_path),
              "link": str(tmp_path / "link.trace")}
    before = {name: (tmp_path / name).read_bytes() for name in ("t.trace", "i.json")}
    refused(capsys, [a.format(**values) for a in argv], "is also the input")
    assert {name: (tmp_path / name).read_bytes() for name in before} == before


# ------------------------------------------------------------------------------------------- trace files

CSV_HEADER = "job,arrival_seconds,gpus,duration_seconds"


@pytest.mark.parametrize("name,content,expected", [
    ("long.csv", CSV_HEADER + "\n" + "x" * 200_000 + ",0,1,3600\n", "job, model: at most 999 characters"),
    ("head.csv", CSV_HEADER + "," + "y" * 200_000 + "\n", "unknown column(s) 'yyyy"),
    ("empty.trace", "", "no jobs"), ("blank.trace", "\n \n\n", "no jobs"), ("header.csv", CSV_HEADER + "\n", "no jobs"),
    ("tabs.trace", "\t\t\t\t\t\t\n", "job_type: must not be empty"),
    ("tiny.csv", CSV_HEADER + "\na,0,1,1e-300\n", "tiny.csv:2: duration_seconds: must be a number in [1e-9, 1e9]"),
    ("both.csv", CSV_HEADER + ",steps,model\na,0,1,3600,1000,ResNet-50 (batch size 128)\n",
     "both.csv:2: duration_seconds, steps: both given"),
])
@pytest.mark.parametrize("command", [["trace", "import", "-o", "{out}"], ["trace", "busiest"]])
def test_a_bad_trace_file_is_one_line_for_import_and_busiest(capsys, tmp_path, name, content, expected, command):
    path = tmp_path / name
    path.write_text(content)
    argv = [a.format(out=tmp_path / "o.json") for a in command[:2] + [str(path)] + command[2:]]
    refused(capsys, argv, expected)
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("source,expected", [
    ("philly:0/../../etc", "one slash, no empty part"), ("philly:0/23dbec/", "one slash, no empty part"),
    ("philly:0//23dbec", "one slash, no empty part"), ("/dev/null", "not a regular file"),
    ("{folder}", "is a folder"),
])
def test_a_bad_source_is_named_for_what_it_is(capsys, tmp_path, source, expected):
    refused(capsys, ["trace", "busiest", source.format(folder=tmp_path)], expected)


def test_seed_with_a_trace_file_is_refused(capsys, tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text(LINE7.format(steps=1000, arrival=0, gpus=1))
    refused(capsys, ["trace", "import", trace, "--seed", "3", "-o", tmp_path / "o.json"],
            "--seed: applies to a packaged name")


# ------------------------------------------------------------------------------------------- busiest


def _records(jobs):
    from primaldual.traces.records import TraceJob

    return [TraceJob(name=f"j{n}", arrival_seconds=a, gpus=g, duration_seconds=d, line=n + 1)
            for n, (a, g, d) in enumerate(jobs)]


@given(st.lists(st.tuples(st.sampled_from([0.0, 1800.0, 3600.0, 7200.0, 9000.0, 36000.0, 86400.0, 90000.0]),
                          st.integers(1, 8), st.sampled_from([60.0, 3600.0, 7200.0, 50000.0])), min_size=1, max_size=8),
       st.sampled_from([0.5, 1.0, 2.0, 24.0]), st.sampled_from([0.25, 1.0, 3.0, 24.0]))
def test_the_busiest_window_search_is_the_argmax_of_every_step(jobs, hours, step_hours):
    from primaldual.traces.throughput import packaged_table
    from primaldual.traces.windows import busiest_window, window_loads

    records = _records(jobs)
    every = window_loads(records, packaged_table(), hours, step_hours)
    expected = max(every, key=lambda w: (w.gpu_hours, -w.start_hour))
    found = busiest_window(records, packaged_table(), hours, step_hours)
    assert (found.start_hour, found.arrivals) == (expected.start_hour, expected.arrivals)
    assert found.gpu_hours == pytest.approx(expected.gpu_hours)


@pytest.mark.parametrize("flags", [["--step-hours", "1e-9"], ["--step-hours", "1e-6", "--hours", "1e-6"],
                                   ["--step-hours", "1e-5"], ["--hours", "1e-9"], ["--hours", "1e6"]])
def test_busiest_finishes_on_tiny_steps_and_prints_a_window_import_reads(capsys, tmp_path, flags):
    assert main(["trace", "busiest", "philly:0/6214e9", "--json", *flags]) == 0
    import json

    window = json.loads(capsys.readouterr().out)["window"]
    assert "e" not in window
    slot = ["--slot-hours", "10"] if "1e6" in flags else []
    assert main(["trace", "import", "philly:0/6214e9", "--window", window, *slot, "-o", str(tmp_path / "w.json")]) == 0


def test_an_arrival_at_1e9_s_is_named_not_flags_never_given(capsys, tmp_path):
    trace = tmp_path / "late.trace"
    trace.write_text(LINE7.format(steps=1000, arrival="1e9", gpus=1))
    line = refused(capsys, ["trace", "import", trace, "-o", tmp_path / "o.json"], "late.trace:1: arrival_seconds:")
    assert "--window/--slot-hours:" not in line


# ------------------------------------------------------------------------------------------- utility


@pytest.mark.parametrize("deadline,target", [(1, 0), (3600, 0), (7199, 0), (7200, 1), (10800, 2), (10799.5, 1)])
def test_a_csv_deadline_gives_the_target_of_the_documented_formula(tmp_path, deadline, target):
    """docs/traces.md: tau_i = max(0, floor(deadline_seconds / slot_seconds) - 1)."""
    import math

    from primaldual.traces import TraceOptions, import_trace, parse_rule

    trace = tmp_path / "d.csv"
    trace.write_text(f"{CSV_HEADER},deadline_seconds\na,0,1,60,{deadline}\n")
    job = import_trace(trace, TraceOptions(utility=parse_rule("step"), tail_hours=10)).jobs[0]
    assert job.utility.deadline == target == max(0, math.floor(deadline / 3600) - 1)
    docs = open("docs/traces.md", encoding="utf-8").read()
    assert "max(0, floor(deadline / slot) - 1)" in docs


@pytest.mark.parametrize("rule,expected", [("sigmoid:slack=2,slack=3", "--utility: slack: given twice"),
                                           ("constant:slack=2", "--utility: slack: the constant rule does not use"),
                                           ("step:steepness=2", "--utility: steepness: the step rule does not use")])
def test_a_utility_key_given_twice_or_unused_is_refused(capsys, tmp_path, rule, expected):
    refused(capsys, ["trace", "import", "philly:0/23dbec", "--utility", rule, "-o", tmp_path / "o.json"], expected)


def test_very_wide_jobs_are_named_not_gpus_never_given(capsys, tmp_path):
    trace = tmp_path / "wide.csv"
    trace.write_text(CSV_HEADER + "\n" + "".join(f"j{i},{i},10000,1e9\n" for i in range(20)))
    line = refused(capsys, ["trace", "import", trace, "-o", tmp_path / "o.json"], "wide.csv:2: gpus:")
    assert "--gpus:" not in line.split("wide.csv")[0]


# ------------------------------------------------------------------------------------------- admitted


def test_run_compare_and_verify_agree_on_admitted_with_an_abandoned_job(capsys, tmp_path):
    import json

    instance, schedule = tmp_path / "k.json", tmp_path / "s.json"
    assert main(["trace", "import", "philly:0/23dbec", "--outlasting", "keep", "--gpus", "8", "-o", str(instance)]) == 0
    assert main(["run", str(instance), "--scheduler", "rrh", "-o", str(schedule), "--json"]) == 0
    capsys.readouterr()
    assert main(["run", str(instance), "--scheduler", "rrh", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["abandoned"] >= 1 and run["started"] == run["admitted"] + run["abandoned"]
    assert main(["verify", str(instance), str(schedule), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["admitted"] == run["admitted"]
    assert main(["compare", str(instance), "--schedulers", "rrh", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["admitted"] == run["admitted"]
    assert main(["verify", str(instance), str(schedule)]) == 0
    assert f"; {run['admitted']} jobs admitted" in capsys.readouterr().out
    assert main(["run", str(instance), "--scheduler", "rrh"]) == 0
    assert f"admitted {run['admitted']}, completed" in capsys.readouterr().out
