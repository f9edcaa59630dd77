"""The dual side of OASiS-LR and OASiS-P: running-maximum prices, the certificate and the terms of the bound.

:class:`DualRecord` follows a run: the running maximum ``pbar`` of every cell's exponential price (prices fall
when reservations are released, so the dual uses their running maximum), the highest learned floor, each
job's ``mu`` at its last offer, and per admission the dual increase ``mu_i + sum c (pbar_new - pbar_old)``.

:func:`certificate_terms` reports, after the run (``proofs/oasis-lr.md``):

* **G2, certificate** (both variants): ``D = sum_i mu_i^final + sum_cells c (pbar + floor_max)`` with ``mu_i^final``
  recomputed at those prices over capacity-respecting schedules; a feasible dual of the packing LP, so
  ``D >= OPT`` by weak duality. ``best_upper_bound = min(D, standalone bound)``.
* **G3, bound of OASiS-P**: ``OPT <= D_0 + D_floor + D_unplaced + beta ALG_promised`` with
  ``beta = max(alpha_discrete, 1 / (1 - delta))``, ``D_floor = sum_cells c floor_max``, ``D_unplaced`` the ``mu`` of
  jobs that had ``mu > 0`` but never got a reservation, ``ALG_promised`` the realised utility of the promised
  jobs. The per-admission inequality (Lemma P2) and the chain ``D <= D_online <= bound`` are checked and
  reported; the step ``D <= D_online`` needs the small-demand condition (C1) of ``proofs/oasis.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.oasis.certificate import final_mu
from primaldual.oasis.prices import json_number

#: Relative slack of the numerical checks.
CHECK_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Admission:
    """One admission's terms: the subroutine's ``mu``, the block's payoff and value at the admission prices,
    and the dual increase ``mu + sum c (pbar_new - pbar_old)``."""

    job: int
    mu: float
    payoff: float
    value: float
    price_increase: float
    dual_increase: float


class DualRecord:
    """Running-maximum prices, floors, offers and admissions of one run (module docstring)."""

    def __init__(self, instance, constants):
        shape_w = (instance.horizon,) + instance.cluster.worker_capacity.shape
        shape_ps = (instance.horizon,) + instance.cluster.ps_capacity.shape
        self.instance = instance
        self.constants = constants
        self.worker_capacity = np.broadcast_to(instance.cluster.worker_capacity, shape_w)
        self.ps_capacity = np.broadcast_to(instance.cluster.ps_capacity, shape_ps)
        # Contiguous copies for the admissions, which multiply by them (faster; the same products and sums).
        self._dense_capacity = (np.array(self.worker_capacity, order="C"), np.array(self.ps_capacity, order="C"))
        self.worker_max = np.array(np.broadcast_to(constants.worker_lower, shape_w), order="C")
        self.ps_max = np.array(np.broadcast_to(constants.ps_lower, shape_ps), order="C")
        n_resources = instance.cluster.n_resources
        self.floor_worker = np.zeros(n_resources)
        self.floor_ps = np.zeros(n_resources)
        self.mu_last: dict[int, float] = {}
        self.unplaced: set[int] = set()
        self.admissions: dict[int, Admission] = {}
        self.completions: dict[int, int] = {}

    def see_floor(self, floor) -> None:
        np.maximum(self.floor_worker, floor.worker, out=self.floor_worker)
        np.maximum(self.floor_ps, floor.ps, out=self.floor_ps)

    def see_offer(self, i: int, mu: float) -> None:
        self.mu_last[i] = float(mu)

    def see_unplaced(self, i: int) -> None:
        self.unplaced.add(i)

    def see_admission(self, i: int, mu: float, payoff: float, value: float, prices, floor, slot: int,
                      rows: np.ndarray | None = None) -> None:
        """Job ``i`` got a reservation in ``slot``; ``prices`` are the cell prices after it (floor ``floor``
        included), current from ``slot`` on (earlier cells no longer change). ``rows``: the slots whose prices
        may have changed since the last admission (:meth:`primaldual.oasis.lr.price_cache.PriceCache.take_touched`; None: all
        from ``slot`` on). Every other slot's exponential part was already seen, so it adds exactly 0 to the
        increase, which is summed over the same full array either way (the same floating-point result)."""
        increase = 0.0
        for running, current, capacity, low in ((self.worker_max, prices[0], self._dense_capacity[0], floor.worker),
                                                (self.ps_max, prices[1], self._dense_capacity[1], floor.ps)):
            seen = running[slot:]
            if rows is None:
                new = np.maximum(seen, current[slot:] - low)
                rise = new - seen
                seen[...] = new
            else:
                new = np.maximum(seen[rows - slot], current[rows] - low)
                rise = np.zeros(seen.shape)
                rise[rows - slot] = new - seen[rows - slot]
                seen[rows - slot] = new
            increase += float((rise * capacity[slot:]).sum())
        self.unplaced.discard(i)
        self.admissions[i] = Admission(job=i, mu=mu, payoff=payoff, value=value, price_increase=increase,
                                       dual_increase=mu + increase)

    def see_completion(self, i: int, slot: int) -> None:
        self.completions[i] = slot


def certificate_terms(record: DualRecord, standalone: np.ndarray, promised_jobs, delta: float,
                      provable: bool) -> dict:
    """G2 and G3 of the module docstring for a finished run that kept ``record``: ``standalone`` are the jobs'
    ``f_i^alone``, ``promised_jobs`` the jobs that got a promise and ``delta`` the deadline slack."""
    instance, constants = record.instance, record.constants
    worker_prices = record.worker_max + record.floor_worker
    ps_prices = record.ps_max + record.floor_ps
    mu_final = final_mu(instance, worker_prices, ps_prices)
    price_term = float((worker_prices * record.worker_capacity).sum() + (ps_prices * record.ps_capacity).sum())
    dual_objective = float(mu_final.sum()) + price_term
    standalone = float(standalone.sum())
    utilities = {i: float(instance.jobs[i].utility(t - instance.jobs[i].arrival)) for i, t in record.completions.items()}
    total = float(sum(utilities.values()))
    promised = float(sum(utilities.get(i, 0.0) for i in promised_jobs))
    beta = max(constants.alpha_discrete, 1.0 / (1.0 - delta))
    d_floor = float((record.floor_worker * record.worker_capacity).sum() + (record.floor_ps * record.ps_capacity).sum())
    d_unplaced = float(sum(record.mu_last.get(i, 0.0) for i in record.unplaced if i not in record.admissions))
    d_online = constants.initial_dual + d_floor + d_unplaced + sum(a.dual_increase for a in record.admissions.values())
    bound = constants.initial_dual + d_floor + d_unplaced + beta * promised
    per_job = all(a.dual_increase <= beta * a.value * (1 + CHECK_TOLERANCE) + CHECK_TOLERANCE
                  for a in record.admissions.values())
    best = min(dual_objective, standalone)
    scale = max(1.0, abs(d_online))
    return {
        "certificate": {
            "dual_objective": json_number(dual_objective),
            "standalone_bound": standalone,
            "best_upper_bound": json_number(best),
            "primal": total,
            "best_ratio_upper_bound": json_number(best / total) if total > 0 else None,
            "price_term": json_number(price_term),
            "mu_sum": float(mu_final.sum()),
        },
        "guarantee": {
            "applies": bool(provable),
            "statement": "OPT <= D_0 + D_floor + D_unplaced + beta * ALG_promised (proofs/oasis-lr.md)",
            "D_0": constants.initial_dual,
            "D_floor": d_floor,
            "D_unplaced": d_unplaced,
            "beta": json_number(beta),
            "alpha_discrete": json_number(constants.alpha_discrete),
            "ALG_promised": promised,
            "bound": json_number(bound),
            "online_dual": json_number(d_online),
            "per_admission_holds": bool(per_job),
            "online_dual_within_bound": bool(d_online <= bound + CHECK_TOLERANCE * scale),
            "certificate_within_online_dual": bool(dual_objective <= d_online * (1 + CHECK_TOLERANCE) + CHECK_TOLERANCE),
            "small_demand_holds": constants.small_demand_holds,
        },
    }


__all__ = ["Admission", "DualRecord", "certificate_terms"]
