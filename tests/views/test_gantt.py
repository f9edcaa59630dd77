"""The Gantt view: its pure parts with numbers (segments, sampled rows, deadlines, job states) and the figure."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.core.instance import Cluster, Instance, job_with_work
from primaldual.core.schedule import Schedule
from primaldual.simulation.simulator import simulate
from primaldual.core.utility import Constant, Step
from primaldual.evaluation.outcomes import job_outcomes
from primaldual.views.gantt import (
    Segment, deadlines, draw_schedule, job_states, sampled_rows, save_schedule_figure, segments, slot_label,
)
from views_helpers import hand_instance, hand_schedule


def test_segments_are_maximal_runs_of_equal_counts():
    assert segments(np.array([0, 2, 2, 1, 0, 0, 1, 1])) == [Segment(1, 3, 2), Segment(3, 4, 1), Segment(6, 8, 1)]
    assert segments(np.zeros(4)) == []


@given(st.lists(st.integers(0, 3), max_size=30))
def test_segments_rebuild_the_counts(counts):
    rebuilt = np.zeros(len(counts), dtype=int)
    for segment in segments(np.array(counts)):
        assert segment.workers > 0
        rebuilt[segment.start:segment.stop] = segment.workers
    assert rebuilt.tolist() == counts


def test_sampled_rows():
    assert sampled_rows(10, 40).tolist() == list(range(10))
    rows = sampled_rows(300, 40)
    assert len(rows) == 40 and rows[0] == 0 and rows[-1] == 299 and np.all(np.diff(rows) > 0)


def test_deadlines_from_utilities_and_promises():
    cluster = Cluster(("gpu",), np.array([[2.0]]), np.array([[2.0]]))
    jobs = (job_with_work(2, 1, (1.0,), (1.0,), Step(5.0, 3.0), arrival=1),
            job_with_work(2, 1, (1.0,), (1.0,), Constant(5.0)))
    instance = Instance(cluster, jobs, 8, 1.0)
    assert deadlines(instance, Schedule({})) == {0: (4, "utility")}
    promised = Schedule({}, meta={"promised_deadlines": {"1": 6, "0": 3}})
    assert deadlines(instance, promised) == {0: (3, "promise"), 1: (6, "promise")}
    with pytest.raises(InputError, match="promised_deadlines.7"):
        deadlines(instance, Schedule({}, meta={"promised_deadlines": {"7": 1}}))
    with pytest.raises(InputError, match="promised_deadlines.0"):
        deadlines(instance, Schedule({}, meta={"promised_deadlines": {"0": "soon"}}))


def test_job_states_hand_computed():
    instance, schedule = hand_instance(), hand_schedule()
    states = job_states(job_outcomes(instance, schedule), schedule, instance.horizon)
    # Job 0 runs in slots 0-1; job 1 arrives in slot 1, runs in 2 and 4; job 2 is never run.
    assert states["running"].tolist() == [1, 1, 1, 0, 1, 0]
    assert states["waiting"].tolist() == [0, 1, 0, 1, 0, 0]
    assert states["completed"].tolist() == [0, 0, 1, 1, 1, 2]
    assert states["rejected"].tolist() == [1, 1, 1, 1, 1, 1]
    assert states["abandoned"].tolist() == [0] * 6


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), scheduler=st.sampled_from(["oasis", "fifo", "rrh"]))
def test_every_arrived_job_is_in_exactly_one_state(seed, scheduler):
    instance = generate("small", seed=seed, jobs=6)
    result = simulate(instance, scheduler)
    outcomes = job_outcomes(instance, result.schedule, received=result.received)
    states = job_states(outcomes, result.schedule, instance.horizon)
    arrived = [(instance.arrivals <= t).sum() for t in range(instance.horizon)]
    assert (sum(states.values())).tolist() == arrived


def test_slot_label_units():
    assert slot_label(3600.0) == "time slot (1 slot = 1 h)"
    assert slot_label(300.0) == "time slot (1 slot = 5 min)"
    assert slot_label(1.5) == "time slot (1 slot = 1.5 s)"


def _gantt_axes(fig):
    return fig.axes[0]


def test_figure_has_one_row_per_job_and_one_bar_per_segment():
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    fig = draw_schedule(hand_instance(), hand_schedule())
    try:
        gantt = _gantt_axes(fig)
        assert [t.get_text() for t in gantt.get_yticklabels()] == ["job 0", "job 1", "job 2"]
        bars = [p for p in gantt.patches if isinstance(p, Rectangle)]
        assert len(bars) == 3  # job 0: one run of 2 workers; job 1: two runs of 1 worker
        labels = [t.get_text() for t in gantt.get_legend().get_texts()]
        assert "rejected (never ran)" in labels and "abandoned (ran, did not complete)" not in labels
        # Gantt, job states, worker pool, PS pool (the colour bar is an inset of the Gantt panel).
        assert len([ax for ax in fig.axes if ax.get_label() != "<colorbar>"]) >= 4
        assert fig.axes[-1].get_xlabel() == "time slot (1 slot = 1 s)"
    finally:
        plt.close(fig)


def test_large_instances_are_sampled_and_say_so(tmp_path):
    import matplotlib.pyplot as plt

    instance = generate("small", seed=4, jobs=60)
    schedule = simulate(instance, "fifo").schedule
    fig = draw_schedule(instance, schedule, max_rows=12)
    try:
        assert len(_gantt_axes(fig).get_yticklabels()) == 12
        assert "12 evenly spaced jobs of 60" in fig._suptitle.get_text()
    finally:
        plt.close(fig)
    for suffix in (".png", ".svg"):
        path = tmp_path / f"g{suffix}"
        save_schedule_figure(instance, schedule, path, max_rows=12)
        assert path.stat().st_size > 1000


def test_received_jobs_in_meta_mark_abandoned_jobs():
    import matplotlib.pyplot as plt

    base = hand_schedule()
    fig = draw_schedule(hand_instance(), Schedule(base.assignments, meta={"received": [0, 1, 2]}))
    try:
        labels = [t.get_text() for t in _gantt_axes(fig).get_legend().get_texts()]
        assert "abandoned (ran, did not complete)" in labels and "rejected (never ran)" not in labels
        assert "abandoned 1, rejected 0 of 3 jobs" in fig._suptitle.get_text()
    finally:
        plt.close(fig)
    with pytest.raises(InputError, match="meta.received"):
        draw_schedule(hand_instance(), Schedule(base.assignments, meta={"received": "all"}))


def test_schedule_name_from_meta():
    from primaldual.views.gantt import schedule_name

    assert schedule_name(Schedule({}, meta={"scheduler": "rrh"})) == "rrh"
    assert schedule_name(Schedule({}, meta={"source": "offline", "solver": "highs", "status": "optimal"})) == (
        "offline optimum (highs, optimal)")
    assert schedule_name(Schedule({})) == "schedule"
