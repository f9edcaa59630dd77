"""Scenario-robust batch sizing: hedge against workers that spike, instead of foreseeing the spikes ([design]).

A point predictor guesses each worker's next speed and the CPU rule splits the global batch in proportion
(:mod:`.cpu`). When a worker is ~100x slower in single, unforeseeable iterations (the CoV rows of
``primaldual/lbbsp/data/coefficient_variation.csv`` near their bound), no point guess helps: guessing the
spike misses when it does not come, guessing no spike pays 100x when it does. The robust rule instead takes
the last ``W`` per-sample cost vectors the barriers measured as equally likely *scenarios* for the coming
iteration and chooses the split that minimises the expected iteration time over them (or its conditional
value at risk, the mean of the worst ``1 - tail`` share of scenarios). For the linear law of
``primaldual/lbbsp/replay.py`` the iteration time of scenario ``s`` is ``a + max_i c[s, i] x_i``, a max of
affine functions of the batches, so the problem is the linear program

    minimise   (1/S) sum_s tau_s
    subject to tau_s >= c[s, i] x_i   (every s, i),    sum_i x_i = 1,    x >= 0,

solved exactly by HiGHS (the common overhead ``a`` and the global batch only shift and scale it). With
``tail = beta > 0`` the objective is ``eta + sum_s u_s / ((1 - beta) S)`` with ``u_s >= tau_s - eta``,
``u >= 0`` (Rockafellar-Uryasev). Each scenario is first divided by its median cost: a slowdown common to
all workers does not change the best split, and without the division an iteration in which everybody was
slow would outweigh the others.

Properties (tested in ``tests/lbbsp/test_lbbsp_robust.py``): when every scenario is the same cost vector up
to a factor, the unique optimum is ``x proportional to 1/c``, i.e. the proportional rule on the measured
speeds (returned in closed form, so that solver tolerances cannot move a rounding tie); the rule only reads
the barriers already passed. :class:`RobustPredictor` (``robust``, the last W cost vectors as scenarios),
:class:`RobustChangesPredictor` (``robust_changes``, the last costs times recent relative changes) and
:class:`RobustAroundPredictor` (any point predictor's forecast times its recent relative errors) expose the
rule through the predictor interface. Their "speeds" are the optimal shares scaled to the total speed just
measured, so the CPU rule's integer rounding (``largest_remainder``: sum exactly X, bounds respected) turns
them into batches, and the ``select`` predictor (:mod:`.robust_predictors`) can choose them by past
makespan.
"""

from __future__ import annotations

from collections import deque

import numpy as np

# A worker the LP gives nothing still gets min_batch from the CPU rule, which needs speeds > 0.
_FLOOR_SHARE = 1e-9


def _same_up_to_scale(costs: np.ndarray) -> bool:
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
    if _same_up_to_scale(costs):
        inverse = 1.0 / costs[0]
        return inverse / inverse.sum()
    return _solve_lp(costs, tail, weights)


def new_highs():
    """A silent HiGHS solver (:func:`primaldual.backends.highs.quiet_highs`) on the default thread scheduler."""
    from primaldual.backends.highs import quiet_highs
    from primaldual.backends.highs import size_highs_threads

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


class _ScenarioPredictor:
    """Shares minimising the expected iteration time over scenarios ``forecast * multipliers[s]`` (the last
    ``window`` multiplier rows, each divided by its median), solved warm by :class:`.robust_lp.ScenarioLp`;
    published as "speeds" so that the CPU rule rounds them (module docstring)."""

    def __init__(self, n_workers: int, window: int):
        from primaldual.lbbsp.robust_lp import ScenarioLp

        self.multipliers: deque = deque(maxlen=window)
        self.program = ScenarioLp(n_workers, window)
        self.shares = None

    def _push(self, multipliers: np.ndarray) -> None:
        multipliers = multipliers / np.median(multipliers)
        self.multipliers.append(multipliers)
        self.program.push(multipliers)

    def _solve(self, forecast: np.ndarray, speed: np.ndarray) -> None:
        if not self.multipliers or _same_up_to_scale(np.array(self.multipliers)):
            # One scenario up to scale: the unique optimum is proportional to 1 / cost (closed form, so that
            # solver tolerances cannot move a rounding tie of the proportional rule).
            inverse = 1.0 / (forecast * (self.multipliers[-1] if self.multipliers else 1.0))
            shares = inverse / inverse.sum()
        else:
            shares = self.program.solve(forecast)
        # Scaled to the total speed just measured: only the proportions matter to the CPU rule, and on
        # constant speeds the "prediction" is then the speeds themselves, as for a point predictor.
        self.shares = np.maximum(shares, _FLOOR_SHARE) * float(np.sum(speed))

    def predict(self) -> np.ndarray | None:
        return None if self.shares is None else self.shares.copy()


class RobustPredictor(_ScenarioPredictor):
    """``robust``: the scenarios are the last ``window`` measured cost vectors themselves; a worker that was
    slow in some of them gets less work in every iteration."""

    name = "robust"

    def __init__(self, n_workers: int, window: int = 5):
        super().__init__(n_workers, window)
        self.ones = np.ones(n_workers)

    def observe(self, speed, exogenous=None) -> None:
        speed = np.asarray(speed, dtype=float)
        self._push(1.0 / speed)
        self._solve(self.ones, speed)


class RobustAroundPredictor(_ScenarioPredictor):
    """``robust_around``: the robust rule around a point predictor. The scenarios are the base predictor's
    latest cost forecast times its last ``window`` relative errors ``c^s / c_hat^s`` (per worker), so the
    split hedges as much as that predictor has recently been wrong."""

    name = "robust_around"

    def __init__(self, n_workers: int, base, window: int = 20):
        super().__init__(n_workers, window)
        self.base, self.forecast = base, None

    def observe(self, speed, exogenous=None) -> None:
        speed = np.asarray(speed, dtype=float)
        cost = 1.0 / speed
        if self.forecast is not None:
            self._push(cost / self.forecast)
        self.base.observe(speed, exogenous)
        guess = self.base.predict()
        self.forecast = None if guess is None else 1.0 / guess
        if self.forecast is not None:
            self._solve(self.forecast, speed)


class RobustChangesPredictor(RobustAroundPredictor):
    """``robust_changes``: the robust rule around the last value: the latest costs perturbed by the last
    ``window`` per-worker relative changes ``c^s / c^{s-1}``."""

    name = "robust_changes"

    def __init__(self, n_workers: int, window: int = 10):
        from primaldual.lbbsp.predictors import LastValuePredictor

        super().__init__(n_workers, LastValuePredictor(n_workers), window)


class EqualPredictor:
    """Equal "speeds", i.e. BSP's equal split (``equal``): when no rule beat it on the recent past (i.i.d.
    noise), ``select`` falls back to it rather than chase noise."""

    name = "equal"

    def __init__(self, n_workers: int):
        self.n_workers = n_workers

    def observe(self, speed, exogenous=None) -> None:
        pass

    def predict(self) -> np.ndarray:
        return np.ones(self.n_workers)
