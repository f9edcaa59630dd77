"""Trace replay: loading (PAI and simple CSV), the calibrated time law, hand-computed speedups, robustness."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.lbbsp.replay import make_law, replay
from primaldual.lbbsp.traces import WorkerTrace, achieved_cov, cov_trace, load_cov_table, load_trace, parse_trace
from trace_strategies import variable_traces


def two_workers(times=(1.0, 2.0), iterations=4):
    return WorkerTrace("pair", np.tile(times, (iterations, 1)), np.arange(iterations), np.arange(2))


@pytest.mark.parametrize("name, iterations, skipped", [("pai:job_1", 300, 0), ("pai:job_2", 238, 16),
                                                       ("pai:job_3", 248, 1)])
def test_packaged_pai_traces_load(name, iterations, skipped):
    trace = load_trace(name)
    assert trace.n_workers == 10 and trace.n_iterations == iterations and trace.skipped_iterations == skipped
    assert trace.iterations[0] in (1, 11) and np.all(np.diff(trace.iterations) > 0)
    assert 0 < trace.times.min() and trace.times.max() <= 1000


def test_pai_first_rows_match_the_file():
    # job_1_norm.csv rows 1-10 are iteration 1, workers 0..9: 476,509,468,433,475,501,492,419,430,436.
    assert load_trace("pai:job_1").times[0].tolist() == [476, 509, 468, 433, 475, 501, 492, 419, 430, 436]


def test_simple_format_and_incomplete_iteration():
    text = "worker,iteration,time\n0,0,1.0\n1,0,2.0\n0,1,1.5\n1,1,2.5\n0,2,3.0\n0,3,1.0\n1,3,1.0\n0,3,1.0\n"
    trace = parse_trace(text, "mine.csv")
    assert trace.times.tolist() == [[1.0, 2.0], [1.5, 2.5], [1.0, 1.0]]
    assert trace.skipped_iterations == 1 and trace.iterations.tolist() == [0, 1, 3]


@pytest.mark.parametrize("text, message", [
    ("a,b,c\n0,0,1\n", "t.csv:1: header must be"),
    ("worker,iteration,time\n0,0,1\n1,0,x\n", "t.csv:3: time must be a number, got 'x'"),
    ("worker,iteration,time\n0,0,1\n1,0,-2\n", "t.csv:3: time must be > 0"),
    ("worker,iteration,time\n0,0,1\n1,0\n", "t.csv:3: expected 3 fields, got 2"),
    ("worker,iteration,time\n0,0.5,1\n", "t.csv:2: iteration must be an integer"),
    ("worker,iteration,time\n0,0,1\n0,0,2\n", "t.csv:3: second time 2 for worker 0 at iteration 0"),
    ("worker,iteration,time\n0,0,1\n1,0,nan\n", "t.csv:3: time must be finite"),
    ("worker,iteration,time\n", "t.csv: no data rows"),
])
def test_malformed_traces_name_the_line(text, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        parse_trace(text, "t.csv")


def test_cli_malformed_trace_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("worker,iteration,time\n0,0,1\n1,0,oops\n")
    assert main(["lbbsp", "replay", "--trace", str(bad), "--json"]) == 2
    err = capsys.readouterr().err
    assert "bad.csv:3: time must be a number" in err and "Traceback" not in err


def test_law_reproduces_the_trace_at_equal_batch_and_speed_is_batch_free():
    trace = load_trace("pai:job_3")
    for fraction in (0.0, 0.4):
        law = make_law(trace, 640, fraction)
        assert np.allclose(law.seconds(5, np.full(10, 64)), trace.times[5])
        batch = np.arange(1, 11) * 10 + 9
        measured = batch / (law.seconds(5, batch) - law.overhead)   # what a worker measures
        assert np.allclose(measured, law.speed(5))


@pytest.mark.parametrize("fraction, oracle", [(0.0, 2.0 / (20 / 15)), (0.5, 2.0 / (0.5 + 23 / 30))])
def test_hand_computed_pair(fraction, oracle):
    # Times 1 and 2 at x0 = 15 (X = 30). Linear: speeds 15 and 7.5, optimum 20/10, makespan 4/3 -> 1.5x.
    # a = 0.5: slopes 0.5/15 and 1.5/15; x = (23, 7) gives max(0.5 + 23/30, 0.5 + 0.7) = 1.2667 -> 1.579x.
    result = replay(two_workers(), 30, predictors=("last",), overhead_fraction=fraction, default_predictor="last")
    summary = result.summary()
    assert summary["mean_iteration_seconds"]["bsp"] == pytest.approx(2.0)
    assert summary["oracle_speedup"] == pytest.approx(oracle)
    # Constant speeds: after one observation the CPU rule is the oracle's proportional split.
    assert result.iteration_times["lbbsp_cpu[last]"][1:] == pytest.approx(result.iteration_times["oracle"][1:],
                                                                           abs=0.1)


def test_oracle_is_best_every_iteration_and_bsp_is_the_trace_maximum():
    trace = load_trace("pai:job_1")
    result = replay(trace, predictors=("last", "ewma"))
    assert np.allclose(result.iteration_times["bsp"], trace.times.max(axis=1))
    oracle = result.iteration_times["oracle"]
    for method, times in result.iteration_times.items():
        assert np.all(oracle <= times + 1e-9), method
        assert np.all(result.batches[method].sum(axis=1) == 640)
    # Second method: the continuous optimum X / sum v is a lower bound within one sample's time.
    law = result.law
    bound = np.array([law.global_batch / law.speed(t).sum() for t in range(trace.n_iterations)])
    assert np.all(bound <= oracle + 1e-9) and np.all(oracle <= bound + (1 / np.array(
        [law.speed(t).min() for t in range(trace.n_iterations)])) + 1e-9)


@pytest.mark.fast_tier(1)
@pytest.mark.parametrize("job", [1, 2, 3])
def test_pai_jobs_within_5_percent_and_half_the_oracle_gain(job):
    summary = replay(load_trace(f"pai:job_{job}"), predictors=("select",), gpu=False).summary()
    assert summary["gap_to_oracle_percent"] < 5.0
    assert summary["captures_half_of_oracle_gain"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variable_traces())
def test_half_of_oracle_gain_on_far_more_variable_traces(trace):
    summary = replay(trace, predictors=("select",), gpu=False).summary()
    assert summary["speedup"] - 1.0 >= 0.5 * (summary["oracle_speedup"] - 1.0)


def test_cov_trace_follows_its_row():
    table = load_cov_table()
    assert table.shape[0] == 100
    assert np.nanmax(table) > 3.0   # above the population-CoV bound sqrt(9): the table uses ddof = 1
    for job in (7, 42):
        trace = cov_trace(job, seed=3, table=table)
        target = table[job][np.isfinite(table[job])]
        achieved = achieved_cov(trace)
        assert np.all(achieved <= target + 1e-9) and trace.times.min() >= 1.0   # slowdowns only
        reachable = target < 0.95 * np.sqrt(10)
        assert np.mean(np.isclose(achieved, target, rtol=1e-6, atol=1e-9)[reachable]) > 0.95


def test_cli_replay_json_and_output(tmp_path, capsys):
    out = tmp_path / "sub" / "curves.json"
    assert main(["lbbsp", "replay", "--trace", "pai:job_2", "--json", "--output", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {"speedup", "oracle_speedup", "gap_to_oracle_percent", "mape_percent"} <= set(summary)
    assert set(json.loads(out.read_text())["iteration_times"]) >= {"bsp", "oracle", "lbbsp_gpu"}
    assert main(["lbbsp", "replay", "--trace", "pai:job_2", "--output", str(tmp_path)]) == 2
    assert "--output" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--trace", "pai:job_9"], "unknown packaged trace"),
    (["--trace", "pai:job_1", "--global-batch", "5"], "--global-batch: must be an integer >= workers = 10"),
    (["--trace", "pai:job_1", "--overhead-fraction", "1.5"], "--overhead-fraction: must be a number in [0, 0.99]"),
    (["--cov-job", "100"], "--cov-job: must be an integer in 0..99"),
])
def test_cli_replay_bad_input(argv, message, capsys):
    assert main(["lbbsp", "replay", *argv]) == 2
    assert message in capsys.readouterr().err


def test_cli_cov_summary(capsys):
    assert main(["lbbsp", "cov", "--jobs", "2", "--max-iterations", "60", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["jobs"] == 2 and [row["job"] for row in out["per_job"]] == [0, 1]
    assert out["speedup"]["q0"] <= out["speedup"]["q50"] <= out["speedup"]["q100"]
    assert all(row["oracle_speedup"] >= row["speedup"] - 1e-9 for row in out["per_job"])
    assert main(["lbbsp", "cov", "--jobs", "101"]) == 2
    assert "--jobs: must be an integer in 1..100" in capsys.readouterr().err
