"""OASiS-LR's admission rule against immediate blocks (primaldual.oasis_lr_admission).

A promise of ``oasis-lr`` rests on a block that starts after the slot of its offer; ``oasis-p`` keeps the old
rule. Each test names what it checks in ``proofs/oasis-lr.md``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oasis_helpers import make_instance, make_job
from primaldual.errors import InputError
from primaldual.generate import generate
from primaldual.scheduler import make_scheduler
from primaldual.simulate import simulate
from primaldual.utility import LinearDecay
from primaldual.verify import verify


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
    after = simulate(instance, make_scheduler("oasis-lr", **common))
    assert after.metrics.completion_slots == {0: 2, 1: 1}
    assert after.utility == pytest.approx(102.0)
    assert after.promises == {"made": 0, "kept": 0, "broken": 0}
    for result in (before, after):
        assert verify(instance, result.schedule).feasible


def test_oasis_p_keeps_immediate_blocks_and_the_parameter_is_checked():
    assert make_scheduler("oasis-p").parameters()["immediate_blocks"] is True
    assert make_scheduler("oasis-lr").parameters()["immediate_blocks"] is False
    assert make_scheduler("oasis-lr", immediate_blocks=True).parameters()["immediate_blocks"] is True
    with pytest.raises(InputError, match="immediate_blocks"):
        make_scheduler("oasis-lr", immediate_blocks="yes")


def _recording_admissions(scheduler):
    """Wrap ``_admit`` to record (slot, block's first slot) of every promise."""
    seen = []
    admit = scheduler._admit

    def recorded(slot, i):
        admitted = admit(slot, i)
        if admitted:
            seen.append((slot, scheduler.ledger.reservations[i].first))
        return admitted

    scheduler._admit = recorded
    return seen


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), cost=st.sampled_from([0.0, 0.05, 0.1]))
def test_every_promise_leaves_its_offer_slot_free_and_none_is_broken(seed, cost):
    """G1 under the rule, on random 20-job ``small`` instances (heavy contention) with and without restart
    costs: each promise's block starts after the slot it was offered in, every promise is kept (the engine
    also asserts it every slot) and the schedule verifies."""
    instance = generate("small", seed, jobs=20)
    scheduler = make_scheduler("oasis-lr")
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
    b = simulate(instance, make_scheduler("oasis-p", immediate_blocks=True), restart_cost=0.1)
    assert a.utility == b.utility and a.metrics.completion_slots == b.metrics.completion_slots
    assert a.promises == b.promises
    if seed == 0:
        assert any(first == slot for slot, first in admissions)
