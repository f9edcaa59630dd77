"""OASiS's price constants on utilities 24 orders of magnitude apart raise no numpy warning and give verified
schedules with finite utilities.

A job worth ``1e-300`` beside one worth ``1e12`` makes the lower prices (a fraction of the least value density)
near ``1e-300`` while the value densities ``hat U^r`` stay near ``1e12``: the ratios ``hat U^r / L^r`` and
``U^r / L^r`` and the share rule's cost-over-utility of the tiny job overflow a float, though every quantity
the schedulers need (``ln(U^r / L^r)``, the prices, the cheapest job's cost ratio) is finite. These instances
are the explicit cases of ``tests/hardening/test_extremes.py``'s ``edge_instances`` that hit each reported spot.
A job worth ``5e-324`` (the least positive float) makes a lower price underflow to 0 without the floor.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from primaldual.core.instance import Cluster, Instance, Job
from primaldual.core.utility import Constant, LinearDecay, Sigmoid
from primaldual.core.verify import verify
from primaldual.oasis.constants import compute_constants
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate

TINY = LinearDecay(1e-300, 1e9)  # the edge test's utility near the bottom of the float range
#: ... and the least positive utility, whose value densities underflow to 0 (the lower prices' floor).
TINIEST = Constant(5e-324)
#: Demands that reach each reported overflow: ``_upper_from_density`` (small demands, headroom), the log ratio
#: of the constants (unit demands), the share rule's division by the tiny job's utility (large demands).
DEMANDS = [(1.0, 1.0), (1e-3, 1e-3), (1e9, 0.0), (1e-3, 1e9)]


def extreme_instance(demand, big, tiny=TINY) -> Instance:
    """Two jobs with the same demands on one roomy and one unit server per pool: ``tiny`` and ``big``."""
    worker = np.array([[1e9, 1e9], [1.0, 1.0]])
    jobs = [Job(arrival=0, epochs=1, chunks=3, minibatches_per_chunk=1, compute_seconds=1.0, gradient_mb=0.0,
                worker_bandwidth_gbps=1.0, ps_bandwidth_gbps=1.0, worker_demand=np.array(demand),
                ps_demand=np.array(demand), utility=utility) for utility in (tiny, big)]
    return Instance(Cluster(("a", "b"), worker, worker.copy()), jobs, horizon=6, slot_seconds=1.0).validate()


@pytest.mark.parametrize("tiny", [TINY, TINIEST], ids=["1e-300", "5e-324"])
@pytest.mark.parametrize("big", [Constant(1e12), Sigmoid(1e12, 0.0, 0.0)], ids=["constant", "sigmoid"])
@pytest.mark.parametrize("demand", DEMANDS, ids=[f"{a:g},{b:g}" for a, b in DEMANDS])
@pytest.mark.parametrize("name", ["oasis", "oasis-lr", "oasis-p"])
def test_oasis_schedulers_have_no_overflow_on_extreme_utilities(name, demand, big, tiny):
    instance = extreme_instance(demand, big, tiny)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = simulate(instance, name)
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations[:3]
    assert math.isfinite(result.utility) and result.utility > 0  # the big job is always worth admitting
    assert result.utility == pytest.approx(report.utility, rel=1e-9)


@pytest.mark.parametrize("tiny", [TINY, TINIEST], ids=["1e-300", "5e-324"])
@pytest.mark.parametrize("parameters", [{"price_scale": 1e-9}, {"eta": 1e9, "price_scale": 1e-9}, {"eta": 1e-9}],
                         ids=["scale-1e-9", "eta-1e9-scale-1e-9", "eta-1e-9"])
@pytest.mark.parametrize("rule", ["share", "density"])
def test_oasis_has_no_underflow_to_zero_prices_at_the_ends_of_its_scales(parameters, tiny, rule):
    """Only tiny jobs: a lower price near 1e-310 times ``price_scale = 1e-9`` (or divided by ``eta = 1e9``)
    stays positive, so ``ln(U^r / L^r)`` is defined."""
    instance = extreme_instance((1.0, 1.0), tiny, tiny)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = simulate(instance, make_scheduler("oasis", rule=rule, **parameters))
    assert verify(instance, result.schedule).feasible and math.isfinite(result.utility)


@pytest.mark.parametrize("tiny", [TINY, TINIEST], ids=["1e-300", "5e-324"])
@pytest.mark.parametrize("rule", ["density", "share", "budget", "capacity"])
@pytest.mark.parametrize("demand", DEMANDS, ids=[f"{a:g},{b:g}" for a, b in DEMANDS])
def test_price_constants_stay_finite_on_extreme_utilities(demand, rule, tiny):
    """Every rule's ``L^r``, ``U^r`` and ``ln(U^r / L^r)`` are finite with ``0 < L^r <= U^r``, and the record
    of the theorem's conditions is computed without a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        constants = compute_constants(extreme_instance(demand, Constant(1e12), tiny), rule=rule)
        record = constants.to_dict()
    for lower, upper, theta in ((constants.worker_lower, constants.worker_upper, constants.worker_log_ratio),
                                (constants.ps_lower, constants.ps_upper, constants.ps_log_ratio)):
        assert np.isfinite(upper).all() and np.isfinite(theta).all()
        assert (lower > 0).all() and (upper >= lower).all() and (theta >= 0).all()
    assert math.isfinite(record["alpha"]) and math.isfinite(record["online_lower_bound"])


