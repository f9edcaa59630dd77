"""Mutation tests for the independent verifier: break one constraint, see exactly that violation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from primaldual.cli import main
from primaldual.core.files import save_instance, save_schedule
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.utility import Sigmoid
from primaldual.core.verify import verify

from .builders import make_instance, make_job

A, B = 0, 1


def instance():
    # Two worker servers (3 GPU, 8 CPU) and two PS servers (0 GPU, 4 CPU).
    job_a = make_job(arrival=1, work_slots=4, chunks=3, ps_demand=(0.0, 1.0), b=1.0, big_b=2.0,
                     utility=Sigmoid(10.0, 1.0, 2.0))
    job_b = make_job(arrival=0, work_slots=2, chunks=2, ps_demand=(0.0, 2.0), b=1.0, big_b=1.0,
                     utility=Sigmoid(6.0, 0.5, 1.0))
    return make_instance([job_a, job_b], horizon=4, worker_capacity=((3, 8), (3, 8)), ps_capacity=((0, 4), (0, 4)))


def arrays():
    """The feasible base: A runs 2 workers on server 0 in slots 1-2 with 1 PS on PS server 0;
    B runs 2 workers on server 1 in slot 0 with 2 PSs on PS server 1."""
    ya, za = np.zeros((4, 2)), np.zeros((4, 2))
    ya[1, 0] = ya[2, 0] = 2
    za[1, 0] = za[2, 0] = 1
    yb, zb = np.zeros((4, 2)), np.zeros((4, 2))
    yb[0, 1] = 2
    zb[0, 1] = 2
    return {A: [ya, za], B: [yb, zb]}


def schedule(parts):
    return Schedule({i: JobSchedule(y, z) for i, (y, z) in parts.items()})


def test_base_schedule_is_feasible_and_utility_is_recomputed():
    report = verify(instance(), schedule(arrays()))
    assert report.feasible, report.violations
    assert report.completion_slots == {A: 2, B: 0}
    expected = Sigmoid(10.0, 1.0, 2.0)(2 - 1) + Sigmoid(6.0, 0.5, 1.0)(0 - 0)
    assert report.utility == pytest.approx(expected)


def mutate_work(p):
    p[A][0][2, 0] = 1


def mutate_worker_cap(p):
    p[A][0][1] = [2, 2]
    p[A][1][1, 0] = 2


def mutate_worker_capacity(p):
    p[B][0][0, 1] = 0
    p[B][0][1, 0] = 2
    p[B][1][0, 1] = 0
    p[B][1][1, 1] = 2


def mutate_ps_capacity(p):
    p[B][0][0, 1] = 0
    p[B][0][1, 1] = 2
    p[B][1][0, 1] = 0
    p[B][1][1, 0] = 2


def mutate_ps_bandwidth(p):
    p[B][1][0, 1] = 1


def mutate_ps_count(p):
    p[A][1][1, 0] = 3


def mutate_before_arrival(p):
    p[A][0][2, 0], p[A][0][0, 0] = 0, 2
    p[A][1][2, 0], p[A][1][0, 0] = 0, 1


def mutate_fractional(p):
    p[A][0][1, 0] = 2.5
    p[A][1][1, 0] = 2


def mutate_negative(p):
    # The slot's total stays 2, so only the count itself is wrong.
    p[A][0][1] = [3, -1]


MUTATIONS = [
    (mutate_work, {"work"}, {"(2)"}),
    (mutate_worker_cap, {"worker_cap"}, {"(3)"}),
    (mutate_worker_capacity, {"worker_capacity"}, {"(4)"}),
    (mutate_ps_capacity, {"ps_capacity"}, {"(5)"}),
    (mutate_ps_bandwidth, {"ps_bandwidth"}, {"(6)"}),
    (mutate_ps_count, {"ps_count"}, {"(7)"}),
    (mutate_before_arrival, {"before_arrival"}, {"(9)", "(10)"}),
    (mutate_fractional, {"integrality"}, {"(12)"}),
    (mutate_negative, {"integrality"}, {"(12)"}),
]


@pytest.mark.parametrize("mutation, kinds, equations", MUTATIONS, ids=[m[0].__name__ for m in MUTATIONS])
def test_each_broken_constraint_is_named_exactly(mutation, kinds, equations):
    parts = arrays()
    mutation(parts)
    report = verify(instance(), schedule(parts))
    assert not report.feasible
    assert report.kinds == kinds, report.violations
    assert {v.equation for v in report.violations} == equations


def test_violation_names_job_slot_server_and_resource():
    parts = arrays()
    mutate_worker_capacity(parts)
    (violation,) = [v for v in verify(instance(), schedule(parts)).violations if v.resource == "gpu"]
    assert (violation.slot, violation.server, violation.resource) == (1, 0, "gpu")
    assert "jobs [0, 1]" in violation.message
    parts = arrays()
    mutate_ps_bandwidth(parts)
    (violation,) = verify(instance(), schedule(parts)).violations
    assert (violation.job, violation.slot) == (B, 0)


def test_an_admitted_job_with_no_workers_violates_work():
    parts = arrays()
    parts[A] = [np.zeros((4, 2)), np.zeros((4, 2))]
    report = verify(instance(), schedule(parts))
    assert report.kinds == {"work"}
    assert report.job_utilities[A] == 0.0


def test_wrong_shape_is_reported():
    parts = arrays()
    parts[A][0] = np.zeros((3, 2))
    assert verify(instance(), schedule(parts)).kinds == {"shape"}


def test_cli_verify_exit_codes(tmp_path, capsys):
    save_instance(instance(), tmp_path / "i.json")
    save_schedule(schedule(arrays()), tmp_path / "ok.json")
    parts = arrays()
    mutate_ps_count(parts)
    save_schedule(schedule(parts), tmp_path / "bad.json")
    assert main(["verify", str(tmp_path / "i.json"), str(tmp_path / "ok.json")]) == 0
    assert "feasible" in capsys.readouterr().out
    assert main(["verify", str(tmp_path / "i.json"), str(tmp_path / "bad.json"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["feasible"] is False
    assert [v["equation"] for v in out["violations"]] == ["(7)"]
    assert set(out) >= {"feasible", "utility", "violations"}
