"""Sweeps: spec keys, the pure task, resuming after an interruption, and identical records across executors."""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.sweep.records import ResultsFileError, dumps_record, read_records
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate
from primaldual.sweep import (
    Spec,
    deterministic_part,
    local_executor,
    ratio_interval,
    ratio_specs,
    run,
    spec_key,
    summarize,
    sweep,
)
from primaldual.core.verify import verify

from .conftest import ROOT

#: OASiS and two baselines of different kinds (FIFO plans nothing ahead, DRF re-decides every slot).
SCHEDULERS = ("oasis", "fifo", "drf")


class Stop(Exception):
    pass


def stop_after(count: int):
    seen = []

    def callback(record):
        seen.append(record["key"])
        if len(seen) >= count:
            raise Stop

    return callback


# ---------------------------------------------------------------------------------------------- specs


def test_spec_key_is_sha256_of_canonical_json():
    spec = Spec(preset="tiny", seed=3, schedulers=("fifo", "drf"), time_limit=10)
    canonical = json.dumps(spec.to_dict(), sort_keys=True, separators=(",", ":"))
    assert spec_key(spec) == hashlib.sha256(canonical.encode()).hexdigest()
    # Integer and float spellings of the same value are the same spec.
    assert spec_key(spec) == spec_key(Spec(preset="tiny", seed=3, schedulers=["fifo", "drf"], time_limit=10.0))


def test_spec_key_is_stable_across_releases():
    # A changed key silently invalidates every results file users have: change SPEC_VERSION deliberately (version 2: one OPT interval for every command)
    # (and this value) when the meaning of a spec changes.
    assert spec_key(Spec()) == "b68cfbe793287c5a236358f7c37920eca2cfd61e546f1cbfce8fb0ee1614e035"


def test_scheduler_params_order_does_not_matter_and_values_do():
    a = Spec(schedulers=("fifo", "drf"), scheduler_params={"fifo": {"x": 1, "y": [1, 2]}, "drf": {"z": "a"}})
    b = Spec(schedulers=("fifo", "drf"), scheduler_params={"drf": {"z": "a"}, "fifo": {"y": [1, 2], "x": 1}})
    c = Spec(schedulers=("fifo", "drf"), scheduler_params={"drf": {"z": "b"}, "fifo": {"y": [1, 2], "x": 1}})
    assert spec_key(a) == spec_key(b) != spec_key(c)
    assert a.params_for("fifo") == {"x": 1, "y": [1, 2]} and a.params_for("oasis") == {}
    assert Spec.from_dict(json.loads(json.dumps(a.to_dict()))) == a


@pytest.mark.parametrize("field, value", [
    ("seed", 1), ("preset", "tiny"), ("jobs", 5), ("capacity_scale", 2.0), ("time_limit", None), ("opt", False),
    ("schedulers", ("drf", "fifo")), ("threads", 2), ("label", "x"), ("mip_gap", 0.01),
])
def test_every_field_is_part_of_the_key(field, value):
    base = Spec(schedulers=("fifo", "drf"))
    assert spec_key(base) != spec_key(base.replace(**{field: value}))


@pytest.mark.parametrize("kwargs, message", [
    ({"preset": "huge"}, "preset: must be one of"),
    ({"seed": -1}, "seed: must be an integer >= 0"),
    ({"jobs": 0}, "jobs: must be a finite number >= 1"),
    ({"time_limit": float("nan")}, "time_limit"),
    ({"schedulers": ("fifo", "fifo")}, "listed twice"),
    ({"schedulers": ("fifo",), "scheduler_params": {"drf": {"a": 1}}}, "schedulers not in the spec"),
    ({"schedulers": ("fifo",), "scheduler_params": {"fifo": {"a": object()}}}, "must be a JSON value"),
    ({"schedulers": (), "opt": False}, "nothing to run"),
])
def test_bad_specs_are_refused_with_the_field_named(kwargs, message):
    with pytest.raises(InputError, match=message):
        Spec(**kwargs)


