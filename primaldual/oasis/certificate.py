"""The certificate of a finished OASiS run: the dual bound and the numerical checks of the theorem.

After the run each ``mu_i`` is recomputed at the *final* prices over every schedule that
respects each server's own capacity (:func:`primaldual.dual.subroutine.best_schedule` with ``free = capacity``). Then
``(mu_final, p_final, q_final)`` satisfies every dual constraint (20) of the packing LP (14) over those
schedules, so by weak duality

    ``D = sum_i mu_i^final + sum p c + sum q c  >=  LP optimum  >=  OPT  >=  ALG``,

a certified interval ``[ALG, D]`` for the optimum and ``D / ALG`` for this run's competitive ratio, with no
ILP solved. The restriction to capacity-respecting schedules loses nothing: an integral solution uses no
other. The same argument at zero prices gives the *standalone bound* ``sum_i f_i^alone`` (each job alone on
the empty cluster); it is reported beside ``D`` together with the smaller of the two, because OASiS's final
prices are near ``U`` on every saturated server, which makes ``D`` loose under contention. The certificate
also checks the theorem's steps numerically (``proofs/oasis.md``): the per-job allocation-price inequality
``Delta D_i <= alpha_discrete Delta P_i``, ``mu_i^final <= mu_i`` and ``D <= D_0 + alpha_discrete ALG``, and
reports by how much they fail where the assumptions do not hold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.core.instance import Instance
from primaldual.dual.subroutine import best_schedule, least_prices
from primaldual.oasis.decision import JobDecision
from primaldual.oasis.prices import PriceConstants, PriceState, json_number, standalone_utilities

#: Relative slack of the numerical checks of the theorem's inequalities (floating-point sums).
CHECK_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class Certificate:
    """The dual bound of a finished OASiS run and the numerical checks of the theorem (module docstring)."""

    price_term: float
    initial_dual: float
    online_dual: float
    primal: float
    #: Per job, in job order: ``mu_i`` when it arrived and at the final prices (read-only arrays).
    mu_online: np.ndarray
    mu_final: np.ndarray
    allocation_price_factor: float | None
    standalone_bound: float
    constants: PriceConstants

    @property
    def mu_sum(self) -> float:
        """``sum_i mu_i^final``: the jobs' part of ``D``."""
        return float(sum(self.mu_final))

    @property
    def dual_objective(self) -> float:
        """``D = sum_i mu_i^final + sum p c + sum q c`` (module docstring)."""
        return self.mu_sum + self.price_term

    @property
    def ratio_upper_bound(self) -> float | None:
        """``D / ALG >= OPT / ALG`` (``None`` when ALG = 0)."""
        return self.dual_objective / self.primal if self.primal > 0 else None

    @property
    def opt_interval(self) -> tuple[float, float]:
        """``[ALG, D]``: the offline optimum lies in it."""
        return (self.primal, self.dual_objective)

    @property
    def best_upper_bound(self) -> float:
        """``min(D, sum_i f_i^alone)``: both are dual objectives of feasible duals, so both bound OPT."""
        return min(self.dual_objective, self.standalone_bound)

    @property
    def best_ratio_upper_bound(self) -> float | None:
        return self.best_upper_bound / self.primal if self.primal > 0 else None

    @property
    def max_mu_increase(self) -> float:
        """``max_i (mu_i^final - mu_i)``: <= 0 under condition (C1) (the online ``mu`` are already dual feasible)."""
        return max((f - o for f, o in zip(self.mu_final, self.mu_online)), default=0.0)

    @property
    def allocation_price_holds(self) -> bool:
        """Lemma 2: ``Delta D_i <= alpha_discrete Delta P_i`` for every admitted job."""
        factor = self.allocation_price_factor
        return factor is None or factor <= self.constants.alpha_discrete * (1 + CHECK_TOLERANCE)

    @property
    def violation_factor(self) -> float | None:
        """``max_i (Delta D_i / Delta P_i) / alpha``: > 1 means the per-job inequality with the paper's ``alpha``
        fails for some job (expected when one job holds a large share of a server)."""
        factor = self.allocation_price_factor
        return None if factor is None else factor / self.constants.alpha

    @property
    def dual_growth_bound(self) -> float:
        """``D_0 + alpha_discrete ALG``: the theorem's bound on ``D`` under (C1)."""
        return self.initial_dual + self.constants.alpha_discrete * self.primal

    def to_dict(self) -> dict:
        constants = self.constants
        scale = max(1.0, abs(self.dual_objective))
        return {
            "dual_objective": json_number(self.dual_objective),
            "primal": json_number(self.primal),
            "opt_interval": [json_number(self.primal), json_number(self.dual_objective)],
            "ratio_upper_bound": json_number(self.ratio_upper_bound),
            "standalone_bound": json_number(self.standalone_bound),
            "best_upper_bound": json_number(self.best_upper_bound),
            "best_ratio_upper_bound": json_number(self.best_ratio_upper_bound),
            "mu_sum": json_number(self.mu_sum),
            "price_term": json_number(self.price_term),
            "initial_dual": json_number(self.initial_dual),
            "online_dual": json_number(self.online_dual),
            "alpha": constants.alpha,
            "two_alpha": constants.two_alpha,
            "alpha_discrete": json_number(constants.alpha_discrete),
            "online_lower_bound": constants.online_lower_bound,
            "theorem_ratio_bound": json_number(constants.theorem_ratio_bound),
            "small_demand_holds": constants.small_demand_holds,
            "allocation_price_factor": json_number(self.allocation_price_factor),
            "allocation_price_holds": self.allocation_price_holds,
            "violation_factor": json_number(self.violation_factor),
            "max_mu_increase": json_number(self.max_mu_increase),
            "dual_growth_bound": json_number(self.dual_growth_bound),
            "dual_growth_holds": bool(self.dual_objective <= self.dual_growth_bound + CHECK_TOLERANCE * scale),
            "constants": constants.to_dict(),
        }


