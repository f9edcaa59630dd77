"""Scenario-robust predictors: splits that hedge against spikes ([design]).

A point predictor guesses each worker's next speed and the CPU rule splits the global batch in proportion
(:mod:`primaldual.lbbsp.cpu`). When a worker is ~100x slower in single, unforeseeable iterations (the CoV rows
of ``primaldual/lbbsp/data/coefficient_variation.csv`` near their bound), no point guess helps: guessing the
spike misses when it does not come, guessing no spike pays 100x when it does. The robust rule instead takes
recent per-sample cost vectors as equally likely *scenarios* for the coming iteration and chooses the split
that minimises the expected iteration time over them: the scenario LP of :mod:`.robust_lp`, kept between
barriers and re-solved warm (:class:`.robust_lp.ScenarioLp`, a few simplex pivots per barrier). Each
scenario is first divided by its median cost: a slowdown common to all workers does not change the best
split, and without the division an iteration in which everybody was slow would outweigh the others.

:class:`RobustPredictor` (``robust``, the last W cost vectors as scenarios), :class:`RobustChangesPredictor`
(``robust_changes``, the last costs times recent relative changes) and :class:`RobustAroundPredictor` (any
point predictor's forecast times its recent relative errors) expose the rule through the predictor
interface. Their "speeds" are the optimal shares scaled to the total speed just measured, so the CPU rule's
integer rounding (``largest_remainder``: sum exactly X, bounds respected) turns them into batches, and the
``select`` predictor (:mod:`.select`) can choose them by past makespan. When the scenarios are one cost
vector up to scale, the shares are the proportional rule's on the measured speeds (closed form). The rules
only read the barriers already passed (tested in ``tests/lbbsp/test_lbbsp_robust.py``).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from primaldual.lbbsp.predictors.point import LastValuePredictor
from primaldual.lbbsp.predictors.robust_lp import FLOOR_SHARE, ScenarioLp, same_up_to_scale


class _ScenarioPredictor:
    """Shares minimising the expected iteration time over scenarios ``forecast * multipliers[s]`` (the last
    ``window`` multiplier rows, each divided by its median), solved warm by :class:`.robust_lp.ScenarioLp`;
    published as "speeds" so that the CPU rule rounds them (module docstring)."""

    def __init__(self, n_workers: int, window: int):
        self.multipliers: deque = deque(maxlen=window)
        self.program = ScenarioLp(n_workers, window)
        self.shares = None

    def _push(self, multipliers: np.ndarray) -> None:
        multipliers = multipliers / np.median(multipliers)
        self.multipliers.append(multipliers)
        self.program.push(multipliers)

    def _solve(self, forecast: np.ndarray, speed: np.ndarray) -> None:
        if not self.multipliers or same_up_to_scale(np.array(self.multipliers)):
            # One scenario up to scale: the unique optimum is proportional to 1 / cost (closed form, so that
            # solver tolerances cannot move a rounding tie of the proportional rule).
            inverse = 1.0 / (forecast * (self.multipliers[-1] if self.multipliers else 1.0))
            shares = inverse / inverse.sum()
        else:
            shares = self.program.solve(forecast)
        # Scaled to the total speed just measured: only the proportions matter to the CPU rule, and on
        # constant speeds the "prediction" is then the speeds themselves, as for a point predictor.
        self.shares = np.maximum(shares, FLOOR_SHARE) * float(np.sum(speed))

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
        super().__init__(n_workers, LastValuePredictor(n_workers), window)
