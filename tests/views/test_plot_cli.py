"""``primaldual plot schedule`` and the results form's ``--json`` distributions, through the CLI's ``main``."""

from __future__ import annotations

import json

import pytest

from primaldual.cli import main
from primaldual.core.files import save_instance, save_schedule
from primaldual.core.generate import generate
from primaldual.sweep.records import dumps_record
from primaldual.simulation.simulator import simulate
from primaldual.evaluation.outcomes import job_outcomes

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plot")
    instance = generate("small", seed=21)
    save_instance(instance, folder / "i.json")
    save_schedule(simulate(instance, "oasis").schedule, folder / "s.json")
    save_schedule(simulate(instance, "oasis").schedule, folder / "stamped.json", instance)
    save_instance(generate("small", seed=22, jobs=12), folder / "other.json")
    return folder


def test_plot_schedule_writes_png_and_svg(files, tmp_path, capsys):
    out = tmp_path / "new" / "g.png"
    assert main(["plot", "schedule", str(files / "i.json"), str(files / "s.json"), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG
    svg = tmp_path / "g.svg"
    capsys.readouterr()
    assert main(["plot", "schedule", str(files / "i.json"), str(files / "s.json"), "--out", str(svg), "--json",
                 "--max-rows", "4"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["figure"] == str(svg) and data["rows"] == 4 and data["sampled"] and data["jobs"] == 10
    assert svg.read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize("arguments, message", [
    (["{f}/missing.json", "{f}/s.json", "--out", "{t}/g.png"], "instance file not found"),
    (["{f}/i.json", "{f}/missing.json", "--out", "{t}/g.png"], "schedule file not found"),
    (["{f}/other.json", "{f}/s.json", "--out", "{t}/g.png"], "SCHEDULE: does not fit INSTANCE"),
    (["{f}/other.json", "{f}/stamped.json", "--out", "{t}/g.png"], "a schedule of another instance: written for"),
    (["{f}/i.json", "{f}/s.json", "--out", "{t}/g.jpg"], "--out: must end in .png, .pdf or .svg"),
    (["{f}/i.json", "{f}/s.json", "--out", "{t}/folder.png"], "--out: "),
    (["{f}/i.json", "{f}/s.json"], "--out: required"),
    (["{f}/i.json", "--out", "{t}/g.png"], "expected INSTANCE SCHEDULE"),
    (["{f}/i.json", "{f}/s.json", "--out", "{t}/g.png", "--max-rows", "0"], "--max-rows: must be an integer in 1..10000, got 0"),
])
def test_plot_schedule_bad_input_exits_2(files, tmp_path, capsys, arguments, message):
    (tmp_path / "folder.png").mkdir()
    argv = ["plot", "schedule"] + [a.format(f=files, t=tmp_path) for a in arguments]
    assert main(argv) == 2
    error = capsys.readouterr().err
    # A schedule file without an instance fingerprint adds one warning line saying so.
    lines = [line for line in error.strip().splitlines() if "no instance fingerprint" not in line]
    assert message in error and "Traceback" not in error and len(lines) == 1
    assert not (tmp_path / "g.png").exists()


def test_results_form_reports_distributions(tmp_path, capsys):
    instance = generate("tiny", seed=2)
    schedulers = {}
    for name in ("fifo", "oasis"):
        result = simulate(instance, name)
        schedulers[name] = {"utility": result.utility, "metrics": result.metrics.to_dict(),
                            "outcomes": job_outcomes(instance, result.schedule, received=result.received).to_dict()}
    results = tmp_path / "r.jsonl"
    results.write_text(dumps_record({"key": "a", "spec": {"label": "", "preset": "tiny"}, "instance": {},
                                     "schedulers": schedulers}) + "\n")
    assert main(["plot", str(results), "--out", str(tmp_path / "figs"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["distributions"]["schedulers"]) == ["oasis", "fifo"]
    assert len(data["figures"]) == 4
    assert all(data["captions"][figure] for figure in data["figures"])
    assert main(["plot", str(results), "--max-rows", "3"]) == 2
    assert main(["plot", str(results), "--out", str(results)]) == 2
    assert "--out" in capsys.readouterr().err


@pytest.mark.parametrize("name, what", [("i.json", "is an instance file"), ("stamped.json", "is a schedule file")])
def test_an_instance_or_schedule_file_is_not_taken_for_results(files, capsys, name, what):
    assert main(["plot", str(files / name)]) == 2
    error = capsys.readouterr().err.strip()
    assert what in error and "plot schedule INSTANCE SCHEDULE" in error and len(error.splitlines()) == 1
