"""Bad solver names, bad arguments, empty and infeasible instances: clear errors or clear answers."""

import dataclasses
import math

import numpy as np
import pytest
from offline_helpers import make_instance, make_job

import primaldual.offline.pyomo_ilp as pyomo_ilp
from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.offline.solve import solve_offline
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.backends.solvers import get_solver, solve_model, solver_available
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT


@pytest.fixture(scope="module")
def tiny():
    return generate("tiny", 1)


def no_solver(*args, **kwargs):
    raise AssertionError("no solver may be called here")


def test_unknown_solver_name(tiny):
    with pytest.raises(InputError, match=r"--solver: unknown solver 'gurobii'; known: highs, cbc"):
        solve_offline(tiny, EXACT.replace(solver="gurobii"))
    with pytest.raises(InputError, match="unknown solver"):
        get_solver("nope")


def test_unavailable_solver_names_the_available_ones(tiny):
    absent = next((name for name in ("scip", "gurobi", "cplex") if not solver_available(name)), None)
    if absent is None:
        pytest.skip("scip, gurobi and cplex are all installed here")
    with pytest.raises(InputError, match=rf"--solver: {absent} is not available on this machine \(available: highs"):
        solve_offline(tiny, EXACT.replace(solver=absent))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"time_limit": 0}, "--time-limit"),
        ({"time_limit": -5}, "--time-limit"),
        ({"time_limit": math.nan}, "--time-limit"),
        ({"time_limit": "10"}, "--time-limit"),
        ({"mip_gap": 1.5}, "--gap"),
        ({"mip_gap": -0.1}, "--gap"),
        ({"threads": 0}, "--threads"),
        ({"threads": 1.5}, "--threads"),
        ({"formulation": "tight"}, "--formulation"),
        ({"grace": -1.0, "time_limit": 1.0}, "grace"),
    ],
)
def test_bad_arguments_name_the_field(tiny, kwargs, field):
    with pytest.raises(InputError, match=field):
        solve_offline(tiny, EXACT.replace(**kwargs))


def test_empty_instance_is_optimal_with_zero_and_calls_no_solver(monkeypatch):
    monkeypatch.setattr(pyomo_ilp, "solve_model", no_solver)
    empty = make_instance([], horizon=3, worker_capacity=[[1.0]], ps_capacity=[[1.0]])
    result = solve_offline(empty)
    assert (result.status, result.objective, result.bound, result.gap) == ("optimal", 0.0, 0.0, 0.0)
    assert result.schedule is not None and result.schedule.admitted == []
    assert verify(empty, result.schedule).feasible
    assert "no jobs" in result.message and result.incumbent_source == "empty"
    relaxed = solve_offline(empty, EXACT.replace(method="lp"))
    assert relaxed.status == "optimal" and relaxed.schedule is None and relaxed.bound == 0.0


def test_instance_where_no_job_can_finish(monkeypatch):
    monkeypatch.setattr(pyomo_ilp, "solve_model", no_solver)
    # Work 3 with one worker per slot, 2 slots; a second job fits on no server.
    hopeless = make_instance([make_job(work=3), make_job(work=1, worker_demand=(9.0,))], horizon=2,
                             worker_capacity=[[1.0]], ps_capacity=[[1.0]])
    result = solve_offline(hopeless, EXACT.replace(time_limit=5))
    assert result.status == "optimal" and result.objective == 0.0 and result.schedule.admitted == []
    assert "no job can finish" in result.message


def test_infeasible_start_is_rejected_with_its_violations(tiny):
    bad = Schedule({0: JobSchedule(np.full((tiny.horizon, tiny.cluster.n_worker_servers), 9),
                                   np.zeros((tiny.horizon, tiny.cluster.n_ps_servers)))})
    with pytest.raises(InputError) as error:
        solve_offline(tiny, start=bad)
    text = str(error.value)
    assert "--start: the schedule is infeasible" in text and "eq. (3)" in text and "eq. (6)" in text
    with pytest.raises(InputError, match="--start: must be a Schedule"):
        solve_offline(tiny, start={"not": "a schedule"})


def test_start_with_a_relaxation_is_rejected(tiny):
    with pytest.raises(InputError, match="does not apply to --relax or --pooled"):
        solve_offline(tiny, EXACT.replace(method="lp"), start=Schedule({}))


def test_solver_reported_infeasibility_is_a_status(tiny, monkeypatch):
    def infeasible(*args, **kwargs):
        outcome = solve_model(*args, **kwargs)
        return dataclasses.replace(outcome, status="infeasible", has_solution=False, objective=None, bound=None)

    monkeypatch.setattr(pyomo_ilp, "solve_model", infeasible)
    result = solve_offline(tiny)
    assert result.status == "infeasible" and result.objective is None and result.schedule is None
    assert not result.success


def test_solver_error_is_a_status_not_a_crash(tiny, monkeypatch):
    def crashed(*args, **kwargs):
        outcome = solve_model(*args, **kwargs)
        return dataclasses.replace(outcome, status="error", has_solution=False, objective=None, bound=None,
                                   message="RuntimeError: the executable died")

    monkeypatch.setattr(pyomo_ilp, "solve_model", crashed)
    result = solve_offline(tiny)
    assert result.status == "error" and "executable died" in result.message


def test_an_answer_that_fails_verification_is_discarded(tiny, monkeypatch):
    real = pyomo_ilp._extract

    def corrupt(model, instance):
        out = real(model, instance)
        for workers, _ in out.values():
            workers[:] = 0  # admitted jobs without workers violate eq. (2)
        return out

    monkeypatch.setattr(pyomo_ilp, "_extract", corrupt)
    result = solve_offline(tiny)
    assert result.status == "error" and result.schedule is None
    assert "failed verification" in result.message and "eq. (2)" in result.message
