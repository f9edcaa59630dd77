"""Honest certificates: bounds above incumbents, relaxations above the optimum, time limits and MIP starts."""

import dataclasses
import multiprocessing

import numpy as np
import pyomo.environ as pyo
import pytest
from offline_helpers import make_instance, make_job, require_solver

import primaldual.offline.pyomo_ilp as pyomo_ilp
from primaldual.core.generate import generate
from primaldual.models.offline import build_offline_model, schedulable_jobs
from primaldual.offline.result import OPTIMALITY_TOLERANCE
from primaldual.offline.pooled import pooled_lp_prices
from primaldual.offline.solve import solve_offline
from primaldual.core.schedule import Schedule
from primaldual.backends.solvers import solve_model
from primaldual.core.utility import Constant, Sigmoid
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT
from primaldual.offline.outcome import Built, ChildOutcome, Incumbent
from primaldual.offline.certify import certify
from primaldual.offline.methods import METHOD_TABLE


@pytest.fixture(scope="module")
def small():
    # Seed 3: the trivial bound (every job at its best utility) exceeds OPT, so bounds have something to prove;
    # HiGHS proves it in under a second (seed 2, used before, took 7 s per solve for the same checks).
    instance = generate("small", 3)
    result = solve_offline(instance)
    assert result.status == "optimal"
    assert trivial_bound(instance) > result.objective + 1e-3
    return instance, result


def trivial_bound(instance):
    return sum(instance.best_utility(i) for i in schedulable_jobs(instance))


def partial_start(instance, optimum, keep=3):
    """A feasible but worse schedule: the optimum's first ``keep`` admitted jobs."""
    kept = {i: optimum.schedule[i] for i in optimum.schedule.admitted[:keep]}
    start = Schedule(kept, meta={"source": "test"})
    report = verify(instance, start)
    assert report.feasible and report.utility < optimum.objective
    return start, report.utility


def assert_honest(instance, result):
    if result.objective is not None and result.bound is not None:
        assert result.bound >= result.objective
    if result.schedule is not None:
        report = verify(instance, result.schedule)
        assert report.feasible, report.violations
        assert report.utility == pytest.approx(result.objective, abs=1e-9)
    if result.status == "optimal":
        assert result.bound - result.objective <= OPTIMALITY_TOLERANCE * max(1.0, abs(result.bound))


@pytest.mark.fast_tier(1)
@pytest.mark.parametrize("seed", [0, 1, 3])
def test_relaxations_bound_the_optimum_and_strong_is_tighter(seed):
    instance = generate("small", seed)
    ilp = solve_offline(instance)
    assert_honest(instance, ilp)
    weak_lp = solve_offline(instance, EXACT.replace(method="lp", formulation="weak"))
    strong_lp = solve_offline(instance, EXACT.replace(method="lp", formulation="strong"))
    pooled = solve_offline(instance, EXACT.replace(method="pooled"))
    pooled_lp_bound = pooled_lp_prices(instance, None)[0]  # the pooled model's LP relaxation
    for relaxation in (weak_lp, strong_lp, pooled):
        assert relaxation.status == "optimal" and relaxation.schedule is None
        assert relaxation.bound >= ilp.objective * (1 - 1e-7)
        assert relaxation.bound >= relaxation.objective
    # The strong formulation's LP has fewer fractional points; the ILP with pooling is tighter than its LP.
    assert strong_lp.bound <= weak_lp.bound * (1 + 1e-7)
    assert ilp.objective * (1 - 1e-7) <= pooled.bound <= pooled_lp_bound * (1 + 1e-7)
    assert ilp.bound <= trivial_bound(instance) + 1e-9


# Slow: a weak ILP of small seed 3 (about 1 s). The fast tier solves the weak ILP to the brute-force optimum
# on tiny instances (tests/offline/test_offline_bruteforce.py).
@pytest.mark.slow
def test_weak_and_strong_ilps_have_the_same_optimum(small):
    instance, strong = small
    weak = solve_offline(instance, EXACT.replace(formulation="weak"))
    assert weak.status == "optimal"
    assert weak.objective == pytest.approx(strong.objective, rel=1e-7)


def test_solves_are_deterministic(small):
    instance, first = small
    again = solve_offline(instance)
    assert again.objective == first.objective
    assert again.schedule.same_allocation(first.schedule)


def test_time_limited_solve_in_a_child_keeps_incumbent_and_bound(small):
    instance, exact = small
    result = solve_offline(instance, EXACT.replace(time_limit=60))
    assert_honest(instance, result)
    assert result.status in ("optimal", "feasible")
    assert result.objective <= exact.bound + 1e-9 and result.bound >= exact.objective - 1e-9


