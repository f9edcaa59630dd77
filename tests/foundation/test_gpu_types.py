"""Heterogeneous accelerators, first step (issue 64): the instance format, its validation, the generator's
``--gpu-types``, the verifier's one-type rule and eq. (2) at each type's speed, and the refusals of every path
that does not handle types yet."""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import statistics

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.core.files import instance_from_dict, instance_to_dict, save_instance, save_schedule
from primaldual.core.fingerprint import fingerprint_of
from primaldual.core.generate import generate
from primaldual.core.gpu_types import GAVEL_TIME_RATIO
from primaldual.core.instance import Cluster, Instance
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.verify import verify

from .builders import make_job
from .test_files import instances

TYPES = [("v100", 2), ("p100", 1), ("k80", 1)]


# ------------------------------------------------------------------------------------------ the model


@st.composite
def typed_instances(draw) -> Instance:
    """An instance of :func:`instances` with 1..H types over its worker servers and a time per type per job."""
    base = draw(instances())
    servers = base.cluster.n_worker_servers
    n_types = draw(st.integers(1, servers))
    names = draw(st.lists(st.text("abcxyz019", min_size=1, max_size=4), min_size=n_types, max_size=n_types,
                          unique=True))
    # Every type has a server (the first n_types servers take one each), the rest drawn.
    worker_types = names + draw(st.lists(st.sampled_from(names), min_size=servers - n_types,
                                         max_size=servers - n_types))
    jobs = []
    for job in base.jobs:
        slower = draw(st.lists(st.floats(1.0, 5.0), min_size=n_types, max_size=n_types))
        times = {name: job.compute_seconds * factor for name, factor in zip(names, slower)}
        times[names[draw(st.integers(0, n_types - 1))]] = job.compute_seconds  # the fastest: compute_seconds
        jobs.append(dataclasses.replace(job, compute_seconds_by_type=times))
    cluster = Cluster(base.cluster.resources, base.cluster.worker_capacity, base.cluster.ps_capacity,
                      worker_types, names)
    return Instance(cluster, tuple(jobs), base.horizon, base.slot_seconds, base.meta)


@given(typed_instances())
def test_heterogeneous_round_trip_is_exact(instance):
    data = instance_to_dict(instance)
    again = instance_from_dict(json.loads(json.dumps(data)))
    assert instance_to_dict(again) == data
    assert again.cluster.worker_types == instance.cluster.worker_types
    np.testing.assert_array_equal(again.work_by_type, instance.work_by_type)
    # Instance.work is the fastest type's W: the least of the row.
    np.testing.assert_allclose(instance.work, instance.work_by_type.min(axis=1), rtol=1e-12)


def test_a_homogeneous_file_has_no_type_fields_and_its_fingerprint_is_unchanged():
    data = instance_to_dict(generate("tiny", seed=1))
    assert "gpu_types" not in data["cluster"] and "worker_types" not in data["cluster"]
    assert all("compute_seconds_by_type" not in job for job in data["jobs"])
    # The fingerprints of main at 66028aa, before issue 64.
    assert fingerprint_of(data) == "sha256:77d233a255fd6712"
    assert fingerprint_of(instance_to_dict(generate("paper", seed=3))) == "sha256:0bb99cbe0e70940b"


def test_generated_types_keep_the_draw_and_scale_the_time_by_gavels_median():
    typed = generate("small", seed=5, gpu_types=TYPES)
    plain = generate("small", seed=5, worker_servers=4)
    assert typed.cluster.worker_types == ("v100", "v100", "p100", "k80")
    np.testing.assert_array_equal(typed.cluster.worker_capacity, plain.cluster.worker_capacity)
    for job, same in zip(typed.jobs, plain.jobs):
        assert job.compute_seconds == same.compute_seconds
        times = dict(job.compute_seconds_by_type)
        assert times["v100"] == job.compute_seconds
        assert times["k80"] == round(job.compute_seconds * GAVEL_TIME_RATIO["k80"], 4)
    # Without v100, P100 is the fastest listed type: its time is the drawn one.
    p100 = generate("small", seed=5, gpu_types=[("p100", 2), ("k80", 2)])
    assert all(dict(j.compute_seconds_by_type)["p100"] == j.compute_seconds for j in p100.jobs)


def test_the_stated_time_ratios_are_the_medians_of_gavels_table():
    from primaldual.traces.throughput import _packaged_data

    data = _packaged_data()

    def alone(gpu_type):
        table = {}
        for key, colocated in data[gpu_type].items():
            job_type, gpus = ast.literal_eval(key)
            if gpus == 1 and colocated.get("null"):
                table[job_type] = colocated["null"]
        return table

    v100 = alone("v100")
    for gpu_type in ("p100", "k80"):
        other = alone(gpu_type)
        assert GAVEL_TIME_RATIO[gpu_type] == statistics.median(v100[t] / other[t] for t in v100 if t in other)


