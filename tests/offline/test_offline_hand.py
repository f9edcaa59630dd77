"""Hand-computed instances with a known optimum, solved by every available backend."""

import numpy as np
import pytest
from offline_helpers import make_instance, make_job, require_solver

from primaldual.offline.solve import solve_offline
from primaldual.core.utility import Constant, LinearDecay, Step
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT

BACKENDS = ["highs", "cbc", "glpk"]


def solve(instance, solver, **kwargs):
    require_solver(solver)
    result = solve_offline(instance, EXACT.replace(solver=solver, **kwargs))
    assert result.status == "optimal", result.message
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert report.utility == pytest.approx(result.objective, abs=1e-9)
    assert result.bound == pytest.approx(result.objective, abs=1e-6)
    return result, report


@pytest.mark.parametrize("solver", BACKENDS)
def test_two_jobs_compete_for_one_server_and_only_one_can_finish(solver):
    # One worker fits per slot; each job needs the server in both slots of the horizon.
    instance = make_instance(
        [make_job(work=2, utility=Constant(7.0)), make_job(work=2, utility=Constant(10.0))],
        horizon=2, worker_capacity=[[1.0]], ps_capacity=[[1.0]],
    )
    result, _ = solve(instance, solver)
    assert result.objective == pytest.approx(10.0)
    assert result.schedule.admitted == [1]
    assert result.schedule[1].workers.tolist() == [[1], [1]]
    assert result.schedule[1].parameter_servers.tolist() == [[1], [1]]


@pytest.mark.parametrize("solver", BACKENDS)
@pytest.mark.parametrize(("gpus", "expected", "completion"), [(4, 12.0, 0), (2, 9.0, 1), (1, 3.0, 3)])
def test_a_job_gains_from_more_workers_early(solver, gpus, expected, completion):
    # Work 4 with up to 4 workers; utility 12, 9, 6, 3 for completing 0..3 slots after arrival.
    instance = make_instance(
        [make_job(work=4, chunks=4, utility=LinearDecay(12.0, 4.0))],
        horizon=4, worker_capacity=[[float(gpus)]], ps_capacity=[[4.0]],
    )
    result, report = solve(instance, solver)
    assert result.objective == pytest.approx(expected)
    assert report.completion_slots == {0: completion}
    assert result.schedule[0].workers_per_slot[0] == gpus


@pytest.mark.parametrize("solver", BACKENDS)
def test_ps_bandwidth_forces_extra_parameter_servers(solver):
    # b = 2, B = 3: 3 workers need ceil(3 x 2 / 3) = 2 PSs; each PS server holds one PS.
    job = make_job(work=3, chunks=3, worker_bandwidth=2.0, ps_bandwidth=3.0, utility=LinearDecay(9.0, 3.0))
    two_ps_servers = make_instance([job], horizon=3, worker_capacity=[[3.0]], ps_capacity=[[1.0], [1.0]])
    result, _ = solve(two_ps_servers, solver)
    assert result.objective == pytest.approx(9.0)  # all 3 workers in slot 0
    assert result.schedule[0].workers_per_slot.tolist() == [3, 0, 0]
    assert result.schedule[0].parameter_servers_per_slot.tolist() == [2, 0, 0]

    # With one PS server, 2 workers would need 2 PSs: one worker per slot, done in slot 2.
    one_ps_server = make_instance([job], horizon=3, worker_capacity=[[3.0]], ps_capacity=[[1.0]])
    result, _ = solve(one_ps_server, solver)
    assert result.objective == pytest.approx(3.0)
    assert result.schedule[0].workers_per_slot.tolist() == [1, 1, 1]


@pytest.mark.parametrize("solver", BACKENDS)
def test_urgent_job_first_flexible_job_later(solver):
    # A 2-GPU server. The urgent job is worth 5 only if done in its arrival slot (needs both GPUs then);
    # the flexible job (worth 3 whenever) takes the server in slot 1. Serving the flexible one first would
    # lose the urgent one.
    instance = make_instance(
        [make_job(work=2, chunks=2, utility=Constant(3.0)),
         make_job(work=2, chunks=2, utility=Step(5.0, 0.0))],
        horizon=2, worker_capacity=[[2.0]], ps_capacity=[[2.0]],
    )
    result, report = solve(instance, solver)
    assert result.objective == pytest.approx(8.0)
    assert report.completion_slots == {0: 1, 1: 0}


@pytest.mark.parametrize("solver", BACKENDS)
def test_late_arrival_and_multi_resource_capacity(solver):
    # Two resources (gpu, cpu). Job 0 (2 GPU + 1 CPU per worker) and job 1 (1 GPU + 3 CPU) cannot share the
    # 2-GPU, 4-CPU server in one slot. Job 1 arrives in slot 1 and is worth more if done in slot 1.
    instance = make_instance(
        [make_job(arrival=0, work=2, worker_demand=(2.0, 1.0), ps_demand=(0.0, 1.0), utility=LinearDecay(6.0, 3.0)),
         make_job(arrival=1, work=1, worker_demand=(1.0, 3.0), ps_demand=(0.0, 1.0), utility=LinearDecay(10.0, 2.0))],
        horizon=3, worker_capacity=[[2.0, 4.0]], ps_capacity=[[0.0, 2.0]], resources=("gpu", "cpu"),
    )
    # Options: job 0 in slots 0 and 2 (done at 2: 6 x 1/3 = 2) + job 1 in slot 1 (10): 12;
    # job 0 in slots 0, 1 (done at 1: 4) + job 1 in slot 2 (done 1 slot late: 5): 9. So 12.
    result, report = solve(instance, solver)
    assert result.objective == pytest.approx(12.0)
    assert report.completion_slots == {0: 2, 1: 1}
    assert np.array_equal(result.schedule[0].workers_per_slot, [1, 0, 1])
