"""Gavel's policies as LPs over time fractions per GPU type (Narayanan et al., OSDI 2020, sections 3-4), solved
by HiGHS (docs/papers.md, Gavel).

The allocation ``X[m, g]`` is the fraction of time job ``m`` runs on type ``g`` (at its width ``D_m``, using
``c_m`` GPUs). Every policy keeps Gavel's constraints::

    0 <= X[m, g] <= allowed[m, g],   sum_g X[m, g] <= 1,   sum_m c_m X[m, g] <= C_g      (C_g: GPUs of type g)

``allowed`` is 0 where the job's gang does not fit on type ``g``'s servers. The **max-min** policies (Gavel's
LAS) maximise ``min_m sum_g a[m, g] X[m, g]`` with ``a[m, g] = D_m speed[m, g]``: ``speed = 1`` in the
heterogeneity-agnostic form (Gavel's code sets every throughput to 1) and ``speed = rate[m, g] / norm_m`` in the
aware form, a job's throughput on ``g`` over its throughput on an equal share of every type (``norm_m = sum_g
rate[m, g] C_g / C``); the weight ``D_m`` is Gavel's scale factor (a job on ``D`` GPUs earns its share ``D`` times
faster). Then, the minimum ``t*`` held (``>= t* (1 - 1e-7)``), a second LP maximises the sum of the same terms:
one step of water filling, so that no capacity the minimum does not need is left idle (an adaptation).

**Finish-time fairness** (Gavel's FTF, after Themis) minimises ``max_m rho_m`` with ``rho_m = (t_m + R_m /
thr_m) / (t_m + R_m / iso_m)``: ``t_m`` slots since arrival, ``R_m`` the fraction of the job left,
``thr_m = sum_g rate[m, g] X[m, g]``, ``iso_m`` its throughput on an equal ``1/n`` share of the cluster. For a
fixed ``r``, ``rho_m <= r`` is the linear ``thr_m >= R_m / (r E_m - t_m)`` (``E_m`` the denominator), so ``r``
is found by bisection on LP feasibility between ``max_m`` of each job's best alone and 1 (the equal share,
feasible by construction), to a relative 1e-3; the last feasible LP maximises ``sum_m thr_m / iso_m``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.backends.highs import quiet_highs, size_highs_threads

#: The minimum kept in the second max-min stage, relatively (HiGHS's feasibility tolerance is 1e-7).
HOLD = 1e-7
#: Bisection of finish-time fairness stops at this relative width.
FTF_TOLERANCE = 1e-3


@dataclass(frozen=True)
class GavelProblem:
    """The LP's data over ``n`` jobs and ``G`` types: ``rate[m, g]`` (fraction of the job per slot at its width
    on type g, 0 where not allowed), ``allowed`` (bool), ``width`` ``D_m``, ``gpus`` ``c_m`` (GPUs at that width),
    ``capacity`` ``C_g``."""

    rate: np.ndarray
    allowed: np.ndarray
    width: np.ndarray
    gpus: np.ndarray
    capacity: np.ndarray

    @property
    def share(self) -> np.ndarray:
        """Each type's share of the GPUs, ``C_g / C``."""
        return self.capacity / max(float(self.capacity.sum()), 1e-300)

    def norm(self) -> np.ndarray:
        """``norm_m``: throughput on an equal share of every type (the aware form's normaliser)."""
        return self.rate @ self.share

    def equal_share(self) -> np.ndarray:
        """``X`` of an equal ``1/n`` share of the cluster: ``min(1, C / (n c_m))`` of the time, spread over the
        types as the GPUs are (0 where not allowed). Feasible: each type's sum is at most ``C_g``."""
        n = self.rate.shape[0]
        total = float(self.capacity.sum())
        time = np.minimum(1.0, total / np.maximum(n * self.gpus, 1e-300))
        return time[:, None] * self.share[None, :] * self.allowed


def max_min(problem: GavelProblem, aware: bool) -> np.ndarray | None:
    """Gavel's LAS: ``X`` maximising ``min_m sum_g a[m, g] X[m, g]`` (module docstring), then the sum with that
    minimum held. None if HiGHS reports no optimum (the zero allocation is feasible, so only on a solver
    failure). Cost: two LPs of ``n G + 1`` columns and ``2 n + G`` rows."""
    speed = problem.rate / np.maximum(problem.norm(), 1e-300)[:, None] if aware else problem.allowed.astype(float)
    coef = problem.width[:, None] * speed * problem.allowed
    lp = _Lp(problem, coef, np.zeros(problem.rate.shape[0]), with_t=True)
    first = lp.run(np.append(np.zeros(coef.size), -1.0))
    if first is None:
        return None
    lp.highs.changeColBounds(lp.t, max(first[lp.t] * (1.0 - HOLD), 0.0), lp.highs.getInfinity())
    second = lp.run(np.append(-coef.ravel(), 0.0))
    return lp.allocation(first if second is None else second)


