"""JSON files: exact round trips (hypothesis) and one test per validation rule (message + exit code 2)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.core.files import (
    instance_from_dict,
    instance_to_dict,
    load_instance,
    load_schedule,
    save_instance,
    save_schedule,
    schedule_from_dict,
    schedule_to_dict,
)
from primaldual.core.generate import generate
from primaldual.core.instance import Cluster, Instance, Job
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.utility import Constant, LinearDecay, Sigmoid, Step

# ------------------------------------------------------------------------------------------ strategies

finite = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)
utilities = st.one_of(
    st.builds(Sigmoid, finite, st.floats(0.0, 20.0), st.floats(-1e3, 1e3)),
    st.builds(LinearDecay, finite, positive),
    st.builds(Step, finite, finite),
    st.builds(Constant, finite),
)


@st.composite
def instances(draw) -> Instance:
    n_resources = draw(st.integers(1, 3))
    resources = tuple(draw(st.lists(st.text("abcdefgh", min_size=1, max_size=5), min_size=n_resources,
                                    max_size=n_resources, unique=True)))
    horizon = draw(st.integers(1, 50))
    worker_capacity = np.array(draw(st.lists(st.lists(st.floats(1.0, 1e4), min_size=n_resources,
                                                      max_size=n_resources), min_size=1, max_size=4)))
    ps_capacity = np.array(draw(st.lists(st.lists(st.floats(1.0, 1e4), min_size=n_resources,
                                                  max_size=n_resources), min_size=1, max_size=4)))
    jobs = []
    for n in range(draw(st.integers(0, 5))):
        b = draw(st.floats(1.0, 100.0))
        jobs.append(
            Job(
                arrival=draw(st.integers(0, horizon - 1)),
                epochs=draw(st.integers(1, 10)),
                chunks=draw(st.integers(1, 16)),
                minibatches_per_chunk=draw(st.integers(1, 100)),
                # W = E N M (tau + 2e/b) / slot stays within the work domain (primaldual/core/domains.py)
                compute_seconds=draw(st.floats(1e-3, 1e3)),
                gradient_mb=draw(st.floats(0.0, 1e3)),
                worker_bandwidth_gbps=b,
                ps_bandwidth_gbps=b * draw(st.floats(1.0, 10.0)),
                # 0 or at least 1e-3 (the demand domain): a fraction of the smallest capacity (>= 1)
                worker_demand=worker_capacity.min(axis=0) * draw(st.sampled_from([0.0]) | st.floats(1e-3, 1.0)),
                ps_demand=ps_capacity.min(axis=0) * draw(st.sampled_from([0.0]) | st.floats(1e-3, 1.0)),
                utility=draw(utilities),
                name=draw(st.text(max_size=8)),
            )
        )
    return Instance(
        cluster=Cluster(resources, worker_capacity, ps_capacity),
        jobs=tuple(jobs),
        horizon=horizon,
        slot_seconds=draw(st.floats(60.0, 1e5)),
        meta={"seed": draw(st.integers(0, 10))},
    )


@given(instances())
def test_instance_round_trip_is_exact(instance):
    data = instance_to_dict(instance)
    again = instance_from_dict(json.loads(json.dumps(data)))
    assert instance_to_dict(again) == data
    np.testing.assert_array_equal(again.work, instance.work)
    np.testing.assert_array_equal(again.work_units, instance.work_units)


@st.composite
def instance_and_schedule(draw):
    instance = draw(instances())
    assignments = {}
    for i in range(instance.n_jobs):
        if draw(st.booleans()):
            shape_w = (instance.horizon, instance.cluster.n_worker_servers)
            shape_z = (instance.horizon, instance.cluster.n_ps_servers)
            counts = st.one_of(st.integers(0, 9), st.floats(-3.0, 9.0, allow_nan=False, allow_infinity=False))
            w = np.array(draw(st.lists(counts, min_size=shape_w[0] * shape_w[1],
                                       max_size=shape_w[0] * shape_w[1]))).reshape(shape_w)
            z = np.array(draw(st.lists(counts, min_size=shape_z[0] * shape_z[1],
                                       max_size=shape_z[0] * shape_z[1]))).reshape(shape_z)
            assignments[i] = JobSchedule(w, z)
    return instance, Schedule(assignments, meta={"scheduler": "test"})


@given(instance_and_schedule())
def test_schedule_round_trip_is_exact(pair):
    instance, schedule = pair
    data = schedule_to_dict(schedule)
    again = schedule_from_dict(json.loads(json.dumps(data)), instance)
    assert again.same_allocation(schedule)
    assert schedule_to_dict(again) == data


def test_round_trip_through_files(tmp_path):
    instance = generate("small", seed=4)
    save_instance(instance, tmp_path / "i.json")
    again = load_instance(tmp_path / "i.json")
    assert instance_to_dict(again) == instance_to_dict(instance)
    schedule = Schedule({0: JobSchedule.empty(instance.horizon, 4, 4)})
    save_schedule(schedule, tmp_path / "s.json")
    assert load_schedule(tmp_path / "s.json", instance).same_allocation(schedule)


# ------------------------------------------------------------------------------- one test per rule


def _base() -> dict:
    return instance_to_dict(generate("small", seed=1))


def _set(data, path, value):
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value


_DELETE = object()

RULES = [
    ("negative demand", ("jobs", 3, "worker_demand", "gpu"), -1, "jobs[3].worker_demand.gpu: must be 0 or a number in [0.001, 1e9], got -1"),
    ("missing field", ("jobs", 0, "epochs"), _DELETE, "jobs[0].epochs: missing"),
    ("missing resource", ("jobs", 2, "ps_demand", "memory"), _DELETE, "jobs[2].ps_demand.memory: missing"),
    ("unknown resource", ("jobs", 1, "worker_demand", "tpu"), 1, "jobs[1].worker_demand.tpu: unknown resource"),
    ("fits nowhere", ("jobs", 0, "worker_demand", "gpu"), 64, "jobs[0].worker_demand: fits on no worker server"),
    ("ps fits nowhere", ("jobs", 0, "ps_demand", "cpu"), 1000, "jobs[0].ps_demand: fits on no PS server"),
    ("b > B", ("jobs", 4, "worker_bandwidth_gbps"), 100.0, "jobs[4].worker_bandwidth_gbps: must be <= ps_bandwidth_gbps"),
    ("arrival past horizon", ("jobs", 5, "arrival"), 20, "jobs[5].arrival: must be a slot in 0..19"),
    ("negative arrival", ("jobs", 5, "arrival"), -1, "jobs[5].arrival: must be an integer in 0..99999, got -1"),
    ("fractional chunks", ("jobs", 6, "chunks"), 2.5, "jobs[6].chunks: must be an integer in 1..1e9, got 2.5"),
    ("zero bandwidth", ("jobs", 6, "ps_bandwidth_gbps"), 0, "jobs[6].ps_bandwidth_gbps: must be a number in [1e-6, 1e6], got 0"),
    ("string number", ("jobs", 7, "gradient_mb"), "big", "jobs[7].gradient_mb: must be a number in [0, 1e9], got 'big'"),
    ("unknown job field", ("jobs", 7, "priority"), 3, "jobs[7].priority: unknown field"),
    ("bad utility", ("jobs", 8, "utility", "gamma1"), -5, "jobs[8].utility.gamma1: must be a number in [0, 1e12], got -5"),
    ("negative capacity", ("cluster", "worker_servers", 1, "cpu"), -2, "cluster.worker_servers[1].cpu: must be a number in [0, 1e9], got -2"),
    ("missing capacity", ("cluster", "ps_servers", 0, "cpu"), _DELETE, "cluster.ps_servers[0].cpu: missing"),
    ("no servers", ("cluster", "ps_servers"), [], "cluster.ps_servers: must be a list of 1..10000 servers, got []"),
    ("duplicate resources", ("cluster", "resources"), ["gpu", "gpu", "cpu"], "cluster.resources: names must be unique"),
    ("bad horizon", ("horizon",), 0, "horizon: must be an integer in 1..100000, got 0"),
    ("bad slot length", ("slot_seconds",), -3600, "slot_seconds: must be a number in [1e-6, 1e9], got -3600"),
    ("wrong version", ("version",), 3, "version: this primaldual reads schema version 1 or 2, got 3"),
    ("types missing in version 2", ("version",), 2,
     "version: version 2 is a heterogeneous instance, but cluster.gpu_types is missing"),
    ("wrong format", ("format",), "primaldual.schedule", "format: must be 'primaldual.instance'"),
    ("jobs not a list", ("jobs",), {"a": 1}, "jobs: must be a list of at most 100000 jobs"),
]


@pytest.mark.parametrize("label, path, value, message", RULES, ids=[r[0] for r in RULES])
def test_each_validation_rule_names_the_field(label, path, value, message):
    data = _base()
    _set(data, path, value)
    with pytest.raises(InputError) as error:
        instance_from_dict(data)
    assert message in str(error.value)


@pytest.mark.parametrize("label, path, value, message", RULES, ids=[r[0] for r in RULES])
def test_each_validation_rule_exits_2_without_traceback(tmp_path, capsys, label, path, value, message):
    data = _base()
    _set(data, path, value)
    (tmp_path / "i.json").write_text(json.dumps(data))
    (tmp_path / "s.json").write_text(json.dumps({"format": "primaldual.schedule", "version": 1, "jobs": []}))
    assert main(["verify", str(tmp_path / "i.json"), str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_every_problem_is_reported_not_just_the_first():
    data = _base()
    data["jobs"][0]["epochs"] = 0
    data["jobs"][1]["worker_demand"]["gpu"] = -1
    data["horizon"] = "long"
    with pytest.raises(InputError) as error:
        instance_from_dict(data)
    assert len(error.value.problems) == 3


def test_malformed_json_names_line_and_exits_2(tmp_path, capsys):
    path = tmp_path / "i.json"
    path.write_text('{"format": "primaldual.instance",\n "version": 1,,\n}')
    with pytest.raises(InputError, match="malformed JSON at line 2"):
        load_instance(path)
    assert main(["verify", str(path), str(path)]) == 2
    assert "malformed JSON at line 2" in capsys.readouterr().err


def test_missing_file_exits_2(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "none.json"), str(tmp_path / "s.json")]) == 2
    assert "instance file not found" in capsys.readouterr().err


def test_loading_never_clamps(tmp_path):
    """A valid file loads with exactly the numbers it holds."""
    data = _base()
    data["jobs"][0]["worker_demand"]["cpu"] = 3.25
    instance = instance_from_dict(copy.deepcopy(data))
    assert instance.jobs[0].worker_demand[1] == 3.25


SCHEDULE_RULES = [
    ({"job": 99, "workers": [], "parameter_servers": []}, "jobs[0].job: must be a job index in 0..9, got 99"),
    ({"job": 0, "workers": [[20, 0, 1]], "parameter_servers": []}, "jobs[0].workers[0]: slot must be an integer in 0..19, got 20"),
    ({"job": 0, "workers": [[1, 4, 1]], "parameter_servers": []}, "jobs[0].workers[0]: server must be an integer in 0..3, got 4"),
    ({"job": 0, "workers": [[1, 0, 1], [1, 0, 2]], "parameter_servers": []}, "slot 1 server 0 is listed twice"),
    ({"job": 0, "workers": [[1, 0]], "parameter_servers": []}, "jobs[0].workers[0]: must be [slot, server, count], got [1, 0]"),
    ({"job": 0, "workers": []}, "jobs[0].parameter_servers: must be a list"),
]


@pytest.mark.parametrize("entry, message", SCHEDULE_RULES)
def test_schedule_validation(entry, message):
    instance = generate("small", seed=1)
    with pytest.raises(InputError) as error:
        schedule_from_dict({"format": "primaldual.schedule", "version": 1, "jobs": [entry]}, instance)
    assert message in str(error.value)


def test_job_with_work_has_exactly_that_work():
    from primaldual.core.instance import Cluster, Instance, job_with_work

    for work, chunks, slot in ((1, 1, 1.0), (7, 3, 3600.0), (12, 5, 60.0)):
        job = job_with_work(work, chunks, [1.0], [1.0], Constant(1.0), slot_seconds=slot,
                            worker_bandwidth_gbps=1.0, ps_bandwidth_gbps=3.0)
        instance = Instance(Cluster(("gpu",), [[4.0]], [[4.0]]), (job,), horizon=10, slot_seconds=slot)
        assert instance.work_units[0] == work
        assert job.min_parameter_servers(4) == 2
