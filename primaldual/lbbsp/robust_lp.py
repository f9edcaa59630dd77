"""The robust rule's linear program kept between barriers and re-solved warm (primaldual/lbbsp/robust.py).

The predictors of :mod:`.robust` all use scenarios of the form ``c[s] = f * e[s]``: a forecast of the
per-sample costs ``f`` (> 0, one per worker, changing at every barrier) times scenario multipliers ``e[s]``
(one new row per barrier, the oldest dropped). Substituting ``y_i = f_i x_i`` gives

    minimise (1/S) sum_s tau_s   subject to   tau_s >= e[s, i] y_i,   sum_i y_i / f_i = 1,   y >= 0,

in which a barrier changes only one scenario's ``n`` rows and the ``n`` coefficients of the last row. The
model is therefore built once and modified in place, and HiGHS's dual simplex restarts from the previous
optimal basis: a few pivots instead of a fresh solve. The optimum is the same as :func:`.robust.robust_shares`
on the costs ``f * e[s]`` (tested in ``tests/lbbsp/test_lbbsp_robust.py``).
"""

from __future__ import annotations

import numpy as np


class ScenarioLp:
    """The LP above with ``window`` scenario slots (a slot not yet filled has ``e = 0``: ``tau_s >= 0``)."""

    def __init__(self, n_workers: int, window: int):
        import highspy

        from primaldual.lbbsp.robust import new_highs

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
