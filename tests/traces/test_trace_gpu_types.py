"""``trace import --gpu-types`` (issue 64): 8-GPU servers per type, each job's time per type from Gavel's
measured throughputs, and the refusals (a job type with no throughput on a listed type, a duration-only CSV,
``--gpus`` beside ``--gpu-types``)."""

from __future__ import annotations

import json

import pytest

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.traces import TraceOptions, build_instance, read_records
from primaldual.traces.throughput import ThroughputTable, packaged_table, packaged_tables

SOURCE = "philly:0/23dbec"  # 9 jobs
TYPES = (("v100", 1), ("p100", 1), ("k80", 1))


def test_each_jobs_time_per_type_is_its_measured_throughput_on_that_type(tmp_path):
    out = tmp_path / "h.json"
    assert main(["trace", "import", SOURCE, "--gpu-types", "v100:1,p100:1,k80:1", "--outlasting", "keep",
                 "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["cluster"]["gpu_types"] == ["v100", "p100", "k80"]
    assert data["cluster"]["worker_types"] == ["v100", "p100", "k80"]
    assert data["cluster"]["worker_servers"][2]["gpu"] == 8.0 and data["meta"]["trace"]["cluster"]["gpus"] == 24
    records, _ = read_records(SOURCE)
    tables = packaged_tables()
    for job in data["jobs"]:
        record = next(r for r in records if job["name"] == f"{r.name}:{r.model}")
        times = job["compute_seconds_by_type"]
        assert job["compute_seconds"] == min(times.values())
        rates = {g: tables[g].throughput(record.model, record.gpus, 0.9)[0] for g in times}
        # tau^g = R^g g / (N M) with R^g = steps / rate^g: the ratio of two types' times is that of their rates.
        assert times["k80"] / times["v100"] == pytest.approx(rates["v100"] / rates["k80"], rel=1e-12)
        assert times["p100"] / times["v100"] == pytest.approx(rates["v100"] / rates["p100"], rel=1e-12)


def test_without_the_flag_the_import_is_unchanged():
    records, found = read_records(SOURCE)
    plain = build_instance(records, TraceOptions(), packaged_table(), source=found.name, format=found.format)
    assert plain.cluster.worker_types is None and plain.meta["trace"]["gpu_type"] == "v100"
    assert all(job.compute_seconds_by_type is None for job in plain.jobs)


def test_a_job_type_with_no_throughput_on_a_listed_type_is_refused_naming_its_line():
    records, found = read_records(SOURCE)
    tables = {**packaged_tables(), "k80": ThroughputTable({}, "k80")}
    with pytest.raises(InputError) as error:
        build_instance(records, TraceOptions(gpu_types=TYPES), packaged_table(), source=found.name,
                       format=found.format, tables=tables)
    assert str(error.value).startswith(f"{found.name}:")
    assert "has no throughput on k80 in Gavel's table; leave k80 out of --gpu-types" in str(error.value)


def test_a_duration_only_csv_is_refused(tmp_path, capsys):
    (tmp_path / "t.csv").write_text("job,arrival_seconds,gpus,duration_seconds\na,0,1,3600\n")
    assert main(["trace", "import", str(tmp_path / "t.csv"), "--gpu-types", "v100:1", "-o",
                 str(tmp_path / "h.json")]) == 2
    err = capsys.readouterr().err
    assert "t.csv:2: duration_seconds: one running time, not one per GPU type" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "h.json").exists()


@pytest.mark.parametrize("extra, message", [
    (["--gpu-types", "v100:1", "--gpus", "16"], "--gpu-types: gives the 8-GPU servers per type; leave out --gpus"),
    (["--gpu-types", "h100:1"], "--gpu-types: unknown gpu type 'h100'"),
    (["--gpu-types", "k80:x"], "--gpu-types: each entry must be TYPE:SERVERS"),
    (["--gpu-types", "k80:1,k80:3"], "--gpu-types: listed twice: k80"),
])
def test_bad_flags_are_one_line_exit_2(tmp_path, capsys, extra, message):
    assert main(["trace", "import", SOURCE, *extra, "-o", str(tmp_path / "h.json")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "h.json").exists()