# ------------------------------------------------------------------------------------------ validation


def _typed() -> dict:
    return instance_to_dict(generate("small", seed=1, gpu_types=TYPES))


def _mutate(data, change):
    change(data)
    return data


RULES = [
    ("unknown server type", lambda d: d["cluster"]["worker_types"].__setitem__(3, "a100"),
     "cluster.worker_types[3]: unknown type 'a100'"),
    ("type with no servers", lambda d: d["cluster"]["worker_types"].__setitem__(3, "v100"),
     "cluster.gpu_types: k80: a type with no worker servers"),
    ("duplicate types", lambda d: d["cluster"]["gpu_types"].append("v100"), "cluster.gpu_types: listed twice: v100"),
    ("zero time", lambda d: d["jobs"][2]["compute_seconds_by_type"].__setitem__("k80", 0),
     "jobs[2].compute_seconds_by_type.k80: must be a number in [1e-9, 1e9], got 0"),
    ("negative time", lambda d: d["jobs"][2]["compute_seconds_by_type"].__setitem__("p100", -1.5),
     "jobs[2].compute_seconds_by_type.p100: must be a number in [1e-9, 1e9], got -1.5"),
    ("missing time", lambda d: d["jobs"][4]["compute_seconds_by_type"].pop("p100"),
     "jobs[4].compute_seconds_by_type.p100: missing"),
    ("unknown job type", lambda d: d["jobs"][4]["compute_seconds_by_type"].__setitem__("tpu", 3.0),
     "jobs[4].compute_seconds_by_type.tpu: unknown type"),
    ("no times", lambda d: d["jobs"][1].pop("compute_seconds_by_type"), "jobs[1].compute_seconds_by_type: missing"),
    ("not the fastest", lambda d: d["jobs"][1].__setitem__("compute_seconds", 1.0),
     "jobs[1].compute_seconds: must equal the least of compute_seconds_by_type"),
    ("types on a homogeneous cluster", lambda d: [d["cluster"].pop(k) for k in ("gpu_types", "worker_types")]
     + [d.__setitem__("version", 1)],
     "jobs[0].compute_seconds_by_type: the cluster declares no gpu_types"),
    ("worker types without declared types", lambda d: d["cluster"].pop("gpu_types"), "cluster.gpu_types: missing"),
    ("one type per server", lambda d: d["cluster"]["worker_types"].pop(),
     "cluster.worker_types: must give one type per worker server (4), got 3"),
    ("not a list", lambda d: d["cluster"].__setitem__("gpu_types", "v100"),
     "cluster.gpu_types: must be a list of type names"),
]


