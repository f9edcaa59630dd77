"""The pooled ILP placed on servers (primaldual/offline/pooled.py): the per-slot packing against brute force,
a pooled optimum that cannot be packed is not reported as proven, and pooled-first agrees with the ILP."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from offline_helpers import make_instance, make_job

from primaldual.core.generate import generate
from primaldual.offline.solve import solve_offline
from primaldual.offline.pooled import pack_slot
from primaldual.core.utility import Constant
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT
from primaldual.evaluation.seeds import online_seeds


def _packs_by_brute_force(units, demand, fit, capacity) -> bool:
    """Every way of splitting each job's units over the servers, within ``fit``; any within capacity?"""
    per_job = []
    for j, n in enumerate(units):
        splits = [c for c in itertools.product(*(range(f + 1) for f in fit[j])) if sum(c) == n]
        per_job.append(splits)
    for choice in itertools.product(*per_job):
        load = sum(np.outer(np.array(c), demand[j]) for j, c in enumerate(choice)) if choice else 0
        if np.all(load <= capacity + 1e-9):
            return True
    return False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n_jobs=st.integers(1, 3), n_servers=st.integers(1, 3), n_resources=st.integers(1, 2))
def test_pack_slot_agrees_with_brute_force(data, n_jobs, n_servers, n_resources):
    demand = np.array(data.draw(st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0]), min_size=n_resources,
                                                  max_size=n_resources), min_size=n_jobs, max_size=n_jobs)))
    capacity = np.array(data.draw(st.lists(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=n_resources,
                                                    max_size=n_resources), min_size=n_servers, max_size=n_servers)))
    units = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n_jobs, max_size=n_jobs)))
    fit = np.array([[min(3, *(int(np.floor((capacity[h, r] + 1e-9) / demand[j, r]))
                              for r in range(n_resources) if demand[j, r] > 0), 3) for h in range(n_servers)]
                    for j in range(n_jobs)])
    placed = pack_slot(units, demand, fit, capacity)
    assert (placed is not None) == _packs_by_brute_force(units, demand, fit, capacity)
    if placed is not None:
        assert np.array_equal(placed.sum(axis=1), units) and np.all(placed <= fit) and np.all(placed >= 0)
        assert np.all(placed.T @ demand <= capacity + 1e-9)


def test_a_pooled_optimum_that_cannot_be_packed_is_not_reported_as_proven():
    # Two servers of 1.5 GPUs: pooled, three one-GPU workers fit in 3 GPUs; per server only one fits on each.
    jobs = [make_job(work=1, utility=Constant(1.0)) for _ in range(3)]
    instance = make_instance(jobs, horizon=1, worker_capacity=[[1.5], [1.5]], ps_capacity=[[3.0]])
    assert solve_offline(instance, EXACT.replace(method="pooled")).bound == pytest.approx(3.0)
    result = solve_offline(instance, EXACT.replace(pooled_first=True, online_start=False))
    assert "does not pack" in result.message and result.details.get("builder") != "pooled+placement"
    assert result.status == "optimal" and result.objective == pytest.approx(2.0)
    assert result.bound == pytest.approx(2.0, abs=1e-6)
    assert verify(instance, result.schedule).feasible


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=100_000), jobs=st.integers(min_value=2, max_value=6))
def test_pooled_first_agrees_with_the_per_server_ilp(seed, jobs):
    instance = generate("tiny", seed, jobs=jobs)
    plain = solve_offline(instance, EXACT.replace(pooled_first=False, online_start=False))
    first = solve_offline(instance, EXACT.replace(pooled_first=True, online_start=True), seeds=online_seeds(instance))
    assert plain.status == first.status == "optimal"
    assert first.objective == pytest.approx(plain.objective, rel=1e-7, abs=1e-9)
    report = verify(instance, first.schedule)
    assert report.feasible and report.utility == pytest.approx(first.objective)
    if first.details.get("builder") == "pooled+placement":
        assert "placed on servers" in first.message
    assert first.objective >= max(seed.utility for seed in online_seeds(instance)) - 1e-9


