"""OASiS-LR's admission rule against immediate blocks (primaldual.oasis.lr.admission) and its urgency order
(primaldual.oasis.lr.order).

With ``immediate_blocks=False`` a promise rests on a block that starts after the slot of its offer, and with
``order="urgency"`` free capacity goes first to the jobs with the most present value plus one slot's delay cost
per resource-time. Both are options of ``oasis-lr`` (off by default, ``proofs/oasis-lr.md``, "Why the rules are
off by default"); ``oasis-p``'s default runs are unchanged. Each test names what it checks in ``proofs/oasis-lr.md``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oasis_helpers import make_instance, make_job
from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate
from primaldual.oasis.lr.order import urgency_keys
from primaldual.core.utility import Constant, LinearDecay
from primaldual.core.verify import verify

#: Both optional rules on.
RULES = {"immediate_blocks": False, "order": "urgency"}


def _low_then_dense():
    """One server with 2 GPUs. Job 0 (t = 0): 4 worker-slots, N = 2, f = 6 (1 - d/3). Job 1 (t = 1): 2
    worker-slots, N = 2, f = 100 (1 - d/2), 25x denser."""
    low = make_job(0, 4, 2, [1.0, 0.0], [0.0, 1.0], LinearDecay(6.0, 3.0))
    dense = make_job(1, 2, 2, [1.0, 0.0], [0.0, 1.0], LinearDecay(100.0, 2.0))
    return make_instance([low, dense], [[2.0, 0.0]], [[0.0, 4.0]], horizon=6)


def test_an_immediate_block_no_longer_shuts_out_a_denser_arrival():
    """Hand-computed. With immediate blocks, job 0's only block is slots 0-1 (2 workers, deadline 1): it is
    promised, job 1 waits for slot 2 and earns 100 (1 - 1/2) = 50; total 4 + 50 = 54. Without them job 0 runs
    in the pending tier in slot 0, job 1 (denser) takes both GPUs in slot 1 and earns 100, job 0 finishes in
    slot 2 and earns 6 (1 - 2/3) = 2; total 102, and no promise is made (none could leave slot 0 free)."""
    instance = _low_then_dense()
    common = dict(eta=8.0, learned_floor=False)  # cheap prices: both jobs would be promised on their own
    before = simulate(instance, make_scheduler("oasis-lr", immediate_blocks=True, **common))
    assert before.metrics.completion_slots == {0: 1, 1: 2}
    assert before.utility == pytest.approx(54.0)
    assert before.promises == {"made": 2, "kept": 2, "broken": 0}
    after = simulate(instance, make_scheduler("oasis-lr", immediate_blocks=False, **common))
    assert after.metrics.completion_slots == {0: 2, 1: 1}
    assert after.utility == pytest.approx(102.0)
    assert after.promises == {"made": 0, "kept": 0, "broken": 0}
    for result in (before, after):
        assert verify(instance, result.schedule).feasible


def test_oasis_p_keeps_immediate_blocks_and_the_parameter_is_checked():
    assert make_scheduler("oasis-p").parameters()["immediate_blocks"] is True
    assert make_scheduler("oasis-p").parameters()["order"] == "density"
    assert make_scheduler("oasis-lr").parameters()["order"] == "density"
    assert make_scheduler("oasis-lr", order="urgency").parameters()["order"] == "urgency"
    with pytest.raises(InputError, match="order"):
        make_scheduler("oasis-lr", order="fastest")
    assert make_scheduler("oasis-lr").parameters()["immediate_blocks"] is True
    assert make_scheduler("oasis-lr", immediate_blocks=False).parameters()["immediate_blocks"] is False
    with pytest.raises(InputError, match="immediate_blocks"):
        make_scheduler("oasis-lr", immediate_blocks="yes")


def _recording_admissions(scheduler):
    """Wrap ``_admit`` to record (slot, block's first slot) of every promise."""
    seen = []
    admit = scheduler._admit

    def recorded(slot, i):
        admitted = admit(slot, i)
        if admitted:
            seen.append((slot, scheduler.state.ledger.reservations[i].first))
        return admitted

    scheduler._admit = recorded
    return seen


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), cost=st.sampled_from([0.0, 0.05, 0.1]), eta=st.sampled_from([0.05, 0.25]))
def test_every_promise_leaves_its_offer_slot_free_and_none_is_broken(seed, cost, eta):
    """G1 under the rule, on random 20-job ``small`` instances (heavy contention) with and without restart
    costs: each promise's block starts after the slot it was offered in, every promise is kept (the engine
    also asserts it every slot) and the schedule verifies."""
    instance = generate("small", seed, jobs=20)
    scheduler = make_scheduler("oasis-lr", eta=eta, **RULES)
    admissions = _recording_admissions(scheduler)
    result = simulate(instance, scheduler, restart_cost=cost)
    assert all(first > slot for slot, first in admissions)
    assert len(admissions) == result.promises["made"]
    assert result.promises["broken"] == 0 and result.promises["kept"] == result.promises["made"]
    assert verify(instance, result.schedule).feasible


