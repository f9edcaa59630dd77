"""Predictors for real traces: a state-aware ARX and an online validated choice ([design]).

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
* :class:`ValidatedPredictor` (``select``): runs a bank (last value, EWMA 0.5 and 0.2, ``sarx``, and the
  scenario-robust rules of :mod:`.robust`: over the last 5 measured cost vectors, around the last value
  with its last 10 relative changes, around ``sarx`` with its last 40 relative errors, the learned moves and
  onsets of the slowness of :mod:`.hazard`, and the equal split)
  and at each barrier uses the member whose predictions would have given the smallest total *makespan*
  over the last ``window`` iterations. For the linear law the makespan of an allocation proportional to a
  prediction ``p``, on observed speeds ``v``, is ``max_i (p_i / v_i) / sum_j p_j`` times the global batch
  (docs/papers.md, LB-BSP: only relative errors matter), so it is the criterion the CPU rule pays for,
  computable from what the barrier measured. Absolute makespans weigh a long iteration more, as the mean
  iteration time does. A level shift or a random walk makes ``last`` win; stationary noise makes the
  smoothers win; workers that spike in some iterations make the robust rules win; spike episodes whose
  slow worker moves make ``hazard`` win; i.i.d. noise makes the equal split win (proofs/lbbsp.md section 2).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from primaldual.lbbsp.predictors import EwmaPredictor, LastValuePredictor


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
        # Clip as the learned predictors of predictors.py do: a fresh fit must not extrapolate wildly.
        return np.exp(level + np.clip(features @ self.coefficients, -3.0, 1.5))


def makespan_ratio(predicted: np.ndarray, speed: np.ndarray) -> float:
    """Makespan of the allocation proportional to ``predicted`` over the optimum, on true ``speed``."""
    return float(np.max(predicted / speed) * speed.sum() / predicted.sum())


class ValidatedPredictor:
    name = "select"

    def __init__(self, n_workers: int, window: int = 40, robust: bool = True, absolute: bool = True):
        from primaldual.lbbsp.robust import EqualPredictor, RobustAroundPredictor, RobustChangesPredictor, RobustPredictor

        self.members = [LastValuePredictor(n_workers), EwmaPredictor(n_workers, 0.5),
                        EwmaPredictor(n_workers, 0.2), StateArxPredictor(n_workers)]
        if robust:
            from primaldual.lbbsp.hazard import SwapHazardPredictor

            self.members += [RobustPredictor(n_workers, 5), RobustChangesPredictor(n_workers, 10),
                             RobustAroundPredictor(n_workers, StateArxPredictor(n_workers), 40),
                             SwapHazardPredictor(n_workers), EqualPredictor(n_workers)]
        self.absolute = absolute
        self.scores = [deque(maxlen=window) for _ in self.members]
        self.predictions = [None] * len(self.members)
        self.chosen = 1  # EWMA 0.5 until there is a score to compare

    def observe(self, speed, exogenous=None) -> None:
        speed = np.asarray(speed, dtype=float)
        for index, member in enumerate(self.members):
            if self.predictions[index] is not None:
                ratio = makespan_ratio(self.predictions[index], speed)
                # The optimum's makespan is proportional to 1 / sum(speed): scoring absolute makespans
                # weighs each past iteration by its length, as the mean iteration time does.
                self.scores[index].append(ratio / speed.sum() if self.absolute else ratio)
            member.observe(speed, exogenous)
            self.predictions[index] = member.predict()
        if all(self.scores):
            # Ties go to the earlier (simpler) member: np.argmin returns the first minimum.
            self.chosen = int(np.argmin([np.mean(s) for s in self.scores]))

    def predict(self) -> np.ndarray | None:
        chosen = self.predictions[self.chosen]
        return None if chosen is None else chosen.copy()


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
