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
  paper's choice) and the run reports the assumption as violated.
* ``alpha = max(1, max_r ln(U^r / L))`` over both pools, ``two_alpha = 2 alpha`` and the online lower bound
  ``1 + max_r ln(U^r / L)`` (no online algorithm beats it in the worst case; Buchbinder-Naor / Zhou et al.).
  Allocations are discrete (a job adds ``w y`` at once, not infinitesimally), so the per-job
  allocation-price inequality holds with ``alpha_discrete = max(1, max_r (exp(theta_r eps_r) - 1) / eps_r)``,
  ``theta_r = ln(U^r/L)``, which tends to ``alpha`` as ``eps_r -> 0``; the theorem is stated with it.

A resource that no job demands keeps ``U^r = L`` (a constant price). A server with zero capacity of ``r`` is
unusable for a job that demands ``r`` (the dual subroutine's caps are 0 there) and free for one that does not.
Its stored price (``L``, never raised) is irrelevant: it adds ``L x 0`` to the dual objective, and no schedule
that respects the servers' capacities places a unit that demands ``r`` there.

``price_scale`` multiplies ``L`` and every ``U^r`` (so ``alpha`` is unchanged): ``> 1`` makes OASiS more
selective, ``< 1`` less. The theorem's conditions are re-checked and recorded for the scaled constants.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.oasis.budget import budget_lower_prices
from primaldual.oasis.share import share_lower_prices
from primaldual.core.standalone import _demand_fraction, standalone_utilities

#: Above this small-demand fraction the 1/(1 - eps) headroom makes prices useless (``alpha_discrete`` grows
#: like ``exp(theta)``), so the constants fall back to the paper's ``U = hat U`` and the theorem is reported
#: as not applicable.
SMALL_DEMAND_LIMIT = 0.5


def json_number(value: float | None) -> float | None:
    """A JSON-safe float: ``None`` for ``None``, infinities and NaN (the records of this module and of
    :mod:`primaldual.oasis.engine`)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True, eq=False)
class PriceConstants:
    """The constants of OASiS's price functions, with the instance facts they were derived from.

    ``lower`` is ``L``; ``worker_upper[r]`` and ``ps_upper[r]`` are ``U_w^r`` and ``U_ps^r``. The remaining fields
    record what the theorem's conditions are checked against (see the module docstring and ``proofs/oasis.md``).
    Build it with :func:`compute_constants` (which also accepts overrides).
    """

    resources: tuple[str, ...]
    lower: float
    worker_upper: np.ndarray
    ps_upper: np.ndarray
    eta: float = 1.0
    price_scale: float = 1.0
    worker_value_density: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ps_value_density: np.ndarray = field(default_factory=lambda: np.zeros(0))
    worker_demand_fraction: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ps_demand_fraction: np.ndarray = field(default_factory=lambda: np.zeros(0))
    opt_lower_bound: float = 0.0
    capacity_time: float = 0.0
    source: str = "instance"
    worker_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ps_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    worker_capacity_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ps_capacity_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rule: str = "capacity"

    def __post_init__(self):
        n_resources = len(self.resources)
        for name in ("worker_lower", "ps_lower"):
            # Per-resource lower prices; a single L (today's rule, hand-made constants) fills both pools.
            if np.size(getattr(self, name)) == 0:
                object.__setattr__(self, name, np.full(n_resources, float(self.lower)))
        for name in ("worker_upper", "ps_upper", "worker_value_density", "ps_value_density",
                     "worker_demand_fraction", "ps_demand_fraction", "worker_lower", "ps_lower",
                     "worker_capacity_time", "ps_capacity_time"):
            array = np.array(getattr(self, name), dtype=float)
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    # -- exponents ------------------------------------------------------------------------------------

    @property
    def worker_log_ratio(self) -> np.ndarray:
        """``theta_w^r = ln(U_w^r / L_w^r)`` per resource (>= 0)."""
        return np.log(self.worker_upper / self.worker_lower)

    @property
    def ps_log_ratio(self) -> np.ndarray:
        return np.log(self.ps_upper / self.ps_lower)

    @property
    def max_log_ratio(self) -> float:
        return float(max(self.worker_log_ratio.max(initial=0.0), self.ps_log_ratio.max(initial=0.0)))

    @property
    def alpha(self) -> float:
        """``alpha = max(1, max_r ln(U^r / L))`` over both pools."""
        return max(1.0, self.max_log_ratio)

    @property
    def two_alpha(self) -> float:
        return 2.0 * self.alpha

    @property
    def online_lower_bound(self) -> float:
        """``1 + ln(U/L)``: no online algorithm has a better competitive ratio in the worst case."""
        return 1.0 + self.max_log_ratio

    @property
    def alpha_discrete(self) -> float:
        """``max(1, max_r (exp(theta_r eps_r) - 1) / eps_r)`` (``theta_r`` where ``eps_r = 0``): the
        allocation-price factor for allocations of at most ``eps_r`` of a server; it tends to ``alpha`` as
        ``eps -> 0`` and grows like ``exp(theta)`` when one job can fill a server.
        """
        factors = [1.0]
        for theta, eps in ((self.worker_log_ratio, self.worker_demand_fraction),
                           (self.ps_log_ratio, self.ps_demand_fraction)):
            for t, e in zip(theta, eps if eps.size == theta.size else np.zeros_like(theta)):
                factors.append(float(t) if e <= 0 else math.expm1(min(float(t) * float(e), 700.0)) / float(e))
        return max(factors)

    # -- the theorem's conditions --------------------------------------------------------------------

    @property
    def initial_dual(self) -> float:
        """``D_0 = sum_r L^r T sum c^r`` over both pools: the dual objective before any job (all prices at
        their lower ends, all ``mu = 0``); ``L T sum c`` with one ``L``."""
        if self.worker_capacity_time.size == 0 or self.ps_capacity_time.size == 0:
            return self.lower * self.capacity_time
        return float(self.worker_lower @ self.worker_capacity_time + self.ps_lower @ self.ps_capacity_time)

    @property
    def kappa(self) -> float | None:
        """``D_0 / opt_lower_bound``; the theorem needs ``kappa < 1`` (default ``1 / (2 eta)``)."""
        return self.initial_dual / self.opt_lower_bound if self.opt_lower_bound > 0 else None

    def _overflow_priced_out(self, lower, upper, density, fraction) -> bool:
        for low, u, d, e in zip(lower, upper, density, fraction):
            if d <= 0:
                continue  # no job demands this resource in this pool
            if e >= 1:
                return False
            # (C1): the price at (1 - eps) utilisation is at least hat U (relative slack for rounding).
            if low * (u / low) ** (1.0 - e) < d * (1.0 - 1e-12):
                return False
        return True

    @property
    def small_demand_holds(self) -> bool:
        """Condition (C1) of the theorem: for every pool and demanded resource, ``eps^r < 1`` and
        ``L (U^r/L)^(1-eps^r) >= hat U^r``, so any schedule that would overflow a server has payoff < 0."""
        return self._overflow_priced_out(self.worker_lower, self.worker_upper, self.worker_value_density,
                                         self.worker_demand_fraction) \
            and self._overflow_priced_out(self.ps_lower, self.ps_upper, self.ps_value_density,
                                          self.ps_demand_fraction)

    @property
    def theorem_ratio_bound(self) -> float | None:
        """``alpha_discrete / (1 - kappa)`` when (C1) and ``kappa < 1`` hold (``2 alpha_discrete`` by default),
        else ``None``: the proven bound on ``OPT / ALG`` for this run's constants."""
        kappa = self.kappa
        if kappa is None or kappa >= 1 or not self.small_demand_holds:
            return None
        return self.alpha_discrete / (1.0 - kappa)

    def to_dict(self) -> dict:
        def vector(values):
            return {r: float(v) for r, v in zip(self.resources, values)}

        return {
            "rule": self.rule,
            "lower": float(self.lower),
            "worker_lower": vector(self.worker_lower),
            "ps_lower": vector(self.ps_lower),
            "worker_upper": vector(self.worker_upper),
            "ps_upper": vector(self.ps_upper),
            "eta": float(self.eta),
            "price_scale": float(self.price_scale),
            "alpha": self.alpha,
            "two_alpha": self.two_alpha,
            "alpha_discrete": json_number(self.alpha_discrete),
            "online_lower_bound": self.online_lower_bound,
            "worker_value_density": vector(self.worker_value_density),
            "ps_value_density": vector(self.ps_value_density),
            "worker_demand_fraction": vector(self.worker_demand_fraction),
            "ps_demand_fraction": vector(self.ps_demand_fraction),
            "opt_lower_bound": float(self.opt_lower_bound),
            "initial_dual": float(self.initial_dual),
            "kappa": None if self.kappa is None else float(self.kappa),
            "small_demand_holds": self.small_demand_holds,
            "theorem_ratio_bound": json_number(self.theorem_ratio_bound),
            "source": self.source,
        }

    def rescaled(self, factor: float) -> "PriceConstants":
        """The same constants with every price multiplied by ``factor`` (``alpha`` unchanged)."""
        check_scale("price_scale", factor)
        return dataclasses.replace(
            self, lower=self.lower * factor, worker_upper=self.worker_upper * factor,
            ps_upper=self.ps_upper * factor, worker_lower=self.worker_lower * factor,
            ps_lower=self.ps_lower * factor, price_scale=self.price_scale * factor)


#: The range of ``eta`` and ``price_scale``: wider values drive a lower or upper price past float range (a
#: vanishing eta made the share rule's L infinite and its guard inf * 0; a huge one overflowed U / L).
SCALE_RANGE = (1e-9, 1e9)


def check_scale(name: str, value) -> float:
    """``eta`` or ``price_scale``: a number in :data:`SCALE_RANGE`, else :class:`InputError` naming it."""
    low, high = SCALE_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(value) or not low <= value <= high:
        raise InputError(f"{name}: must be a number in [{low:g}, {high:g}], got {value!r}")
    return float(value)


def _check_positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(value) or value <= 0:
        raise InputError(f"{name}: must be a finite number > 0, got {value!r}")


def _upper_from_density(lower: np.ndarray, density: np.ndarray, fraction: np.ndarray) -> np.ndarray:
    lower = np.broadcast_to(np.asarray(lower, dtype=float), density.shape)
    upper = np.array(lower)
    for r, (low, d, e) in enumerate(zip(lower, density, fraction)):
        if d <= 0:
            continue  # nobody demands r in this pool: constant price L^r
        u = d if e > SMALL_DEMAND_LIMIT else low * (d / low) ** (1.0 / (1.0 - e))
        upper[r] = max(u, low)  # prices must not fall with use
    return upper


#: How ``compute_constants`` sets the lower prices (module docstring): ``"density"`` (default), ``"capacity"``
#: (kept for Lemma 5's ``D_0 <= OPT / (2 eta)`` by construction), ``"budget"`` or ``"share"`` (``oasis``'s default).
PRICE_RULES = ("density", "capacity", "budget", "share")


def density_lower_prices(instance: Instance, standalone: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """``L_w^r = min_i f_i^alone / (V_i w_i^r) / (4 eta)`` and ``L_ps^r = min_i f_i^alone / (V_i (b_i/B_i) s_i^r)
    / (4 eta)`` over the jobs with ``f_i^alone > 0`` that demand ``r`` in the pool: a quarter of the least value
    any job earns per unit of ``r`` per slot, so an empty cluster charges every job at most a quarter of its
    utility. A resource nobody demands in a pool gets the least of the defined values (a constant price that
    no schedule pays)."""
    n_resources = instance.cluster.n_resources
    worker = np.full(n_resources, np.inf)
    ps = np.full(n_resources, np.inf)
    for i, job in enumerate(instance.jobs):
        if standalone[i] <= 0:
            continue
        work = float(instance.work_units[i])
        ratio = job.worker_bandwidth_gbps / job.ps_bandwidth_gbps
        for lower, amount in ((worker, work * job.worker_demand), (ps, work * ratio * job.ps_demand)):
            positive = amount > 0
            np.minimum(lower, np.where(positive, standalone[i] / np.where(positive, amount, 1.0), np.inf), out=lower)
    finite = np.concatenate([worker[np.isfinite(worker)], ps[np.isfinite(ps)]])
    fallback = float(finite.min()) if finite.size else 4.0 * eta
    worker[~np.isfinite(worker)] = fallback
    ps[~np.isfinite(ps)] = fallback
    return worker / (4.0 * eta), ps / (4.0 * eta)


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
    n_resources = cluster.n_resources
    standalone = standalone_utilities(instance)
    opt_lower_bound = float(standalone.max(initial=0.0))
    worker_capacity_time = instance.horizon * cluster.worker_capacity.sum(axis=0)
    ps_capacity_time = instance.horizon * cluster.ps_capacity.sum(axis=0)
    capacity_time = float(worker_capacity_time.sum() + ps_capacity_time.sum())

    worker_density = np.zeros(n_resources)
    ps_density = np.zeros(n_resources)
    worker_fraction = np.zeros(n_resources)
    ps_fraction = np.zeros(n_resources)
    for i, job in enumerate(instance.jobs):
        if standalone[i] <= 0:
            continue  # never admitted, never profitable: imposes nothing on the constants
        for density, fraction, demand, capacity in (
            (worker_density, worker_fraction, job.worker_demand, cluster.worker_capacity),
            (ps_density, ps_fraction, job.ps_demand, cluster.ps_capacity),
        ):
            positive = demand > 0
            density[positive] = np.maximum(density[positive], standalone[i] / demand[positive])
            np.maximum(fraction, _demand_fraction(job, demand, capacity), out=fraction)

    source = "instance"
    if lower is not None:
        _check_positive("lower", lower)
        worker_lower = ps_lower = np.full(n_resources, float(lower))
        source = "override"
    elif opt_lower_bound <= 0 or capacity_time <= 0:
        worker_lower = ps_lower = np.ones(n_resources)  # nothing can earn anything: any constant price admits nothing
    elif rule == "capacity":
        worker_lower = ps_lower = np.full(n_resources, opt_lower_bound / (2.0 * eta * capacity_time))
    elif rule == "budget":
        worker_lower, ps_lower = budget_lower_prices(instance, standalone, eta)
    elif rule == "share":
        worker_lower, ps_lower = share_lower_prices(instance, standalone, eta)
    else:
        worker_lower, ps_lower = density_lower_prices(instance, standalone, eta)

    def override(value, name, default, lows):
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
            out = np.broadcast_to(np.asarray(value, dtype=float), (n_resources,)).copy()
        for v, low in zip(out, lows):
            _check_positive(name, float(v))
            if v < low:
                raise InputError(
                    f"{name}: every U^r must be >= L^r = {low:g} (prices must not fall with use), got {v!r}")
        return out

    worker_upper_values = override(worker_upper, "worker_upper",
                                   _upper_from_density(worker_lower, worker_density, worker_fraction), worker_lower)
    ps_upper_values = override(ps_upper, "ps_upper", _upper_from_density(ps_lower, ps_density, ps_fraction), ps_lower)
    if worker_upper is not None or ps_upper is not None:
        source = "override"
    constants = PriceConstants(
        resources=resources,
        lower=float(min(worker_lower.min(initial=np.inf), ps_lower.min(initial=np.inf))),
        worker_upper=worker_upper_values,
        ps_upper=ps_upper_values,
        eta=float(eta),
        price_scale=1.0,
        worker_value_density=worker_density,
        ps_value_density=ps_density,
        worker_demand_fraction=worker_fraction,
        ps_demand_fraction=ps_fraction,
        opt_lower_bound=opt_lower_bound,
        capacity_time=capacity_time,
        source=source,
        worker_lower=worker_lower,
        ps_lower=ps_lower,
        worker_capacity_time=worker_capacity_time,
        ps_capacity_time=ps_capacity_time,
        rule=rule if lower is None else "override",
    )
    return constants if price_scale == 1.0 else constants.rescaled(float(price_scale))
