"""Gavel (7- and 10-field) and CSV readers: agreement, and malformed lines refused by line and field."""

from __future__ import annotations

import pytest

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.traces import TraceOptions, import_trace, read_csv, read_gavel, read_records, write_csv

LINE7 = "ResNet-50 (batch size 128)\tcd x && python3 main.py\t--num_steps\t1\t{steps}\t{arrival}\t{gpus}"
LINE10 = ("ResNet-50 (batch size 128)\tcd x && python3 main.py\t/work\t--num_steps\t1\t{steps}\t{gpus}\t{weight}"
          "\t-1\t{arrival}")


def seven(*jobs) -> str:
    return "\n".join(LINE7.format(steps=s, arrival=a, gpus=g) for s, a, g in jobs) + "\n"


def ten(*jobs, weight=1) -> str:
    return "\n".join(LINE10.format(steps=s, arrival=a, gpus=g, weight=weight) for s, a, g in jobs) + "\n"


JOBS = ((20000, 0.0, 1), (50000, 1800.0, 4), (9000, 7300.5, 8), (120000, 7300.5, 2))
#: A tail long enough that every job of JOBS can finish (none is dropped as outlasting the horizon).
OPTS = TraceOptions(tail_hours=100)


def test_the_7_and_10_field_readers_agree():
    a, b = read_gavel(seven(*JOBS), "a"), read_gavel(ten(*JOBS), "b")
    assert [(r.model, r.steps, r.arrival_seconds, r.gpus, r.priority_weight) for r in a] == \
           [(r.model, r.steps, r.arrival_seconds, r.gpus, r.priority_weight) for r in b]


def test_the_priority_weight_multiplies_the_utility_weight(tmp_path):
    one, three = tmp_path / "one.trace", tmp_path / "three.trace"
    one.write_text(ten(*JOBS))
    three.write_text(ten(*JOBS, weight=3))
    for j1, j3 in zip(import_trace(one, OPTS).jobs, import_trace(three, OPTS).jobs):
        assert j3.utility.gamma1 == pytest.approx(3 * j1.utility.gamma1)


def test_the_csv_and_gavel_readers_give_the_same_instance(tmp_path):
    trace, table = tmp_path / "t.trace", tmp_path / "t.csv"
    trace.write_text(seven(*JOBS))
    records = read_gavel(trace.read_text(), "t")
    table.write_text(write_csv(records))
    gavel, csv = import_trace(trace, OPTS), import_trace(table, OPTS)
    assert gavel.n_jobs == csv.n_jobs == len(JOBS)
    assert list(gavel.work_units) == list(csv.work_units)
    assert list(gavel.arrivals) == list(csv.arrivals)
    assert [j.utility for j in gavel.jobs] == [j.utility for j in csv.jobs]
    assert [list(j.worker_demand) for j in gavel.jobs] == [list(j.worker_demand) for j in csv.jobs]


def test_a_duration_csv_gives_the_same_work_as_steps(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text(seven(*JOBS))
    options = OPTS
    gavel = import_trace(trace, options)
    records, _ = read_records(trace)
    from primaldual.traces.convert import running_times
    from primaldual.traces.throughput import packaged_table

    timed = running_times(records, packaged_table(), options.scaling_efficiency, "t")
    durations = [type(t.record)(**{**t.record.__dict__, "steps": None, "duration_seconds": t.running_seconds})
                 for t in timed]
    table = tmp_path / "d.csv"
    table.write_text(write_csv(durations, with_steps=False))
    by_duration = import_trace(table, OPTS)
    assert list(by_duration.work) == pytest.approx(list(gavel.work), rel=1e-12)
    assert list(by_duration.shortest_duration) == list(gavel.shortest_duration)


@pytest.mark.parametrize("line, field", [
    ("ResNet-50 (batch size 128)\tc\tf\t1\tmany\t0\t1", "steps"),
    ("ResNet-50 (batch size 128)\tc\tf\t1\t100\tnan\t1", "arrival_seconds"),
    ("ResNet-50 (batch size 128)\tc\tf\t1\t100\t1e300\t1", "arrival_seconds"),
    ("ResNet-50 (batch size 128)\tc\tf\t1\t100\t0\t0", "gpus"),
    ("ResNet-50 (batch size 128)\tc\tf\t1\t100\t0\t2.5", "gpus"),
    ("ResNet-50 (batch size 128)\tc\tf\t1\t1e10\t0\t1", "steps"),
    ("ResNet-50 (batch size 128)\tc\tf\t1\t100\t0", "fields"),
    ("Unknown model\tc\tf\t1\t100\t0\t1", "job_type"),
])
def test_a_bad_gavel_line_is_refused_naming_the_file_line_and_field(tmp_path, capsys, line, field):
    trace = tmp_path / "bad.trace"
    trace.write_text(seven((100, 0, 1)) + "\n" + line + "\n")
    code = main(["trace", "import", str(trace), "--format", "gavel", "-o", str(tmp_path / "i.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and "Traceback" not in err[0]
    assert f"{trace}:3: {field}" in err[0]
    assert not (tmp_path / "i.json").exists()


@pytest.mark.parametrize("text, where", [
    ("job,arrival_seconds\n", "1: header"),
    ("job,arrival_seconds,gpus,colour\n", "1: header"),
    ("job,arrival_seconds,gpus\n", "1: header"),
    ("job,arrival_seconds,gpus,duration_seconds\na,0,1,60\nb,0,1,inf\n", "3: duration_seconds"),
    ("job,arrival_seconds,gpus,duration_seconds\na,0,1,60\nb,-5,1,60\n", "3: arrival_seconds"),
    ("job,arrival_seconds,gpus,duration_seconds\na,0,1\n", "2: fields"),
    ("job,arrival_seconds,gpus,duration_seconds,value\na,0,1,60,1e20\n", "2: value"),
])
def test_a_bad_csv_is_refused_by_line(tmp_path, text, where):
    table = tmp_path / "bad.csv"
    table.write_text(text)
    with pytest.raises(InputError) as caught:
        import_trace(table)
    assert f"{table}:{where}" in str(caught.value)
    assert len(str(caught.value).splitlines()) == 1


def test_read_csv_keeps_optional_columns():
    jobs = read_csv("job,arrival_seconds,gpus,duration_seconds,value,deadline_seconds\nx,10,2,3600,5,7200\n", "c")
    assert (jobs[0].name, jobs[0].value, jobs[0].deadline_seconds, jobs[0].gpus) == ("x", 5.0, 7200.0, 2)
