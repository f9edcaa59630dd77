"""Trace instances end to end: schedules verify, a job alone completes when the trace says, the readers agree on
real jobs, the busiest window is the one its definition picks, the OPT bound holds, bad lines are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.cli import main
from primaldual.core.verify import verify
from primaldual.simulation.scheduler import available_schedulers, make_scheduler
from primaldual.simulation.simulator import simulate
from primaldual.traces import TraceOptions, import_trace, read_gavel, read_records, write_csv
from primaldual.traces.convert import build_instance, running_times
from primaldual.traces.packaged import _data
from primaldual.traces.records import TraceJob
from primaldual.traces.throughput import packaged_table
from primaldual.traces.windows import busiest_window, window_loads

TABLE = packaged_table()
#: A 12-hour window of a busy VC with a day of tail: a few jobs, every scheduler in seconds.
SMALL = TraceOptions(window=(432, 12), tail_hours=24)
MODELS = ("ResNet-50 (batch size 128)", "LM (batch size 20)", "Transformer (batch size 64)",
          "ResNet-18 (batch size 32)", "A3C", "CycleGAN")


@pytest.fixture(scope="module")
def small_window():
    instance = import_trace("philly:0/b436b2", SMALL)
    assert 3 <= instance.n_jobs <= 40
    return instance


@pytest.mark.parametrize("name", available_schedulers())
def test_every_scheduler_on_a_trace_window_verifies(small_window, name):
    result = simulate(small_window, make_scheduler(name))
    report = verify(small_window, result.schedule)
    assert report.feasible, report.violations
    assert report.utility == pytest.approx(result.utility, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("restart_cost", [0.1, 0.5])
def test_schedules_under_restart_costs_on_a_trace_window_verify(small_window, restart_cost):
    for name in ("oasis-lr", "rrh", "fifo"):
        result = simulate(small_window, make_scheduler(name), restart_cost=restart_cost)
        assert verify(small_window, result.schedule).feasible


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 200_000), st.sampled_from([1, 2, 4, 8]), st.sampled_from(MODELS),
       st.floats(0, 10 * 3600, allow_nan=False), st.sampled_from([0.5, 1.0, 2.0]))
def test_a_job_alone_completes_when_the_traces_running_time_says_up_to_slot_rounding(steps, gpus, model, arrival,
                                                                                      slot_hours):
    """Through the simulator and the verifier, not the converter's own arithmetic: FIFO runs a lone job at its
    full scale from its arrival slot, so its JCT is ``ceil(R / slot)`` and it ends within one slot of
    ``arrival + R`` (rounded out to whole slots)."""
    record = TraceJob(name="j", arrival_seconds=arrival, gpus=gpus, model=model, steps=steps, line=1)
    running = running_times([record], TABLE, 0.9, "t")[0].running_seconds
    tail = math.ceil(running / 3600 / slot_hours + 2) * slot_hours  # just enough horizon: small dense arrays
    instance = build_instance([record], TraceOptions(gpus=8, slot_hours=slot_hours, tail_hours=tail),
                              TABLE, source="t", format="gavel")
    result = simulate(instance, make_scheduler("fifo"))
    assert verify(instance, result.schedule).feasible
    slot = slot_hours * 3600.0
    completion = result.schedule.assignments[0].completion_slot()
    assert completion - instance.arrivals[0] + 1 == max(1, math.ceil(running / slot - 1e-9))
    # On the clock: the job may start at its arrival slot's beginning (arrivals are floored to slots), and ends
    # at the end of its completion slot: within one slot after the trace's own end, arrival + R.
    start_of_slot, end_of_slot = math.floor(arrival / slot) * slot, (completion + 1) * slot
    assert start_of_slot + running <= end_of_slot + 1e-6 * slot
    assert end_of_slot < arrival + running + slot * (1 + 1e-9)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_csv_and_gavel_readers_agree_on_real_jobs(tmp_path_factory, seed):
    """A random sample of a shipped VC's own lines, as Gavel lines and as the CSV ``write_csv`` makes of them."""
    lines = _data().joinpath("seed=0", "6c71a0.trace").read_text(encoding="utf-8").splitlines()
    rng = np.random.default_rng(seed)
    picked = [lines[i] for i in sorted(rng.choice(len(lines), size=12, replace=False))]
    folder = tmp_path_factory.mktemp("agree")
    trace, table = folder / "t.trace", folder / "t.csv"
    trace.write_text("\n".join(picked) + "\n")
    table.write_text(write_csv(read_gavel(trace.read_text(), "t")))
    options = TraceOptions(tail_hours=2000, outlasting="keep")
    gavel, csv = import_trace(trace, options), import_trace(table, options)
    assert gavel.n_jobs == csv.n_jobs == 12
    assert list(gavel.arrivals) == list(csv.arrivals) and list(gavel.work_units) == list(csv.work_units)
    assert [j.utility for j in gavel.jobs] == [j.utility for j in csv.jobs]
    assert [j.chunks for j in gavel.jobs] == [j.chunks for j in csv.jobs]