def test_a_time_limited_incumbent_is_never_called_optimal(small, monkeypatch):
    instance, exact = small

    def stopped_at_the_limit(*args, **kwargs):
        # The solver finds the optimum and even a matching bound, but says it stopped at its time limit.
        return dataclasses.replace(solve_model(*args, **kwargs), status="time_limit", termination="maxTimeLimit")

    monkeypatch.setattr(pyomo_ilp, "solve_model", stopped_at_the_limit)
    result = solve_offline(instance)
    assert result.status == "feasible"
    assert result.objective == pytest.approx(exact.objective)
    assert_honest(instance, result)


def test_a_gap_limited_answer_reports_its_gap(small):
    instance, exact = small
    for solver in ("highs", "cbc"):
        require_solver(solver)
        result = solve_offline(instance, EXACT.replace(solver=solver, mip_gap=0.2))
        assert_honest(instance, result)
        # The bound stays a true bound on the optimum, whatever the backend reports at a gap.
        assert result.bound >= exact.objective * (1 - 1e-9)
        assert result.status == "optimal" or result.gap > 0


def test_a_solver_bound_below_a_verified_schedule_is_discarded(small, monkeypatch):
    instance, exact = small

    def wrong_bound(*args, **kwargs):
        outcome = solve_model(*args, **kwargs)
        return dataclasses.replace(outcome, bound=outcome.objective / 2)

    monkeypatch.setattr(pyomo_ilp, "solve_model", wrong_bound)
    result = solve_offline(instance)
    assert result.status == "feasible"
    assert result.bound == pytest.approx(trivial_bound(instance))
    assert "wrong" in result.message
    assert_honest(instance, result)


def test_killed_solver_is_reported_and_keeps_the_start(small):
    instance, exact = small
    start, start_utility = partial_start(instance, exact)
    # A zero grace past a 1 ms limit: the limit covers the build too, so the process is killed while building.
    result = solve_offline(instance, EXACT.replace(time_limit=0.001, grace=0.0), start=start)
    assert result.status == "killed"
    assert "killed" in result.message and "building the model" in result.message
    assert result.objective >= start_utility
    assert_honest(instance, result)
    bare = solve_offline(instance, EXACT.replace(time_limit=0.001, grace=0.0))
    assert bare.status == "killed" and not bare.success
    assert bare.bound is not None and bare.bound >= exact.objective - 1e-9
    if bare.objective is None:
        assert bare.schedule is None


def test_killed_after_an_incumbent_returns_that_incumbent(small):
    instance, exact = small
    assignments = {i: (a.workers, a.parameter_servers) for i, a in exact.schedule.assignments.items()}
    ended = ChildOutcome(killed=True, elapsed=3.0,
                         built=Built(build_seconds=0.1, n_variables=10, n_constraints=5, objective_slack=0.0),
                         incumbent=Incumbent(assignments, objective=exact.objective, bound=exact.bound))
    result = certify(instance, ended, METHOD_TABLE["ilp"], EXACT.replace(solver="highs"), None, None,
                     trivial_bound(instance), [])
    assert result.status == "killed" and result.incumbent_source == "solver"
    assert result.objective == pytest.approx(exact.objective)
    assert result.bound == pytest.approx(exact.bound)
    assert_honest(instance, result)


def test_mip_start_is_never_worsened(small, monkeypatch):
    instance, exact = small
    start, start_utility = partial_start(instance, exact)
    seeded = solve_offline(instance, start=start)
    assert seeded.objective >= start_utility and seeded.status == "optimal"
    assert seeded.start_objective == pytest.approx(start_utility)
    assert_honest(instance, seeded)

    # The solver finds nothing: the start is the incumbent, and the status says it is not proven.
    def nothing(*args, **kwargs):
        outcome = solve_model(*args, **kwargs)
        return dataclasses.replace(outcome, has_solution=False, objective=None, status="time_limit", bound=None)

    monkeypatch.setattr(pyomo_ilp, "solve_model", nothing)
    result = solve_offline(instance, start=start)
    assert result.incumbent_source == "start" and result.status == "feasible"
    assert result.objective == pytest.approx(start_utility)
    assert result.schedule.same_allocation(start)
    assert result.bound == pytest.approx(trivial_bound(instance))
    assert_honest(instance, result)
    monkeypatch.undo()

    # The solver returns something worse than the start (here: an empty schedule).
    monkeypatch.setattr(pyomo_ilp, "_extract", lambda model, instance: {})
    worse = solve_offline(instance, start=start)
    assert worse.incumbent_source == "start" and worse.objective == pytest.approx(start_utility)
    assert "worse than the start" in worse.message
    assert_honest(instance, worse)


