"""A schedule file names its instance's fingerprint, and every reader refuses a schedule of another instance."""

from __future__ import annotations

import json
import warnings

import pytest

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.core.files import instance_to_dict, load_schedule, save_instance, save_schedule
from primaldual.core.fingerprint import UnstampedScheduleWarning, fingerprint_of
from primaldual.core.generate import generate
from primaldual.core.instance import Instance
from primaldual.simulation.simulator import simulate


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Instances A and B of the same size, and B's OASiS schedule written by ``run``."""
    folder = tmp_path_factory.mktemp("fingerprint")
    save_instance(generate("tiny", seed=5), folder / "A.json")
    save_instance(generate("tiny", seed=6), folder / "B.json")
    assert main(["run", str(folder / "B.json"), "--scheduler", "oasis", "-o", str(folder / "S.json")]) == 0
    return folder


def _fingerprint(instance: Instance) -> str:
    return fingerprint_of(instance_to_dict(instance))


def test_the_fingerprint_is_the_problem_not_its_meta():
    instance = generate("tiny", seed=5)
    assert _fingerprint(instance) == _fingerprint(generate("tiny", seed=5))
    assert _fingerprint(instance) == _fingerprint(Instance(instance.cluster, instance.jobs, instance.horizon,
                                                           instance.slot_seconds, meta={"note": "renamed"}))
    assert _fingerprint(instance) != _fingerprint(Instance(instance.cluster, instance.jobs, instance.horizon + 1,
                                                           instance.slot_seconds))
    assert _fingerprint(instance).startswith("sha256:") and len(_fingerprint(instance)) == 7 + 16


@pytest.mark.parametrize("command", [["verify", "{A}", "{S}"], ["plot", "schedule", "{A}", "{S}", "--out", "{t}/g.png"],
                                     ["solve", "{A}", "--start", "{S}"]])
def test_every_reader_refuses_a_schedule_of_another_instance(pair, tmp_path, capsys, command):
    names = {"A": str(pair / "A.json"), "S": str(pair / "S.json"), "t": str(tmp_path)}
    capsys.readouterr()
    assert main([part.format(**names) for part in command]) == 2
    error = capsys.readouterr().err.strip()
    theirs = json.loads((pair / "S.json").read_text())["instance"]["fingerprint"]
    ours = _fingerprint(generate("tiny", seed=5))
    assert len(error.splitlines()) == 1 and "a schedule of another instance" in error
    assert theirs in error and ours in error and theirs != ours


def test_the_schedule_of_its_own_instance_verifies_and_carries_provenance(pair, capsys):
    capsys.readouterr()
    assert main(["verify", str(pair / "B.json"), str(pair / "S.json")]) == 0
    assert "warning" not in capsys.readouterr().err
    data = json.loads((pair / "S.json").read_text())
    assert data["instance"]["jobs"] == generate("tiny", seed=6).n_jobs
    assert data["provenance"]["command"].startswith("primaldual run ")
    assert {"primaldual", "python", "numpy", "pyomo", "highspy", "cpu"} <= set(data["provenance"])


def _unstamped(folder, instance, name="old.json") -> str:
    save_schedule(simulate(instance, "oasis").schedule, folder / name)
    return str(folder / name)


def test_an_old_file_still_loads_with_one_warning(tmp_path):
    instance = generate("tiny", seed=6)
    path = _unstamped(tmp_path, instance)
    with pytest.warns(UnstampedScheduleWarning, match="no instance fingerprint"):
        schedule = load_schedule(path, instance)
    assert schedule.same_allocation(simulate(instance, "oasis").schedule)


@pytest.mark.parametrize("change, message", [
    (lambda data: data["jobs"][0].update(job=99), "it schedules job 99, but INSTANCE has"),
    (lambda data: data["jobs"][0]["workers"].append([500, 0, 1]), "runs in slot 500, but INSTANCE has"),
    (lambda data: data["jobs"][0]["workers"].append([0, 50, 1]), "uses workers server 50"),
])
def test_an_old_file_of_another_instance_is_named_as_such(tmp_path, change, message):
    instance = generate("tiny", seed=6)
    path = tmp_path / "old.json"
    data = json.loads(open(_unstamped(tmp_path, instance)).read())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=message):
        load_schedule(path, instance)


def test_an_old_file_that_runs_a_job_before_its_arrival_is_of_another_instance(tmp_path):
    instance = generate("tiny", seed=6)
    late = next(i for i, job in enumerate(instance.jobs) if job.arrival > 0)
    data = {"format": "primaldual.schedule", "version": 1,
            "jobs": [{"job": late, "workers": [[0, 0, 1]], "parameter_servers": [[0, 0, 1]]}]}
    (tmp_path / "s.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=f"job {late} has workers in slot 0, before its arrival slot"):
        load_schedule(tmp_path / "s.json", instance)
    data["instance"] = {"fingerprint": _fingerprint(instance)}
    (tmp_path / "s.json").write_text(json.dumps(data))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_schedule(tmp_path / "s.json", instance)  # stamped: verify's to judge (exit 1), not another instance


def test_a_malformed_fingerprint_is_refused(tmp_path):
    instance = generate("tiny", seed=6)
    (tmp_path / "s.json").write_text(json.dumps({"format": "primaldual.schedule", "version": 1, "jobs": [],
                                                 "instance": {"fingerprint": 7}}))
    with pytest.raises(InputError, match="instance.fingerprint: must be a string"):
        load_schedule(tmp_path / "s.json", instance)
