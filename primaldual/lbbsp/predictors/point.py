"""Point speed predictors for the CPU rule (docs/papers.md, LB-BSP, [design]).

Every predictor serves all ``n`` workers at once (vectorised), is fed at each barrier with the
*measured* speeds ``v_i^t = x_i^t / T_i^t`` of the iteration that just ended and the exogenous
readings ``u_i`` (CPU and memory availability in [0, 1]) taken at that barrier -- the "current"
driving factors of docs/papers.md, LB-BSP -- and returns ``v_hat_i^{t+1}``. None of them ever sees a true speed
of an iteration that has not run yet.

* :class:`LastValuePredictor` -- ``v_hat^{t+1} = v^t``.
* :class:`EwmaPredictor` -- exponentially weighted moving average (also the warm-up fallback of the
  learned models, docs/papers.md, LB-BSP).
* :class:`EqualPredictor` -- equal "speeds", i.e. BSP's equal split.
* :class:`ArxPredictor` -- linear ARX over the tapped delay lines
  ``z = (log v^t, ..., log v^{t-d_v+1}, log u^t, ..., log u^{t-d_u+1})`` (speeds relative to the
  window mean), ``log v^{t+1} ~ c + w . z``, fitted by ridge least squares on a sliding window.
* :class:`NarxPredictor` -- NARX: a one-hidden-layer tanh network over the same delay lines
  (docs/papers.md, LB-BSP: ``d_v = d_u = 2``, 10 hidden units, online sliding-window training of 100
  iterations, refit every 10), trained with Adam in numpy.

The predictors for real traces (``sarx``, ``rreg``) are in :mod:`.regression`, the scenario-robust rules in
:mod:`.robust` and :mod:`.hazard`, the validated choice ``select`` in :mod:`.select`, and the name -> class
table in :mod:`.registry`.

Logs make a co-located job's multiplicative slow-down additive, and normalising each worker's speeds
by its window mean makes the learned map the same on every machine, so by default ARX and NARX pool
all workers' windows into one model (``shared=True``; the paper leaves per-worker vs shared open).
Only relative prediction errors matter for the CPU rule (docs/papers.md, LB-BSP). Cost per barrier: O(n)
for the smoothers; a ridge solve on the window (ARX) or a fixed number of Adam steps (NARX) at each refit.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np


# Availability readings can be ~0 (or slightly negative through measurement noise); logs need a floor.
_MIN_AVAILABILITY = 0.02


class LastValuePredictor:
    name = "last"

    def __init__(self, n_workers: int):
        self.last = None

    def observe(self, speed, exogenous=None) -> None:
        self.last = np.asarray(speed, dtype=float).copy()

    def predict(self) -> np.ndarray | None:
        """``None`` until the first observation (callers then keep equal batches, docs/papers.md, LB-BSP)."""
        return None if self.last is None else self.last.copy()


class EwmaPredictor:
    name = "ewma"

    def __init__(self, n_workers: int, smoothing: float = 0.5):
        if not 0 < smoothing <= 1:
            raise ValueError("smoothing must be in (0, 1]")
        self.smoothing = smoothing
        self.level = None

    def observe(self, speed, exogenous=None) -> None:
        speed = np.asarray(speed, dtype=float)
        self.level = speed.copy() if self.level is None else self.level + self.smoothing * (speed - self.level)

    def predict(self) -> np.ndarray | None:
        return None if self.level is None else self.level.copy()


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


@dataclass(frozen=True)
class DelayLines:
    """Orders of the tapped delay lines: ``speed_lags`` = d_v, ``exogenous_lags`` = d_u."""

    speed_lags: int = 2
    exogenous_lags: int = 2


class _WindowedLearner:
    """Sliding-window bookkeeping shared by ARX and NARX: features z^t, targets v^{t+1}."""

    def __init__(self, n_workers: int, delays: DelayLines, history: int, refit_every: int, min_samples: int,
                 smoothing: float):
        self.n_workers = n_workers
        self.delays = delays
        self.refit_every = refit_every
        self.min_samples = min_samples
        self.speeds: deque = deque(maxlen=history + max(delays.speed_lags, delays.exogenous_lags) + 1)
        self.exogenous: deque = deque(maxlen=self.speeds.maxlen)
        self.fallback = EwmaPredictor(n_workers, smoothing)
        self.fitted = False
        self.observations = 0

    def observe(self, speed, exogenous=None) -> None:
        speed = np.asarray(speed, dtype=float)
        exogenous = np.zeros((self.n_workers, 0)) if exogenous is None else np.asarray(exogenous, dtype=float)
        self.speeds.append(speed.copy())
        self.exogenous.append(exogenous.reshape(self.n_workers, -1).copy())
        self.fallback.observe(speed)
        self.observations += 1
        if self._n_pairs() >= self.min_samples and (not self.fitted or self.observations % self.refit_every == 0):
            self._fit()
            self.fitted = True

    def _lags(self) -> int:
        return max(self.delays.speed_lags, self.delays.exogenous_lags)

    def _n_pairs(self) -> int:
        return max(0, len(self.speeds) - self._lags())

    def _scale(self) -> np.ndarray:
        return np.mean(np.asarray(self.speeds), axis=0)

    def _feature_block(self, speeds: np.ndarray, exogenous: np.ndarray, ends: slice, scale: np.ndarray) -> np.ndarray:
        """Tapped delay lines z^e for every time index e in ``ends``: shape (n, p, d).

        z^e = [log(v^e / scale), ..., log(v^{e-d_v+1} / scale), log u^e, ..., log u^{e-d_u+1}]:
        logs turn the multiplicative slow-down of a co-located job into an additive feature.
        """
        start, stop = ends.start, ends.stop
        parts = [np.log(speeds[start - k:stop - k] / scale)[:, :, None] for k in range(self.delays.speed_lags)]
        parts += [np.log(np.clip(exogenous[start - k:stop - k], _MIN_AVAILABILITY, None))
                  for k in range(self.delays.exogenous_lags)]
        return np.concatenate(parts, axis=2).transpose(1, 0, 2)

    def _dataset(self):
        speeds = np.asarray(self.speeds)          # (time, n)
        exogenous = np.asarray(self.exogenous)    # (time, n, m)
        scale = self._scale()
        lags = self._lags()
        features = self._feature_block(speeds, exogenous, slice(lags - 1, len(speeds) - 1), scale)
        targets = np.log(speeds[lags:] / scale).T                                                  # (n, p)
        return features, targets, scale

    def predict(self) -> np.ndarray | None:
        if not self.fitted:
            return self.fallback.predict()
        speeds = np.asarray(self.speeds)
        scale = self._scale()
        last = len(speeds) - 1
        features = self._feature_block(speeds, np.asarray(self.exogenous), slice(last, last + 1), scale)[:, 0, :]
        log_relative = self._predict_relative(features)
        # A freshly refitted model can extrapolate wildly on an unseen regime; a speed cannot
        # plausibly jump beyond these factors of its window mean in one iteration.
        return scale * np.exp(np.clip(log_relative, -3.0, 1.5))

    def _fit(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict_relative(self, features: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


def fit_ridge(features: np.ndarray, targets: np.ndarray, ridge: float) -> np.ndarray:
    """Per-worker ridge least squares on ``[1, z]``: features (n, p, d), targets (n, p) -> (n, d + 1)."""
    n, p, d = features.shape
    design = np.concatenate([np.ones((n, p, 1)), features], axis=2)
    gram = np.einsum("npi,npj->nij", design, design) + ridge * np.eye(d + 1)[None]
    gram[:, 0, 0] -= ridge  # do not shrink the intercept
    rhs = np.einsum("npi,np->ni", design, targets)
    return np.linalg.solve(gram, rhs[..., None])[..., 0]


class ArxPredictor(_WindowedLearner):
    """Linear ARX fitted by least squares on the last ``history`` iterations, refit every ``refit_every``.

    ``shared=True`` (default) pools all workers' windows into one regression (see :class:`NarxPredictor`).
    """

    name = "arx"

    def __init__(self, n_workers: int, delays: DelayLines = DelayLines(), history: int = 100, refit_every: int = 5,
                 min_samples: int = 12, ridge: float = 1e-3, smoothing: float = 0.5, shared: bool = True):
        super().__init__(n_workers, delays, history, refit_every, min_samples, smoothing)
        self.ridge = ridge
        self.shared = shared
        self.coefficients = None

    def _fit(self) -> None:
        features, targets, _ = self._dataset()
        if self.shared:
            n, p, d = features.shape
            shared = fit_ridge(features.reshape(1, n * p, d), targets.reshape(1, n * p), self.ridge)
            self.coefficients = np.repeat(shared, n, axis=0)
        else:
            self.coefficients = fit_ridge(features, targets, self.ridge)

    def _predict_relative(self, features: np.ndarray) -> np.ndarray:
        return self.coefficients[:, 0] + np.einsum("nd,nd->n", self.coefficients[:, 1:], features)


@dataclass(frozen=True)
class NarxWeights:
    """One tanh hidden layer per worker: (n, h, d), (n, h), (n, h), (n,)."""

    hidden_weight: np.ndarray
    hidden_bias: np.ndarray
    output_weight: np.ndarray
    output_bias: np.ndarray


def narx_forward(weights: NarxWeights, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Outputs (n, p) and hidden activations (n, p, h) for features (n, p, d)."""
    # Batched matmul rather than einsum: this runs a few thousand times per simulated run.
    hidden = np.tanh(features @ weights.hidden_weight.transpose(0, 2, 1) + weights.hidden_bias[:, None, :])
    output = (hidden @ weights.output_weight[:, :, None])[:, :, 0] + weights.output_bias[:, None]
    return output, hidden


