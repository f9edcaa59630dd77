"""Structure of the Pyomo model: sparse index sets, equation docs, formulations, purity."""

import pyomo.environ as pyo
import pytest
from offline_helpers import make_instance, make_job

from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.models.offline import (
    UTILITY_FLOOR, build_offline_model, model_size, offline_sparsity, schedulable_jobs,
)
from primaldual.backends.solvers import solve_model
from primaldual.core.utility import Constant, LinearDecay, Sigmoid


@pytest.fixture(scope="module")
def small_instance():
    return generate("small", 3)


def test_variables_only_from_arrival_and_on_fitting_servers():
    # Worker server 1 is too small for job 1's worker (2 GPUs); PS server 0 too small for job 0's PS.
    instance = make_instance(
        [
            make_job(arrival=0, work=2, chunks=1, worker_demand=(1.0,), ps_demand=(2.0,)),
            make_job(arrival=2, work=1, chunks=1, worker_demand=(2.0,), ps_demand=(1.0,)),
        ],
        horizon=4, worker_capacity=[[2.0], [1.0]], ps_capacity=[[1.0], [2.0]],
    )
    model = build_offline_model(instance)
    assert set(model.worker_placements) == {(0, t, h) for t in range(4) for h in (0, 1)} | {
        (1, t, 0) for t in (2, 3)}
    assert set(model.ps_placements) == {(0, t, 1) for t in range(4)} | {(1, t, k) for t in (2, 3) for k in (0, 1)}
    # (9)-(10): no slot before arrival anywhere.
    assert all(t >= instance.jobs[i].arrival for i, t in model.job_slots)
    # Each count is bounded by how many fit and by N_i.
    assert model.workers[0, 0, 0].ub == 1 and model.workers[1, 2, 0].ub == 1
    assert model.parameter_servers[0, 0, 1].ub == 1


def test_jobs_that_cannot_finish_or_fit_get_no_variables():
    instance = make_instance(
        [
            make_job(arrival=0, work=2, chunks=1),  # fine
            make_job(arrival=2, work=3, chunks=1),  # needs 3 slots from slot 2: cannot finish by T = 4
            make_job(arrival=0, work=1, worker_demand=(5.0,)),  # fits on no worker server
            make_job(arrival=0, work=1, worker_bandwidth=2.0, ps_bandwidth=1.0),  # (6)-(7) admit no PS count
        ],
        horizon=4, worker_capacity=[[2.0]], ps_capacity=[[2.0]],
    )
    assert list(instance.can_finish) == [True, False, True, True]
    assert schedulable_jobs(instance) == (0,)
    model = build_offline_model(instance)
    assert list(model.jobs) == [0]
    assert {i for i, *_ in model.worker_placements} == {0}


def test_every_constraint_names_its_equation(small_instance):
    model = build_offline_model(small_instance)
    expected = {
        "work": "(2)", "run_until_completion": "(3)", "worker_capacity": "(4)", "ps_capacity": "(5)",
        "ps_bandwidth_cover": "(6)", "ps_at_most_workers": "(7)", "admission": "(8)",
        "unfinished_definition": "(8)",
    }
    for name, equation in expected.items():
        assert equation in getattr(model, name).doc, name
    for constraint in model.component_objects(pyo.Constraint):
        assert constraint.doc and "eq" in constraint.doc, constraint.name
    assert "(1)" in model.total_utility.doc


def test_building_is_pure(small_instance):
    model = build_offline_model(small_instance)
    assert all(v.value is None for v in model.component_data_objects(pyo.Var))
    # Same instance, same model: deterministic index order and size.
    again = build_offline_model(small_instance)
    assert list(model.worker_placements) == list(again.worker_placements)
    assert model_size(model) == model_size(again)


def test_strong_adds_cuts_and_earliest_completion(small_instance):
    weak = build_offline_model(small_instance, formulation="weak")
    strong = build_offline_model(small_instance, formulation="strong")
    assert not hasattr(weak, "cumulative_work") and hasattr(strong, "cumulative_work")
    sparsity = offline_sparsity(small_instance)
    for i in strong.jobs:
        earliest = sparsity.earliest_completion[i]
        assert earliest == small_instance.jobs[i].arrival + small_instance.shortest_duration[i] - 1
        assert min(t for j, t in strong.completion_slots if j == i) == earliest
        assert min(t for j, t in weak.completion_slots if j == i) == small_instance.jobs[i].arrival
    assert model_size(strong)[1] > model_size(weak)[1]


