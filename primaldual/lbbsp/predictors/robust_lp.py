"""The robust rule's linear programs: the split minimising the expected (or CVaR) iteration time over scenarios.

The robust predictors (:mod:`.robust`, :mod:`.hazard`) and the references of :mod:`primaldual.lbbsp.limits`
and :mod:`primaldual.lbbsp.law_aware` take cost *scenarios* ``c[s, i] > 0`` (per-sample cost of worker ``i``
in scenario ``s``) as equally likely (or weighted) outcomes of the coming iteration. For the linear law of
``primaldual/lbbsp/replay.py`` the iteration time of scenario ``s`` is ``a + max_i c[s, i] x_i``, a max of
affine functions of the batches, so the split minimising the mean is the linear program

    minimise   (1/S) sum_s tau_s
    subject to tau_s >= c[s, i] x_i   (every s, i),    sum_i x_i = 1,    x >= 0,

solved exactly by HiGHS (the common overhead ``a`` and the global batch only shift and scale it). With
``tail = beta > 0`` the objective is ``eta + sum_s u_s / ((1 - beta) S)`` with ``u_s >= tau_s - eta``,
``u >= 0`` (Rockafellar-Uryasev): the conditional value at risk, the mean of the worst ``1 - beta`` share of
scenarios. :func:`robust_shares` builds and solves it once (``S n + 1`` rows, ``n + S`` columns, ``+ S + 1`` for
the CVaR). When every scenario is the same cost vector up to a factor, the unique optimum is ``x proportional
to 1/c``, returned in closed form, so that solver tolerances cannot move a rounding tie of the proportional rule.

:class:`ScenarioLp` is the same mean LP kept between barriers. The robust predictors use scenarios
``c[s] = f * e[s]``: a forecast of the per-sample costs ``f`` (> 0, one per worker, changing at every barrier)
times scenario multipliers ``e[s]`` (one new row per barrier, the oldest dropped). Substituting ``y_i = f_i x_i``
gives

    minimise (1/S) sum_s tau_s   subject to   tau_s >= e[s, i] y_i,   sum_i y_i / f_i = 1,   y >= 0,

in which a barrier changes only one scenario's ``n`` rows and the ``n`` coefficients of the last row. The
model is therefore built once and modified in place, and HiGHS's dual simplex restarts from the previous
optimal basis: a few pivots instead of a fresh solve. The optimum is the same as :func:`robust_shares`
on the costs ``f * e[s]`` (both are tested in ``tests/lbbsp/test_lbbsp_robust.py``).
"""

from __future__ import annotations

import numpy as np

from primaldual.backends.highs import quiet_highs, size_highs_threads

# A worker the LP gives nothing still gets min_batch from the CPU rule, which needs speeds > 0.
FLOOR_SHARE = 1e-9


def same_up_to_scale(costs: np.ndarray) -> bool:
    ratios = costs / costs[0]
    return bool(np.all(np.abs(ratios - ratios[:, :1]) <= 1e-12 * ratios[:, :1]))


def robust_shares(costs, tail: float = 0.0, normalise: bool = True, weights=None) -> np.ndarray:
    """Shares ``x >= 0``, ``sum x = 1``, minimising the mean (``tail = 0``) or the CVaR at level ``tail`` of
    ``max_i costs[s, i] x_i`` over the scenario rows ``s`` of ``costs`` (> 0, shape (S, n)), each row first
    divided by its median unless ``normalise`` is false. ``weights`` (>= 0, summing to 1; mean only) are the
    scenarios' probabilities, equal by default."""
    costs = np.asarray(costs, dtype=float)
    if costs.ndim != 2 or costs.shape[0] < 1 or np.any(~np.isfinite(costs)) or np.any(costs <= 0):
        raise ValueError("costs: must be a non-empty (scenarios, workers) array of finite values > 0")
    if not 0.0 <= tail < 1.0:
        raise ValueError(f"tail: must be in [0, 1), got {tail}")
    if weights is not None:
        weights = np.asarray(weights, dtype=float)
        if weights.shape != costs.shape[:1] or np.any(~(weights >= 0)) or abs(weights.sum() - 1.0) > 1e-9 or tail:
            raise ValueError("weights: one probability >= 0 per scenario, summing to 1, with tail = 0")
    if normalise:
        costs = costs / np.median(costs, axis=1, keepdims=True)
    if same_up_to_scale(costs):
        inverse = 1.0 / costs[0]
        return inverse / inverse.sum()
    return _solve_lp(costs, tail, weights)


def new_highs():
    """A silent HiGHS solver (:func:`primaldual.backends.highs.quiet_highs`) on the default thread scheduler."""
    size_highs_threads(None)  # HiGHS keeps one thread scheduler per process (see primaldual/backends/solvers.py)
    return quiet_highs()


