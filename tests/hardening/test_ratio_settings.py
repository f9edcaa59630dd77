"""Issue 65, item 3: ``ratio`` writes ``OUT.config.toml`` only once every input is accepted (the results file
too), and never rewrites it under records of other settings (it would no longer describe them)."""

from __future__ import annotations

import os

import pytest

from primaldual.cli import main

RATIO = ["ratio", "--preset", "tiny", "--instances", "1", "--no-opt", "--schedulers", "fifo", "--no-progress",
         "--out", "r.jsonl"]


def _files(folder) -> dict[str, bytes]:
    return {p.name: (p.read_bytes() if p.is_file() else b"") for p in sorted(folder.iterdir())}


def _refused(capsys, argv, *words) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert all(word in err for word in words), err
    return err


@pytest.mark.parametrize("content, words", [("not json\n", ("r.jsonl", "line 1: not valid JSON")),
                                            ('{"key": 3}\n', ("r.jsonl", "no string \"key\""))])
def test_a_results_file_that_cannot_be_read_writes_no_settings_file(tmp_path, monkeypatch, capsys, content, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.jsonl").write_text(content)
    _refused(capsys, RATIO, *words)
    assert _files(tmp_path) == {"r.jsonl": content.encode()}


def test_a_settings_file_that_is_a_fifo_is_neither_read_nor_replaced(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "r.jsonl.config.toml")
    _refused(capsys, RATIO, "--out: 'r.jsonl.config.toml' is a FIFO")
    assert [p.name for p in tmp_path.iterdir()] == ["r.jsonl.config.toml"]
    assert not (tmp_path / "r.jsonl.config.toml").is_file()


def test_a_rerun_with_other_settings_is_refused_and_the_settings_file_kept(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(RATIO) == 0
    capsys.readouterr()
    before = _files(tmp_path)
    _refused(capsys, [*RATIO, "--seed", "7"], "--out: 'r.jsonl' holds records of other settings",
             "seed: 0 there, 7 now", "--config 'r.jsonl.config.toml'")
    assert _files(tmp_path) == before
    # How the sweep runs is no setting of its records: a rerun may change it, and repeats nothing.
    assert main([*RATIO, "--workers", "1"]) == 0
    assert "0 computed, 1 already there" in capsys.readouterr().out
    assert _files(tmp_path)["r.jsonl"] == before["r.jsonl"]
    assert main(["ratio", "--config", "r.jsonl.config.toml"]) == 0  # the settings file repeats the run


@pytest.mark.parametrize("value, words", [("2031-02-03", "the TOML date 2031-02-03"),
                                          ("2031-02-03T04:05:06Z", "the TOML datetime 2031-02-03T04:05:06+00:00"),
                                          ("[1, 04:05:06]", "the TOML time 04:05:06")])
def test_a_toml_date_as_a_parameter_value_is_one_line(tmp_path, monkeypatch, capsys, value, words):
    """Issue 65, item 4: a traceback (json.dumps) before."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exp.toml").write_text(f'preset = "tiny"\n[param.fifo]\nworkers = {value}\n')
    _refused(capsys, ["ratio", "--config", "exp.toml"], "param.fifo.workers: must be a number", words)
    assert [p.name for p in tmp_path.iterdir()] == ["exp.toml"]
