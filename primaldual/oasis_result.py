"""What an OASiS (or ``greedy``) run returns: per-job decisions and the finished run (:mod:`primaldual.oasis`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from primaldual.certificate import Certificate
from primaldual.prices import PriceConstants, json_number
from primaldual.schedule import Schedule


@dataclass(frozen=True)
class JobDecision:
    """What the online algorithm decided for one job, at the prices of its arrival.

    ``mu``, ``payoff``, ``cost`` and ``utility`` describe the best schedule found (also for a rejected job);
    ``primal_increase`` is ``f_i`` if admitted else 0 and ``dual_increase`` is ``mu_i + price_increase``, where
    ``price_increase = sum c (p_new - p_old)`` over what the job allocated.
    """

    job: int
    arrival: int
    admitted: bool
    feasible: bool
    mu: float
    payoff: float
    cost: float
    utility: float
    completion_slot: int | None
    primal_increase: float
    dual_increase: float
    price_increase: float

    @property
    def allocation_price_ratio(self) -> float | None:
        """``Delta D_i / Delta P_i`` for an admitted job (the theorem bounds it by ``alpha_discrete``)."""
        if not self.admitted or self.primal_increase <= 0:
            return None
        return self.dual_increase / self.primal_increase

    def to_dict(self) -> dict:
        return {
            "job": self.job,
            "arrival": self.arrival,
            "admitted": self.admitted,
            "feasible": self.feasible,
            "mu": json_number(self.mu),
            "payoff": json_number(self.payoff),
            "cost": json_number(self.cost),
            "utility": json_number(self.utility),
            "completion_slot": self.completion_slot,
            "primal_increase": json_number(self.primal_increase),
            "dual_increase": json_number(self.dual_increase),
            "price_increase": json_number(self.price_increase),
        }


@dataclass(frozen=True, eq=False)
class OasisResult:
    """A finished run: the schedule, per-job decisions (index order), the constants and the certificate
    (``None`` for ``greedy``)."""

    scheduler: str
    schedule: Schedule
    decisions: tuple[JobDecision, ...]
    constants: PriceConstants | None
    certificate: Certificate | None
    worker_prices: np.ndarray = field(repr=False, default=None)
    ps_prices: np.ndarray = field(repr=False, default=None)

    @property
    def total_utility(self) -> float:
        """ALG: the sum of admitted jobs' utilities."""
        return float(sum(d.primal_increase for d in self.decisions))

    @property
    def admitted(self) -> list[int]:
        return [d.job for d in self.decisions if d.admitted]

    def to_dict(self) -> dict:
        out: dict[str, Any] = {
            "scheduler": self.scheduler,
            "utility": self.total_utility,
            "admitted": len(self.admitted),
            "jobs": len(self.decisions),
            "decisions": [d.to_dict() for d in self.decisions],
        }
        if self.constants is not None:
            out["constants"] = self.constants.to_dict()
        if self.certificate is not None:
            out["certificate"] = self.certificate.to_dict()
        return out