def test_relax_makes_every_variable_continuous(small_instance):
    model = build_offline_model(small_instance, relax=True)
    assert all(v.is_continuous() for v in model.component_data_objects(pyo.Var))
    ilp = build_offline_model(small_instance)
    assert all(ilp.workers[index].is_integer() for index in ilp.workers)
    assert all(ilp.complete[index].is_binary() for index in ilp.complete)


def test_pooled_has_one_count_per_job_and_slot_and_summed_capacity(small_instance):
    model = build_offline_model(small_instance, pooled=True)
    assert set(model.worker_placements) == set(model.job_slots)
    total = small_instance.cluster.worker_capacity.sum(axis=0)
    for (t, r) in model.worker_capacity_rows:
        assert model.worker_capacity[t, r].upper == pytest.approx(total[r])
    assert model_size(model)[0] < model_size(build_offline_model(small_instance))[0]


def test_bad_formulation_is_an_input_error(small_instance):
    with pytest.raises(InputError, match="formulation"):
        build_offline_model(small_instance, formulation="medium")


def test_tiny_utilities_are_floored_and_the_slack_is_recorded():
    # A steep sigmoid falls far below the floor within the horizon.
    steep = Sigmoid(gamma1=10.0, gamma2=30.0, gamma3=0.0)
    instance = make_instance([make_job(work=1, utility=steep), make_job(work=1, utility=Constant(5.0))],
                             horizon=4, worker_capacity=[[2.0]], ps_capacity=[[2.0]])
    model = build_offline_model(instance)
    values = {t: model.utility[0, t] for (i, t) in model.completion_slots if i == 0}
    raw = {t: float(steep(t)) for t in values}
    floor = UTILITY_FLOOR * 10.0 / 2  # the largest utility is steep(0) = 5
    assert all(values[t] == (0.0 if raw[t] < floor else raw[t]) for t in values)
    assert 0 < model.objective_slack <= max(v for v in raw.values() if v < floor) + 1e-300
    # Non-tiny utilities are exact.
    linear = make_instance([make_job(work=1, utility=LinearDecay(4.0, 4.0))], horizon=3,
                           worker_capacity=[[1.0]], ps_capacity=[[1.0]])
    model = build_offline_model(linear)
    assert [model.utility[0, t] for t in range(3)] == [4.0, 3.0, 2.0]
    assert model.objective_slack == 0.0


def test_redundant_capacity_rows_are_left_out():
    # One job with one worker per server at most: the variable bound already enforces (4).
    instance = make_instance([make_job(work=2, chunks=2)], horizon=2,
                             worker_capacity=[[1.0], [1.0]], ps_capacity=[[4.0]])
    model = build_offline_model(instance)
    assert len(model.worker_capacity_rows) == 0
    # Two jobs sharing a 1-GPU server: the rows are there.
    two = make_instance([make_job(work=1), make_job(work=1)], horizon=2,
                        worker_capacity=[[1.0]], ps_capacity=[[4.0]])
    assert len(build_offline_model(two).worker_capacity_rows) == 2
    assert [pyo.value(c.upper) for c in build_offline_model(two).worker_capacity.values()] == [1.0, 1.0]


def test_cumulative_work_cut_tightens_the_lp():
    # One job of work 4 with N = 4, but one worker fits per slot: the ILP finishes in slot 3 (utility 3). The
    # earliest-completion bound is slot 0 (V / N = 1), so only the cumulative-work cut separates the two LPs.
    # Without it the LP completes in slot 0 with weight 3/4 (one worker there, the work done later):
    # 0.75 x 12 + 0.25 x 3 = 9.75. With it, completing by slot t needs (t + 1) / 4 of the work done: 1/4 per
    # slot, 0.25 x (12 + 9 + 6 + 3) = 7.5.
    instance = make_instance([make_job(work=4, chunks=4, utility=LinearDecay(12.0, 4.0))], horizon=4,
                             worker_capacity=[[1.0]], ps_capacity=[[4.0]])
    bounds = {}
    for formulation in ("weak", "strong"):
        model = build_offline_model(instance, relax=True, formulation=formulation)
        outcome = solve_model(model)
        assert outcome.status == "optimal"
        bounds[formulation] = outcome.bound
    assert bounds == pytest.approx({"weak": 9.75, "strong": 7.5})
    ilp = solve_model(build_offline_model(instance))
    assert ilp.objective == pytest.approx(3.0)