def test_unknown_scheduler_fails_before_anything_runs(tmp_path):
    with pytest.raises(InputError, match="unknown scheduler 'nope'"):
        sweep([Spec(preset="tiny", schedulers=("nope",))], tmp_path / "r.jsonl", progress=False)
    assert not (tmp_path / "r.jsonl").exists()


# ---------------------------------------------------------------------------------------------- the task


@pytest.fixture(scope="module")
def small_record():
    return run(Spec(preset="small", seed=7, schedulers=SCHEDULERS, time_limit=None))


def test_record_is_plain_json(small_record):
    text = dumps_record(small_record)
    assert json.loads(text) == small_record
    assert set(small_record["timings"]) >= {"total_seconds", "opt_seconds", "schedulers"}
    assert "scheduler_seconds" not in json.dumps(deterministic_part(small_record))
    assert set(small_record["versions"]) >= {"primaldual", "pyomo", "highspy"}


@pytest.mark.slow  # a second run of the small instance (2 s); the fast tier compares reruns on tiny instances below
def test_record_is_deterministic(small_record):
    again = run(Spec(preset="small", seed=7, schedulers=SCHEDULERS, time_limit=None))
    assert deterministic_part(again) == deterministic_part(small_record)


def test_record_utilities_are_the_verifiers(small_record):
    instance = generate("small", seed=7)
    for name in SCHEDULERS:
        schedule = simulate(instance, make_scheduler(name)).schedule
        check = verify(instance, schedule)
        entry = small_record["schedulers"][name]
        assert check.feasible and entry["feasible"]
        assert entry["utility"] == pytest.approx(check.utility, abs=1e-9)


def test_opt_interval_brackets_every_schedule_and_gives_the_ratios(small_record):
    opt, interval = small_record["opt"], small_record["opt_interval"]
    assert opt["status"] == "optimal" and interval["exact"]
    assert opt["verified"] and opt["utility"] == opt["objective"] == interval["low"]
    for name, entry in small_record["schedulers"].items():
        assert entry["utility"] <= interval["low"] + 1e-9
        ratio = small_record["ratios"][name]
        if entry["utility"] > 0:
            assert ratio["point"] == pytest.approx(interval["low"] / entry["utility"])
            assert ratio["lower"] <= ratio["upper"]
    certificate = interval["upper_candidates"]["oasis_certificate"]
    assert certificate >= interval["low"] - 1e-6 * max(1.0, certificate)  # weak duality
    assert small_record["ratios"]["oasis"]["certificate"] >= small_record["ratios"]["oasis"]["point"] - 1e-6


def test_without_opt_the_interval_comes_from_the_certificate():
    record = run(Spec(preset="small", seed=7, schedulers=SCHEDULERS, opt=False))
    opt, interval = record["opt"], record["opt_interval"]
    assert opt["computed"] is False and "status" not in opt
    assert interval["high"] == min(interval["upper_candidates"].values())
    assert interval["low"] == max(entry["utility"] for entry in record["schedulers"].values())
    # The standalone bound (every job alone on the empty cluster) replaces the looser "trivial" bound of
    # version 1 records; compare had used only the former.
    assert set(interval["upper_candidates"]) == {"standalone", "oasis_certificate"}


def test_ratio_interval_edge_cases():
    assert ratio_interval(10.0, 12.0, 5.0) == {"point": 2.0, "lower": 2.0, "upper": 2.4, "exact": False,
                                               "proven": False}
    assert ratio_interval(0.0, 0.0, 0.0)["point"] == 1.0  # nothing to earn, nothing earned
    unbounded = ratio_interval(3.0, 3.0, 0.0)
    assert unbounded["point"] is None and unbounded["upper"] is None and unbounded["exact"]