def finish_time_fair(problem: GavelProblem, elapsed: np.ndarray, left: np.ndarray) -> np.ndarray:
    """Gavel's FTF: ``X`` minimising ``max_m rho_m`` by bisection on ``r`` (module docstring); the equal share when
    no ``r < 1`` is feasible. ``elapsed`` ``t_m`` (slots), ``left`` ``R_m`` (fraction of the job). Cost: about
    ``log2(1 / FTF_TOLERANCE)`` LPs of ``n G`` columns."""
    equal = problem.equal_share()
    iso = np.maximum((problem.rate * equal).sum(axis=1), 1e-300)
    alone = problem.rate.max(axis=1)
    finish = elapsed + left / iso  # E_m: the finish time on the equal share
    low = float(((elapsed + left / np.maximum(alone, 1e-300)) / finish).max())
    lp = _Lp(problem, problem.rate * problem.allowed, np.zeros(len(left)), with_t=False)
    cost = np.append(-(problem.rate / iso[:, None]).ravel(), 0.0)

    def at(r: float) -> np.ndarray | None:  # the LP of rho_m <= r for every job, or None if infeasible
        slack = r * finish - elapsed
        need = np.where(slack > 0, left / np.maximum(slack, 1e-300), np.inf)
        solution = lp.run_with(need * (1.0 - HOLD), cost) if np.isfinite(need).all() else None
        return None if solution is None else lp.allocation(solution)

    high, best = 1.0, at(1.0)  # r = 1: the equal share is feasible (HiGHS's answer is at least as efficient)
    best = equal if best is None else best
    while high - low > FTF_TOLERANCE * high:
        r = 0.5 * (low + high)
        found = at(r)
        if found is None:
            low = r
        else:
            high, best = r, found
    return best


class _Lp:
    """Columns ``X`` (``n G``, row-major) and ``t``; rows: per job ``sum_g X <= 1``, per type
    ``sum_m c_m X <= C_g``, per job ``sum_g coef X (- t when with_t) >= lower``. One HiGHS object, re-run with
    changed bounds and costs."""

    def __init__(self, problem: GavelProblem, coef: np.ndarray, lower: np.ndarray, with_t: bool):
        n, G = problem.rate.shape
        self.n, self.G, self.t = n, G, n * G
        size_highs_threads(None)
        self.highs = highs = quiet_highs()
        inf = highs.getInfinity()
        upper = np.append(problem.allowed.astype(float).ravel(), inf if with_t else 0.0)
        highs.addVars(n * G + 1, np.zeros(n * G + 1), upper)
        cols = np.arange(n * G).reshape(n, G).astype(np.int32)
        for m in range(n):
            highs.addRow(-inf, 1.0, G, cols[m], np.ones(G))
        gpus = problem.gpus.astype(float)
        for g in range(G):
            highs.addRow(-inf, float(problem.capacity[g]), n, np.ascontiguousarray(cols[:, g]), gpus)
        self.first_job_row = n + G
        t_value = -1.0 if with_t else 0.0
        for m in range(n):
            index = np.append(cols[m], self.t).astype(np.int32)
            highs.addRow(float(lower[m]), inf, G + 1, index, np.append(coef[m], t_value).astype(float))

    def run(self, cost: np.ndarray) -> np.ndarray | None:
        """Minimise ``cost . (X, t)``; the solution, or None if HiGHS does not report an optimum."""
        import highspy

        self.highs.changeColsCost(len(cost), np.arange(len(cost), dtype=np.int32), np.asarray(cost, dtype=float))
        self.highs.run()
        if self.highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        return np.asarray(self.highs.getSolution().col_value, dtype=float)

    def run_with(self, lower: np.ndarray, cost: np.ndarray) -> np.ndarray | None:
        """:meth:`run` with the per-job rows' lower bounds set to ``lower``."""
        rows = np.arange(self.first_job_row, self.first_job_row + self.n, dtype=np.int32)
        self.highs.changeRowsBounds(self.n, rows, np.asarray(lower, dtype=float),
                                    np.full(self.n, self.highs.getInfinity()))
        return self.run(cost)

    def allocation(self, solution: np.ndarray) -> np.ndarray:
        """``X`` of a solution, clipped into ``[0, 1]`` (HiGHS's tolerances)."""
        return np.clip(solution[: self.t].reshape(self.n, self.G), 0.0, 1.0) + 0.0  # (+ 0.0: no -0.0)


__all__ = ["FTF_TOLERANCE", "GavelProblem", "HOLD", "finish_time_fair", "max_min"]
