"""An offer's utility read from its job's window (:meth:`primaldual.oasis.lr.state.JobTables.utility_window`): the
values of a call over the offer's slots alone, to the bit, in every family, inside the horizon and past it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.utility import Constant, LinearDecay, Sigmoid, Step
from primaldual.simulation.scheduler import make_scheduler
from oasis_helpers import make_instance, make_job

FAMILIES = st.one_of(
    st.builds(Sigmoid, st.floats(0.1, 100.0), st.floats(0.0, 5.0), st.floats(0.0, 40.0)),
    st.builds(LinearDecay, st.floats(0.1, 100.0), st.floats(0.5, 60.0)),
    st.builds(Step, st.floats(0.1, 100.0), st.floats(0.0, 60.0)),
    st.builds(Constant, st.floats(0.1, 100.0)),
)


def _tables(utilities, arrivals, horizon):
    jobs = [make_job(a, 4, 2, [1.0, 0.0], [0.0, 1.0], u) for u, a in zip(utilities, arrivals)]
    scheduler = make_scheduler("oasis-lr")
    scheduler.start(make_instance(jobs, [[4.0, 0.0]], [[0.0, 4.0]], horizon))
    return scheduler.tables


@settings(max_examples=60, deadline=None)
@given(utilities=st.lists(FAMILIES, min_size=1, max_size=3), horizon=st.integers(1, 40),
       reads=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 45), st.integers(-1, 60)), min_size=1,
                      max_size=8), data=st.data())
def test_a_window_holds_the_values_of_a_call_over_the_offer_s_slots(utilities, horizon, reads, data):
    arrivals = [data.draw(st.integers(0, horizon - 1)) for _ in utilities]
    tables = _tables(utilities, arrivals, horizon)
    for k, offset, slots in reads:  # in any order: the first read of a job fills its window
        i = k % len(utilities)
        job = tables.instance.jobs[i]
        slot = job.arrival + min(offset, horizon - 1 - job.arrival)
        alone = np.asarray(job.utility(slot - job.arrival + np.arange(max(slots, 0))), dtype=float)
        window = tables.utility_window(i, slot, slots)
        assert window.dtype == alone.dtype and window.tobytes() == alone.tobytes()


def test_the_window_is_computed_once_per_job_and_read_as_a_view():
    tables = _tables([Sigmoid(10.0, 0.5, 6.0)], [2], 12)
    first = tables.utility_window(0, 3, 4)
    assert first.base is tables.windows[0] and tables.windows[0].shape == (10,)
    assert tables.utility_window(0, 5, 2).base is tables.windows[0]
    beyond = tables.utility_window(0, 9, 8)  # past the horizon: a call of its own, the same values where they meet
    assert beyond.base is not tables.windows[0] and beyond[:3].tobytes() == tables.windows[0][7:].tobytes()


def test_a_run_keeps_the_windows_of_its_pending_jobs_only_and_the_same_schedule(monkeypatch):
    from primaldual.core.files import schedule_to_dict
    from primaldual.core.generate import generate
    from primaldual.oasis.lr.state import JobTables
    from primaldual.simulation.simulator import simulate

    instance = generate("small", 5, jobs=30)
    held = []
    scheduler = make_scheduler("oasis-lr")
    offer = scheduler._offer

    def checked(slot):
        offer(slot)
        assert set(scheduler.tables.windows) <= set(scheduler.state.pending)
        held.append(len(scheduler.tables.windows))

    scheduler._offer = checked
    kept = simulate(instance, scheduler, restart_cost=0.1)
    assert max(held) > 0 and held[-1] < max(held)
    monkeypatch.setattr(JobTables, "keep_windows", lambda self, pending: None)  # every window kept, as before
    every = simulate(instance, make_scheduler("oasis-lr"), restart_cost=0.1)
    assert schedule_to_dict(kept.schedule) == schedule_to_dict(every.schedule)
    assert kept.metrics.utility == every.metrics.utility
