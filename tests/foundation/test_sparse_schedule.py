"""Sparse schedules: a job's window holds the same counts as the dense arrays, round-trips through the file
format, and every reader (verifier, metrics, utility tables) answers on it as on the dense representation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.files import schedule_from_dict, schedule_to_dict
from primaldual.core.metrics import compute_metrics
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.utility import Constant, LinearDecay, Sigmoid, Step, UtilityTable, utilities_at
from primaldual.core.verify import verify

from .builders import make_instance, make_job

HORIZON, WORKER_SERVERS, PS_SERVERS = 7, 2, 2


@st.composite
def dense_counts(draw, horizon=HORIZON, rows_used=None):
    """A (T, H) and a (T, K) count array, mostly zero rows, sometimes a negative or fractional count."""
    shape_y, shape_z = (horizon, WORKER_SERVERS), (horizon, PS_SERVERS)
    used = draw(st.lists(st.integers(0, horizon - 1), max_size=4)) if rows_used is None else rows_used
    y, z = np.zeros(shape_y, dtype=np.int64), np.zeros(shape_z, dtype=np.int64)
    for t in used:
        y[t] = draw(st.lists(st.integers(0, 3), min_size=WORKER_SERVERS, max_size=WORKER_SERVERS))
        z[t] = draw(st.lists(st.integers(0, 2), min_size=PS_SERVERS, max_size=PS_SERVERS))
    if draw(st.booleans()):
        y = y.astype(float)
        t, s = draw(st.integers(0, horizon - 1)), draw(st.integers(0, WORKER_SERVERS - 1))
        y[t, s] = draw(st.sampled_from([-1.0, 0.5, 2.0, 9.0]))
    return y, z


def _instance():
    jobs = [make_job(arrival=a, work_slots=w, chunks=2) for a, w in ((0, 3), (1, 2), (2, 4), (0, 1))]
    return make_instance(jobs, horizon=HORIZON, worker_capacity=((2.0, 4.0), (3.0, 6.0)),
                         ps_capacity=((0.0, 2.0), (0.0, 3.0)))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(dense_counts())
def test_a_window_holds_the_dense_counts_and_no_more(counts):
    y, z = counts
    sparse, dense = JobSchedule(y, z), JobSchedule.full(y, z)
    assert np.array_equal(sparse.workers, y) and np.array_equal(sparse.parameter_servers, z)
    used = np.flatnonzero((y != 0).any(axis=1) | (z != 0).any(axis=1))
    assert sparse.window_workers.shape[0] == (used[-1] + 1 - used[0] if used.size else 0)
    assert sparse.same_counts(dense) and dense.same_counts(sparse)
    for t in range(HORIZON):
        assert np.array_equal(sparse.slot(t)[0], y[t]) and np.array_equal(sparse.slot(t)[1], z[t])
    assert np.array_equal(sparse.active_slots, np.flatnonzero(y.sum(axis=1) > 0))
    assert np.array_equal(sparse.workers_per_slot, y.sum(axis=1))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.lists(dense_counts(), min_size=1, max_size=4))
def test_a_sparse_schedule_round_trips_through_the_file_format(per_job):
    instance = _instance()
    schedule = Schedule({i: JobSchedule(y, z) for i, (y, z) in enumerate(per_job)})
    data = schedule_to_dict(schedule)
    assert data == schedule_to_dict(Schedule({i: JobSchedule.full(y, z) for i, (y, z) in enumerate(per_job)}))
    again = schedule_from_dict(data, instance)
    for i, (y, z) in enumerate(per_job):
        assert np.array_equal(again[i].workers, y) and np.array_equal(again[i].parameter_servers, z)
        assert again[i].window_workers.shape[0] <= HORIZON


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(dense_counts(), min_size=1, max_size=4))
def test_the_verifier_and_the_metrics_answer_alike_on_sparse_and_dense(per_job):
    instance = _instance()
    sparse = Schedule({i: JobSchedule(y, z) for i, (y, z) in enumerate(per_job)})
    dense = Schedule({i: JobSchedule.full(y, z) for i, (y, z) in enumerate(per_job)})
    got, want = verify(instance, sparse), verify(instance, dense)
    assert got == want
    assert compute_metrics(instance, sparse).to_dict() == compute_metrics(instance, dense).to_dict()


def test_the_verifier_names_the_slot_of_a_window_not_its_row():
    instance = _instance()
    y, z = np.zeros((HORIZON, WORKER_SERVERS)), np.zeros((HORIZON, PS_SERVERS))
    y[4, 1], y[5, 0], z[4, 1] = 3, 0.5, 1  # 3 workers > N = 2 in slot 4; a fraction in slot 5
    report = verify(instance, Schedule({1: JobSchedule(y, z)}))
    slots = {kind: {v.slot for v in report.violations if v.kind == kind} for kind in report.kinds}
    assert slots["worker_cap"] == {4} and slots["integrality"] == {5} and slots["ps_bandwidth"] == {4, 5}
    y[0, 0] = 1  # before job 1's arrival in slot 1
    report = verify(instance, Schedule({1: JobSchedule(y, z)}))
    assert [v.slot for v in report.violations if v.kind == "before_arrival"] == [0]


def test_a_window_refuses_counts_outside_the_horizon():
    import pytest

    with pytest.raises(ValueError, match="does not fit"):
        JobSchedule.windowed(6, np.ones((2, WORKER_SERVERS)), np.ones((2, PS_SERVERS)), HORIZON)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from("sltc"), st.floats(0.0, 50.0), st.floats(0.0, 5.0),
                          st.integers(1, 40)), min_size=1, max_size=12),
       st.lists(st.integers(-3, 60), min_size=1, max_size=30))
def test_a_utility_table_gives_each_jobs_own_values_bit_for_bit(specs, durations):
    make = {"s": lambda a, b, c: Sigmoid(a, b, float(c)), "l": lambda a, b, c: LinearDecay(a, float(c)),
            "t": lambda a, b, c: Step(a, float(c)), "c": lambda a, b, c: Constant(a)}
    utilities = [make[kind](a, b, c) for kind, a, b, c in specs]
    jobs = np.arange(len(durations)) % len(utilities)
    got = utilities_at(UtilityTable(utilities), jobs, np.array(durations))
    want = np.array([float(utilities[j](np.array([d, d + 1]))[0]) for j, d in zip(jobs, durations)])
    assert np.array_equal(got, want)
