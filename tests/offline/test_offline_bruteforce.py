"""The ILP optimum agrees with an independent brute-force enumeration on random ``tiny`` instances."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from offline_bruteforce import brute_force_optimum, job_schedules
from offline_helpers import make_instance, make_job

from primaldual.core.generate import generate
from primaldual.offline.solve import solve_offline
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.utility import Constant, LinearDecay
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT


def test_brute_force_enumerator_on_a_hand_case():
    # Sanity of the enumerator itself: one 1-GPU server, two jobs of work 2 in a 2-slot horizon.
    instance = make_instance([make_job(work=2, utility=Constant(7.0)), make_job(work=2, utility=Constant(10.0))],
                             horizon=2, worker_capacity=[[1.0]], ps_capacity=[[1.0]])
    value, choice = brute_force_optimum(instance)
    assert value == 10.0 and list(choice) == [1]
    # Job schedules: work exactly 2 with one worker per slot: one schedule only.
    assert len(job_schedules(instance, 0)) == 1
    # More room: 2 workers per slot and per server, 2 servers: the enumerator splits over servers.
    roomy = make_instance([make_job(work=2, chunks=2, utility=LinearDecay(2.0, 2.0))], horizon=2,
                          worker_capacity=[[2.0], [2.0]], ps_capacity=[[2.0]])
    schedules = job_schedules(roomy, 0)
    # Totals (2,0): 3 worker splits; (1,1): 2 x 2 splits; (0,2): 3 splits. PSs: one server, no choice.
    assert len(schedules) == 3 + 4 + 3
    assert schedules[0][0] == 2.0  # sorted by utility, finishing in slot 0 first


def _check_against_brute_force(instance):
    expected, choice = brute_force_optimum(instance)
    # The brute force's own schedule is feasible and worth what it says.
    witness = Schedule({i: JobSchedule(y, z) for i, (y, z) in choice.items()})
    report = verify(instance, witness)
    assert report.feasible and report.utility == pytest.approx(expected, abs=1e-9)

    result = solve_offline(instance)
    assert result.status == "optimal", result.message
    assert verify(instance, result.schedule).feasible
    assert result.objective == pytest.approx(expected, rel=1e-7, abs=1e-7)
    assert result.bound >= result.objective
    # The weak formulation has the same optimum; relaxations bound it from above.
    weak = solve_offline(instance, EXACT.replace(formulation="weak"))
    assert weak.objective == pytest.approx(expected, rel=1e-7, abs=1e-7)
    for kwargs in ({"method": "lp"}, {"method": "lp", "formulation": "weak"}, {"method": "pooled"}):
        relaxation = solve_offline(instance, EXACT.replace(**kwargs))
        assert relaxation.status == "optimal"
        assert relaxation.bound >= expected - 1e-7 * max(1.0, expected), kwargs


@settings(derandomize=True, max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10**6))
def test_ilp_matches_brute_force_on_random_tiny_instances(seed):
    _check_against_brute_force(generate("tiny", seed))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 5, 8, 13, 21])
def test_ilp_matches_brute_force_on_fixed_tiny_seeds(seed):
    _check_against_brute_force(generate("tiny", seed))