def _frozen(values: list[float]) -> np.ndarray:
    array = np.array(values, dtype=float)
    array.setflags(write=False)
    return array


def final_mu(instance: Instance, worker_prices: np.ndarray, ps_prices: np.ndarray) -> np.ndarray:
    """Every job's ``mu_i`` at the final prices over capacity-respecting schedules (module docstring); 0 for a
    job that cannot finish at all (constraint (20) is then empty). Only ``mu`` is needed, so the search uses
    the cost floor (:func:`primaldual.dual.subroutine.best_schedule`), which leaves ``mu`` unchanged and stops once no later
    completion can pay. On a heterogeneous cluster the search is relaxed (``relaxed``: an upper bound on each
    ``mu_i``, proofs/oasis.md section 2b), so the certificate stays a bound; on one type it is exact."""
    cluster = instance.cluster
    least = least_prices(worker_prices, ps_prices)  # the same prices for every job: the floor's tables, once
    out = np.zeros(instance.n_jobs)
    for i in range(instance.n_jobs):
        if instance.can_finish[i]:
            out[i] = best_schedule(instance, i, worker_prices, ps_prices, cluster.worker_capacity,
                                   cluster.ps_capacity, cost_floor=least, plan=False, relaxed=True).mu
    return out


def compute_certificate(instance: Instance, state: PriceState, decisions: dict[int, JobDecision],
                        initial_dual: float, constants: PriceConstants) -> Certificate:
    """The certificate of a run that ended with prices ``state`` and made ``decisions`` (job -> decision)."""
    mu_final = final_mu(instance, state.worker_prices, state.ps_prices)
    mu_online = [decisions[i].mu if i in decisions else 0.0 for i in range(instance.n_jobs)]
    ratios = [d.allocation_price_ratio for d in decisions.values() if d.allocation_price_ratio is not None]
    price_term = state.price_term()
    primal = float(sum(d.primal_increase for d in decisions.values()))
    return Certificate(
        price_term=price_term,
        initial_dual=initial_dual,
        online_dual=float(sum(d.mu for d in decisions.values() if d.admitted)) + price_term,
        primal=primal,
        mu_online=_frozen(mu_online),
        mu_final=_frozen(mu_final),
        allocation_price_factor=max(ratios) if ratios else None,
        standalone_bound=float(standalone_utilities(instance).sum()),
        constants=constants,
    )
