"""Metrics of a schedule, and Dorm's partition MILP on its own."""

from __future__ import annotations

import json

import numpy as np
import pyomo.environ as pyo
import pytest

from primaldual.core.metrics import compute_metrics
from primaldual.models.dorm import DormProblem, build_dorm_model, extract_partition
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.backends.solvers import solve_model
from simulate_helpers import Constant, Sigmoid, make_instance, make_job


def test_metrics_of_a_hand_schedule():
    instance = make_instance(
        [make_job(arrival=1, work=4, chunks=2, utility=Sigmoid(10.0, 1.0, 1.0)),
         make_job(arrival=0, work=1, chunks=1, utility=Constant(3.0))],
        horizon=4,
    )
    y0 = np.array([[0], [2], [0], [2]])
    z0 = np.array([[0], [1], [0], [1]])
    y1 = np.array([[1], [0], [0], [0]])
    schedule = Schedule({0: JobSchedule(y0, z0), 1: JobSchedule(y1, y1)})
    metrics = compute_metrics(instance, schedule, scheduler_seconds=0.5)
    assert metrics.completion_slots == {0: 3, 1: 0}
    assert metrics.jct == {0: 3, 1: 1}
    assert metrics.mean_jct == 2.0
    assert metrics.utility == pytest.approx(float(Sigmoid(10.0, 1.0, 1.0)(2)) + 3.0)
    # 5 workers x 1 gpu over 4 slots x 4 gpu; 5 workers x 1 cpu over 4 x 8 cpu; 3 PSs x 1 cpu over 4 x 8.
    assert metrics.utilisation == {"worker": {"gpu": 5 / 16, "cpu": 5 / 32}, "ps": {"cpu": 3 / 32}}
    assert metrics.admitted == metrics.completed == 2 and metrics.unfinished == 0
    data = metrics.to_dict()
    json.dumps(data, allow_nan=False)
    assert data["jct"] == {"0": 3, "1": 1} and data["scheduler_seconds"] == 0.5


def test_metrics_of_an_empty_schedule():
    instance = make_instance([make_job()], horizon=3)
    metrics = compute_metrics(instance, Schedule({}))
    assert metrics.utility == 0.0 and metrics.mean_jct is None and metrics.completed == 0
    assert metrics.utilisation["worker"] == {"gpu": 0.0, "cpu": 0.0}


def problem(**overrides) -> DormProblem:
    # Two jobs on two worker servers (4 and 2 gpus) and one PS server; one worker: 1 gpu; Z(D) = ceil(D / 2).
    values = dict(
        worker_capacity=np.array([[4.0, 8.0], [2.0, 8.0]]),
        ps_capacity=np.array([[0.0, 4.0]]),
        worker_demand=np.array([[1.0, 1.0], [1.0, 2.0]]),
        ps_demand=np.array([[0.0, 1.0], [0.0, 1.0]]),
        bandwidth_ratio=np.array([0.5, 0.5]),
        min_workers=np.array([1, 1]),
        max_workers=np.array([6, 6]),
        must_run=np.array([True, False]),
        previous_workers=np.array([6, 0]),
        share_unit=np.array([1 / 6, 1 / 6]),
        fair_share=np.array([0.5, 0.5]),
        fairness_threshold=0.0,
        max_adjustments=None,
    )
    values.update(overrides)
    return DormProblem(**values)


def solved(p: DormProblem, pooled: bool = False):
    model = build_dorm_model(p, pooled=pooled)
    outcome = solve_model(model, solver="highs", time_limit=10)
    return model, outcome


def test_dorm_model_fair_partition():
    model, outcome = solved(problem())
    assert outcome.has_solution
    y, z = extract_partition(model)
    assert y.sum(axis=1).tolist() == [3, 3]  # fairness 0: exactly the DRF shares of 1/2
    assert z.sum(axis=1).tolist() == [2, 2]  # the fewest PSs eq. (6) allows
    load = y.T @ np.array([[1.0, 1.0], [1.0, 2.0]])
    assert (load <= np.array([[4.0, 8.0], [2.0, 8.0]]) + 1e-9).all()
    assert pyo.value(model.changed[0]) == pytest.approx(1)


def test_dorm_model_without_fairness_maximises_utilisation_and_counts_adjustments():
    model, _ = solved(problem(fairness_threshold=None))
    y, _ = extract_partition(model)
    assert y.sum() == 6  # every gpu busy
    # Bounding adjustments to 0 freezes the running partition at its previous size.
    model, _ = solved(problem(fairness_threshold=None, max_adjustments=0))
    y, _ = extract_partition(model)
    assert y.sum(axis=1).tolist() == [6, 0]
    assert not hasattr(build_dorm_model(problem()), "adjustments")


def test_dorm_model_infeasible_when_fairness_conflicts_with_minimum():
    model, outcome = solved(problem(min_workers=np.array([5, 1]), fairness_threshold=0.0))
    assert not outcome.has_solution


def test_dorm_model_pooled_variant():
    model = build_dorm_model(problem(), pooled=True)
    assert len(model.worker_servers) == 1 and len(model.ps_servers) == 1
    assert model.y[0, 0].ub == 6  # what fits of one job alone in the whole pool
    outcome = solve_model(model, solver="highs", time_limit=10)
    y, z = extract_partition(model)
    assert outcome.has_solution and y.shape == (2, 1) and y[:, 0].tolist() == [3, 3]
