"""The interval that holds the offline optimum OPT, and OPT/ALG as an interval: one definition for every command.

``low`` is the largest verified utility known (``lower_candidates``), ``high`` the smallest proven upper bound
(``upper_candidates``); candidate names say where each number comes from:

* ``standalone``: ``sum_i f_i^alone``, every job alone on the empty cluster as fast as the servers allow
  (:func:`primaldual.core.standalone.standalone_utilities`). A job's utility in any feasible schedule is at most its
  standalone utility, so the sum bounds OPT with no solver at all;
* ``solver``: the offline solver's bound (its incumbent, when it proved optimality without reporting one), and
  as a lower candidate its verified incumbent;
* ``online:NAME``: the best online schedule's verified utility;
* ``NAME_KEY``: a bound offered by scheduler NAME after its run (``upper_bounds()``, see
  :mod:`primaldual.evaluation.pipeline`).

OPT/ALG of a scheduler with utility ``ALG`` is ``[low / ALG, high / ALG]``; ``point`` is ``low / ALG`` (the ratio
itself when the interval is tight). ``0 / 0`` is 1 (nothing to earn, nothing earned); ``x / 0`` with ``x > 0``
is unbounded, written ``None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

#: Relative width below which an OPT interval counts as a point (HiGHS's default MIP gap is 1e-4).
TIGHT_INTERVAL = 1e-4
#: Relative slack allowed when a verified utility exceeds an upper bound (floating-point sums, solver
#: tolerances); beyond it a bound is wrong and a warning says so.
BOUND_TOLERANCE = 1e-6


def standalone_bound(instance) -> float:
    """``sum_i f_i^alone``: an upper bound on OPT that needs no solver (module docstring)."""
    from primaldual.core.standalone import standalone_utilities

    return float(standalone_utilities(instance).sum())


def tight(low: float, high: float | None) -> bool:
    return high is not None and high - low <= TIGHT_INTERVAL * max(1.0, abs(high))


def safe_ratio(numerator: float | None, denominator: float) -> float | None:
    """``numerator / denominator``; 1 for 0/0; None (unbounded or unknown) for x/0 with x > 0 or no numerator."""
    if numerator is None:
        return None
    if denominator > 0:
        return numerator / denominator
    return 1.0 if numerator <= 0 else None


@dataclass(frozen=True)
class Ratio:
    """OPT/ALG of one scheduler: ``[lower, upper]`` (None: unbounded), ``exact`` when the OPT interval is a point,
    ``proven`` when the solver proved OPT; ``certified`` is what the scheduler's own bounds prove (or None)."""

    lower: float | None
    upper: float | None
    exact: bool
    proven: bool = False
    certified: float | None = None

    @classmethod
    def of(cls, low: float, high: float | None, utility: float, proven: bool = False) -> "Ratio":
        return cls(safe_ratio(low, utility), safe_ratio(high, utility), tight(low, high), proven)

    @property
    def point(self) -> float | None:
        return self.lower

    def to_dict(self) -> dict[str, Any]:
        out = {"point": self.point, "lower": self.lower, "upper": self.upper, "exact": self.exact,
               "proven": self.proven}
        if self.certified is not None:
            out["certificate"] = self.certified
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Ratio":
        return cls(data["lower"], data["upper"], bool(data["exact"]), bool(data.get("proven", False)),
                   data.get("certificate"))


@dataclass(frozen=True)
class OptInterval:
    """OPT lies in ``[low, high]``; ``low_method``/``high_method`` name the candidate behind each end."""

    low: float
    high: float
    low_method: str | None
    high_method: str
    proven: bool = False
    lower_candidates: Mapping[str, float] = field(default_factory=dict)
    upper_candidates: Mapping[str, float] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        return tight(self.low, self.high)

    def ratio(self, utility: float) -> Ratio:
        return Ratio.of(self.low, self.high, utility, self.proven)

    def to_dict(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "low_method": self.low_method, "high_method": self.high_method,
                "exact": self.exact, "proven": self.proven, "lower_candidates": dict(self.lower_candidates),
                "upper_candidates": dict(self.upper_candidates)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "OptInterval":
        return cls(data["low"], data["high"], data["low_method"], data["high_method"], bool(data["proven"]),
                   dict(data["lower_candidates"]), dict(data["upper_candidates"]))


def _finite(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def best_feasible(outcomes: Iterable):
    """The scheduler outcome with the best verified utility (None if none is feasible)."""
    # Ties go to the later name, so the choice does not depend on the order the schedulers were listed in.
    return max((o for o in outcomes if o.feasible), key=lambda o: (o.utility, o.name), default=None)


def _candidates(instance, outcomes, offline, offline_verification, count_incumbent):
    lower: dict[str, float] = {}
    upper: dict[str, float] = {"standalone": standalone_bound(instance)}
    feasible = [o for o in outcomes if o.feasible]
    best = best_feasible(feasible)
    if best is not None:
        lower[f"online:{best.name}"] = best.utility
    for outcome in feasible:
        for key, value in outcome.upper_bounds.items():
            if _finite(value) is not None:
                upper[f"{outcome.name}_{key}"] = float(value)
    if offline is not None:
        if count_incumbent and offline_verification is not None and offline_verification.feasible:
            lower["solver"] = float(offline_verification.utility)
        bound = _finite(offline.bound)
        if bound is None and offline.status == "optimal":
            bound = _finite(offline.objective)
        if bound is not None:
            upper["solver"] = bound
    return lower, upper


def opt_interval(instance, outcomes: Iterable, offline=None, offline_verification=None, *,
                 count_incumbent: bool = True) -> tuple[OptInterval, list[str]]:
    """The OPT interval from the schedulers' outcomes and the offline result (module docstring), with warnings
    for a verified utility above an upper bound beyond :data:`BOUND_TOLERANCE` (a bound is then wrong)."""
    lower, upper = _candidates(instance, list(outcomes), offline, offline_verification, count_incumbent)
    low = max(lower.values(), default=0.0)
    high_method = min(upper, key=upper.get)
    high = upper[high_method]
    warnings = []
    if low > high * (1 + BOUND_TOLERANCE) + BOUND_TOLERANCE:
        sources = ", ".join(f"{name} {value:.6g}" for name, value in upper.items())
        warnings.append(f"a verified utility {low:.6g} exceeds an upper bound ({sources}): a bound is wrong")
    # A bound can sit a hair below the verified incumbent (floating point inside a solver): the interval
    # never inverts, and the warning above reports any gap larger than the tolerance.
    high = max(high, low)
    interval = OptInterval(
        low=low, high=high, low_method=max(lower, key=lower.get) if lower else None, high_method=high_method,
        # Without the incumbent (restart costs: the solve is of a relaxation) the solver proves a bound, not OPT.
        proven=offline is not None and offline.status == "optimal" and count_incumbent,
        lower_candidates=lower, upper_candidates=upper,
    )
    return interval, warnings


__all__ = ["BOUND_TOLERANCE", "best_feasible", "OptInterval", "Ratio", "TIGHT_INTERVAL", "opt_interval", "safe_ratio",
           "standalone_bound", "tight"]