def test_summarize_means_worsts_intervals_and_unbounded():
    def record(points, upper_factor=1.0):
        return {
            "opt": {"status": "optimal"},
            "schedulers": {name: {"utility": 1.0} for name in points},
            "ratios": {
                name: (ratio_interval(p, p * upper_factor, 1.0) if p is not None else ratio_interval(1.0, 1.0, 0.0))
                for name, p in points.items()
            },
        }

    records = [record({"a": 1.0, "b": 2.0}), record({"a": 1.5, "b": None}, upper_factor=2.0)]
    summary = summarize(records)
    a, b = summary["schedulers"]["a"], summary["schedulers"]["b"]
    assert a["mean"] == pytest.approx(1.25) and a["worst"] == 1.5 and a["exact"] == 1
    assert a["mean_interval"] == pytest.approx([1.25, 2.0]) and a["worst_interval"] == pytest.approx([1.5, 3.0])
    assert b["instances"] == 2 and b["unbounded"] == 1 and b["mean"] == 2.0
    # ALG = 0 < OPT is an infinite ratio: the worst, counted beside the mean, never dropped.
    assert b["worst"] == float("inf") and b["worst_interval"] == [float("inf"), float("inf")]
    assert summary["opt_status"] == {"optimal": 2}


# ---------------------------------------------------------------------------------------------- resuming


@pytest.fixture(scope="module")
def pool():
    """One pool of spawned workers for the module (starting one costs seconds; the default is tested once)."""
    executor = local_executor(2)
    yield executor
    executor.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def tiny_specs():
    return ratio_specs("tiny", 8, seed=0, schedulers=SCHEDULERS, time_limit=None)


@pytest.fixture(scope="module")
def uninterrupted(tiny_specs, tmp_path_factory):
    path = tmp_path_factory.mktemp("full") / "r.jsonl"
    result = sweep(tiny_specs, path, workers=2, progress=False)  # the default executor
    assert result.computed == len(tiny_specs) and result.skipped == 0
    return {record["key"]: deterministic_part(record) for record in result.records}


@pytest.mark.slow  # a killed sweep resumed (3 s); test_a_cut_short_last_line_is_recomputed stays fast
def test_interrupted_sweep_resumes_to_exactly_the_uninterrupted_records(tiny_specs, uninterrupted, pool, tmp_path):
    path = tmp_path / "r.jsonl"
    with pytest.raises(Stop):
        sweep(tiny_specs, path, executor=pool, progress=False, on_record=stop_after(3))
    written = read_records(path)
    assert len(written) == 3  # each record is on disk before the next one is taken
    resumed = sweep(tiny_specs, path, executor=pool, progress=False)
    assert resumed.skipped == 3 and resumed.computed == len(tiny_specs) - 3
    lines = path.read_text().splitlines()
    assert len(lines) == len(tiny_specs)  # nothing written twice
    final = {key: deterministic_part(record) for key, record in read_records(path).items()}
    assert final == uninterrupted
    assert [r["key"] for r in resumed.records] == [spec_key(s) for s in tiny_specs]  # spec order
    again = sweep(tiny_specs, path, executor=pool, progress=False)
    assert again.computed == 0 and path.read_text().splitlines() == lines


def test_a_cut_short_last_line_is_recomputed(tiny_specs, uninterrupted, pool, tmp_path):
    path = tmp_path / "r.jsonl"
    sweep(tiny_specs[:4], path, executor=pool, progress=False)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # killed in the middle of writing the 4th record
    assert len(read_records(path)) == 3
    result = sweep(tiny_specs, path, executor=pool, progress=False)
    assert result.skipped == 3 and result.computed == len(tiny_specs) - 3
    assert {k: deterministic_part(r) for k, r in read_records(path).items()} == uninterrupted


