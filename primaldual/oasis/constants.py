"""The constants of OASiS's prices, ``U^r``, ``L``, ``alpha``, and their derivation (proofs/oasis.md section 7).

Every resource ``r`` of every worker server ``h`` (PS server ``k``) in every slot ``t`` has a price that grows
exponentially with the amount already allocated, ``g = g_h^r(t)`` (``v_k^r(t)``)::

    p_h^r(t) = L (U_w^r / L) ** (g_h^r(t) / c_h^r)        q_k^r(t) = L (U_ps^r / L) ** (v_k^r(t) / c_k^r)

so a resource costs ``L`` per unit while empty and ``U^r`` when full. The paper's section on these constants is
not available (docs/papers.md, OASiS); the choices below are this project's, derived so that the proof in
``proofs/oasis.md`` goes through with exactly these numbers. In short:

* ``opt_lower_bound = max_i f_i^alone``, where ``f_i^alone`` is the utility job ``i`` earns when it runs alone on
  the empty cluster as fast as the servers allow (:func:`standalone_utilities`). Any single job is a feasible
  solution, so ``OPT >= opt_lower_bound``.
* **Lower prices, per pool and per resource** (``rule="density"``, the default):
  ``L_w^r = min_i f_i^alone / (V_i w_i^r) / (4 eta)`` and ``L_ps^r = min_i f_i^alone / (V_i (b_i/B_i) s_i^r) / (4 eta)``:
  a quarter of the least utility any job earns per unit of ``r`` per slot, in that resource's own unit, so
  an empty cluster charges every job at most ``1 / (4 eta)`` of its utility. (GPU, vCPU, GB and Gbps are not
  summed with each other any more.) The initial dual ``D_0 = sum_r L^r T sum c^r`` is not bounded by
  construction; ``kappa = D_0 / opt_lower_bound`` is recorded and the theorem applies only where ``kappa < 1``.
* ``rule="budget"`` (:mod:`primaldual.oasis.budget`, proofs/oasis.md section 7b): the same
  shape, scaled by the measured overlap ``rho`` so that a job's whole fastest standalone schedule costs at most
  ``1 / (2 eta)`` of its utility on an empty cluster, whatever number of resources it demands.
* ``rule="share"`` (``oasis``'s default; :mod:`primaldual.oasis.share`, proofs/oasis.md section 7c): one lower
  price per pool and resource, each unit type's equal share of an initial dual ``D_0 = 2.5 LB / eta`` in its own
  unit (``LB = opt_lower_bound``), scaled down only if even the cheapest job would pay more than half its
  utility on the empty cluster.
* ``rule="capacity"`` (the first implementation, kept for comparison):
  ``L = opt_lower_bound / (2 eta T (sum_{h,r} c_h^r + sum_{k,r} c_k^r))``, one number in mixed units. The
  initial dual objective ``D_0 = L T sum c`` is then ``opt_lower_bound / (2 eta) <= OPT / (2 eta)``: the
  "initial dual bound" of the proof, by construction.
* ``hat U_w^r = max_i f_i^alone / w_i^r`` over jobs with ``w_i^r > 0`` (per pool: ``s_i^r`` for PS servers): the
  most utility any job can earn per unit of ``r``. A schedule that pays at least ``hat U^r`` per unit of ``r`` for
  one worker (PS) can never have a positive payoff.
* ``epsilon_w^r = max_{i,h} w_i^r n_ih / c_h^r`` with ``n_ih = min(N_i, workers of i that fit on h alone)``: the
  largest share of one server's ``r`` that one job can hold in one slot (the *small-demand* fraction; the
  theorem needs it small, see below).
* ``U^r = L (hat U^r / L) ** (1 / (1 - epsilon^r))`` when ``epsilon^r <= SMALL_DEMAND_LIMIT``: the price reaches
  ``hat U^r`` already at ``(1 - epsilon^r)`` utilisation, so any schedule that would overflow a server is
  priced out (payoff < 0) *before* the overflow. This is what makes the explicit residual-capacity caps of the
  dual subroutine provably harmless (they never exclude a schedule with positive payoff), and what makes the
  final prices dual feasible with the online ``mu_i``. When ``epsilon^r`` is larger (one job can fill most of a
  server, as on the ``paper`` preset) the headroom would make the theorem's bound vacuous
  (``alpha_discrete >= 2 (hat U^r / L - 1)``), so ``U^r = hat U^r`` (the reconstruction of the
  paper's choice) and the run reports the assumption as violated. The same fallback applies where the
  headroom's ``U^r`` would pass ``PRICE_CEILING = 1e250`` (only when a job worth about 1e-300 pushes ``L`` there
  while ``hat U^r`` stays near 1e12; its ``U^r`` is then beyond the float range): no representable ``U^r``
  meets (C1), and ``hat U^r`` still prices a full server out. ``ln(U^r / L)`` and the prices are computed
  through logs where the quotient or ``exp`` alone would overflow (``price_constants.log_ratio``,
  ``prices.exponential_price``); ordinary instances get the same floats as the direct formulas.
* ``alpha = max(1, max_r ln(U^r / L))`` over both pools, ``two_alpha = 2 alpha`` and the online lower bound
  ``1 + max_r ln(U^r / L)`` (no online algorithm beats it in the worst case; Buchbinder-Naor / Zhou et al.).
  Allocations are discrete (a job adds ``w y`` at once, not infinitesimally), so the per-job
  allocation-price inequality holds with ``alpha_discrete = max(1, max_r (exp(theta_r eps_r) - 1) / eps_r)``,
  ``theta_r = ln(U^r/L)``, which tends to ``alpha`` as ``eps_r -> 0``; the theorem is stated with it.

Every rule's ``L^r`` is raised to at least ``LEAST_PRICE``, the smallest positive float: a utility near
5e-324 divided by work and demands underflows to 0, though ``L^r`` is positive and ``ln(U^r / L)`` needs it so
(no ordinary lower price is anywhere near it); so is every price that ``price_scale`` multiplies.

A resource that no job demands keeps ``U^r = L`` (a constant price). A server with zero capacity of ``r`` is
unusable for a job that demands ``r`` (the dual subroutine's caps are 0 there) and free for one that does not.
Its stored price (``L``, never raised) is irrelevant: it adds ``L x 0`` to the dual objective, and no schedule
that respects the servers' capacities places a unit that demands ``r`` there.

``price_scale`` multiplies ``L`` and every ``U^r`` (so ``alpha`` is unchanged): ``> 1`` makes OASiS more
selective, ``< 1`` less. The theorem's conditions are re-checked and recorded for the scaled constants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.standalone import _demand_fraction, standalone_utilities
from primaldual.oasis.budget import budget_lower_prices
from primaldual.oasis.density import density_lower_prices
from primaldual.oasis.price_constants import (  # noqa: F401 - re-exported
    LEAST_PRICE,
    SCALE_RANGE,
    SMALL_DEMAND_LIMIT,
    PriceConstants,
    check_scale,
    json_number,
)
from primaldual.oasis.share import share_lower_prices

def _check_positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(value) or value <= 0:
        raise InputError(f"{name}: must be a finite number > 0, got {value!r}")


#: The largest ``U^r`` the small-demand headroom may set (module docstring). Every valid instance has
#: ``hat U^r <= 1e12 / 1e-3 = 1e15`` (core/domains.py), so only a lower price pushed near 1e-300 by a job worth
#: about that much reaches it; below it ``sum p c`` over at most 1e7 cells of capacity 1e9, times a
#: ``price_scale`` of up to 1e9, stays finite.
PRICE_CEILING = 1e250
#: Where ``p ln(hat U / L)`` passes this, ``(hat U / L) ** p`` could overflow though ``U^r`` may not.
_LOG_POWER_LIMIT = math.log(1e300)


def _headroom_upper(low: float, d: float, e: float) -> float:
    """``U = L (hat U / L) ** (1 / (1 - eps))``, or ``hat U`` where that is above :data:`PRICE_CEILING`.

    Above the ceiling (only for a lower price near 1e-300, whose ``U`` is mathematically beyond the float
    range for ``eps`` near 1/2) no representable ``U`` meets condition (C1), so ``U = hat U``, the paper's
    choice as for ``eps > SMALL_DEMAND_LIMIT``: the price still reaches ``hat U`` at full use, the dual
    subroutine's residual caps still keep every schedule inside the servers, and the run records (C1) as
    violated. Below it, the power is taken in logs only where ``(hat U / L) ** p`` would overflow; every
    ordinary instance keeps the direct formula, the same floats."""
    power = 1.0 / (1.0 - e)
    log_span = math.log(d) - math.log(low)
    log_upper = math.log(low) + power * log_span
    if log_upper > math.log(PRICE_CEILING):
        return d
    if power * log_span > _LOG_POWER_LIMIT:
        return math.exp(log_upper)
    return low * (d / low) ** power


def _upper_from_density(lower: np.ndarray, density: np.ndarray, fraction: np.ndarray) -> np.ndarray:
    """``U^r`` per resource of one pool from its ``L^r``, ``hat U^r`` and ``eps^r`` (module docstring)."""
    lower = np.broadcast_to(np.asarray(lower, dtype=float), density.shape)
    upper = np.array(lower)
    for r, (low, d, e) in enumerate(zip(lower, density, fraction)):
        if d <= 0:
            continue  # nobody demands r in this pool: constant price L^r
        u = d if e > SMALL_DEMAND_LIMIT else _headroom_upper(low, d, e)
        upper[r] = max(u, low)  # prices must not fall with use
    return upper


#: How ``compute_constants`` sets the lower prices (module docstring): ``"density"`` (default), ``"capacity"``
#: (kept for Lemma 5's ``D_0 <= OPT / (2 eta)`` by construction), ``"budget"`` or ``"share"`` (``oasis``'s default).
PRICE_RULES = ("density", "capacity", "budget", "share")


@dataclass(frozen=True, eq=False)
class InstanceFacts:
    """What the theorem's conditions are checked against, from the jobs with ``f_i^alone > 0``: per pool and
    resource the highest value density ``hat U^r`` and demand fraction ``epsilon^r`` (module docstring)."""

    standalone: np.ndarray
    worker_density: np.ndarray
    ps_density: np.ndarray
    worker_fraction: np.ndarray
    ps_fraction: np.ndarray

    @classmethod
    def of(cls, instance: Instance) -> "InstanceFacts":
        cluster = instance.cluster
        n_resources = cluster.n_resources
        standalone = standalone_utilities(instance)
        facts = cls(standalone, np.zeros(n_resources), np.zeros(n_resources), np.zeros(n_resources),
                    np.zeros(n_resources))
        for i, job in enumerate(instance.jobs):
            if standalone[i] <= 0:
                continue  # never admitted, never profitable: imposes nothing on the constants
            for density, fraction, demand, capacity in (
                (facts.worker_density, facts.worker_fraction, job.worker_demand, cluster.worker_capacity),
                (facts.ps_density, facts.ps_fraction, job.ps_demand, cluster.ps_capacity),
            ):
                positive = demand > 0
                density[positive] = np.maximum(density[positive], standalone[i] / demand[positive])
                np.maximum(fraction, _demand_fraction(job, demand, capacity), out=fraction)
        return facts


def _lower_prices(instance: Instance, standalone: np.ndarray, eta: float, rule: str,
                  capacity_time: float) -> tuple[np.ndarray, np.ndarray]:
    """``(L_w^r, L_ps^r)`` of ``rule``, each raised to at least :data:`LEAST_PRICE` (module docstring: a quotient
    that underflowed to 0 would leave ``ln(U^r / L^r)`` undefined)."""
    worker, ps = _rule_lower_prices(instance, standalone, eta, rule, capacity_time)
    return np.maximum(worker, LEAST_PRICE), np.maximum(ps, LEAST_PRICE)


def _rule_lower_prices(instance: Instance, standalone: np.ndarray, eta: float, rule: str,
                       capacity_time: float) -> tuple[np.ndarray, np.ndarray]:
    """``(L_w^r, L_ps^r)`` of ``rule`` (module docstring)."""
    n_resources = instance.cluster.n_resources
    opt_lower_bound = float(standalone.max(initial=0.0))
    if opt_lower_bound <= 0 or capacity_time <= 0:
        return np.ones(n_resources), np.ones(n_resources)  # nothing can earn anything: any price admits nothing
    if rule == "capacity":
        lower = np.full(n_resources, opt_lower_bound / (2.0 * eta * capacity_time))
        return lower, lower
    if rule == "budget":
        return budget_lower_prices(instance, standalone, eta)
    if rule == "share":
        return share_lower_prices(instance, standalone, eta)
    return density_lower_prices(instance, standalone, eta)


def _override(value, name: str, default: np.ndarray, lows: np.ndarray, resources: tuple[str, ...]) -> np.ndarray:
    """``default`` (the computed ``U^r``), or ``value`` in its place: a number, a sequence over the resources
    or a mapping resource -> value; every ``U^r`` must be at least its ``L^r``."""
    if value is None:
        return default
    if isinstance(value, dict):
        unknown = set(value) - set(resources)
        if unknown:
            raise InputError(f"{name}: unknown resources {sorted(unknown)} (the cluster has {list(resources)})")
        out = default.copy()
        for r, v in value.items():
            out[resources.index(r)] = v
    else:
        out = np.broadcast_to(np.asarray(value, dtype=float), (len(resources),)).copy()
    for v, low in zip(out, lows):
        _check_positive(name, float(v))
        if v < low:
            raise InputError(
                f"{name}: every U^r must be >= L^r = {low:g} (prices must not fall with use), got {v!r}")
    return out


def compute_constants(
    instance: Instance,
    eta: float = 1.0,
    price_scale: float = 1.0,
    lower: float | None = None,
    worker_upper=None,
    ps_upper=None,
    rule: str = "density",
) -> PriceConstants:
    """The price constants of ``instance`` (module docstring), with optional overrides.

    ``rule`` picks the lower prices (:data:`PRICE_RULES`). ``lower``, ``worker_upper`` and ``ps_upper`` (a
    number, a sequence over the resources or a mapping resource -> value) replace the computed ``L`` and
    ``U^r``; ``price_scale`` then multiplies all of them. The instance facts (value densities, demand
    fractions, ``opt_lower_bound``) are always computed, so the theorem's conditions are checked for whatever
    constants are used.
    """
    check_scale("eta", eta)
    check_scale("price_scale", price_scale)
    if rule not in PRICE_RULES:
        raise InputError(f"rule: must be one of {', '.join(PRICE_RULES)}, got {rule!r}")
    cluster = instance.cluster
    resources = cluster.resources
    facts = InstanceFacts.of(instance)
    worker_capacity_time = instance.horizon * cluster.worker_capacity.sum(axis=0)
    ps_capacity_time = instance.horizon * cluster.ps_capacity.sum(axis=0)
    capacity_time = float(worker_capacity_time.sum() + ps_capacity_time.sum())
    source = "instance"
    if lower is not None:
        _check_positive("lower", lower)
        worker_lower = ps_lower = np.full(cluster.n_resources, float(lower))
        source = "override"
    else:
        worker_lower, ps_lower = _lower_prices(instance, facts.standalone, eta, rule, capacity_time)
    worker_upper_values = _override(worker_upper, "worker_upper", _upper_from_density(
        worker_lower, facts.worker_density, facts.worker_fraction), worker_lower, resources)
    ps_upper_values = _override(ps_upper, "ps_upper", _upper_from_density(
        ps_lower, facts.ps_density, facts.ps_fraction), ps_lower, resources)
    if worker_upper is not None or ps_upper is not None:
        source = "override"
    constants = PriceConstants(
        resources=resources,
        lower=float(min(worker_lower.min(initial=np.inf), ps_lower.min(initial=np.inf))),
        worker_upper=worker_upper_values,
        ps_upper=ps_upper_values,
        eta=float(eta),
        price_scale=1.0,
        worker_value_density=facts.worker_density,
        ps_value_density=facts.ps_density,
        worker_demand_fraction=facts.worker_fraction,
        ps_demand_fraction=facts.ps_fraction,
        opt_lower_bound=float(facts.standalone.max(initial=0.0)),
        capacity_time=capacity_time,
        source=source,
        worker_lower=worker_lower,
        ps_lower=ps_lower,
        worker_capacity_time=worker_capacity_time,
        ps_capacity_time=ps_capacity_time,
        rule=rule if lower is None else "override",
    )
    return constants if price_scale == 1.0 else constants.rescaled(float(price_scale))


__all__ = ["PRICE_RULES", "SCALE_RANGE", "SMALL_DEMAND_LIMIT", "InstanceFacts", "PriceConstants", "check_scale",
           "compute_constants", "density_lower_prices", "json_number"]
