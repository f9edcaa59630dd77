"""Per-job outcomes and utilisation over time: a hand-computed case, invariants on random instances, JSON."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.core.metrics import compute_metrics
from primaldual.simulation.simulator import simulate
from primaldual.core.verify import verify
from primaldual.evaluation.outcomes import JobOutcomes, job_outcomes, utilisation_over_time
from views_helpers import hand_instance, hand_schedule


def test_hand_computed_outcomes():
    instance, schedule = hand_instance(), hand_schedule()
    assert verify(instance, schedule).feasible
    outcomes = job_outcomes(instance, schedule)
    assert outcomes.arrival.tolist() == [0, 1, 0]
    assert outcomes.completion.tolist() == [1, 4, -1]
    assert outcomes.jct[:2].tolist() == [2.0, 4.0] and math.isnan(outcomes.jct[2])
    assert outcomes.utility.tolist() == [9.0, 7.0, 0.0]
    # Alone: job 0 takes 2 workers (gpu 2) for 2 slots; job 1 one worker for 2 slots; job 2 two workers
    # (gpu caps at 2 of its 3 chunks) for ceil(6 / 2) = 3 slots.
    assert outcomes.standalone_jct.tolist() == [2.0, 2.0, 3.0]
    assert outcomes.standalone_utility.tolist() == [9.0, 9.0, 8.0]
    assert outcomes.finish_time_fairness[:2].tolist() == [1.0, 2.0]
    assert math.isnan(outcomes.finish_time_fairness[2])
    assert outcomes.admitted.tolist() == [True, True, False]
    assert outcomes.abandoned.tolist() == [False, False, False]


def test_received_marks_abandoned_jobs():
    outcomes = job_outcomes(hand_instance(), hand_schedule(), received=[0, 1, 2])
    assert outcomes.admitted.tolist() == [True, True, True]
    assert outcomes.abandoned.tolist() == [False, False, True]
    with pytest.raises(InputError, match="received"):
        job_outcomes(hand_instance(), hand_schedule(), received=[7])


def test_hand_computed_utilisation():
    usage = utilisation_over_time(hand_instance(), hand_schedule())
    # The PS pool has no gpu capacity, so it has no gpu series.
    assert sorted(usage) == ["ps/cpu", "worker/cpu", "worker/gpu"]
    assert usage["worker/gpu"].tolist() == [1.0, 1.0, 0.5, 0.0, 0.5, 0.0]
    assert usage["worker/cpu"].tolist() == [0.5, 0.5, 0.25, 0.0, 0.25, 0.0]
    assert usage["ps/cpu"].tolist() == [0.5, 0.5, 0.5, 0.0, 0.5, 0.0]


def test_round_trip_through_json():
    outcomes = job_outcomes(hand_instance(), hand_schedule())
    data = json.loads(json.dumps(outcomes.to_dict(), allow_nan=False))
    assert data["jct"][2] is None and data["completion"][2] == -1
    back = JobOutcomes.from_dict(data)
    for name in JobOutcomes.DTYPES:
        np.testing.assert_array_equal(getattr(back, name), getattr(outcomes, name))
        assert getattr(back, name).dtype == getattr(outcomes, name).dtype


@pytest.mark.parametrize("data, field", [
    ([1, 2], "outcomes"),
    ({"arrival": [0]}, "outcomes.completion"),
    ({**job_outcomes(hand_instance(), hand_schedule()).to_dict(), "jct": ["x", 1, 2]}, "outcomes.jct"),
    ({**job_outcomes(hand_instance(), hand_schedule()).to_dict(), "utility": [1.0]}, "different lengths"),
])
def test_from_dict_names_the_bad_field(data, field):
    with pytest.raises(InputError, match=field):
        JobOutcomes.from_dict(data)


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), jobs=st.integers(1, 8),
       scheduler=st.sampled_from(["oasis", "greedy", "fifo", "drf", "rrh"]))
def test_invariants_on_random_instances(seed, jobs, scheduler):
    instance = generate("tiny", seed=seed, jobs=jobs)
    result = simulate(instance, scheduler)
    outcomes = job_outcomes(instance, result.schedule, received=result.received)
    metrics = result.metrics
    done = outcomes.completed
    assert int(done.sum()) == metrics.completed
    assert int(outcomes.admitted.sum()) == metrics.started  # the per-job array marks started jobs
    assert int(outcomes.abandoned.sum()) == metrics.unfinished
    assert outcomes.utility.sum() == pytest.approx(metrics.utility)
    assert outcomes.jct[done].tolist() == [metrics.jct[i] for i in np.flatnonzero(done)]
    # No job finishes sooner, or earns more, than alone on the empty cluster.
    assert np.all(outcomes.finish_time_fairness[done] >= 1.0)
    assert np.all(outcomes.utility <= outcomes.standalone_utility + 1e-9)
    assert np.all(np.isnan(outcomes.jct[~done])) and np.all(outcomes.utility[~done] == 0)
    # The mean over slots is the schedule's mean utilisation, and no slot is over capacity.
    usage = utilisation_over_time(instance, result.schedule)
    mean = compute_metrics(instance, result.schedule).utilisation
    for key, series in usage.items():
        pool, resource = key.split("/")
        assert series.shape == (instance.horizon,)
        assert series.mean() == pytest.approx(mean[pool][resource])
        assert np.all((series >= 0) & (series <= 1 + 1e-9))
    back = JobOutcomes.from_dict(json.loads(json.dumps(outcomes.to_dict(), allow_nan=False)))
    np.testing.assert_array_equal(back.finish_time_fairness, outcomes.finish_time_fairness)
