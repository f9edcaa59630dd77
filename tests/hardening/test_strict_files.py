"""Strict files (primaldual/core/strict_json.py): instance, schedule and experiment files refuse a key given
twice and a key the format does not have, naming the key's path (with a close match where there is one); a
folder or unreadable path given as a file is one line."""

from __future__ import annotations

import json

import pytest

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.core.files import load_instance, load_schedule
from primaldual.core.strict_json import FILE_KEYS, read_json


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("strict")
    assert main(["generate", "--preset", "tiny", "-o", str(folder / "i.json")]) == 0
    assert main(["run", str(folder / "i.json"), "--scheduler", "fifo", "-o", str(folder / "s.json")]) == 0
    return folder


@pytest.mark.parametrize("text, path", [
    ('{"a": 1, "a": 2}', "a"),
    ('{"a": {"b": [1, {"c": 1, "c": 1}]}}', "a.b[1].c"),
    ('[{"x": 0}, {"y": 1, "z": 2, "y": 3}]', "[1].y"),
])
def test_a_duplicate_key_is_named_with_its_path(tmp_path, text, path):
    (tmp_path / "d.json").write_text(text)
    with pytest.raises(InputError, match=rf"d.json: {path.replace('[', '[[]')}: duplicate key"):
        read_json(tmp_path / "d.json", "instance")


def _mutate(made, tmp_path, name, change):
    data = json.loads((made / name).read_text())
    change(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(horizn=3), "horizn: unknown field; did you mean 'horizon'?"),
    (lambda d: d["cluster"].update(ps_server=[]), "cluster.ps_server: unknown field; did you mean 'ps_servers'?"),
    (lambda d: d["jobs"][1].update(epoch=2), "jobs[1].epoch: unknown field; did you mean 'epochs'?"),
    (lambda d: d["jobs"][0]["utility"].update(gama2=1), "jobs[0].utility.gama2: unknown field for a sigmoid "
                                                        "utility; did you mean 'gamma2'?"),
    (lambda d: d.update(zzz=1), "zzz: unknown field (known: "),
])
def test_an_unknown_instance_key_is_named_with_a_close_match(made, tmp_path, change, message):
    with pytest.raises(InputError) as raised:
        load_instance(_mutate(made, tmp_path, "i.json", change))
    assert any(message in problem for problem in raised.value.problems), raised.value.problems


def test_an_unknown_schedule_key_and_a_duplicate_are_refused(made, tmp_path):
    instance = load_instance(made / "i.json")
    with pytest.raises(InputError, match="jobs: unknown field|job: unknown field"):
        load_schedule(_mutate(made, tmp_path, "s.json", lambda d: d.update(job=[])), instance)
    text = (made / "s.json").read_text().replace('"job":', '"job": 0, "job":', 1)
    (tmp_path / "dup.json").write_text(text)
    with pytest.raises(InputError, match=r"jobs\[0\]\.job: duplicate key"):
        load_schedule(tmp_path / "dup.json", instance)


def test_every_object_of_the_formats_has_its_key_list():
    assert set(FILE_KEYS) == {"instance", "instance.cluster", "instance.jobs[]", "schedule", "schedule.jobs[]"}


@pytest.mark.parametrize("argv", [["solve", "{d}"], ["verify", "{i}", "{d}"], ["ratio", "--config", "{d}"],
                                  ["plot", "schedule", "{i}", "{d}", "--out", "x.png"]])
def test_a_folder_given_as_a_file_is_one_line(made, tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    assert main([a.format(d=str(tmp_path), i=str(made / "i.json")) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "folder" in err and "Traceback" not in err, err


def test_an_experiment_file_refuses_unknown_keys_with_a_close_match(tmp_path, capsys):
    (tmp_path / "e.toml").write_text('preset = "tiny"\ninstance = 2\n')
    assert main(["ratio", "--config", str(tmp_path / "e.toml"), "--out", str(tmp_path / "r.jsonl")]) == 2
    assert "instance: unknown key in" in capsys.readouterr().err
