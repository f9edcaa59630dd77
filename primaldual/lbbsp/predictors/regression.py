"""Point predictors for real traces and for readings: two ridge regressions refitted at every barrier ([design]).

Measured worker speeds in real logs (the PAI traces of ``primaldual/lbbsp/data``) are not a smooth
signal plus white noise: a logged time is often *repeated* at the next logged iteration (41% of the
consecutive pairs in job 1 are exactly equal) and then replaced by a fresh draw; after a fresh value
the next one repeats with probability ~0.55, after a repeat with ~0.2. A forecaster that knows which
of the two states a worker is in weighs its last value differently.

* :class:`StateArxPredictor` (``sarx``): per worker a slow level ``L`` (EWMA of log speed) and a pooled
  linear model of ``log v^{t+1} - L^t`` on ``(log v^t - L^t, log v^{t-1} - L^t, 1)``, with separate
  coefficients when the last value is fresh (``v^t != v^{t-1}``) or stale (equal). It is fitted by ridge
  least squares on a sliding window, refitted at every barrier (6 coefficients: cheap). On a series
  without repeats it is a plain ARX(2) around a moving level, so it also tracks random walks.
* :class:`ReadingsRegressionPredictor` (``rreg``): the NARX inputs (docs/papers.md, LB-BSP) fitted linearly,
  with one level per worker and coefficients shared by all workers.

Both clip the predicted log change as the learned predictors of :mod:`.point` do. Cost per barrier: one
ridge solve of a ``(window * n) x k`` design (``k = 6`` for ``sarx``, ``n + 2 m + 1`` for ``rreg`` with ``m``
readings).
"""

from __future__ import annotations

from collections import deque

import numpy as np


class StateArxPredictor:
    name = "sarx"

    def __init__(self, n_workers: int, history: int = 100, level_smoothing: float = 0.2, ridge: float = 1e-2,
                 min_pairs: int = 10):
        self.level_smoothing = level_smoothing
        self.ridge = ridge
        self.min_pairs = min_pairs
        self.level = None
        self.log_speeds: deque = deque(maxlen=2)
        self.pairs: deque = deque(maxlen=history)  # (features (n, 6), targets (n,)) per barrier
        self.pending = None                         # features of the last barrier, waiting for their target
        self.coefficients = None

    def _features(self) -> np.ndarray:
        last, previous = self.log_speeds[-1], self.log_speeds[0]
        stale = (last == previous).astype(float)[:, None]
        base = np.stack([last - self.level, previous - self.level, np.ones_like(last)], axis=1)
        return np.concatenate([base * (1.0 - stale), base * stale], axis=1)

    def observe(self, speed, exogenous=None) -> None:
        log_speed = np.log(np.asarray(speed, dtype=float))
        if self.pending is not None:
            features, level = self.pending
            self.pairs.append((features, log_speed - level))
        self.level = log_speed.copy() if self.level is None else \
            self.level + self.level_smoothing * (log_speed - self.level)
        self.log_speeds.append(log_speed)
        self.pending = (self._features(), self.level.copy()) if len(self.log_speeds) == 2 else None
        if len(self.pairs) >= self.min_pairs:
            design = np.concatenate([f for f, _ in self.pairs])
            target = np.concatenate([y for _, y in self.pairs])
            gram = design.T @ design + self.ridge * np.eye(design.shape[1])
            self.coefficients = np.linalg.solve(gram, design.T @ target)

    def predict(self) -> np.ndarray | None:
        if self.level is None:
            return None
        if self.coefficients is None or self.pending is None:
            return np.exp(self.log_speeds[-1])
        features, level = self.pending
        # Clip as the learned predictors of point.py do: a fresh fit must not extrapolate wildly.
        return np.exp(level + np.clip(features @ self.coefficients, -3.0, 1.5))


class ReadingsRegressionPredictor:
    """Speed from the barrier's CPU/memory readings (``rreg``): the NARX inputs (docs/papers.md, LB-BSP), fitted
    linearly.

    ``log v_i^{t+1} = beta_i + gamma . (log u_i, (log u_i)^2, log v_i^t - beta_i)`` with one intercept
    ``beta_i`` per worker (its dedicated speed: machines differ) and coefficients ``gamma`` shared by all
    workers (the slow-down a given availability causes is the same physics everywhere), fitted by ridge
    least squares on the last ``history`` barriers and refitted at each. ``u_i`` are the readings at the
    barrier that starts the iteration, denoised: an EWMA (``reading_smoothing``) that restarts from the raw
    reading when any component moves by more than ``reading_jump`` (a co-located job arrived or left, not
    noise; 0.12 is four times the simulator's 0.03 reading noise). Without readings (recorded traces) it is
    an AR(1) around each worker's fitted level.
    """

    name = "rreg"

    def __init__(self, n_workers: int, history: int = 100, ridge: float = 1e-3, min_pairs: int = 10,
                 reading_smoothing: float = 0.3, reading_jump: float = 0.12):
        self.n_workers = n_workers
        self.pairs: deque = deque(maxlen=history)
        self.ridge, self.min_pairs = ridge, min_pairs
        self.reading_smoothing, self.reading_jump = reading_smoothing, reading_jump
        self.readings = None
        self.pending = None
        self.last = None
        self.coefficients = None

    def _denoise(self, exogenous) -> np.ndarray:
        raw = np.zeros((self.n_workers, 0)) if exogenous is None else \
            np.asarray(exogenous, dtype=float).reshape(self.n_workers, -1)
        if self.readings is None or self.readings.shape != raw.shape:
            self.readings = raw.copy()
        else:
            jump = np.abs(raw - self.readings) > self.reading_jump
            self.readings = np.where(jump, raw, self.readings + self.reading_smoothing * (raw - self.readings))
        return self.readings

    def _features(self, readings: np.ndarray, relative: np.ndarray) -> np.ndarray:
        log_readings = np.log(np.clip(readings, 0.02, None))  # availability ~0 would send the log to -inf
        return np.concatenate([log_readings, log_readings ** 2, relative[:, None]], axis=1)

    def observe(self, speed, exogenous=None) -> None:
        log_speed = np.log(np.asarray(speed, dtype=float))
        if self.pending is not None:
            self.pairs.append((self.pending, log_speed))
        readings = self._denoise(exogenous)
        relative = log_speed - (self.coefficients[:self.n_workers] if self.coefficients is not None else log_speed)
        self.pending, self.last = self._features(readings, relative), log_speed
        if len(self.pairs) >= self.min_pairs:
            n = self.n_workers
            features = np.concatenate([f for f, _ in self.pairs])
            design = np.concatenate([np.tile(np.eye(n), (len(self.pairs), 1)), features], axis=1)
            target = np.concatenate([y for _, y in self.pairs])
            penalty = self.ridge * np.eye(design.shape[1])
            penalty[:n, :n] = 0.0  # do not shrink the per-worker levels
            self.coefficients = np.linalg.solve(design.T @ design + penalty, design.T @ target)

    def predict(self) -> np.ndarray | None:
        if self.last is None:
            return None
        if self.coefficients is None:
            return np.exp(self.last)
        n = self.n_workers
        log_relative = self.pending @ self.coefficients[n:]
        return np.exp(self.coefficients[:n] + np.clip(log_relative, -3.0, 1.5))
