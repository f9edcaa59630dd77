"""The simulator on heterogeneous clusters (issue 64): who may run there, one type per job and slot, the work
done at each type's speed, what schedulers read, restarts on a change of type, and the verifier agreeing."""

from __future__ import annotations

import numpy as np
import pytest

from primaldual.core.errors import InputError
from primaldual.core.verify import verify
from primaldual.simulation.progress import needed_on
from primaldual.simulation.rules import SimulationError
from primaldual.simulation.simulator import simulate
from primaldual.simulation.scheduler import Allocation, OnlineScheduler
from hetero_helpers import typed_instance, typed_job
from simulate_helpers import ScriptedScheduler


class TypedScripted(ScriptedScheduler):
    handles_gpu_types = True

    def allocate(self, slot, state):
        self.calls.append(("state", slot, tuple(int(x) for x in state.remaining_work),
                           None if state.remaining_fraction is None else tuple(state.remaining_fraction)))
        return super().allocate(slot, state)


def on(server, workers, servers=2):
    """``workers`` on worker server ``server``, with the one PS a quarter-bandwidth job needs per 4 workers."""
    y = [0] * servers
    y[server] = workers
    return (y, [-(-workers // 4)])


def test_a_scheduler_that_does_not_handle_types_is_refused_in_one_line():
    instance = typed_instance([typed_job()])
    with pytest.raises(InputError, match="heterogeneous clusters .* not yet supported by scripted"):
        simulate(instance, ScriptedScheduler({}))
    assert OnlineScheduler.handles_gpu_types is False


def test_work_is_done_at_each_types_speed_and_the_schedule_verifies():
    # W = 4 on fast (server 0), 12 on slow (server 1): 2 workers on slow for 3 slots do 6/12, then 2 fast for
    # 1 slot do 2/4: done exactly 1 in slot 3.
    instance = typed_instance([typed_job(work=4, chunks=2, slower=3.0)])
    script = {t: {0: on(1, 2)} for t in range(3)} | {3: {0: on(0, 2)}}
    scheduler = TypedScripted(script)
    result = simulate(instance, scheduler)
    report = verify(instance, result.schedule)
    assert result.completed == 1 and report.feasible and report.completion_slots == {0: 3}
    states = [c for c in scheduler.calls if c[0] == "state"]
    # Remaining work read on the fastest type: 4, then (1 - 2/12) x 4 = 3.33 -> 4, (1 - 4/12) x 4 = 2.67 -> 3, 2.
    assert [s[2][0] for s in states] == [4, 4, 3, 2]
    assert states[1][3][0] == pytest.approx(10 / 12) and states[3][3][0] == pytest.approx(0.5)


def test_slow_workers_alone_take_their_slower_work():
    instance = typed_instance([typed_job(work=4, chunks=2, slower=3.0)])
    script = {t: {0: on(1, 2)} for t in range(6)}
    result = simulate(instance, TypedScripted(script))
    assert result.completed == 1
    report = verify(instance, result.schedule)
    assert report.feasible and report.completion_slots == {0: 5}  # 12 slow worker-slots, 2 a slot
    short = simulate(instance, TypedScripted({t: {0: on(1, 2)} for t in range(5)}))
    assert short.completed == 0  # 10 of 12 slow worker-slots: not done


def test_mixing_types_in_one_slot_is_refused():
    instance = typed_instance([typed_job(work=4, chunks=2)])
    script = {0: {0: ([1, 1], [1])}}
    with pytest.raises(SimulationError, match="more than one gpu type .*1 fast, 1 slow") as error:
        simulate(instance, TypedScripted(script))
    assert error.value.rule == "one_type" and error.value.job == 0


def test_a_change_of_type_is_a_restart():
    instance = typed_instance([typed_job(work=4, chunks=2, slower=3.0)])
    script = {0: {0: on(1, 2)}, 1: {0: on(0, 2)}, 2: {0: on(0, 2)}}
    result = simulate(instance, TypedScripted(script), restart_cost=0.5)
    # Starts (restart 1), changes type (restart 2), keeps its place: 1/12 + 1/4 + 2/4 < 1, not done.
    assert result.metrics.restarts == 2 and result.completed == 0


def test_needed_on_each_type():
    instance = typed_instance([typed_job(work=4, chunks=2, slower=3.0)])
    scheduler = TypedScripted({0: {0: on(1, 2)}})
    seen = {}

    class Probe(TypedScripted):
        def allocate(self, slot, state):
            if slot == 1:
                seen["fast"], seen["slow"] = needed_on(state, instance, 0, 0), needed_on(state, instance, 0, 1)
            return super().allocate(slot, state)

    simulate(instance, Probe(scheduler.script))
    assert seen == {"fast": 4, "slow": 10}
