"""Every baseline on generated instances: feasible schedules, nothing before arrival, honest utility."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate
from primaldual.core.verify import verify

BASELINES = ["fifo", "drf", "rrh", "dorm"]


def check_run(instance, name: str, **parameters):
    result = simulate(instance, make_scheduler(name, **parameters))
    report = verify(instance, result.schedule)
    assert report.feasible, [v.message for v in report.violations]
    # The utility the simulator reports is the verifier's, job by job.
    assert result.utility == pytest.approx(report.utility, rel=1e-12, abs=1e-12)
    assert result.metrics.completion_slots == report.completion_slots
    for i, assignment in result.schedule.assignments.items():
        arrival = instance.jobs[i].arrival
        assert not assignment.workers[:arrival].any() and not assignment.parameter_servers[:arrival].any()
        assert instance.can_finish[i]
        assert result.metrics.jct[i] == report.completion_slots[i] - arrival + 1
    assert result.completed == len(result.schedule.admitted) == result.admitted <= result.started <= instance.n_jobs
    assert set(result.schedule.admitted) <= set(result.received)
    return result


@pytest.mark.parametrize("name", BASELINES)
@settings(derandomize=True, max_examples=20, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_baselines_on_tiny_instances(name, seed):
    check_run(generate("tiny", seed), name)


@pytest.mark.parametrize("name", ["fifo", "drf", "rrh"])
@settings(derandomize=True, max_examples=25, deadline=None)
@given(seed=st.integers(0, 100_000), jobs=st.sampled_from([10, 20]))
def test_fast_baselines_on_small_instances(name, seed, jobs):
    check_run(generate("small", seed, jobs=jobs), name)


@settings(derandomize=True, max_examples=4, deadline=None)
@given(seed=st.integers(0, 100_000), formulation=st.sampled_from(["per_server", "pooled"]))
def test_dorm_on_small_instances(seed, formulation):
    check_run(generate("small", seed), "dorm", formulation=formulation)


@pytest.mark.parametrize(
    "name, parameters",
    [
        ("fifo", {"workers": 1, "placement": "least_loaded", "skip_unfinishable": False}),
        ("drf", {"placement": "least_loaded", "skip_unfinishable": False}),
        ("rrh", {"risk_weight": 0.5, "discount_rate": 0.2, "placement": "least_loaded"}),
        ("rrh", {"preemptive": False}),
        ("dorm", {"fairness_threshold": 0.05, "max_adjustments": 1}),
    ],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_baselines_with_other_parameters(name, parameters, seed):
    result = check_run(generate("small", seed, jobs=20), name, **parameters)
    for key, value in parameters.items():
        assert result.parameters[key] == value
    if parameters.get("preemptive") is False:
        # Without preemption a started job never loses a worker or PS on any server before its last slot.
        for i, assignment in result.schedule.assignments.items():
            last = result.metrics.completion_slots[i]
            start = int(np.flatnonzero(assignment.workers.sum(axis=1))[0])
            for counts in (assignment.workers, assignment.parameter_servers):
                assert (np.diff(counts[start:last], axis=0) >= 0).all()


@pytest.mark.parametrize("name", BASELINES)
def test_baselines_are_deterministic(name):
    instance = generate("small", 5, jobs=20)
    first, second = simulate(instance, name), simulate(instance, name)
    assert first.schedule.same_allocation(second.schedule)
    assert first.utility == second.utility


def test_literal_no_admission_control_wastes_work():
    """With skip_unfinishable off, DRF runs jobs that cannot finish: their work is wasted, yet the schedule
    (completed jobs only) still verifies. With it on (the default), nothing is wasted on hopeless jobs."""
    wasted = []
    for seed in range(6):
        instance = generate("small", seed, jobs=20)
        literal = check_run(instance, "drf", skip_unfinishable=False)
        wasted.append(literal.metrics.wasted_worker_slots)
        assert literal.metrics.unfinished == literal.started - literal.completed
    assert max(wasted) > 0


@pytest.mark.parametrize("name", ["oasis", "greedy"])
def test_planning_schedulers_run_through_the_simulator(name):
    for seed in (0, 3):
        instance = generate("small", seed, jobs=20)
        result = check_run(instance, name)
        assert result.metrics.unfinished == 0  # a plan covers its work, so every admitted job completes
        assert np.isfinite(result.utility)
