"""Every built-in scheduler on a whole (small) shipped VC: the schedule verifies, and a round trip through the
file format keeps what the verifier says."""

from __future__ import annotations

import pytest

from primaldual.core.files import schedule_from_dict, schedule_to_dict
from primaldual.core.verify import verify
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate
from primaldual.traces import import_trace

#: Every built-in scheduler with its parameters; the rrh variants are the registered rrh-nonpreemptive and
#: rrh-full-reward (which register where the command line loads them).
BUILT_IN = (("fifo", {}), ("drf", {}), ("rrh", {}), ("rrh", {"preemptive": False}), ("rrh", {"risk_weight": 0.8}),
            ("dorm", {}), ("greedy", {}), ("oasis", {}), ("oasis-lr", {}), ("oasis-p", {}),
            ("tiresias", {}), ("srtf", {}), ("optimus", {}), ("themis", {}))


@pytest.fixture(scope="module")
def instance():
    return import_trace("philly:1/23dbec")  # 9 jobs over 53 one-hour slots on one 8-GPU server


@pytest.mark.parametrize("name, parameters", BUILT_IN)
def test_every_scheduler_on_a_whole_small_vc_verifies(instance, name, parameters):
    result = simulate(instance, make_scheduler(name, **parameters))
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations[:3]
    assert report.utility == pytest.approx(result.metrics.utility)
    again = schedule_from_dict(schedule_to_dict(result.schedule), instance)
    assert again.same_allocation(result.schedule)
    assert verify(instance, again) == report
