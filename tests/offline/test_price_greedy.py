"""The greedy schedule at frozen prices and the column-generation levers (issue 27, item 4).

The greedy (:mod:`primaldual.offline.price_greedy`) must give a schedule that verifies at any prices, whose
utility is what the verifier counts; at zero prices its first job gets its standalone optimum. The levers
(:class:`primaldual.offline.price_and_branch.Levers`) may change how fast column generation gets there, never
where it ends: run to convergence, every combination reaches the same Dantzig-Wolfe bound, and the schedule
returned verifies and is at least the greedy's and every seed's.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.verify import verify
from primaldual.dual.subroutine import best_schedule
from primaldual.evaluation.seeds import online_seeds
from primaldual.models.offline import schedulable_jobs
from primaldual.offline.column_generation import DEFAULT_SIMPLEX_STRATEGY, MASTER_SIMPLEX_STRATEGY
from primaldual.offline.price_and_branch import Levers, column_generation_solve
from primaldual.core.metrics import compute_metrics
from primaldual.offline.price_greedy import price_greedy


def _random_prices(instance, seed: int, scale: float):
    rng = np.random.default_rng(seed)
    cluster = instance.cluster
    shape_p = (instance.horizon, cluster.n_worker_servers, cluster.n_resources)
    shape_q = (instance.horizon, cluster.n_ps_servers, cluster.n_resources)
    return scale * rng.exponential(size=shape_p), scale * rng.exponential(size=shape_q)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.sampled_from(["tiny", "small"]), seed=st.integers(0, 10_000),
       scale=st.sampled_from([0.0, 1e-3, 0.05, 1.0, 50.0]), shuffle=st.integers(0, 10_000))
def test_the_greedy_schedule_verifies_at_any_prices_in_any_order(preset, seed, scale, shuffle):
    instance = generate(preset, seed)
    worker_prices, ps_prices = _random_prices(instance, seed + 1, scale)
    order = np.random.default_rng(shuffle).permutation(len(instance.jobs))
    schedule, utility = price_greedy(instance, order, worker_prices, ps_prices)
    report = verify(instance, schedule)
    assert report.feasible, report.violations[:3]
    assert utility == pytest.approx(report.utility, rel=1e-12, abs=1e-12)
    assert utility == compute_metrics(instance, schedule).utility


@pytest.mark.parametrize("seed", [0, 3])
def test_at_zero_prices_the_first_job_gets_its_standalone_optimum(seed):
    instance = generate("small", seed)
    cluster = instance.cluster
    zero_p = np.zeros((instance.horizon, cluster.n_worker_servers, cluster.n_resources))
    zero_q = np.zeros((instance.horizon, cluster.n_ps_servers, cluster.n_resources))
    first = int(schedulable_jobs(instance)[0])
    order = [first] + [i for i in range(len(instance.jobs)) if i != first]
    schedule, _ = price_greedy(instance, order, zero_p, zero_q, scales=(1.0,))
    alone = best_schedule(instance, first, zero_p, zero_q, cluster.worker_capacity, cluster.ps_capacity)
    job = instance.jobs[first]
    completion = schedule.assignments[first].completion_slot()
    assert job.utility(completion - job.arrival) == pytest.approx(alone.utility)


def test_a_spent_deadline_gives_no_greedy_schedule():
    instance = generate("tiny", 0)
    worker_prices, ps_prices = _random_prices(instance, 0, 1.0)
    assert price_greedy(instance, range(len(instance.jobs)), worker_prices, ps_prices, deadline=0.0) is None


LEVERS = [Levers.none(), Levers(), Levers(simplex_strategy=DEFAULT_SIMPLEX_STRATEGY), Levers(dual_pricing=True),
          Levers(greedy_start=False), Levers(mip_presolve=False)]


@pytest.mark.fast_tier(1)
@pytest.mark.parametrize("seed", [2, 7])
def test_every_lever_combination_converges_to_the_same_bound(seed):
    instance = generate("small", seed)
    jobs = schedulable_jobs(instance)
    seeds = online_seeds(instance)
    runs = [column_generation_solve(instance, jobs, seeds=seeds, levers=levers) for levers in LEVERS]
    assert Levers().simplex_strategy == MASTER_SIMPLEX_STRATEGY
    reference = runs[0].bound
    for levers, run in zip(LEVERS, runs):
        assert run.bound == pytest.approx(reference, rel=1e-5), levers
        schedule = Schedule({i: JobSchedule(w, z) for i, (w, z) in run.assignments.items()})
        report = verify(instance, schedule)
        assert report.feasible and report.utility == pytest.approx(run.objective)
        assert run.objective >= max(s.utility for s in seeds) - 1e-9
        assert run.objective <= run.bound * (1 + 1e-6)


@pytest.mark.parametrize("strategy", [-1, 5, 2.5, "4"])
def test_a_simplex_strategy_highs_does_not_have_is_refused_by_name(strategy):
    with pytest.raises(InputError, match=r"levers\.simplex_strategy: must be an integer in 0\.\.4"):
        Levers(simplex_strategy=strategy)
