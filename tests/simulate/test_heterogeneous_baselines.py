"""Every baseline on heterogeneous clusters (issue 64, item 5): type-unaware, the first free GPU of any type,
each job's workers on one type per slot, and every schedule verified by the independent verifier."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.core.verify import verify
from primaldual.simulation.scheduler import BASELINES, make_scheduler, scheduler_class
from primaldual.simulation.simulator import simulate
from hetero_helpers import typed_instance, typed_job

#: The baselines of this room (``greedy`` lives with OASiS, whose files learn types on their own).
TYPED = [name for name in BASELINES if name != "greedy"]
GAVEL: list[str] = []  # Gavel's policies join in the next step


def types_per_slot(instance, schedule, i) -> np.ndarray:
    """Per slot of job ``i``'s window, how many GPU types its workers use (an independent count)."""
    y = np.asarray(schedule.assignments[i].workers)
    index = instance.cluster.worker_type_index
    return np.stack([(y[:, index == g].sum(axis=1) > 0) for g in range(len(instance.cluster.gpu_types))]).sum(0)


def check_typed_run(instance, name, **parameters):
    result = simulate(instance, make_scheduler(name, **parameters))
    report = verify(instance, result.schedule)
    assert report.feasible, [v.message for v in report.violations]
    assert result.utility == pytest.approx(report.utility, rel=1e-12, abs=1e-12)
    assert result.metrics.completion_slots == report.completion_slots
    for i in result.schedule.assignments:
        assert types_per_slot(instance, result.schedule, i).max() <= 1
    return result


def test_every_baseline_says_it_handles_gpu_types():
    assert all(scheduler_class(name).handles_gpu_types for name in TYPED + GAVEL)


clusters = st.lists(st.sampled_from(["v100", "p100", "k80"]), min_size=1, max_size=3, unique=True).flatmap(
    lambda names: st.tuples(*[st.tuples(st.just(n), st.integers(1, 2)) for n in names]))


@pytest.mark.parametrize("name", TYPED + GAVEL)
@settings(derandomize=True, max_examples=12, deadline=None)
@given(seed=st.integers(0, 100_000), types=clusters, placement=st.sampled_from(["first_fit", "least_loaded"]))
def test_every_schedule_verifies_on_tiny_heterogeneous_instances(name, seed, types, placement):
    instance = generate("tiny", seed, gpu_types=list(types))
    parameters = {"placement": placement} if "placement" in _takes(name) else {}
    check_typed_run(instance, name, **parameters)


@pytest.mark.parametrize("name", TYPED + GAVEL)
@settings(derandomize=True, max_examples=3, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_every_schedule_verifies_on_small_heterogeneous_instances(name, seed):
    check_typed_run(generate("small", seed, gpu_types=[("v100", 2), ("p100", 1), ("k80", 1)]), name)


def _takes(name):
    import inspect
    return inspect.signature(scheduler_class(name).__init__).parameters


@pytest.mark.parametrize("name", ["fifo", "drf", "srtf", "rrh", "optimus", "themis", "tiresias", "dorm"])
def test_type_unaware_first_fit_takes_the_first_server_even_when_it_is_slow(name):
    # Server 0 is slow (W = 12 there), server 1 fast (W = 4): first fit runs the job on server 0 at 2 workers,
    # 6 slots, and trims nothing it needs (its last slot still needs 2 slow workers).
    instance = typed_instance([typed_job(work=4, chunks=2, slower=3.0)], types=("slow", "fast"), horizon=8)
    result = check_typed_run(instance, name)
    assert result.metrics.completion_slots == {0: 5}
    y = np.asarray(result.schedule.assignments[0].workers)
    assert y[:, 1].sum() == 0 and y[:, 0].sum() == 12


def test_least_loaded_takes_the_type_of_the_server_with_most_room():
    # Server 0 (slow) has 2 GPUs, server 1 (fast) 4: least_loaded's first choice is server 1, the fast type.
    instance = typed_instance([typed_job(work=4, chunks=2, slower=3.0)], types=("slow", "fast"), horizon=8)
    capacity = np.array([[2.0, 8.0], [4.0, 8.0]])
    from dataclasses import replace
    instance = replace(instance, cluster=replace(instance.cluster, worker_capacity=capacity))
    result = check_typed_run(instance, "drf", placement="least_loaded")
    assert result.metrics.completion_slots == {0: 1}


def test_in_its_last_slot_a_job_takes_only_what_its_type_needs():
    # W = 3 on fast, 9 on slow; 2 fast workers (slot 0) leave 1/3 of the job: 1 fast worker in slot 1.
    instance = typed_instance([typed_job(work=3, chunks=2, slower=3.0)], types=("fast", "slow"), horizon=8)
    result = check_typed_run(instance, "srtf")
    y = np.asarray(result.schedule.assignments[0].workers)
    assert y[:2].tolist() == [[2, 0], [1, 0]] and not y[2:].any()