def test_pooled_first_is_on_above_the_matrix_threshold_and_refused_for_other_methods():
    from primaldual.core.errors import InputError
    from primaldual.offline.methods import IlpPlan, large_ilp_plan

    small = generate("tiny", 0)
    assert large_ilp_plan(small, EXACT, "ilp", None) == IlpPlan(pooled_first=False, online_start=False)
    large = generate("small", 1, jobs=30, horizon=24, worker_servers=8, ps_servers=8)
    assert large_ilp_plan(large, EXACT, "ilp", None) == IlpPlan(pooled_first=True, online_start=True)
    with pytest.raises(InputError, match="pooled_first"):
        solve_offline(small, EXACT.replace(method="lp", pooled_first=True))
    with pytest.raises(InputError, match="pooled_first"):
        solve_offline(small, EXACT.replace(pooled_first="yes"))


def test_pack_slot_decides_exactly_where_first_fit_fails():
    # The greedy placement strands a unit here; the exact program finds the packing (found by a random search).
    from primaldual.offline.pooled import _first_fit

    units, demand = np.array([2, 3, 2]), np.array([[1.5], [1.0], [0.0]])
    capacity = np.array([[1.0], [3.0], [2.0]])
    fit = np.array([[0, 2, 1], [1, 3, 2], [3, 3, 3]])
    assert _first_fit(units, demand, fit, capacity) is None
    placed = pack_slot(units, demand, fit, capacity)
    assert placed is not None and np.array_equal(placed.sum(axis=1), units)
    assert np.all(placed.T @ demand <= capacity + 1e-9) and np.all(placed <= fit)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=100_000), jobs=st.integers(min_value=1, max_value=6))
def test_pooled_matrix_model_equals_the_pyomo_pooled_model(seed, jobs):
    from primaldual.models.offline import build_offline_model, model_size
    from primaldual.offline.matrix import build_matrix_model, solve_matrix_model
    from primaldual.backends.solvers import solve_model

    instance = generate("tiny", seed, jobs=jobs)
    matrix = build_matrix_model(instance, pooled=True)
    assert (matrix.n_variables, matrix.n_constraints) == model_size(build_offline_model(instance, pooled=True))
    if matrix.n_variables == 0:
        return
    for relax in (True, False):
        by_matrix, _ = solve_matrix_model(matrix, relax=relax, time_limit=None, mip_gap=1e-9, threads=None)
        by_pyomo = solve_model(build_offline_model(instance, pooled=True, relax=relax), solver="highs", mip_gap=1e-9)
        assert by_matrix.status == by_pyomo.status == "optimal"
        assert by_matrix.objective == pytest.approx(by_pyomo.objective, rel=1e-7, abs=1e-9)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=100_000), jobs=st.integers(min_value=1, max_value=6))
def test_pooled_lp_prices_bound_opt_and_price_below_the_pooled_lp(seed, jobs):
    from primaldual.offline.column_generation import Cells, price_all
    from primaldual.models.offline import schedulable_jobs
    from primaldual.offline.pooled import pooled_lp_prices

    instance = generate("tiny", seed, jobs=jobs)
    jobs_with_variables = schedulable_jobs(instance)
    if not jobs_with_variables:
        return
    optimum = solve_offline(instance).objective
    bound, worker_prices, ps_prices = pooled_lp_prices(instance, None)
    assert bound >= optimum - 1e-7
    assert np.all(worker_prices >= 0) and np.all(ps_prices >= 0)
    cells = Cells(instance)
    priced = price_all(cells, jobs_with_variables, np.concatenate([worker_prices.ravel(), ps_prices.ravel()]))
    assert optimum - 1e-7 <= priced.bound <= bound + 1e-6 * max(1.0, bound)