@pytest.mark.parametrize("seed", range(3))
def test_oasis_p_is_unchanged_by_the_rule(seed):
    """oasis-p's default is the old rule: its run equals oasis-p with immediate_blocks=True spelled out, and an
    immediate block does occur (so the comparison can fail)."""
    instance = generate("small", 300 + seed, jobs=20)
    default = make_scheduler("oasis-p")
    admissions = _recording_admissions(default)
    a = simulate(instance, default, restart_cost=0.1)
    b = simulate(instance, make_scheduler("oasis-p", immediate_blocks=True, order="density"), restart_cost=0.1)
    assert a.utility == b.utility and a.metrics.completion_slots == b.metrics.completion_slots
    assert a.promises == b.promises
    if seed == 0:
        assert any(first == slot for slot, first in admissions)


def _flat_and_decaying():
    """One server with 1 GPU, both jobs at t = 0, N = 1. Job 0: 2 worker-slots, f = 100 whatever the delay
    (density 50 per worker-slot). Job 1: 1 worker-slot, f = 40 (1 - d/2): 40, 20, 0 (density 40)."""
    flat = make_job(0, 2, 1, [1.0, 0.0], [0.0, 1.0], Constant(100.0))
    decaying = make_job(0, 1, 1, [1.0, 0.0], [0.0, 1.0], LinearDecay(40.0, 2.0))
    return make_instance([flat, decaying], [[1.0, 0.0]], [[0.0, 4.0]], horizon=6)


def test_the_urgency_order_serves_the_job_that_loses_by_waiting_first():
    """Hand-computed, no restart cost. Density order: the flat job first (slots 0-1, 100), the other in slot 2
    (f(2) = 0): 100. Urgency keys (r = 0.02, u the same for both): flat 100 / 1.04 / 2 + 0 = 48.1 per unit,
    decaying 40 / 1.02 + (40 - 20) = 59.2: it goes first (slot 0, 40), the flat job in slots 1-2 (100): 140.
    Neither job is promised (the decaying one is the least dense; the flat one's block would be immediate)."""
    instance = _flat_and_decaying()
    density = simulate(instance, make_scheduler("oasis-lr", order="density", lookahead=False))
    assert density.metrics.completion_slots == {0: 1, 1: 2} and density.utility == pytest.approx(100.0)
    urgency = simulate(instance, make_scheduler("oasis-lr", lookahead=False, **RULES))
    assert urgency.metrics.completion_slots == {0: 2, 1: 0} and urgency.utility == pytest.approx(140.0)
    assert urgency.promises["made"] == 0
    assert verify(instance, urgency.schedule).feasible
    # The default looks ahead (Lemma L, one arrival batch): its rollout finds the urgency order by itself.
    default = simulate(instance, make_scheduler("oasis-lr"))
    assert default.utility == pytest.approx(140.0) and default.report["lookahead"]["chosen"] == {"urgency": 1}


def test_urgency_keys_by_hand_with_restarts_and_the_horizon():
    """k_i = (f(c) / (1 + r d) + f(c) - f(c + 1)) / (W u), d = ceil(W / N + F) unless the job ran in the slot
    before; f = 0 from the horizon on, so a job whose next slot of delay misses the horizon is urgent by its
    whole value."""
    instance = _flat_and_decaying()
    scheduler = make_scheduler("oasis-lr")
    scheduler.start(instance)
    unit = scheduler.tables.unit
    assert unit[0] == unit[1] > 0
    keys = urgency_keys(scheduler.settings, scheduler.tables, scheduler.state, 0, [0, 1])
    assert keys[0] * unit[0] == pytest.approx(100.0 / 1.04 / 2)
    assert keys[1] * unit[1] == pytest.approx(40.0 / 1.02 + 20.0)
    scheduler.set_restart_cost(0.1)  # d: ceil(2 + 0.1) = 3 and ceil(1 + 0.1) = 2
    keys = urgency_keys(scheduler.settings, scheduler.tables, scheduler.state, 0, [0, 1])
    assert keys[0] * unit[0] == pytest.approx(100.0 / 1.06 / 2)
    assert keys[1] * unit[1] == pytest.approx(20.0 / 1.04 + 20.0)
    keys = urgency_keys(scheduler.settings, scheduler.tables, scheduler.state, 3, [0])  # d = 3, completion 5 = T - 1: one more slot misses the horizon
    assert keys[0] * unit[0] == pytest.approx((100.0 / 1.06 + 100.0) / 2)


def test_quality_bench_reports_oasis_lr_over_each_baseline_with_its_spread():
    """``lr_over`` of ``bench oasis --quality``: totals 9 / 5 = 1.8, per instance 1 to 2 (the instance where the
    baseline earned nothing is left out of the spread); 9 / 6 = 1.5; None when the baseline earned nothing."""
    import numpy as np

    from primaldual.evaluation.bench.oasis_quality import SCHEDULERS, _ratio_spread

    assert _ratio_spread(np.array([4.0, 3.0, 2.0]), np.array([2.0, 3.0, 0.0])) == (1.8, 1.0, 2.0)
    assert _ratio_spread(np.array([6.0, 3.0]), np.array([3.0, 3.0])) == (1.5, 1.0, 2.0)
    assert _ratio_spread(np.array([1.0]), np.array([0.0])) == (None, None, None)
    labels = {label for label, _, _ in SCHEDULERS}
    assert {"oasis-lr", "oasis-lr-urgency", "rrh", "rrh-full", "rrh-np", "greedy", "drf", "fifo", "dorm"} <= labels