def _solve_lp(costs: np.ndarray, tail: float, weights=None) -> np.ndarray:
    import highspy

    scenarios, n = costs.shape
    cvar = tail > 0.0
    # Columns: x (n), tau (S), and for the CVaR eta (1, free) and u (S).
    tau0, eta, u0 = n, n + scenarios, n + scenarios + 1
    columns = n + scenarios + (1 + scenarios if cvar else 0)
    objective = np.zeros(columns)
    if cvar:
        objective[eta] = 1.0
        objective[u0:] = 1.0 / ((1.0 - tail) * scenarios)
    else:
        objective[tau0:] = 1.0 / scenarios if weights is None else weights
    lower = np.zeros(columns)
    upper = np.full(columns, highspy.kHighsInf)
    upper[:n] = 1.0
    if cvar:
        lower[eta] = -highspy.kHighsInf
    # Row (s, i): tau_s - c[s, i] x_i >= 0; then, for the CVaR, u_s - tau_s + eta >= 0; last, sum_i x_i = 1.
    pairs = np.stack([tau0 + np.repeat(np.arange(scenarios), n), np.tile(np.arange(n), scenarios)], axis=1)
    blocks_index = [pairs.ravel()]
    blocks_value = [np.stack([np.ones(scenarios * n), -costs.ravel()], axis=1).ravel()]
    widths = [np.full(scenarios * n, 2)]
    if cvar:
        blocks_index.append(np.stack([u0 + np.arange(scenarios), tau0 + np.arange(scenarios),
                                      np.full(scenarios, eta)], axis=1).ravel())
        blocks_value.append(np.tile([1.0, -1.0, 1.0], scenarios))
        widths.append(np.full(scenarios, 3))
    blocks_index.append(np.arange(n))
    blocks_value.append(np.ones(n))
    widths.append(np.array([n]))
    indices = np.concatenate(blocks_index).astype(np.int32)
    values = np.concatenate(blocks_value)
    starts = np.concatenate([[0], np.cumsum(np.concatenate(widths))[:-1]]).astype(np.int32)
    rows = len(starts)
    row_lower = np.zeros(rows)
    row_upper = np.full(rows, highspy.kHighsInf)
    row_lower[-1] = row_upper[-1] = 1.0
    highs = new_highs()
    highs.addCols(columns, objective, lower, upper, 0, np.array([], dtype=np.int32), np.array([], dtype=np.int32),
                  np.array([]))
    highs.addRows(rows, row_lower, row_upper, len(indices), starts, indices, values)
    highs.run()
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        # x = equal shares is feasible and the objective is bounded below by 0: anything else is a solver failure.
        raise RuntimeError(f"robust batch sizing: HiGHS returned {highs.getModelStatus()}")
    shares = np.clip(np.asarray(highs.getSolution().col_value[:n], dtype=float), 0.0, None)
    return shares / shares.sum()


class ScenarioLp:
    """The LP above with ``window`` scenario slots (a slot not yet filled has ``e = 0``: ``tau_s >= 0``)."""

    def __init__(self, n_workers: int, window: int):
        import highspy

        self.n, self.window, self.filled, self.next_slot = n_workers, window, 0, 0
        self.highs = new_highs()
        self.highs.setOptionValue("presolve", "off")  # presolve would discard the basis kept for warm starts
        n, columns = n_workers, n_workers + window
        inf = highspy.kHighsInf
        self.highs.addCols(columns, np.zeros(columns), np.zeros(columns), np.full(columns, inf), 0,
                           np.array([], dtype=np.int32), np.array([], dtype=np.int32), np.array([]))
        # Row (s, i) holds tau_s (coefficient 1) and y_i (coefficient -e[s, i], 0 until the slot is filled).
        rows = window * n
        slot_of_row = np.repeat(np.arange(window), n)
        indices = np.stack([n + slot_of_row, np.tile(np.arange(n), window)], axis=1).ravel().astype(np.int32)
        values = np.tile([1.0, 0.0], rows)
        self.highs.addRows(rows, np.zeros(rows), np.full(rows, inf), 2 * rows,
                           np.arange(0, 2 * rows, 2, dtype=np.int32), indices, values)
        self.highs.addRows(1, np.ones(1), np.ones(1), n, np.zeros(1, dtype=np.int32),
                           np.arange(n, dtype=np.int32), np.ones(n))

    def push(self, multipliers: np.ndarray) -> None:
        """Replace the oldest scenario (or fill an empty slot) with ``multipliers`` (> 0, one per worker)."""
        slot = self.next_slot
        for i, value in enumerate(multipliers):
            self.highs.changeCoeff(slot * self.n + i, i, -float(value))
        self.next_slot = (slot + 1) % self.window
        if self.filled < self.window:
            self.filled += 1
            weight = 1.0 / self.filled
            for s in range(self.filled):
                self.highs.changeColCost(self.n + s, weight)

    def solve(self, forecast: np.ndarray) -> np.ndarray:
        """Optimal shares ``x`` (sum 1) for the cost forecast ``f`` and the scenarios pushed so far."""
        import highspy

        for i, value in enumerate(forecast):
            self.highs.changeCoeff(self.window * self.n, i, 1.0 / float(value))
        self.highs.run()
        if self.highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            # y = f / n is feasible and the objective is bounded below by 0: anything else is a solver failure.
            raise RuntimeError(f"robust batch sizing: HiGHS returned {self.highs.getModelStatus()}")
        shares = np.clip(np.asarray(self.highs.getSolution().col_value[:self.n], dtype=float), 0.0, None) / forecast
        return shares / shares.sum()