def narx_gradients(weights: NarxWeights, features, targets, weight_decay: float) -> tuple[NarxWeights, np.ndarray]:
    """Gradients of the per-worker mean squared error (+ L2 on the weights); also the losses (n,)."""
    output, hidden = narx_forward(weights, features)
    p = features.shape[1]
    error = output - targets                                    # (n, p)
    loss = np.mean(error ** 2, axis=1)
    d_output = 2.0 * error / p
    grad_output_weight = (d_output[:, None, :] @ hidden)[:, 0, :] + weight_decay * weights.output_weight
    grad_output_bias = d_output.sum(axis=1)
    d_hidden = d_output[:, :, None] * weights.output_weight[:, None, :] * (1.0 - hidden ** 2)  # (n, p, h)
    grad_hidden_weight = d_hidden.transpose(0, 2, 1) @ features + weight_decay * weights.hidden_weight
    grad_hidden_bias = d_hidden.sum(axis=1)
    return NarxWeights(grad_hidden_weight, grad_hidden_bias, grad_output_weight, grad_output_bias), loss


class NarxPredictor(_WindowedLearner):
    """NARX network (docs/papers.md, LB-BSP, [design] configuration), trained online with Adam.

    The first fit runs ``initial_steps`` Adam steps from a seeded random initialisation; each refit
    warm-starts from the current weights and runs ``refit_steps`` more on the current window.
    ``shared=True`` (default) pools the windows of all workers into one model: the map from
    (relative speed history, availability) to relative speed is the same physics on every machine,
    and pooling gives the model n times more regime changes to learn from than one worker sees.
    ``shared=False`` trains one model per worker.
    """

    name = "narx"

    def __init__(self, n_workers: int, delays: DelayLines = DelayLines(), hidden_units: int = 10,
                 history: int = 100, refit_every: int = 10, min_samples: int = 20, initial_steps: int = 200,
                 refit_steps: int = 25, learning_rate: float = 0.01, weight_decay: float = 1e-4,
                 smoothing: float = 0.5, shared: bool = True, seed: int = 0):
        super().__init__(n_workers, delays, history, refit_every, min_samples, smoothing)
        self.hidden_units = hidden_units
        self.initial_steps = initial_steps
        self.refit_steps = refit_steps
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.shared = shared
        self.rng = np.random.default_rng(seed)
        self.weights: NarxWeights | None = None
        self._moments = None
        self._step = 0

    def _initial_weights(self, models: int, inputs: int) -> NarxWeights:
        h = self.hidden_units
        return NarxWeights(
            self.rng.normal(0.0, 1.0 / np.sqrt(inputs), size=(models, h, inputs)),
            np.zeros((models, h)),
            self.rng.normal(0.0, 1.0 / np.sqrt(h), size=(models, h)),
            np.zeros(models),
        )

    def _fit(self) -> None:
        features, targets, _ = self._dataset()
        if self.shared:
            n, p, d = features.shape
            features, targets = features.reshape(1, n * p, d), targets.reshape(1, n * p)
        steps = self.refit_steps
        if self.weights is None:
            self.weights = self._initial_weights(features.shape[0], features.shape[2])
            self._moments = [(np.zeros_like(w), np.zeros_like(w)) for w in _fields(self.weights)]
            steps = self.initial_steps
        beta1, beta2, eps = 0.9, 0.999, 1e-8
        for _ in range(steps):
            gradients, _ = narx_gradients(self.weights, features, targets, self.weight_decay)
            self._step += 1
            updated = []
            for index, (weight, gradient) in enumerate(zip(_fields(self.weights), _fields(gradients))):
                first, second = self._moments[index]
                first = beta1 * first + (1 - beta1) * gradient
                second = beta2 * second + (1 - beta2) * gradient ** 2
                self._moments[index] = (first, second)
                corrected = (first / (1 - beta1 ** self._step)) / (np.sqrt(second / (1 - beta2 ** self._step)) + eps)
                updated.append(weight - self.learning_rate * corrected)
            self.weights = NarxWeights(*updated)

    def _predict_relative(self, features: np.ndarray) -> np.ndarray:
        if self.shared:
            output, _ = narx_forward(self.weights, features[None, :, :])
            return output[0]
        output, _ = narx_forward(self.weights, features[:, None, :])
        return output[:, 0]


def _fields(weights: NarxWeights) -> list[np.ndarray]:
    return [weights.hidden_weight, weights.hidden_bias, weights.output_weight, weights.output_bias]