@pytest.fixture(scope="module")
def roomy():
    """``small`` seed 2 with twice the capacity. CBC completes a MIP start from the non-zero values Pyomo
    writes; on the contended preset it can fail to ("mipstart values could not be used to build a solution"),
    which solve_offline covers by keeping the start as the incumbent (test_mip_start_is_never_worsened)."""
    instance = generate("small", 2, capacity_scale=2.0)
    result = solve_offline(instance)
    assert result.status == "optimal"
    return instance, result


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_the_start_reaches_the_backend(roomy, solver):
    require_solver(solver)
    instance, exact = roomy
    model = build_offline_model(instance)
    pyomo_ilp._seed(model, instance, exact.schedule)
    # At a 99% gap the backend may stop at its first incumbent; seeded with the optimum, that is the optimum.
    outcome = solve_model(model, solver=solver, mip_gap=0.99, warmstart=True)
    assert outcome.warmstart_used
    assert outcome.objective == pytest.approx(exact.objective, rel=1e-6)


def test_seeding_sets_a_feasible_point_of_the_model(small):
    instance, exact = small
    model = build_offline_model(instance)
    pyomo_ilp._seed(model, instance, exact.schedule)
    for constraint in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(constraint.body)
        assert constraint.lower is None or body >= pyo.value(constraint.lower) - 1e-9, constraint.name
        assert constraint.upper is None or body <= pyo.value(constraint.upper) + 1e-9, constraint.name
    assert np.isclose(model.total_utility(), exact.objective)


def test_inside_a_daemonic_process_the_solver_limit_alone_applies(small, monkeypatch):
    instance, exact = small
    # A daemonic process (a multiprocessing.Pool worker, say) may not start the solver process.
    monkeypatch.setattr(multiprocessing.current_process(), "daemon", True)
    # A generous limit: a loaded machine must not turn "optimal" into "time_limit" here.
    result = solve_offline(instance, EXACT.replace(time_limit=600))
    assert result.status == "optimal" and result.objective == pytest.approx(exact.objective)
    assert "no hard wall-clock limit" in result.message
    assert_honest(instance, result)


def test_an_lp_stopped_early_claims_no_bound(monkeypatch):
    # An interrupted simplex has a primal value, not a bound (Pyomo's appsi would report it as one).
    instance = generate("small", 0, jobs=20, horizon=30, worker_servers=6, ps_servers=6, load=20 / 24)
    model = build_offline_model(instance, relax=True, formulation="weak")
    outcome = solve_model(model, time_limit=1e-3)
    assert outcome.status == "time_limit"
    assert outcome.bound is None
    # Nor does solve_offline present that value as a relaxation's answer (in-process, the solver's limit only).
    monkeypatch.setattr(multiprocessing.current_process(), "daemon", True)
    result = solve_offline(instance, EXACT.replace(method="lp", formulation="weak", time_limit=1e-3))
    assert result.status == "time_limit_no_incumbent" and not result.success
    assert result.objective is None and result.bound is None and "bounds nothing" in result.message


def test_bounds_count_the_utilities_the_model_floors():
    # Job 0 cannot finish before slot 1, where its steep sigmoid is worth ~1e-12: the model counts that as 0
    # (below its floor), the verifier does not. OPT (both jobs) = 5 + steep(1); every bound must cover it
    # exactly, though the solver may leave job 0 out (optimal within OPTIMALITY_TOLERANCE).
    steep = Sigmoid(gamma1=10.0, gamma2=30.0, gamma3=0.0)
    instance = make_instance([make_job(work=2, utility=steep), make_job(work=1, utility=Constant(5.0))],
                             horizon=3, worker_capacity=[[2.0]], ps_capacity=[[2.0]])
    optimum = 5.0 + float(steep(1))
    assert optimum > 5.0
    ilp = solve_offline(instance)
    assert ilp.status == "optimal" and 5.0 <= ilp.objective <= optimum <= ilp.bound
    for kwargs in ({"method": "lp"}, {"method": "lp", "formulation": "weak"}, {"method": "pooled"}):
        assert solve_offline(instance, EXACT.replace(**kwargs)).bound >= optimum, kwargs


def test_a_killed_solve_whose_incumbent_is_its_online_start_does_not_credit_the_solver(small):
    # Issue 65, item 5: killed while building, the only schedule the work streamed is its online start; the
    # report must say the start, never "incumbent from the solver" beside "ran out while building the model".
    instance, exact = small
    assignments = {i: (a.workers, a.parameter_servers) for i, a in exact.schedule.assignments.items()}
    ended = ChildOutcome(killed=True, elapsed=3.0, phase="building the model",
                         incumbent=Incumbent(assignments, objective=exact.objective, bound=None, origin="online:rrh"))
    result = certify(instance, ended, METHOD_TABLE["ilp"], EXACT.replace(solver="highs"), None, None,
                     trivial_bound(instance), [])
    assert result.status == "killed" and result.incumbent_source == "start"
    assert "building the model" in result.message and "online start (online:rrh)" in result.message
    assert result.schedule.meta["source"] == "offline:start"
    assert_honest(instance, result)
