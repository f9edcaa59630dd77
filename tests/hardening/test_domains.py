"""The numeric domains: exact range checks on any value, one validator for files and memory, a generator that
never writes what the loader refuses, and messages in plain numbers."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.domains import DEMAND, INSTANCE_FIELDS, JOB_FIELDS, Domain, JsonOverflow, show
from primaldual.core.errors import InputError
from primaldual.core.files import instance_from_dict, instance_to_dict
from primaldual.core.generate import PRESETS, generate
from primaldual.core.instance import Cluster, Instance, job_with_work
from primaldual.core.utility import Constant

any_value = st.one_of(
    st.integers(), st.integers(min_value=10**300, max_value=10**500), st.floats(), st.booleans(), st.none(),
    st.text(max_size=5), st.lists(st.integers(), max_size=2),
    st.floats(allow_nan=False, allow_infinity=False).map(np.float64), st.integers(-10**12, 10**12).map(np.int64),
)
domains = st.sampled_from([*INSTANCE_FIELDS.values(), *JOB_FIELDS.values(), DEMAND])


@given(domains, any_value)
def test_a_domain_check_never_raises_and_agrees_with_exact_arithmetic(domain: Domain, value):
    problems = domain.problem("field", value)
    is_number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not is_number or (isinstance(value, (float, np.floating)) and not math.isfinite(value)):
        assert problems
        return
    exact = int(value) if isinstance(value, (int, np.integer)) else float(value)
    inside = (domain.low < exact if domain.low_open else domain.low <= exact) and exact <= domain.high
    if domain.integer:
        inside = inside and exact == int(exact)
    if domain.zero_or_low:
        inside = inside or exact == 0
    assert (problems == []) == inside
    if problems:
        assert problems[0].startswith(f"field: must be {domain.describe()}, got ")


@pytest.mark.parametrize("value, text", [
    (np.float64(1.5), "1.5"), (np.int64(3), "3"), (1e308, "1e+308"), (10**400, "an integer of 401 digits"),
    (10**5000, "an integer of 5001 digits"), (True, "true"), (None, "null"), (JsonOverflow("9" * 5000), "an integer of 5000 digits"),
    (JsonOverflow("1e400"), "1e400"), ("x" * 100, repr("x" * 37 + "...")),
], ids=["float64", "int64", "1e308", "10^400", "10^5000", "true", "null", "5000 digits", "1e400", "long text"])
def test_values_in_messages_are_plain(value, text):
    assert show(value) == text


def _cluster(cpu: float) -> Cluster:
    return Cluster(("gpu", "cpu"), [[2.0, cpu]], [[0.0, 4.0]])


def test_an_instance_built_in_memory_meets_the_same_domains():
    job = job_with_work(2, 1, [1.0, 1.0], [0.0, 1.0], Constant(1.0))
    for cpu in (1e308, 1e19):
        with pytest.raises(InputError, match=r"cluster.worker_servers\[0\].cpu: must be a number in \[0, 1e9\]"):
            Instance(_cluster(cpu), (job,), horizon=4, slot_seconds=1.0)
    with pytest.raises(InputError, match="horizon: must be an integer in 1..100000"):
        Instance(_cluster(4.0), (job,), horizon=10**9, slot_seconds=1.0)
    huge = job_with_work(10**9, 1, [1.0, 1.0], [0.0, 1.0], Constant(1.0))
    with pytest.raises(InputError, match=r"jobs\[0\]: work W = 1e\+09 worker-slots is too large"):
        Instance(_cluster(4.0), (huge,), horizon=4, slot_seconds=1.0)


def test_a_file_refuses_exactly_what_validate_refuses():
    """Consistency rules (a demand that fits no server) are the loader's and validate()'s, not a second copy."""
    job = job_with_work(2, 1, [3.0, 1.0], [0.0, 1.0], Constant(1.0))  # 3 GPUs, servers have 2
    instance = Instance(_cluster(4.0), (job,), horizon=4, slot_seconds=1.0)
    with pytest.raises(InputError) as in_memory:
        instance.validate()
    with pytest.raises(InputError) as from_file:
        instance_from_dict(json.loads(json.dumps(instance_to_dict(instance))))
    assert in_memory.value.problems == from_file.value.problems
    assert "jobs[0].worker_demand: fits on no worker server" in in_memory.value.problems[0]


@pytest.mark.parametrize("work", [1e-10, 1e-9, 0.5, 1.0 + 1e-12])
def test_any_positive_work_needs_one_worker_slot(work):
    job = job_with_work(work, 1, [1.0, 1.0], [0.0, 1.0], Constant(1.0), slot_seconds=3600.0)
    instance = Instance(_cluster(4.0), (job,), horizon=4, slot_seconds=3600.0).validate()
    assert instance.work_units[0] == 1
    again = instance_from_dict(json.loads(json.dumps(instance_to_dict(instance))))
    assert again.work_units[0] == 1


@settings(max_examples=40)
@given(st.sampled_from(["tiny", "small"]), st.floats(0.01, 3.0), st.integers(0, 5))
def test_the_generator_never_writes_what_the_loader_refuses(preset, scale, seed):
    try:
        instance = generate(preset, seed=seed, capacity_scale=scale)
    except InputError as error:
        assert len(error.problems) == 1
        assert error.problems[0].startswith(f"--capacity-scale {scale:g}: ")
        assert "use --capacity-scale >= " in error.problems[0]
        return
    again = instance_from_dict(json.loads(json.dumps(instance_to_dict(instance))))
    assert instance_to_dict(again) == instance_to_dict(instance)
    cut = instance.meta.get("fitted_to_capacity", [])
    assert bool(cut) == (scale < 1 and _some_demand_exceeds(PRESETS[preset], scale))


def _some_demand_exceeds(spec, scale) -> bool:
    for demand, capacity in ((spec.worker_demand, spec.worker_capacity), (spec.ps_demand, spec.ps_capacity)):
        for r, (_, high) in demand.items():
            room = capacity[r][0] * scale
            room = math.floor(room + 1e-9) if r in spec.integer_resources else math.floor(room * 1000 + 1e-6) / 1000
            if high > room:
                return True
    return False


def test_a_scale_that_fits_refuses_nothing_and_the_smallest_suggested_scale_works():
    with pytest.raises(InputError) as error:
        generate("small", seed=0, capacity_scale=0.3)
    suggested = float(error.value.problems[0].rsplit(">= ", 1)[1])
    assert suggested == 0.5
    instance = generate("small", seed=0, capacity_scale=suggested)
    assert "worker gpu demand drawn in 1..1 (preset 1..2)" in instance.meta["fitted_to_capacity"]
    assert all(job.worker_demand[0] == 1 for job in instance.jobs)


def test_a_scale_of_one_or_more_draws_exactly_as_before():
    """Fitting to capacity costs no random draws: other values are those of an unscaled instance."""
    plain, scaled = generate("paper", seed=2), generate("paper", seed=2, capacity_scale=0.3)
    assert [j.epochs for j in plain.jobs] == [j.epochs for j in scaled.jobs]
    assert [j.arrival for j in plain.jobs] == [j.arrival for j in scaled.jobs]
    assert "fitted_to_capacity" not in generate("paper", seed=2, capacity_scale=2.0).meta


@pytest.mark.parametrize("knobs, message", [
    ({"horizon": 10**9}, "--horizon: must be an integer in 1..100000, got 1000000000"),
    ({"jobs": 100_000, "horizon": 100_000}, "--jobs/--horizon/--worker-servers/--ps-servers: 100000 jobs x"),
    ({"load": np.float64("nan")}, "--load: must be a number > 0 (jobs per slot), got nan"),
    ({"capacity_scale": np.float64(1e300)}, "--capacity-scale: must be a number in (0, 1e6], got 1e+300"),
])
def test_generator_knobs_are_bounded_and_named_as_flags(knobs, message):
    with pytest.raises(InputError) as error:
        generate("small", **knobs)
    assert message in str(error.value)
    assert "np.float64" not in str(error.value)
