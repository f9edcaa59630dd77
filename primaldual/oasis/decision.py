"""OASiS's decision on one job (Algorithm 1): the subroutine's offer at the prices of the job's arrival, and
what admitting it added to the primal and the dual objectives.

The online dual objective grows by ``Delta D_i = mu_i + sum c (p_new - p_old)`` per admitted job and the primal
by ``Delta P_i = f_i``; the theorem bounds their ratio by ``alpha_discrete`` (``proofs/oasis.md``), which the
certificate (:mod:`primaldual.oasis.certificate`) checks from these records.
"""

from __future__ import annotations

from dataclasses import dataclass

from primaldual.dual.subroutine import Offer
from primaldual.oasis.constants import json_number


#: The keys of a decision's JSON form, in the order the files have always used.
DECISION_KEYS = ("job", "arrival", "admitted", "feasible", "mu", "payoff", "cost", "utility", "completion_slot",
                 "primal_increase", "dual_increase", "price_increase")


@dataclass(frozen=True)
class JobDecision(Offer):
    """What the online algorithm decided for one job, at the prices of its arrival.

    The :class:`~primaldual.dual.subroutine.Offer` part (``mu``, ``payoff``, ``cost``, ``utility``, ...) describes the best
    schedule found (also for a rejected job); ``primal_increase`` is ``f_i`` if admitted else 0 and
    ``dual_increase`` is ``mu_i + price_increase``, where ``price_increase = sum c (p_new - p_old)`` over what
    the job allocated.
    """

    arrival: int
    primal_increase: float
    dual_increase: float
    price_increase: float

    @classmethod
    def of(cls, offer: Offer, arrival: int, price_increase: float) -> "JobDecision":
        """The decision on the subroutine's ``offer`` (a :class:`~primaldual.dual.subroutine.DualResult`): admitted iff
        ``mu > 0`` (Algorithm 1); ``price_increase`` is what the admission raised the prices by (0 if rejected)."""
        admitted = offer.admit
        return cls(**offer.offer_fields(), arrival=arrival,
                   primal_increase=offer.utility if admitted else 0.0,
                   dual_increase=(offer.mu + price_increase) if admitted else 0.0,
                   price_increase=price_increase)

    @property
    def admitted(self) -> bool:
        """Algorithm 1's decision: :attr:`Offer.admit` (``mu_i > 0``), under the name the JSON form uses."""
        return self.admit

    @property
    def allocation_price_ratio(self) -> float | None:
        """``Delta D_i / Delta P_i`` for an admitted job (the theorem bounds it by ``alpha_discrete``)."""
        if not self.admitted or self.primal_increase <= 0:
            return None
        return self.dual_increase / self.primal_increase

    def to_dict(self) -> dict:
        """JSON-ready: numbers that are not finite become None (:func:`primaldual.oasis.prices.json_number`)."""
        return {key: _plain(getattr(self, key)) for key in DECISION_KEYS}


def _plain(value):
    return json_number(value) if isinstance(value, float) else value


__all__ = ["DECISION_KEYS", "JobDecision"]
