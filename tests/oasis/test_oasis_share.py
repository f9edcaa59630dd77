"""The share rule for OASiS's lower prices, oasis's default (primaldual/oasis/share.py, proofs/oasis.md section 7c):
one lower price per pool and resource, each unit type's equal share of an initial dual of SHARE_BUDGET LB / eta,
and a guard so that the cheapest job pays at most half its utility on the empty cluster (Lemma 8')."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oasis_helpers import RESOURCES, make_instance, make_job, random_instances
from primaldual.core.generate import generate
from primaldual.oasis.engine import OasisScheduler, OnlineEngine, run_oasis
from primaldual.oasis.budget import standalone_resource_slots
from primaldual.oasis.share import GUARD, SHARE_BUDGET, share_lower_prices
from primaldual.oasis.prices import compute_constants, standalone_utilities
from primaldual.core.utility import Constant


def _two_jobs():
    """Worker pool (2 gpu, 8 cpu, 0 mem) x 2 servers, PS pool (0, 4, 0) x 1, horizon 10: unit types with
    capacity: worker gpu (C = 4), worker cpu (16), PS cpu (4); m = 3, T C = 40, 160, 40."""
    small = make_job(0, 2, 1, [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], Constant(10.0), bandwidth_ratio=1.0)
    large = make_job(1, 4, 2, [1.0, 2.0, 0.0], [0.0, 1.0, 0.0], Constant(4.0), bandwidth_ratio=1.0)
    return make_instance([small, large], [[2.0, 8.0, 0.0], [2.0, 8.0, 0.0]], [[0.0, 4.0, 0.0]], horizon=10,
                         resources=RESOURCES)


def test_share_rule_by_hand():
    """LB = 10 (the first job alone); L_u = 2.5 * 10 / (3 T C_u): 25/120, 25/480, 25/120 on the three types; the
    types without capacity take the least value. D_0 = sum L_u T C_u = 25 = SHARE_BUDGET LB exactly."""
    instance = _two_jobs()
    constants = compute_constants(instance, rule="share")
    assert SHARE_BUDGET == 2.5 and constants.rule == "share"
    least = 25 / 480
    assert constants.worker_lower.tolist() == pytest.approx([25 / 120, 25 / 480, least])
    assert constants.ps_lower.tolist() == pytest.approx([least, 25 / 120, least])
    assert constants.initial_dual == pytest.approx(25.0)
    assert constants.kappa == pytest.approx(2.5)
    # The guard is off: the cheapest job (the first: 2 gpu-, 2 cpu- and 2 PS-cpu-slots) pays
    # 2 * 25/120 + 2 * 25/480 + 2 * 25/120 = 0.9375 of its 10, under half.
    amounts = np.concatenate(standalone_resource_slots(instance, 0))
    lower = np.concatenate([constants.worker_lower, constants.ps_lower])
    assert amounts @ lower == pytest.approx(0.9375)
    assert OnlineEngine(instance, constants).evaluate(0).admit
    assert OasisScheduler().rule == "share" and run_oasis(instance).constants.rule == "share"


def test_the_guard_scales_prices_until_the_cheapest_job_pays_half():
    """One job that holds every unit of the cluster for the whole horizon: its share of each type's
    capacity-time is 1, so it would pay SHARE_BUDGET = 2.5 times its utility; the guard scales L to pay half."""
    job = make_job(0, 8, 2, [1.0, 1.0, 0.0], [0.0, 2.0, 0.0], Constant(6.0), bandwidth_ratio=1.0)
    instance = make_instance([job], [[2.0, 2.0, 0.0]], [[0.0, 4.0, 0.0]], horizon=4, resources=RESOURCES)
    worker, ps = share_lower_prices(instance, standalone_utilities(instance), eta=1.0)
    amounts = np.concatenate(standalone_resource_slots(instance, 0))
    assert amounts @ np.concatenate([worker, ps]) == pytest.approx(GUARD * 6.0)
    result = run_oasis(instance)
    assert result.total_utility == pytest.approx(6.0)


@settings(max_examples=60, deadline=None)
@given(random_instances(), st.sampled_from([0.5, 1.0, 3.0]))
def test_initial_dual_is_the_budget_unless_the_guard_lowers_it(instance, eta):
    """D_0 = SHARE_BUDGET LB / eta by construction, or less when the guard scales; and then the cheapest job
    pays exactly GUARD of its utility at the lower prices (never more, Lemma 8')."""
    constants = compute_constants(instance, rule="share", eta=eta)
    alone = standalone_utilities(instance)
    if alone.max(initial=0.0) <= 0:
        return
    budget = SHARE_BUDGET * alone.max() / eta
    if not (np.concatenate([constants.worker_capacity_time, constants.ps_capacity_time]) > 0).any():
        assert constants.initial_dual == 0.0  # a cluster of zero capacity: nothing to price
        return
    lower = np.concatenate([constants.worker_lower, constants.ps_lower])
    ratios = [np.concatenate(standalone_resource_slots(instance, i)) @ lower / alone[i]
              for i in np.flatnonzero(alone > 0)]
    assert min(ratios) <= GUARD * (1 + 1e-9)
    assert constants.initial_dual <= budget * (1 + 1e-9)
    if constants.initial_dual < budget * (1 - 1e-9):
        assert min(ratios) == pytest.approx(GUARD)


@settings(max_examples=60, deadline=None)
@given(random_instances(), st.sampled_from([0.05, 0.25, 1.0]))
def test_lemma_8_prime_the_cheapest_job_is_admitted_on_the_empty_cluster(instance, eta):
    """The job with the least cost ratio pays at most half its utility on the empty cluster: the subroutine
    finds mu >= (1 - GUARD) f^alone for it, so it is admitted (small eta: high prices, the guard at work)."""
    constants = compute_constants(instance, rule="share", eta=eta)
    alone = standalone_utilities(instance)
    jobs = np.flatnonzero(alone > 0)
    if not jobs.size:
        return
    lower = np.concatenate([constants.worker_lower, constants.ps_lower])
    cheapest = min(jobs, key=lambda i: np.concatenate(standalone_resource_slots(instance, i)) @ lower / alone[i])
    result = OnlineEngine(instance, constants).evaluate(int(cheapest))
    assert result.admit and result.mu >= alone[cheapest] * (1 - GUARD) * (1 - 1e-9)


@pytest.mark.parametrize("preset, seed", [("tiny", 4), ("small", 5), ("paper", 1)])
def test_generated_instances_keep_every_price_in_its_own_unit(preset, seed):
    """Each type's lower price times its capacity-time is the same share of the budget (unless the guard
    scaled all of them alike): no unit measured in large numbers sets the others' prices."""
    instance = generate(preset, seed)
    constants = compute_constants(instance, rule="share")
    shares = np.concatenate([constants.worker_lower * constants.worker_capacity_time,
                             constants.ps_lower * constants.ps_capacity_time])
    positive = np.concatenate([constants.worker_capacity_time, constants.ps_capacity_time]) > 0
    assert np.allclose(shares[positive], shares[positive][0])


@pytest.mark.parametrize("rule", ["share", "budget", "density", "capacity"])
@pytest.mark.parametrize("eta", [1e-9, 1e9])
def test_every_rule_keeps_finite_prices_over_the_whole_eta_range(rule, eta):
    """At both ends of SCALE_RANGE every constant, theta and the certificate stay finite (past them the share
    rule's L overflowed and its guard computed inf * 0, and U / L overflowed for the others); the share rule
    still earns something (Lemma 8' does not depend on eta)."""
    for preset in ("tiny", "small", "paper"):
        instance = generate(preset, 3)
        constants = compute_constants(instance, rule=rule, eta=eta)
        for values in (constants.worker_lower, constants.ps_lower, constants.worker_upper, constants.ps_upper,
                       constants.worker_log_ratio, constants.ps_log_ratio):
            assert np.isfinite(values).all(), (preset, values)
        if preset != "paper":
            result = run_oasis(instance, rule=rule, eta=eta)
            assert np.isfinite(result.certificate.dual_objective)
            if rule == "share":
                assert result.total_utility > 0


@pytest.mark.parametrize("field, value", [("eta", "1e-300"), ("eta", "1e300"), ("price_scale", "1e-12"),
                                          ("price_scale", "inf")])
def test_an_eta_or_price_scale_outside_the_range_is_refused_by_name(field, value, capsys):
    from primaldual.cli import main

    assert main(["compare", "--preset", "tiny", "--seed", "1", "--schedulers", "oasis",
                 "--param", f"oasis.{field}={value}"]) == 2
    err = capsys.readouterr().err
    assert f"{field}: must be a number in [1e-9, 1e9]" in err and "Traceback" not in err
    with pytest.raises(Exception, match=rf"{field}: must be a number in"):
        compute_constants(generate("tiny", 1), **{field: float(value)})
