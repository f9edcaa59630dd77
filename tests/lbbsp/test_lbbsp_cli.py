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
    (["simulate", "--workers", "0"], "--workers: must be an integer in 1..1000, got 0"),
    (["simulate", "--iterations", "-3"], "--iterations: must be an integer in 1..100000, got -3"),
    (["simulate", "--workers", "8", "--global-batch", "5"],
     "--global-batch: must be >= workers * min batch = 8 * 1, got 5"),
    (["simulate", "--global-batch", "100000"], "exceeds the gpu cluster's total memory cap"),
    (["simulate", "--seed", "-1"], "--seed: must be an integer in 0..4294967295, got -1"),
    (["simulate", "--target-samples", "0"], "--target-samples: must be an integer in 1..10^15, got 0"),
    (["aggregate", "--iterations", "0"], "--iterations: must be an integer in 1..100000, got 0"),
    (["aggregate", "--seed", "-2"], "--seed: must be an integer in 0..4294967295, got -2"),
])
def test_bad_input_exits_2_with_a_message(capsys, argv, message):
    assert main(["lbbsp", *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_unknown_scenario_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["lbbsp", "simulate", "--scenario", "tpu"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'tpu'" in capsys.readouterr().err


def test_unreachable_sample_target(capsys):
    argv = ["lbbsp", "simulate", "--workers", "2", "--iterations", "2", "--target-samples", "100000"]
    assert main(argv) == 0
    assert "not reached" in capsys.readouterr().out
    assert main([*argv, "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["time_to_samples_seconds"].values()) == {None}


def test_aggregate_json(capsys):
    assert main(["lbbsp", "aggregate", "--iterations", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weighted_max_deviation"] < 1e-12 < out["mean_max_deviation"]


def test_bare_lbbsp_prints_usage_and_exits_2(capsys):
    assert main(["lbbsp"]) == 2
    assert "simulate" in capsys.readouterr().err
