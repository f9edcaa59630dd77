"""What an OASiS (or ``greedy``) run returns: the finished run (:mod:`primaldual.oasis.engine`), with its per-job
decisions (:mod:`primaldual.oasis.decision`) and its certificate (:mod:`primaldual.oasis.certificate`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from primaldual.core.schedule import Schedule
from primaldual.oasis.certificate import Certificate
from primaldual.oasis.constants import PriceConstants
from primaldual.oasis.decision import JobDecision


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


__all__ = ["OasisResult"]