@pytest.mark.parametrize("label, change, message", RULES, ids=[r[0] for r in RULES])
def test_each_type_rule_is_one_line_naming_the_field_exit_2(tmp_path, capsys, label, change, message):
    data = _mutate(_typed(), change)
    with pytest.raises(InputError) as error:
        instance_from_dict(copy.deepcopy(data))
    assert len(error.value.problems) == 1 and message in error.value.problems[0]
    (tmp_path / "i.json").write_text(json.dumps(data))
    (tmp_path / "s.json").write_text(json.dumps({"format": "primaldual.schedule", "version": 1, "jobs": []}))
    assert main(["verify", str(tmp_path / "i.json"), str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ------------------------------------------------------------------------------------------ the verifier


def _two_types(work=2, slower=2.0) -> Instance:
    """One worker server of each type (fast ``v100``, ``slower`` x slower ``k80``), one job of ``work`` worker-slots
    on the fast type (``W^k80 = slower x work``), two chunks."""
    job = make_job(work_slots=work, chunks=2)
    job = dataclasses.replace(job, compute_seconds_by_type={"v100": job.compute_seconds,
                                                            "k80": job.compute_seconds * slower})
    cluster = Cluster(("gpu", "cpu"), np.array([[2.0, 4.0], [2.0, 4.0]]), np.array([[0.0, 4.0]]), ("v100", "k80"))
    return Instance(cluster, (job,), 4, 3600.0)


def _schedule(workers: dict[tuple[int, int], int]) -> Schedule:
    """Workers ``{(slot, server): count}`` with one PS (b = 1 <= B = 2 per worker: 2 workers need 1 PS)."""
    y, z = np.zeros((4, 2)), np.zeros((4, 1))
    for (t, h), count in workers.items():
        y[t, h] = count
        z[t, 0] = 1
    return Schedule({0: JobSchedule(y, z)})


def test_work_at_each_types_speed_and_a_change_of_type_between_slots_verify():
    instance = _two_types()  # W^v100 = 2, W^k80 = 4
    assert verify(instance, _schedule({(0, 0): 2})).feasible  # 2 / 2
    assert verify(instance, _schedule({(0, 0): 1, (1, 1): 2})).feasible  # 1/2 + 2/4, v100 then k80
    assert verify(instance, _schedule({(0, 1): 2, (1, 1): 2})).feasible  # 4 / 4


def test_mutation_two_types_in_one_slot_is_exactly_the_one_type_violation():
    report = verify(_two_types(), _schedule({(0, 0): 1, (0, 1): 1, (1, 0): 1, (1, 1): 1}))  # enough work: 1.5
    assert report.kinds == {"one_type"}
    assert [(v.equation, v.slot) for v in report.violations] == [("(2)", 0), ("(2)", 1)]
    assert "1 v100, 1 k80" in report.violations[0].message


def test_mutation_too_little_work_at_the_slower_types_speed_is_exactly_the_work_violation():
    # 2 worker-slots finish the job on the v100 but do half of it on the k80 (W^k80 = 4).
    report = verify(_two_types(), _schedule({(0, 1): 2}))
    assert report.kinds == {"work"}
    assert "do 0.5 of its work" in report.violations[0].message
    # The same counts on the fast server verify: only the type changed.
    assert verify(_two_types(), _schedule({(0, 0): 2})).feasible


def test_cli_verify_judges_a_hand_made_heterogeneous_schedule(tmp_path, capsys):
    instance = _two_types()
    save_instance(instance, tmp_path / "i.json")
    save_schedule(_schedule({(0, 0): 1, (1, 1): 2}), tmp_path / "ok.json", instance)
    save_schedule(_schedule({(0, 0): 1, (0, 1): 1, (1, 0): 1, (1, 1): 1}), tmp_path / "mixed.json", instance)
    assert main(["verify", str(tmp_path / "i.json"), str(tmp_path / "ok.json")]) == 0
    assert main(["verify", str(tmp_path / "i.json"), str(tmp_path / "mixed.json")]) == 1
    assert "more than one gpu type in slot 0" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------ the flag


@pytest.mark.parametrize("value, message", [
    ("v100:2,a100:1", "--gpu-types: unknown gpu type 'a100' (known: v100, p100, k80)"),
    ("v100:0", "--gpu-types: v100: the server count must be a positive integer, got 0"),
    ("v100:-1", "--gpu-types: v100: the server count must be a positive integer, got -1"),
    ("v100:1.5", "--gpu-types: each entry must be TYPE:SERVERS with SERVERS a positive integer, got 'v100:1.5'"),
    ("v100", "--gpu-types: each entry must be TYPE:SERVERS"),
    ("v100:1,v100:2", "--gpu-types: listed twice: v100"),
    ("v100:1,", "--gpu-types: an empty entry"),
])
def test_generate_refuses_a_bad_gpu_types_list_in_one_line(tmp_path, capsys, value, message):
    out = tmp_path / "h.json"
    assert main(["generate", "--preset", "small", "--gpu-types", value, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_generate_gpu_types_with_worker_servers_is_refused(tmp_path, capsys):
    assert main(["generate", "--gpu-types", "v100:1", "--worker-servers", "3", "-o", str(tmp_path / "h.json")]) == 2
    assert "leave out --worker-servers" in capsys.readouterr().err


@pytest.mark.parametrize("preset", ["tiny", "small", "paper"])
def test_generate_gpu_types_on_every_preset(tmp_path, preset):
    out = tmp_path / "h.json"
    assert main(["generate", "--preset", preset, "--seed", "3", "--gpu-types", "v100:2,p100:1,k80:1",
                 "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["cluster"]["worker_types"] == ["v100", "v100", "p100", "k80"]
    assert data["meta"]["gpu_types"] == {"v100": 2, "p100": 1, "k80": 1}


# ------------------------------------------------------------------------------------------ refusals


REFUSED = "heterogeneous clusters (gpu types): not yet supported by"
NO_TYPES = "test-no-types"


@pytest.fixture
def no_types():
    """Every built-in scheduler handles GPU types (OASiS-P since its relaxed typed ``mu``, proofs/oasis-lr.md
    "On several GPU types"), so the refusal is tested on one registered here without them, removed afterwards."""
    from primaldual.baselines.fifo import FifoScheduler
    from primaldual.simulation import scheduler as registry
    from primaldual.simulation.scheduler import register_scheduler

    @register_scheduler(NO_TYPES)
    class NoTypes(FifoScheduler):
        name = NO_TYPES
        handles_gpu_types = False

    yield NoTypes
    registry._REGISTERED.pop(NO_TYPES, None)


@pytest.mark.parametrize("argv", [
    ["run", "{i}", "--scheduler", NO_TYPES],
    ["compare", "{i}", "--schedulers", f"rrh,{NO_TYPES}"],
])
def test_the_schedulers_without_types_refuse_a_heterogeneous_instance_in_one_line(tmp_path, capsys, no_types, argv):
    """A scheduler without ``handles_gpu_types`` refuses in one line, exit 2; the rest run."""
    save_instance(generate("tiny", seed=2, gpu_types=[("v100", 1), ("k80", 1)]), tmp_path / "h.json")
    assert main([a.format(i=tmp_path / "h.json") for a in argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"{REFUSED} {NO_TYPES}" in err and "Traceback" not in err


def test_compare_leaves_them_out_by_default_and_says_so(tmp_path, capsys, no_types):
    save_instance(generate("tiny", seed=2, gpu_types=[("v100", 1), ("k80", 1)]), tmp_path / "h.json")
    assert main(["compare", str(tmp_path / "h.json"), "--json"]) == 0
    out, err = capsys.readouterr()
    rows = {row["scheduler"] for row in json.loads(out)["rows"]}
    assert {"oasis", "greedy", "rrh", "drf", "fifo", "las", "gavel-las", "gavel-ftf"} <= rows
    assert {"oasis-lr", "oasis-p"} <= rows and NO_TYPES not in rows
    assert f"left out on a heterogeneous cluster (gpu types), which they do not handle yet: {NO_TYPES}" in err


def test_the_library_entry_refuses_too(no_types):
    from primaldual.simulation.simulator import simulate

    instance = generate("tiny", seed=2, gpu_types=[("p100", 2)])
    with pytest.raises(InputError, match=f"not yet supported by {NO_TYPES}"):
        simulate(instance, NO_TYPES)
    simulate(generate("tiny", seed=2), NO_TYPES)  # the homogeneous instance still runs
    simulate(instance, "oasis-p")  # OASiS-P runs on types


def test_the_instance_version_names_its_types():
    """A heterogeneous instance is written as version 2 and a homogeneous one as version 1; each refuses the
    other's fields in one line (docs/formats.md, GPU types)."""
    typed = instance_to_dict(generate("small", seed=4, gpu_types=[("v100", 2), ("k80", 2)]))
    plain = instance_to_dict(generate("small", seed=4))
    assert (typed["version"], plain["version"]) == (2, 1)
    assert instance_from_dict(json.loads(json.dumps(typed))).cluster.gpu_types == ("v100", "k80")
    typed["version"] = 1
    with pytest.raises(InputError, match="an instance with cluster.gpu_types is version 2, got 1"):
        instance_from_dict(typed)


@pytest.mark.parametrize("argv, message", [
    (["run", "{i}", "--scheduler", "rrh", "--gpu-types", "v100:1"],
     "--gpu-types: only applies with --preset (the instance file fixes the cluster)"),
    (["compare", "--gpu-types", "v100:1"], "--gpu-types: needs --preset"),
    (["compare", "--preset", "tiny", "--gpu-types", "v100:0"], "--gpu-types: v100: the server count must be a positive"),
    (["compare", "--preset", "tiny", "--gpu-types", "a100:2"], "--gpu-types: unknown gpu type"),
    (["ratio", "--preset", "tiny", "--instances", "1", "--gpu-types", "v100:2,v100:1", "--out", "{o}"],
     "--gpu-types: listed twice: v100"),
])
def test_gpu_types_with_a_preset_refuses_bad_input_in_one_line(tmp_path, capsys, argv, message):
    """The new --gpu-types of run, compare and ratio: exit 2, one line naming the flag, nothing written."""
    save_instance(generate("tiny", seed=2), tmp_path / "i.json")
    out = tmp_path / "r.jsonl"
    assert main([a.format(i=tmp_path / "i.json", o=out) for a in argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err
    assert not out.exists() and not (tmp_path / "r.jsonl.config.toml").exists()


def test_a_sweep_spec_checks_its_gpu_types():
    from primaldual.sweep import Spec

    assert Spec(preset="tiny", gpu_types="v100:1,k80:1").generator_knobs()["gpu_types"] == [("v100", 1), ("k80", 1)]
    assert "gpu_types" not in Spec(preset="tiny").to_dict()  # records without types are what they were
    for bad, message in (("v100", "each entry must be TYPE:SERVERS"), (["v100:1"], "must be a string")):
        with pytest.raises(InputError, match=message):
            Spec(preset="tiny", gpu_types=bad)
