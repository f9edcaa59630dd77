"""The budget rule for OASiS's lower prices (primaldual/oasis/budget.py, proofs/oasis.md section 7b): on the
empty cluster every job that can finish costs at most 1 / (BUDGET_FACTOR eta) of its utility, so OASiS admits it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oasis_helpers import RESOURCES, make_instance, make_job, random_instances
from primaldual.core.generate import generate
from primaldual.oasis.engine import OasisScheduler, OnlineEngine, run_oasis
from primaldual.oasis.budget import BUDGET_FACTOR, budget_lower_prices, standalone_resource_slots
from primaldual.oasis.prices import compute_constants, standalone_utilities
from primaldual.core.utility import Constant

def _many_unit_job(value: float = 12.0):
    """One job demanding all three resources on both pools (6 units): 6 worker-slots, 3 workers per slot,
    b/B = 1/2 so 2 PSs per slot, 2 slots."""
    job = make_job(0, 6, 3, [1.0, 2.0, 4.0], [1.0, 1.0, 2.0], Constant(value), bandwidth_ratio=0.5)
    return make_instance([job], [[4.0, 8.0, 16.0]], [[2.0, 2.0, 4.0]], horizon=3, resources=RESOURCES)


def test_budget_rule_by_hand_on_a_job_demanding_six_units():
    """Worked example of proofs/oasis.md section 7b. A_w = 6 (1, 2, 4), A_ps = 4 (1, 1, 2); hat L_u = 12 / A_u,
    every unit is attained by the one job, so rho = 6 and L_u = 12 / (A_u 2 6): the fastest schedule pays 6 x 1."""
    instance = _many_unit_job()
    assert [a.tolist() for a in standalone_resource_slots(instance, 0)] == [[6.0, 12.0, 24.0], [4.0, 4.0, 8.0]]
    constants = compute_constants(instance, rule="budget")
    assert constants.rule == "budget"
    expected_worker = [12.0 / (a * 2 * 6) for a in (6.0, 12.0, 24.0)]
    expected_ps = [12.0 / (a * 2 * 6) for a in (4.0, 4.0, 8.0)]
    assert constants.worker_lower.tolist() == pytest.approx(expected_worker)
    assert constants.ps_lower.tolist() == pytest.approx(expected_ps)
    # The fastest schedule costs 6 x 0.5 per worker-slot + 4 x 0.75 per PS-slot = 6. The subroutine finds a
    # cheaper one of the same utility (2 workers and 1 PS for 3 slots: 3 + 2.25), so mu = 6.75 >= 12 / 2.
    result = OnlineEngine(instance, constants).evaluate(0)
    assert result.admit and result.cost == pytest.approx(5.25) and result.mu == pytest.approx(6.75)


def test_density_rule_prices_that_job_out_and_budget_admits_it():
    """The defect the budget rule fixes: at a quarter per unit, six units cost 1.5x the utility."""
    instance = _many_unit_job()
    assert run_oasis(instance, rule="density").total_utility == 0.0
    assert run_oasis(instance, rule="budget").total_utility == pytest.approx(12.0)
    assert OasisScheduler(rule="budget").rule == "budget"


def test_overlap_below_the_unit_count_keeps_prices_higher():
    """Two jobs, each the least dense on a different unit: rho is the measured overlap (< 6), not the count."""
    cheap_gpu = make_job(0, 2, 1, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], Constant(2.0), bandwidth_ratio=1.0)
    cheap_cpu = make_job(0, 2, 1, [0.0, 4.0, 0.0], [0.0, 1.0, 0.0], Constant(8.0), bandwidth_ratio=1.0)
    instance = make_instance([cheap_gpu, cheap_cpu], [[1.0, 4.0, 0.0]], [[0.0, 2.0, 0.0]], horizon=4,
                             resources=RESOURCES)
    alone = standalone_utilities(instance)
    worker, ps = budget_lower_prices(instance, alone, eta=1.0)
    # hat L: worker gpu 2/2 = 1, worker cpu 8/8 = 1, PS cpu min(2/2, 8/2) = 1; job 0 pays 1*2 + 1*2 = 4 = 2 f,
    # job 1 pays 1*8 + 1*2 = 10 = 1.25 f: rho = 2.
    assert worker[:2].tolist() == pytest.approx([1 / 4, 1 / 4]) and ps[1] == pytest.approx(1 / 4)


@settings(max_examples=60, deadline=None)
@given(random_instances(), st.sampled_from([0.75, 1.0, 3.0]))
def test_every_job_that_can_finish_is_admitted_on_the_empty_cluster(instance, eta):
    """Lemma 8: cost at the lower prices <= f_i^alone / (BUDGET_FACTOR eta); the dual subroutine on the empty
    cluster then finds mu_i >= (1 - 1 / (BUDGET_FACTOR eta)) f_i^alone > 0 and admits the job."""
    constants = compute_constants(instance, rule="budget", eta=eta)
    alone = standalone_utilities(instance)
    factor = BUDGET_FACTOR * eta
    for i in np.flatnonzero(alone > 0):
        worker_amount, ps_amount = standalone_resource_slots(instance, i)
        cost = constants.worker_lower @ worker_amount + constants.ps_lower @ ps_amount
        assert cost <= alone[i] / factor * (1 + 1e-9)
        result = OnlineEngine(instance, constants).evaluate(i)
        assert result.admit
        assert result.mu >= alone[i] * (1 - 1 / factor) * (1 - 1e-9)


@pytest.mark.parametrize("seed", range(0, 30, 3))
def test_no_tiny_design_instance_earns_zero(seed):
    """Design seeds of the `tiny` preset: OASiS admits at least the first job that can finish."""
    instance = generate("tiny", seed)
    if standalone_utilities(instance).max(initial=0.0) > 0:
        assert run_oasis(instance, rule="budget").total_utility > 0
        assert run_oasis(instance).total_utility > 0


@pytest.mark.parametrize("rule, eta", [("budget", 1.0), ("share", 1.0), ("share", 0.25), ("share", 0.05)])
@settings(max_examples=40, deadline=None)
@given(instance=random_instances())
def test_oasis_earns_something_whenever_some_job_can_finish(instance, rule, eta):
    """Corollary of Lemma 8 (budget) and Lemma 8' (share, oasis's default): while OASiS has admitted nothing the
    cluster is empty, so the first job that can finish (budget), or that pays at most half its utility there
    (share: the cheapest one does), is admitted; ALG > 0 exactly when some job can finish alone (OPT > 0)."""
    can_finish = standalone_utilities(instance).max(initial=0.0) > 0
    assert (run_oasis(instance, rule=rule, eta=eta).total_utility > 0) == can_finish
