"""Generators: deterministic per seed, within their documented ranges, and refusing bad knobs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.core.files import instance_to_dict, load_instance
from primaldual.core.generate import PRESETS, generate


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_same_seed_same_instance_bit_for_bit(preset):
    a = json.dumps(instance_to_dict(generate(preset, seed=7)), sort_keys=True)
    b = json.dumps(instance_to_dict(generate(preset, seed=7)), sort_keys=True)
    c = json.dumps(instance_to_dict(generate(preset, seed=8)), sort_keys=True)
    assert a == b
    assert a != c


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_demand_fits_every_server(preset):
    spec = PRESETS[preset]
    for demand, capacity in ((spec.worker_demand, spec.worker_capacity), (spec.ps_demand, spec.ps_capacity)):
        for resource, (_, high) in demand.items():
            assert high <= capacity[resource][0], (preset, resource)


def _check_ranges(instance, spec):
    assert spec.jobs[0] <= instance.n_jobs <= spec.jobs[1]
    assert spec.horizon[0] <= instance.horizon <= spec.horizon[1]
    assert spec.worker_servers[0] <= instance.cluster.n_worker_servers <= spec.worker_servers[1]
    assert spec.ps_servers[0] <= instance.cluster.n_ps_servers <= spec.ps_servers[1]
    resources = instance.cluster.resources
    for job in instance.jobs:
        assert 0 <= job.arrival < instance.horizon
        assert spec.chunks[0] <= job.chunks <= spec.chunks[1]
        assert spec.epochs[0] <= job.epochs <= spec.epochs[1]
        assert spec.minibatches_per_chunk[0] <= job.minibatches_per_chunk <= spec.minibatches_per_chunk[1]
        assert spec.gradient_mb[0] - 1e-3 <= job.gradient_mb <= spec.gradient_mb[1] + 1e-3
        assert job.worker_bandwidth_gbps <= job.ps_bandwidth_gbps
        assert job.compute_seconds >= spec.min_compute_seconds - 1e-4
        for r, name in enumerate(resources):
            if name == "bandwidth":
                assert job.worker_demand[r] == job.worker_bandwidth_gbps
                assert job.ps_demand[r] == job.ps_bandwidth_gbps
                continue
            low, high = spec.worker_demand[name]
            assert low <= job.worker_demand[r] <= high
            low, high = spec.ps_demand[name]
            assert low <= job.ps_demand[r] <= high
    # Shortest durations span the documented per-chunk range (in whole slots).
    low, high = spec.chunk_slots
    assert np.all(instance.shortest_duration >= 1)
    assert np.all(instance.shortest_duration <= math.ceil(high) + 1)
    assert np.all(np.diff(instance.arrivals) >= 0)


@settings(max_examples=20)
@given(st.sampled_from(sorted(PRESETS)), st.integers(0, 2**32 - 1))
def test_generated_instances_stay_in_documented_ranges(preset, seed):
    _check_ranges(generate(preset, seed=seed), PRESETS[preset])


def test_tiny_is_brute_forceable():
    for seed in range(50):
        instance = generate("tiny", seed=seed)
        assert instance.work_units.max() <= 4
        assert instance.horizon <= 4 and instance.n_jobs <= 4


def test_paper_durations_span_one_to_thirty_slots():
    durations = np.concatenate([generate("paper", seed=s).shortest_duration for s in range(3)])
    assert durations.min() <= 2 and durations.max() >= 28
    assert durations.max() <= 30


def test_paper_cluster_is_contended():
    """At peak, the GPU work arriving per slot exceeds what the cluster can serve at full speed."""
    instance = generate("paper", seed=0)
    gpu = instance.cluster.resources.index("gpu")
    capacity = instance.cluster.worker_capacity[:, gpu].sum()
    demand = np.zeros(instance.horizon)
    for i, job in enumerate(instance.jobs):
        start, length = job.arrival, int(instance.shortest_duration[i])
        demand[start:start + length] += job.chunks * job.worker_demand[gpu]
    assert demand.max() > capacity


def test_knobs_override_the_preset():
    instance = generate("small", seed=1, jobs=15, horizon=40, worker_servers=3, ps_servers=2, capacity_scale=2.0)
    assert (instance.n_jobs, instance.horizon) == (15, 40)
    assert (instance.cluster.n_worker_servers, instance.cluster.n_ps_servers) == (3, 2)
    base = generate("small", seed=1, worker_servers=3, ps_servers=2)
    np.testing.assert_allclose(instance.cluster.worker_capacity, 2.0 * base.cluster.worker_capacity)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"preset": "huge"}, "--preset: must be one of"),
        ({"jobs": 0}, "--jobs: must be an integer in 1..100000, got 0"),
        ({"load": -1.0}, "--load: must be a number > 0"),
        ({"capacity_scale": 0.0}, "--capacity-scale: must be a number in (0, 1e6]"),
        ({"seed": -3}, "--seed: must be an integer >= 0"),
        ({"jobs": 100, "load": 0.1}, "arrive over 1000.0 slots, longer than the horizon of 20"),
    ],
)
def test_bad_knobs_are_refused(kwargs, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        generate(**{"preset": "small", **kwargs})


def test_cli_generate_writes_a_valid_file(tmp_path, capsys):
    out = tmp_path / "i.json"
    assert main(["generate", "--preset", "small", "--seed", "1", "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["jobs"] == 10 and summary["seed"] == 1
    assert instance_to_dict(load_instance(out)) == instance_to_dict(generate("small", seed=1))


def test_cli_generate_summary_counts_one_in_the_singular(tmp_path, capsys):
    out = tmp_path / "i.json"
    assert main(["generate", "--preset", "tiny", "--seed", "1", "--jobs", "1", "--worker-servers", "1",
                 "--ps-servers", "1", "-o", str(out)]) == 0
    horizon = load_instance(out).horizon
    assert capsys.readouterr().out == (f"wrote {out}: 1 job, {horizon} slots, 1 worker + 1 PS server "
                                       "(preset tiny, seed 1)\n")
    assert main(["generate", "--preset", "paper", "--seed", "1", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}: 300 jobs, 200 slots, 50 worker + 50 PS servers (preset paper, seed 1)\n"


def test_a_load_too_low_for_one_job_says_it_arrives():
    with pytest.raises(InputError, match=r"--load: 1 job at 0.01 jobs per slot arrives over 100.0 slots, longer "
                                         r"than the horizon of 20 slots \(raise --load or --horizon\)"):
        generate("small", jobs=1, load=0.01)


def test_cli_generate_bad_preset_exits_2(tmp_path, capsys):
    assert main(["generate", "--preset", "huge", "-o", str(tmp_path / "i.json")]) == 2
    err = capsys.readouterr().err
    assert "--preset: must be one of" in err and "Traceback" not in err
    assert not (tmp_path / "i.json").exists()
