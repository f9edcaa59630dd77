"""Column generation and price-and-branch over the packing formulation (14)-(18) (issue 11, items 3-4).

Checked against the ILP (itself checked against brute force in ``test_offline_bruteforce.py``): the certified
bound is >= the ILP optimum and >= every scheduler's utility, the price-and-branch schedule verifies and is
<= the optimum, and the column-generation LP value is <= the compact strong LP relaxation (Dantzig-Wolfe is
at least as tight). The aggregated master reaches the same LP value as the per-server master.
"""

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primaldual.offline.column_generation import Cells, RestrictedMaster, price_all, reduced_cost
from primaldual.offline.first_fit import place_on_servers
from primaldual.core.generate import generate
from primaldual.models.offline import schedulable_jobs
from primaldual.offline.solve import solve_offline
from primaldual.offline.price_and_branch import Levers, column_generation_solve
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.simulation.simulator import simulate
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT
from primaldual.evaluation.seeds import online_seeds

TOLERANCE = 1e-6


def _check_interval(instance, result, optimum):
    assert result.method == "cg"
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible
    assert result.objective == pytest.approx(report.utility)
    assert result.objective <= optimum + TOLERANCE * max(1.0, optimum)
    assert result.bound >= optimum - TOLERANCE * max(1.0, optimum)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10_000))
def test_tiny_bound_covers_the_ilp_optimum_and_the_schedule_verifies(seed):
    instance = generate("tiny", seed)
    optimum = solve_offline(instance).objective
    result = solve_offline(instance, EXACT.replace(method="cg"), seeds=online_seeds(instance))
    _check_interval(instance, result, optimum)
    for name, utility in result.details["seeds"].items():
        assert result.bound >= utility - TOLERANCE, name


@pytest.mark.fast_tier(1)
@pytest.mark.parametrize("seed", [0, 5])
def test_small_bound_between_ilp_and_its_lp_relaxation(seed):
    instance = generate("small", seed)
    exact = solve_offline(instance)
    assert exact.status == "optimal"
    strong_lp = solve_offline(instance, EXACT.replace(method="lp"))
    result = solve_offline(instance, EXACT.replace(method="cg"), seeds=online_seeds(instance))
    _check_interval(instance, result, exact.objective)
    assert result.details["converged"]
    # Each column is a whole schedule: the Dantzig-Wolfe LP is at least as tight as the compact one.
    assert result.details["lp_value"] <= strong_lp.bound + TOLERANCE * strong_lp.bound
    assert result.bound == pytest.approx(result.details["lp_value"], rel=1e-5)


def _lp_value(instance, aggregate):
    cells = Cells(instance)
    jobs = schedulable_jobs(instance)
    master = RestrictedMaster(cells, jobs, aggregate=aggregate)
    master.add(cells.column(i, s) for i, s in simulate(instance, "fifo").schedule.assignments.items())
    for _ in range(200):
        optimal, value, prices, mu = master.solve_lp(None)
        assert optimal
        priced = price_all(cells, jobs, prices)
        # Weak duality: the Lagrangian bound at the master's duals covers the master's value.
        assert priced.bound >= value - 1e-7 * max(1.0, value)
        if master.add([c for c in priced.columns if reduced_cost(c, prices, mu) > 1e-9]) == 0:
            return value, priced.bound
    raise AssertionError("column generation did not converge in 200 rounds")


@pytest.mark.parametrize("seed", [1, 2])
def test_aggregated_master_reaches_the_per_server_lp_value(seed):
    instance = generate("tiny", seed, jobs=6)
    per_server, per_server_bound = _lp_value(instance, aggregate=False)
    aggregated, aggregated_bound = _lp_value(instance, aggregate=True)
    assert aggregated == pytest.approx(per_server, rel=1e-6, abs=1e-9)
    assert per_server_bound == pytest.approx(per_server, rel=1e-6, abs=1e-9)
    assert aggregated_bound == pytest.approx(aggregated, rel=1e-6, abs=1e-9)


def test_place_on_servers_drops_what_does_not_fit_and_verifies():
    instance = generate("small", 3)
    # Every job's own best schedule on the empty cluster: together they overload it, so some are dropped.
    cells = Cells(instance)
    priced = price_all(cells, schedulable_jobs(instance), np.zeros(cells.capacity.shape[0]))
    wanted = {c.job: c.schedule for c in priced.columns}
    placed = place_on_servers(instance, wanted)
    assert set(placed.assignments) <= set(wanted)
    assert verify(instance, placed).feasible
    for i, schedule in placed.assignments.items():
        assert np.array_equal(schedule.workers_per_slot, wanted[i].workers_per_slot)
        assert np.array_equal(schedule.parameter_servers_per_slot, wanted[i].parameter_servers_per_slot)


