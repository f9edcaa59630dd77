"""Experiment files: ``ratio --config FILE.toml`` is equivalent to the flags and refuses what they refuse."""

from __future__ import annotations

import json

import pytest

from primaldual.cli import main
from primaldual.sweep.records import read_records
from primaldual.sweep import deterministic_part

FLAGS = ["--preset", "tiny", "--seed", "3", "--instances", "2", "--schedulers", "oasis,fifo", "--no-opt"]
CONFIG = 'preset = "tiny"\nseed = 3\ninstances = 2\nschedulers = ["oasis", "fifo"]\nno_opt = true\n'


def _records(path):
    return {key: deterministic_part(record) for key, record in read_records(path).items()}


def test_a_config_file_gives_the_records_of_the_flags(tmp_path, capsys):
    (tmp_path / "exp.toml").write_text(CONFIG)
    common = ["--workers", "1", "--no-progress"]
    assert main(["ratio", *FLAGS, *common, "--out", str(tmp_path / "flags.jsonl")]) == 0
    assert main(["ratio", "--config", str(tmp_path / "exp.toml"), *common, "--out", str(tmp_path / "file.jsonl")]) == 0
    assert _records(tmp_path / "flags.jsonl") == _records(tmp_path / "file.jsonl") != {}
    # The resolved configuration written beside the results repeats the run exactly.
    resolved = tmp_path / "file.jsonl.config.toml"
    assert 'preset = "tiny"' in resolved.read_text()
    capsys.readouterr()
    assert main(["ratio", "--config", str(resolved), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == 2


def test_a_string_parameter_on_the_command_line_is_written_to_the_resolved_config(tmp_path, capsys):
    # --param oasis.rule=budget crashed in the config writer (the bare word was parsed as JSON).
    out = tmp_path / "r.jsonl"
    assert main(["ratio", "--preset", "tiny", "--instances", "1", "--schedulers", "oasis", "--param",
                 "oasis.rule=budget", "--param", "oasis.eta=2", "--no-opt", "--workers", "1", "--no-progress",
                 "--out", str(out)]) == 0
    resolved = tmp_path / "r.jsonl.config.toml"
    assert '[param.oasis]\nrule = "budget"\neta = 2' in resolved.read_text()
    (record,) = read_records(out).values()
    assert record["spec"]["scheduler_params"] == {"oasis": {"rule": "budget", "eta": 2}}
    capsys.readouterr()
    assert main(["ratio", "--config", str(resolved), "--json"]) == 0  # the file reads back as the same sweep
    assert json.loads(capsys.readouterr().out)["skipped"] == 1


def test_a_null_parameter_is_a_comment_in_the_resolved_config(tmp_path, capsys):
    # TOML has no null: it was written as the string "None", which the scheduler then refused on rerun.
    out = tmp_path / "r.jsonl"
    assert main(["ratio", "--preset", "tiny", "--instances", "1", "--schedulers", "fifo", "--param",
                 "fifo.workers=null", "--no-opt", "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    resolved = tmp_path / "r.jsonl.config.toml"
    assert "# workers = null" in resolved.read_text()
    capsys.readouterr()
    assert main(["ratio", "--config", str(resolved), "--out", str(tmp_path / "again.jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["computed"] == 1


def test_parameters_in_a_config_file(tmp_path, capsys):
    (tmp_path / "exp.toml").write_text(CONFIG + "[param.fifo]\nworkers = 2\n")
    assert main(["ratio", "--config", str(tmp_path / "exp.toml"), "--workers", "1", "--no-progress",
                 "--out", str(tmp_path / "r.jsonl")]) == 0
    records = list(read_records(tmp_path / "r.jsonl").values())
    assert all(r["spec"]["scheduler_params"] == {"fifo": {"workers": 2}} for r in records)


@pytest.mark.parametrize("text, message", [
    ('preset = "tiny"\nbogus = 1\n', "bogus: unknown key"),
    ('seed = "three"\n', "seed: must be int"),
    ("instances = true\n", "instances: must be int"),
    ("time-limit = -1\n", "--time-limit: must be a number in (0, 1e6], got -1.0"),
    ('executor = "ray"\n', "executor: must be one of local, dask"),
    ('schedulers = []\n', "schedulers: must be a list"),
    ("preset = \n", "not valid TOML"),
])
def test_a_bad_config_exits_2_naming_the_key(tmp_path, capsys, text, message):
    (tmp_path / "bad.toml").write_text(text)
    assert main(["ratio", "--config", str(tmp_path / "bad.toml"), "--out", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.jsonl").exists()
