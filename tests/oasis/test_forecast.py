"""OASiS-LR's forecast (primaldual/oasis/lr/forecast.py): the fluid model against a hand-computed case and an
independent time-stepped simulation, and the lookahead that uses it (primaldual/oasis/lr/rollout.py): a cut
rollout leaves re-offers to the run and adds the fluid's value; every schedule verifies, no promise breaks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.core.verify import verify
from primaldual.oasis.lr import rollout as module
from primaldual.oasis.lr.forecast import fluid_completions
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate

from oasis_helpers import random_instances


def test_fluid_completions_by_hand():
    """Three jobs, the cluster holds two full-width jobs of share 0.4 each and 0.2 of a third.

    From 0: A (work 2, width 1) and B (work 4, width 1) at full width, C (work 3, width 1, unit 0.4) at 0.5.
    A ends at 2; then B 1 and C 1 (B's 0.4 + C's 0.4 <= 1): C has 3 - 1 = 2 left, ends at 4; B has 2 left at 2,
    ends at 4 too."""
    ends = fluid_completions(np.array([2.0, 4.0, 3.0]), np.ones(3), np.array([0.4, 0.4, 0.4]), 0.0, 100)
    assert ends == pytest.approx([2.0, 4.0, 4.0])


def test_a_job_not_done_by_the_horizon_never_completes():
    ends = fluid_completions(np.array([1.0, 50.0]), np.ones(2), np.array([1.0, 1.0]), 3.0, 20)
    assert ends[0] == pytest.approx(4.0) and math.isinf(ends[1])


def _stepped(work, widths, units, start, horizon, dt):
    """An independent reading of the model: time in steps of ``dt``, rates by priority at each step."""
    work, ends, now = np.array(work, dtype=float), np.full(len(work), math.inf), start
    while now < horizon and np.any(work > 1e-12):
        left = 1.0
        for k in range(len(work)):
            if work[k] <= 1e-12:
                continue
            rate = min(widths[k], left / units[k])
            left -= rate * units[k]
            if rate > 0:
                work[k] -= rate * dt
                if work[k] <= 1e-12:
                    ends[k] = now + dt
        now += dt
    return ends


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(1, 4), st.sampled_from([0.1, 0.25, 0.5, 1.0])),
                min_size=1, max_size=6))
def test_fluid_completions_agree_with_a_time_stepped_simulation(jobs):
    """Event by event equals step by step (``dt = 1/64``, exact for these rates) to within a step per event."""
    work = np.array([w for w, _, _ in jobs], dtype=float)
    widths = np.array([n for _, n, _ in jobs], dtype=float)
    units = np.array([u for _, _, u in jobs])
    ends = fluid_completions(work, widths, units, 0.0, 1000)
    stepped = _stepped(work, widths, units, 0.0, 1000, 1 / 64)
    assert np.all(np.isfinite(ends))
    assert np.allclose(ends, stepped, atol=len(jobs) / 64 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0.5, 30), st.integers(1, 8), st.floats(0.01, 1.0)), min_size=1, max_size=8))
def test_the_fluid_finishes_every_job_and_no_earlier_than_at_full_width(jobs):
    """Each job completes, never before its work at its full width (``N_i``) from the start, and the last
    completion is no earlier than the total share-weighted work on a cluster of 1."""
    work = np.array([w for w, _, _ in jobs])
    widths = np.array([float(n) for _, n, _ in jobs])
    units = np.array([u for _, _, u in jobs])
    ends = fluid_completions(work, widths, units, 0.0, 10 ** 6)
    assert np.all(ends >= work / widths - 1e-9)
    assert ends.max() >= float((work * units).sum()) - 1e-6


def test_a_cut_rollout_offers_only_at_its_batch_and_one_to_the_horizon_re_offers():
    """Cut short, the twins make the batch's offers and no re-offers (left to the run); to the horizon they
    re-offer the pending tier each slot, as the run does (Lemma L's exact case)."""
    instance = generate("small", 5, jobs=20)
    calls: list[int] = []
    original = module.offer_pending

    def counted(settings, tables, state, slot, admit):
        calls.append(slot)
        return original(settings, tables, state, slot, admit)

    def offers_in_rollouts(rollout_slots):
        calls.clear()
        seen, original_rollouts = [], module.rollouts

        def rollouts(settings, tables, state, slot, *rest):
            before = len(calls)
            out = original_rollouts(settings, tables, state, slot, *rest)
            seen.append((slot, calls[before:]))
            return out

        module.offer_pending, module.rollouts = counted, rollouts
        try:
            simulate(instance, make_scheduler("oasis-lr", rollout_slots=rollout_slots))
        finally:
            module.offer_pending, module.rollouts = original, original_rollouts
        return seen

    cut = offers_in_rollouts(2)
    assert cut and all(slots == [batch] for batch, slots in cut if batch + 2 < instance.horizon)
    whole = offers_in_rollouts(10 ** 6)
    assert any(len(set(slots)) > 1 for _, slots in whole)


def test_the_fluid_tail_is_what_ranks_a_cut_rollout():
    """A cut rollout's score is the replay's utility by the cut plus the fluid's value of the live jobs: it is
    at least the replay's own, and strictly more where jobs are still live at the cut."""
    instance = generate("small", 7, jobs=20)
    scores, original = [], module.tail_value

    def recorded(settings, tables, state, slot):
        value = original(settings, tables, state, slot)
        scores.append((len(state.live(tables.instance, slot)), value))
        return value

    module.tail_value = recorded
    try:
        simulate(instance, make_scheduler("oasis-lr", rollout_slots=2))
    finally:
        module.tail_value = original
    assert scores and all(value >= 0 for _, value in scores)
    assert any(live > 0 and value > 0 for live, value in scores)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=random_instances(), cost=st.sampled_from([0.0, 0.1, 0.3]), cut=st.integers(1, 4))
def test_forecast_runs_verify_and_keep_every_promise(instance, cost, cut):
    result = simulate(instance, make_scheduler("oasis-lr", rollout_slots=cut), restart_cost=cost)
    assert result.promises["broken"] == 0
    assert verify(instance, result.schedule).feasible