def test_a_deadline_in_the_past_still_returns_a_schedule_and_a_valid_bound():
    instance = generate("small", 4)
    optimum = solve_offline(instance).objective
    run = column_generation_solve(instance, schedulable_jobs(instance), deadline=time.time() - 1,
                                  seeds=online_seeds(instance)[:1])  # fifo's: all a spent deadline seeds
    assert run.rounds == 0 and run.mip_status.startswith("not run")
    schedule = Schedule({i: JobSchedule(w, z) for i, (w, z) in run.assignments.items()})
    report = verify(instance, schedule)
    # The first seeding scheduler's schedule is returned, and no pricing round means no bound but the trivial.
    assert report.feasible and report.utility == pytest.approx(run.objective)
    assert run.seeds and run.objective <= optimum + TOLERANCE
    assert run.bound == float("inf")


def test_auto_picks_the_ilp_on_tiny_and_says_so():
    result = solve_offline(generate("tiny", 0), EXACT.replace(method="auto"))
    assert result.method == "ilp" and result.status == "optimal"


def test_memory_limit_has_its_own_status():
    result = solve_offline(generate("tiny", 0), EXACT.replace(memory_limit=2**26))
    assert result.status == "memory_limit" and not result.success
    assert "memory limit" in result.message


def _rounds_of(instance, levers=Levers()):
    """Column generation run to convergence (smoothed, from the pooled LP's prices), with its optimum OPT."""
    optimum = solve_offline(instance).objective
    run = column_generation_solve(instance, schedulable_jobs(instance), seeds=online_seeds(instance), levers=levers)
    return optimum, run


@pytest.mark.parametrize("seed, interior", [(0, False), (5, False), (0, True)])
def test_every_round_bounds_the_lp_optimum_and_the_last_meets_it(seed, interior):
    # Issue 63, item 1: before convergence the master's value bounds nothing, but every round's Lagrangian bound
    # does. The LP optimum of (14)-(18) is computed independently, by the plain loop of _lp_value (master duals,
    # no smoothing, no pooled start, the simplex), and OPT by the exact ILP. With the interior point master (no
    # crossover, item 2) the duals are central, not a vertex's: the bounds hold all the same.
    instance = generate("small", seed)
    optimum, run = _rounds_of(instance, Levers(interior_master=interior))
    lp_optimum, _ = _lp_value(instance, aggregate=True)
    assert run.converged and run.round_bounds
    for bound in run.round_bounds:
        assert bound >= lp_optimum - 1e-6 * max(1.0, lp_optimum)
        assert bound >= optimum - TOLERANCE * max(1.0, optimum)
    assert run.bound == pytest.approx(lp_optimum, rel=1e-5 if not interior else 1e-4)
    assert run.bound == pytest.approx(min(run.round_bounds + (run.bound,)))
    assert run.bound_source != "none"


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10_000), jobs=st.integers(min_value=1, max_value=6))
def test_every_round_bound_covers_the_optimum_on_tiny(seed, jobs):
    instance = generate("tiny", seed, jobs=jobs)
    if not schedulable_jobs(instance):
        return
    optimum, run = _rounds_of(instance)
    for bound in run.round_bounds:
        assert bound >= optimum - TOLERANCE * max(1.0, optimum)
    assert run.bound >= optimum - TOLERANCE * max(1.0, optimum)
    assert run.objective <= optimum + TOLERANCE * max(1.0, optimum)


def test_dropping_idle_columns_keeps_the_master_value_and_the_incumbent(monkeypatch):
    # Issue 63, item 2: a master that drops what it no longer needs. Columns at value 0 with a negative reduced
    # cost leave; the LP optimum over the rest is the same, and the incumbent's columns (the 0-1 start) stay.
    from primaldual.offline import column_generation

    monkeypatch.setattr(column_generation, "IDLE_ROUNDS", 1)
    instance = generate("small", 2)
    cells = Cells(instance)
    master = RestrictedMaster(cells, schedulable_jobs(instance), aggregate=True)
    seeds = online_seeds(instance)
    for seed in seeds:
        master.add(cells.column(i, s) for i, s in seed.schedule.assignments.items())
    incumbent = max(seeds, key=lambda seed: seed.utility).schedule
    keep = frozenset(column_generation.column_key(i, s) for i, s in incumbent.assignments.items())
    optimal, before, prices, mu = master.solve_lp(None)
    n_before = len(master.columns)
    dropped = master.drop_idle(prices, mu, keep)
    assert optimal and dropped > 0 and len(master.columns) == n_before - dropped
    assert keep <= {column_generation.column_key(c.job, c.schedule) for c in master.columns}
    optimal, after, _, _ = master.solve_lp(None)
    assert optimal and after == pytest.approx(before, rel=1e-9, abs=1e-9)
    # A dropped column may come back: adding every seed again re-adds exactly the dropped ones.
    for seed in seeds:
        master.add(cells.column(i, s) for i, s in seed.schedule.assignments.items())
    assert len(master.columns) == n_before


def test_column_generation_that_drops_columns_still_meets_the_lp_optimum(monkeypatch):
    from primaldual.offline import column_generation

    monkeypatch.setattr(column_generation, "IDLE_ROUNDS", 1)
    instance = generate("small", 0)
    optimum, run = _rounds_of(instance)
    lp_optimum, _ = _lp_value(instance, aggregate=True)
    assert run.converged and run.bound == pytest.approx(lp_optimum, rel=1e-5)
    assert optimum - TOLERANCE * max(1.0, optimum) <= run.bound
