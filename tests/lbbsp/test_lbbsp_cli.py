"""``primaldual lbbsp`` in-process: exit codes, JSON keys, clear messages on bad input."""

import json

import pytest

from primaldual.cli import main


def test_simulate_json(capsys):
    assert main(["lbbsp", "simulate", "--scenario", "cpu", "--iterations", "40", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["mean_iteration_seconds"]) == {"bsp", "lbbsp_cpu", "lbbsp_gpu", "oracle"}
    assert out["speedup"]["bsp"] == 1.0
    assert out["workers"] == 8 and out["global_batch"] == 512


def test_simulate_text(capsys):
    assert main(["lbbsp", "simulate", "--workers", "3", "--iterations", "20", "--global-batch", "120"]) == 0
    out = capsys.readouterr().out
    assert "speedup" in out and "oracle" in out


@pytest.mark.parametrize("argv, message", [
    (["--workers", "0"], "--workers: must be >= 1, got 0"),
    (["--iterations", "-3"], "--iterations: must be >= 1, got -3"),
    (["--workers", "8", "--global-batch", "5"], "--global-batch: must be >= workers * min batch = 8 * 1, got 5"),
    (["--global-batch", "100000"], "exceeds the gpu cluster's total memory cap"),
])
def test_bad_input_exits_2_with_a_message(capsys, argv, message):
    assert main(["lbbsp", "simulate", *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_aggregate_json(capsys):
    assert main(["lbbsp", "aggregate", "--iterations", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weighted_max_deviation"] < 1e-12 < out["mean_max_deviation"]


def test_bare_lbbsp_prints_usage_and_exits_2(capsys):
    assert main(["lbbsp"]) == 2
    assert "simulate" in capsys.readouterr().out