def test_headroom_upper_is_the_formula_below_the_ceiling_and_hat_u_above_it():
    """``U = L (hat U / L) ** (1 / (1 - eps))`` bit for bit on ordinary values, the same number through logs
    where the power alone would overflow, and ``hat U`` where ``U`` passes ``PRICE_CEILING``."""
    from primaldual.oasis.constants import PRICE_CEILING, _headroom_upper

    for low, d, e in [(0.25, 3.0, 0.1), (1e-3, 1e4, 0.5), (2.0, 2.0, 0.0), (7e-5, 123.0, 0.3)]:
        assert _headroom_upper(low, d, e) == low * (d / low) ** (1.0 / (1.0 - e))
    assert _headroom_upper(1e-300, 1e12, 0.0) == pytest.approx(1e12, rel=1e-9)  # (1e312) ** 1 overflows
    assert _headroom_upper(1e-300, 1e12, 0.25) == pytest.approx(1e116, rel=1e-9)  # 1e-300 ** (-1/3) 1e12 ** (4/3)
    assert _headroom_upper(1e-300, 1e12, 0.5) == 1e12 < PRICE_CEILING  # U = 1e324: beyond, so U = hat U


def test_exponential_price_adds_logs_only_where_exp_would_overflow():
    from primaldual.oasis.prices import EXPONENT_LIMIT, exponential_price

    lower = np.array([1e-300, 0.5])
    theta = np.array([1000.0, 3.0])  # U / L = e^1000 (U near 2e134) and an ordinary e^3
    used = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]])
    capacity = np.ones((3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        prices = exponential_price(lower, theta, used, capacity)
    assert (prices[:, 1] == 0.5 * np.exp(3.0 * used[:, 1])).all()  # ordinary entries: the same floats
    assert prices[:2, 0].tolist() == (1e-300 * np.exp(1000.0 * used[:2, 0])).tolist()  # exponents <= the limit
    assert 1000.0 > EXPONENT_LIMIT
    assert prices[2, 0] == pytest.approx(math.exp(math.log(1e-300) + 1000.0), rel=1e-12)
    assert np.isfinite(prices).all()


@pytest.mark.parametrize("rule", ["density", "budget"])
def test_a_headroom_past_the_price_ceiling_falls_back_to_hat_u_and_fails_c1(rule):
    """Three workers of 1/6 on the unit server: ``eps^r = 1/2``, still in the headroom's range, but with
    ``L^r`` near 1e-300 the headroom ``U^r = L (hat U / L) ** 2`` is about 1e325, past ``PRICE_CEILING``: every
    ``U^r`` is ``hat U^r`` and (C1) is reported violated, so no ratio bound is claimed. The capacity rule's
    ``L`` (about 21) keeps the headroom and (C1) on the same instance."""
    from primaldual.oasis.constants import PRICE_CEILING
    from primaldual.oasis.price_constants import SMALL_DEMAND_LIMIT

    instance = extreme_instance((1 / 6, 1 / 6), Constant(1e12))
    constants = compute_constants(instance, rule=rule)
    for upper, density, fraction in ((constants.worker_upper, constants.worker_value_density,
                                      constants.worker_demand_fraction),
                                     (constants.ps_upper, constants.ps_value_density, constants.ps_demand_fraction)):
        assert (fraction <= SMALL_DEMAND_LIMIT).all() and (upper == density).all() and (upper < PRICE_CEILING).all()
    assert not constants.small_demand_holds and constants.theorem_ratio_bound is None
    assert constants.to_dict()["small_demand_holds"] is False
    capacity = compute_constants(instance, rule="capacity")
    assert (capacity.worker_upper > capacity.worker_value_density).all() and capacity.small_demand_holds
