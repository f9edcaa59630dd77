"""The constants of OASiS's prices as one frozen record, with the theorem's conditions checked on them.

:class:`PriceConstants` holds ``L^r``, ``U^r`` per pool and resource and the instance facts they were derived
from (:func:`primaldual.oasis.constants.compute_constants`, whose module docstring gives the derivation); its
properties are the quantities of the theorem of ``proofs/oasis.md``: ``alpha``, ``alpha_discrete``, the
initial dual ``D_0``, ``kappa = D_0 / opt_lower_bound``, the small-demand condition (C1) and the ratio bound.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field

import numpy as np

from primaldual.core.errors import InputError


#: Above this small-demand fraction the 1/(1 - eps) headroom makes prices useless (``alpha_discrete`` grows
#: like ``exp(theta)``), so the constants fall back to the paper's ``U = hat U`` and the theorem is reported
#: as not applicable.
SMALL_DEMAND_LIMIT = 0.5


#: A quotient of two positive floats is formed only where the divisor is at least this fraction of the
#: dividend (so it stays below 1e300); beyond that the logs of both are used instead. A lower price near
#: 1e-300 (a job worth 1e-300 sets the least value density) under an upper price near 1e12 makes ``U^r / L^r``
#: overflow although its log (< 1,500) is finite; every ordinary instance keeps the quotient, the same floats.
QUOTIENT_LIMIT = 1e-300


#: The least price, the smallest positive float: a lower price that a tiny utility, a large ``eta`` or a small
#: ``price_scale`` pushes below it would round to 0, though it is positive and ``ln(U^r / L^r)`` needs it so.
LEAST_PRICE = float(np.finfo(float).smallest_subnormal)


def log_ratio(upper: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """``ln(upper / lower)`` elementwise for positive ``upper``, ``lower``: the log of the quotient where the
    quotient is below ``1 / QUOTIENT_LIMIT``, else ``ln upper - ln lower`` (the quotient would overflow)."""
    upper, lower = np.broadcast_arrays(np.asarray(upper, dtype=float), np.asarray(lower, dtype=float))
    huge = lower < upper * QUOTIENT_LIMIT  # upper * 1e-300 cannot overflow; it may underflow, harmlessly
    if not huge.any():
        return np.log(upper / lower)
    out = np.log(np.divide(upper, lower, out=np.ones(upper.shape), where=~huge))
    out[huge] = np.log(upper[huge]) - np.log(lower[huge])
    return out


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


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

    @functools.cached_property
    def worker_log_ratio(self) -> np.ndarray:
        """``theta_w^r = ln(U_w^r / L_w^r)`` per resource, >= 0 and finite (:func:`log_ratio`). Kept, read-only,
        as the constants are frozen: OASiS-LR's price cache reads both pools' exponents at every refresh (about
        2% of a Philly week's profile when they were recomputed)."""
        return _read_only(log_ratio(self.worker_upper, self.worker_lower))

    @functools.cached_property
    def ps_log_ratio(self) -> np.ndarray:
        return _read_only(log_ratio(self.ps_upper, self.ps_lower))

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
            # (C1): the price at (1 - eps) utilisation is at least hat U (relative slack for rounding), in logs
            # where u / low would overflow (QUOTIENT_LIMIT).
            if low < u * QUOTIENT_LIMIT:
                if math.log(low) + (1.0 - e) * (math.log(u) - math.log(low)) < math.log(d) + math.log1p(-1e-12):
                    return False
            elif low * (u / low) ** (1.0 - e) < d * (1.0 - 1e-12):
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
        """The same constants with every price multiplied by ``factor`` (``alpha`` unchanged), each at least
        :data:`LEAST_PRICE`: a lower price near 1e-316 (a job worth 1e-300) times ``factor = 1e-9`` would
        underflow to 0; ordinary prices are far above it, so unchanged."""
        check_scale("price_scale", factor)

        def scaled(value):
            return np.maximum(value * factor, LEAST_PRICE)

        return dataclasses.replace(
            self, lower=float(scaled(self.lower)), worker_upper=scaled(self.worker_upper),
            ps_upper=scaled(self.ps_upper), worker_lower=scaled(self.worker_lower),
            ps_lower=scaled(self.ps_lower), price_scale=self.price_scale * factor)


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


__all__ = ["LEAST_PRICE", "QUOTIENT_LIMIT", "SCALE_RANGE", "SMALL_DEMAND_LIMIT", "PriceConstants", "check_scale",
           "json_number", "log_ratio"]
