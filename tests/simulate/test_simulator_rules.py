"""The simulator: what it tells a scheduler, how it accounts work and completion, and what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from primaldual.simulation.scheduler import Allocation, OnlineScheduler
from primaldual.simulation.rules import SimulationError
from primaldual.simulation.simulator import simulate
from primaldual.core.verify import verify
from simulate_helpers import Constant, ScriptedScheduler, Sigmoid, make_instance, make_job


def two_job_instance():
    # Job 0: 4 worker-slots, N = 2, arrives 0. Job 1: 2 worker-slots, N = 2, arrives 1. One worker server
    # (4 gpu, 8 cpu), one PS server (8 cpu). Z(D) = ceil(D / 4).
    return make_instance(
        [make_job(arrival=0, work=4, chunks=2, utility=Sigmoid(10.0, 1.0, 1.0)),
         make_job(arrival=1, work=2, chunks=2, utility=Constant(5.0))],
        horizon=4,
    )


def test_driving_sequence_accounting_and_completion():
    instance = two_job_instance()
    script = {
        0: {0: ([2], [1])},
        1: {0: ([1], [1]), 1: ([2], [1])},
        2: {0: ([1], [1])},
    }
    scheduler = ScriptedScheduler(script)
    result = simulate(instance, scheduler)
    assert scheduler.calls[0] == ("arrival", 0, [0])
    assert scheduler.calls[1] == ("allocate", 0, (0,), (4, 2))
    assert scheduler.calls[2] == ("arrival", 1, [1])
    assert scheduler.calls[3] == ("allocate", 1, (0, 1), (2, 2))
    assert scheduler.calls[4] == ("completion", 1, [1])
    assert scheduler.calls[5] == ("allocate", 2, (0,), (1, 0))
    assert scheduler.calls[6] == ("completion", 2, [0])
    assert len(scheduler.calls) == 7  # every job done: the simulator stops asking
    assert result.metrics.completion_slots == {0: 2, 1: 1}
    assert result.metrics.jct == {0: 3, 1: 1}
    assert result.metrics.mean_jct == 2.0
    expected = float(Sigmoid(10.0, 1.0, 1.0)(2)) + 5.0
    assert result.utility == pytest.approx(expected, rel=1e-12)
    report = verify(instance, result.schedule)
    assert report.feasible and report.utility == result.utility
    assert result.schedule[0].workers[:, 0].tolist() == [2, 1, 1, 0]
    assert result.admitted == result.completed == 2
    assert result.received == (0, 1)
    assert result.scheduler == "scripted"
    assert result.scheduler_seconds >= 0


def test_unfinished_job_is_left_out_but_counted():
    instance = two_job_instance()
    # Job 0 gets 1 worker-slot of its 4 and never finishes; job 1 finishes.
    result = simulate(instance, ScriptedScheduler({0: {0: ([1], [1])}, 1: {1: ([2], [1])}}))
    assert result.schedule.admitted == [1]
    assert result.started == 2 and result.admitted == result.completed == 1
    assert result.metrics.unfinished == 1
    assert result.metrics.wasted_worker_slots == 1
    assert verify(instance, result.schedule).feasible
    # Utilisation counts the wasted worker too: (1 + 2) workers x 1 gpu over 4 slots x 4 gpu.
    assert result.metrics.utilisation["worker"]["gpu"] == pytest.approx(3 / 16)
    assert "gpu" not in result.metrics.utilisation["ps"]  # no PS gpu capacity


def test_zero_entries_are_ignored_and_schedulers_may_be_named():
    instance = two_job_instance()
    result = simulate(instance, ScriptedScheduler({0: {0: ([0], [0]), 1: ([0], [0])}}))
    assert result.admitted == 0 and result.utility == 0.0
    named = simulate(instance, "fifo")
    assert named.scheduler == "fifo" and verify(instance, named.schedule).feasible


def refused(instance, script) -> SimulationError:
    with pytest.raises(SimulationError) as caught:
        simulate(instance, ScriptedScheduler(script))
    error = caught.value
    message = str(error)
    assert "scheduler 'scripted'" in message and f"slot {error.slot}" in message
    if error.job is not None:
        assert f"job {error.job}" in message
    assert message.endswith(f"[rule {error.rule}]")
    return error


def test_refuses_worker_capacity_summed_over_jobs():
    # 3 + 2 workers x 1 gpu on a 4-gpu server; each job alone would fit.
    instance = make_instance([make_job(0, work=8, chunks=3), make_job(0, work=8, chunks=3)], horizon=4)
    error = refused(instance, {0: {0: ([3], [1]), 1: ([2], [1])}})
    assert (error.rule, error.equation, error.slot) == ("capacity", "4", 0)
    assert "worker server 0 gpu" in str(error) and "[0, 1]" in str(error) and "capacity 4" in str(error)


def test_refuses_ps_capacity():
    instance = make_instance([make_job(0, work=4, chunks=2, ps_demand=(0.0, 5.0)),
                              make_job(0, work=4, chunks=2, ps_demand=(0.0, 5.0))], horizon=4)
    error = refused(instance, {0: {0: ([1], [1]), 1: ([1], [1])}})
    assert (error.rule, error.equation) == ("capacity", "5")
    assert "PS server 0 cpu" in str(error)


def test_refuses_allocation_before_arrival():
    instance = two_job_instance()
    error = refused(instance, {0: {1: ([1], [1])}})
    assert (error.rule, error.equation, error.job, error.slot) == ("arrival", "9", 1, 0)
    assert "arrival slot 1" in str(error)


def test_refuses_more_workers_than_chunks():
    instance = two_job_instance()
    error = refused(instance, {0: {0: ([3], [1])}})
    assert (error.rule, error.equation, error.job) == ("worker_cap", "3", 0)
    assert "N = 2" in str(error)


def test_refuses_too_little_ps_bandwidth():
    instance = make_instance([make_job(0, work=4, chunks=4, bandwidth_ratio=0.5)], horizon=4)
    # 3 workers need ceil(3 * 0.5) = 2 PSs; one is not enough.
    error = refused(instance, {0: {0: ([3], [1])}})
    assert (error.rule, error.equation, error.job) == ("ps_bandwidth", "6", 0)


def test_refuses_more_ps_than_workers():
    instance = two_job_instance()
    error = refused(instance, {0: {0: ([1], [2])}})
    assert (error.rule, error.equation) == ("ps_count", "7")
    # PSs without any worker break (7) as well.
    error = refused(instance, {0: {0: ([0], [1])}})
    assert error.rule == "ps_count"


@pytest.mark.parametrize("workers", [[-1], [0.5], [float("nan")], [1e20]])
def test_refuses_negative_or_fractional_counts(workers):
    instance = two_job_instance()
    error = refused(instance, {0: {0: (workers, [1])}})
    assert (error.rule, error.equation) == ("integrality", "12")


def test_refuses_allocation_to_completed_job():
    instance = two_job_instance()
    error = refused(instance, {1: {1: ([2], [1])}, 2: {1: ([1], [1])}})
    assert (error.rule, error.job, error.slot) == ("completed", 1, 2)
    assert "completed its work in slot 1" in str(error)


def test_refuses_malformed_answers():
    instance = two_job_instance()
    assert refused(instance, {0: {5: ([1], [1])}}).rule == "unknown_job"
    assert refused(instance, {0: {0: ([1, 0], [1])}}).rule == "shape"

    class ReturnsNone(OnlineScheduler):
        name = "forgetful"

        def allocate(self, slot, state):
            pass

    with pytest.raises(SimulationError, match="scheduler 'forgetful', slot 0: allocate\\(\\) must return a dict"):
        simulate(instance, ReturnsNone())

    class NotAnAllocation(OnlineScheduler):
        name = "tuples"

        def allocate(self, slot, state):
            return {0: (np.array([1]), np.array([1]))}

    with pytest.raises(SimulationError, match="job 0: the allocation must be an Allocation"):
        simulate(instance, NotAnAllocation())


def test_state_is_read_only():
    instance = two_job_instance()

    class Vandal(OnlineScheduler):
        name = "vandal"

        def allocate(self, slot, state):
            state.remaining_work[0] = 0
            return {}

    with pytest.raises(ValueError, match="read-only"):
        simulate(instance, Vandal())


def test_simulation_error_is_not_input_error():
    from primaldual.core.errors import InputError

    assert issubclass(SimulationError, RuntimeError) and not issubclass(SimulationError, InputError)


def test_allocation_arrays_of_floats_holding_integers_are_accepted():
    instance = two_job_instance()
    result = simulate(instance, ScriptedScheduler({0: {0: (np.array([2.0]), np.array([1.0]))},
                                                   1: {0: (np.array([2.0]), np.array([1.0]))}}))
    assert result.completed == 1 and result.schedule[0].workers.dtype == np.int64


def test_allocation_type_is_the_interface_one():
    assert Allocation(np.array([1]), np.array([1])).workers.tolist() == [1]