def test_the_busiest_window_is_the_argmax_of_its_definition():
    records, _ = read_records("philly:0/6c71a0")
    timed = running_times(records, TABLE, 0.9, "t")
    windows = window_loads(records, TABLE, 168.0)
    for window in windows[::7]:  # the definition, job by job
        start, end = window.start_hour * 3600, (window.start_hour + 168) * 3600
        busy = sum(t.record.gpus * min(t.running_seconds, end - t.record.arrival_seconds) for t in timed
                   if start <= t.record.arrival_seconds < end)
        assert window.gpu_hours == pytest.approx(busy / 3600, rel=1e-9)
    best = busiest_window(records, TABLE, 168.0)
    assert best.gpu_hours == max(w.gpu_hours for w in windows)
    assert best.start_hour % 24 == 0
    instance = import_trace("philly:0/6c71a0", TraceOptions(window=(best.start_hour, best.hours)))
    assert instance.meta["trace"]["counts"]["in_window"] == best.arrivals


def test_the_column_generation_bound_is_at_least_every_schedulers_utility(small_window):
    from primaldual.evaluation.pipeline import evaluate
    from primaldual.offline.options import SolveOptions

    names = [n for n in available_schedulers() if n != "dorm"]
    evaluation = evaluate(small_window, names, solve=SolveOptions(method="cg", time_limit=20, threads=1))
    assert evaluation.offline.status in ("optimal", "feasible")
    for name, outcome in evaluation.outcomes.items():
        assert outcome.feasible
        assert outcome.utility <= evaluation.interval.high * (1 + 1e-9) + 1e-9, name
    assert evaluation.interval.low >= max(o.utility for o in evaluation.outcomes.values()) - 1e-9


def test_a_bad_line_in_a_shipped_trace_is_refused_by_its_line(tmp_path, capsys):
    lines = _data().joinpath("seed=0", "23dbec.trace").read_text(encoding="utf-8").splitlines()
    fields = lines[4].split("\t")
    fields[5] = "-3"  # the arrival, in seconds
    lines[4] = "\t".join(fields)
    trace = tmp_path / "vc.trace"
    trace.write_text("\n".join(lines) + "\n")
    assert main(["trace", "import", str(trace), "-o", str(tmp_path / "i.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"primaldual") and f"{trace}:5: arrival_seconds" in err[0]
    assert not (tmp_path / "i.json").exists()


def test_trace_busiest_prints_the_window_flag_and_refuses_a_bad_length(capsys):
    import json

    assert main(["trace", "busiest", "philly:0/6c71a0", "--hours", "168", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    records, _ = read_records("philly:0/6c71a0")
    assert found["window"] == busiest_window(records, TABLE, 168.0).flag
    assert main(["trace", "busiest", "philly:0/6c71a0", "--hours", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--hours: must be a number in (0, 1e6], got 0.0" in err[0]