def test_malformed_line_stops_the_sweep_with_its_line_number(tiny_specs, pool, tmp_path):
    path = tmp_path / "r.jsonl"
    sweep(tiny_specs[:3], path, executor=pool, progress=False)
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:50] + "}"  # a damaged record in the middle of the file
    path.write_text("\n".join(lines) + "\n")
    before = path.read_bytes()
    with pytest.raises(ResultsFileError, match=r"r\.jsonl: line 2: not valid JSON"):
        sweep(tiny_specs, path, executor=pool, progress=False)
    assert path.read_bytes() == before  # nothing appended, nothing dropped


def test_duplicate_specs_run_once(tiny_specs, pool, tmp_path):
    path = tmp_path / "r.jsonl"
    result = sweep([tiny_specs[0], tiny_specs[1], tiny_specs[0]], path, executor=pool, progress=False)
    assert result.computed == 2 and len(result.records) == 2
    assert len(path.read_text().splitlines()) == 2


# Slow: a real process killed mid-sweep (1-1.5 s). The fast tier resumes an interrupted sweep to the same records
# and recomputes a last line cut short by a kill, in this process (test_interrupted_sweep_resumes_to_exactly_the_
# uninterrupted_records, test_a_cut_short_last_line_is_recomputed).
@pytest.mark.slow
def test_killed_process_resumes_without_loss_or_duplicates(pool, tmp_path):
    """SIGKILL a real sweep process part-way, then finish the sweep: same records as one uninterrupted run."""
    path = tmp_path / "r.jsonl"
    count = 12
    script = (
        "from primaldual.sweep import ratio_specs, sweep\n"
        "if __name__ == '__main__':\n"
        f"    specs = ratio_specs('paper', {count}, seed=0, schedulers=('fifo',), jobs=30, opt=False)\n"
        f"    sweep(specs, {str(path)!r}, workers=1, progress=False)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if path.exists() and path.read_bytes().count(b"\n") >= 2:
                break
            if process.poll() is not None:
                break
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)  # the sweep and its worker process, mid-run
    finally:
        process.wait(timeout=30)
    done = len(read_records(path))
    assert 2 <= done < count, "the sweep must have been killed part-way"
    specs = ratio_specs("paper", count, seed=0, schedulers=("fifo",), jobs=30, opt=False)
    resumed = sweep(specs, path, executor=pool, progress=False)
    assert resumed.skipped == done and resumed.computed == count - done
    assert len(path.read_text().splitlines()) == count
    fresh = sweep(specs, tmp_path / "fresh.jsonl", executor=pool, progress=False)
    assert {r["key"]: deterministic_part(r) for r in resumed.records} == {
        r["key"]: deterministic_part(r) for r in fresh.records
    }


# ---------------------------------------------------------------------------------------------- Dask


@pytest.mark.slow  # a two-worker cluster; the fast tier sweeps on dask in the test of dask_executor below
def test_dask_local_cluster_gives_identical_records(tiny_specs, uninterrupted, tmp_path):
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None, host="127.0.0.1",
    )
    try:
        with distributed.Client(cluster) as client:
            result = sweep(tiny_specs, tmp_path / "dask.jsonl", executor=client.get_executor(), progress=False)
    finally:
        cluster.close()
    assert result.computed == len(tiny_specs)
    assert {r["key"]: deterministic_part(r) for r in result.records} == uninterrupted


