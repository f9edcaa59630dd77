"""Per-worker batch-processing time laws T_i(x) (docs/papers.md, LB-BSP, [design]).

Every law in this package is a *convex, non-decreasing, piecewise-linear* function written as the
maximum of affine pieces,

    T_i(x) = max_k ( intercept_seconds[i, k] + seconds_per_sample[i, k] * x ),

which covers both cases of docs/papers.md (LB-BSP, time laws):

* CPU ([reported]: time linear in batch): one piece, ``x / speed`` (+ an optional
  batch-independent overhead);
* GPU ([design] reading of the poster's "pairwise-linear"): a flat piece
  ``flat_seconds`` for small, under-utilising batches and a linear piece ``offset + slope * x``.

The max-of-affine form is what makes the Pyomo model (``primaldual.models.batch_sizing``) an exact
epigraph formulation, and it gives the closed-form inverse ``max_batch_within``
used by the fast exact solver. Workers with fewer pieces are padded by repeating a piece, which
leaves the maximum unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TimeLaws:
    """Time laws of ``n`` workers, vectorised: arrays of shape ``(n, pieces)``.

    ``seconds_per_sample`` must be >= 0 (monotone laws); at least one piece per worker must have a
    positive slope or the law is constant (allowed, but then the worker is never the bottleneck
    beyond its constant).
    """

    intercept_seconds: np.ndarray
    seconds_per_sample: np.ndarray

    def __post_init__(self) -> None:
        intercept = np.atleast_2d(np.asarray(self.intercept_seconds, dtype=float))
        slope = np.atleast_2d(np.asarray(self.seconds_per_sample, dtype=float))
        if intercept.shape != slope.shape:
            raise ValueError(f"intercept and slope shapes differ: {intercept.shape} vs {slope.shape}")
        if np.any(slope < 0) or not np.all(np.isfinite(slope)) or not np.all(np.isfinite(intercept)):
            raise ValueError("time laws must be finite and non-decreasing (slopes >= 0)")
        intercept.setflags(write=False)
        slope.setflags(write=False)
        object.__setattr__(self, "intercept_seconds", intercept)
        object.__setattr__(self, "seconds_per_sample", slope)

    @property
    def n_workers(self) -> int:
        return self.intercept_seconds.shape[0]

    @classmethod
    def linear(cls, speed, overhead_seconds=0.0) -> "TimeLaws":
        """CPU law ``T_i(x) = overhead_i + x / speed_i`` (speed in samples per second)."""
        speed = np.asarray(speed, dtype=float)
        if np.any(speed <= 0):
            raise ValueError("speeds must be > 0")
        overhead = np.broadcast_to(np.asarray(overhead_seconds, dtype=float), speed.shape)
        return cls(overhead[:, None].copy(), (1.0 / speed)[:, None])

    @classmethod
    def flat_then_linear(cls, flat_seconds, offset_seconds, seconds_per_sample) -> "TimeLaws":
        """GPU law ``T_i(x) = max(flat_i, offset_i + slope_i * x)`` (docs/papers.md, LB-BSP)."""
        flat = np.asarray(flat_seconds, dtype=float)
        offset = np.broadcast_to(np.asarray(offset_seconds, dtype=float), flat.shape)
        slope = np.broadcast_to(np.asarray(seconds_per_sample, dtype=float), flat.shape)
        intercept = np.stack([flat, offset], axis=1)
        slopes = np.stack([np.zeros_like(flat), slope], axis=1)
        return cls(intercept, slopes)

    def seconds(self, batch) -> np.ndarray:
        """``T_i(x_i)`` for a vector of batch sizes, one per worker."""
        batch = np.asarray(batch, dtype=float)
        return np.max(self.intercept_seconds + self.seconds_per_sample * batch[:, None], axis=1)

    def seconds_of_worker(self, worker: int, batch) -> np.ndarray:
        """``T_worker(x)`` for an array of candidate batch sizes of one worker."""
        batch = np.asarray(batch, dtype=float)
        return np.max(self.intercept_seconds[worker] + self.seconds_per_sample[worker] * batch[..., None], axis=-1)

    def max_batch_within(self, deadline_seconds: float) -> np.ndarray:
        """Largest real ``x`` with ``T_i(x) <= deadline`` per worker (``-inf`` if none, ``+inf`` if all).

        Exact inverse of a max of affine pieces: every piece must be below the deadline.
        """
        with np.errstate(divide="ignore", invalid="ignore"):
            slack = deadline_seconds - self.intercept_seconds
            bound = np.where(self.seconds_per_sample > 0, slack / self.seconds_per_sample,
                             np.where(slack >= 0, np.inf, -np.inf))
        return np.min(bound, axis=1)

    def scaled(self, factor) -> "TimeLaws":
        """Laws slowed down by ``factor`` per worker (factor 2 = twice as slow): ``factor_i * T_i(x)``."""
        factor = np.asarray(factor, dtype=float).reshape(-1, 1)
        return TimeLaws(self.intercept_seconds * factor, self.seconds_per_sample * factor)

    def shifted(self, seconds) -> "TimeLaws":
        """Laws plus a per-worker constant, e.g. communication time C_i when ``include_comm``."""
        seconds = np.asarray(seconds, dtype=float).reshape(-1, 1)
        return TimeLaws(self.intercept_seconds + seconds, self.seconds_per_sample)

    def marginal_seconds(self) -> np.ndarray:
        """Largest per-sample increment of each worker's law: the steepest slope."""
        return np.max(self.seconds_per_sample, axis=1)