def test_any_executor_and_the_progress_bar(tiny_specs, uninterrupted, tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    with ThreadPoolExecutor(max_workers=1) as executor:
        sweep(tiny_specs[:2], path, executor=executor, progress=False)
        result = sweep(tiny_specs[:3], path, executor=executor, progress=True)
    assert {r["key"]: deterministic_part(r) for r in result.records}.items() <= uninterrupted.items()
    err = capsys.readouterr().err
    assert "3/3" in err and "r.jsonl" in err


def test_ratios_are_finite_or_counted(uninterrupted):
    for record in uninterrupted.values():
        for name, ratio in record["ratios"].items():
            utility = record["schedulers"][name]["utility"]
            if ratio["point"] is None:
                assert utility == 0 and record["opt_interval"]["low"] > 0
            else:
                assert math.isfinite(ratio["point"]) and ratio["point"] >= 1 - 1e-9


@pytest.mark.slow  # a local Dask cluster started and closed (4 s)
def test_dask_executor_starts_and_closes_a_local_cluster(tiny_specs, uninterrupted, tmp_path):
    pytest.importorskip("distributed")
    from primaldual.sweep import dask_executor

    with dask_executor(None, workers=1) as executor:
        result = sweep(tiny_specs[:2], tmp_path / "d.jsonl", executor=executor, progress=False)
        client = executor._client
    assert client.status == "closed"
    assert {r["key"]: deterministic_part(r) for r in result.records}.items() <= uninterrupted.items()


def test_a_record_from_an_earlier_scheduler_revision_is_recomputed_and_a_current_one_reused(tmp_path):
    # A changed default (oasis-lr's eta, revision 2) keeps the spec's key: without the revision a resumed sweep
    # would silently reuse numbers the package no longer computes.
    from primaldual.simulation.scheduler import scheduler_revision

    out = tmp_path / "r.jsonl"
    spec = Spec(preset="tiny", seed=5, schedulers=("oasis-lr", "fifo"), opt=False)
    with ThreadPoolExecutor(1) as executor:
        first = sweep([spec], out, executor=executor, progress=False)
        assert first.computed == 1
        record = first.records[0]
        assert record["scheduler_revisions"] == {"oasis-lr": scheduler_revision("oasis-lr"), "fifo": 1}
        assert scheduler_revision("oasis-lr") == 7 and scheduler_revision("oasis-p") == 3
        assert sweep([spec], out, executor=executor, progress=False).computed == 0

        old = dict(record)
        del old["scheduler_revisions"]  # what a record made before revisions existed looks like (revision 1)
        old["schedulers"] = {**record["schedulers"], "oasis-lr": {**record["schedulers"]["oasis-lr"], "utility": -1}}
        out.write_text(dumps_record(old) + "\n")
        again = sweep([spec], out, executor=executor, progress=False)
    assert again.computed == 1
    on_disk = read_records(out)
    assert list(on_disk) == [record["key"]]  # the outdated record is replaced, not kept beside the new one
    assert on_disk[record["key"]]["schedulers"]["oasis-lr"]["utility"] == record["schedulers"]["oasis-lr"]["utility"]


def test_a_custom_task_s_records_are_stamped_by_the_sweep_and_reused(tmp_path):
    from primaldual.simulation.scheduler import scheduler_revision

    out = tmp_path / "r.jsonl"
    spec = Spec(preset="tiny", seed=5, schedulers=("oasis-lr",), opt=False)
    with ThreadPoolExecutor(1) as executor:
        first = sweep([spec], out, executor=executor, progress=False, task=_task_with_a_wrong_stamp)
        assert first.records[0]["scheduler_revisions"] == {"oasis-lr": scheduler_revision("oasis-lr")}
        assert sweep([spec], out, executor=executor, progress=False, task=_task_with_a_wrong_stamp).computed == 0


def _task_with_a_wrong_stamp(spec):
    from primaldual.sweep.task import run as run_spec

    record = run_spec(spec)
    assert "scheduler_revisions" not in record  # the task does not stamp it; the sweep does
    return {**record, "scheduler_revisions": {"oasis-lr": 1}}  # a wrong stamp is overwritten too


@pytest.mark.parametrize("value", [1.5, -0.1, float("nan"), "0.1"])
def test_a_spec_refuses_a_restart_cost_the_simulator_would_refuse(value):
    # Before, Spec accepted any F >= 0 and the sweep failed inside a worker, leaving an empty results file.
    with pytest.raises(InputError, match=r"restart_cost: must be a number in \[0, 1\)"):
        Spec(restart_cost=value)
    assert Spec(restart_cost=-0.0).restart_cost == 0.0 and str(Spec(restart_cost=-0.0).restart_cost) == "0.0"
