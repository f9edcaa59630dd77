"""Confidence intervals over seeds, and the paired comparison behind every "A beats B" verdict.

Every figure and verdict of ``primaldual reproduce`` that summarises seeds uses these, so a caption's "95% t
interval" and a verdict's "the interval excludes 0" mean the same computation.

- :func:`t_interval`: the Student-t interval of a mean, ``mean +- t_{0.975, n-1} s / sqrt(n)``. It assumes the
  seeds are independent draws (they are: one seed, one generated instance) and a roughly normal mean; with one
  value it is the point itself (width 0) and says so through ``n``. Cost O(n).
- :func:`paired_advantage`: A's advantage over B on the same instances, as a share of B's mean utility, with the
  t interval of the per-instance differences (pairing removes the instance-to-instance spread that the two
  share). Cost O(n).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: The confidence level of every interval in figures and verdicts.
LEVEL = 0.95


@dataclass(frozen=True)
class MeanInterval:
    """A mean over ``n`` values and its two-sided ``level`` Student-t confidence interval ``[low, high]``."""

    mean: float
    low: float
    high: float
    n: int
    level: float = LEVEL

    def excludes_zero(self) -> bool:
        """Whether 0 lies outside the interval (with one value there is no interval: never)."""
        return self.n > 1 and (self.low > 0 or self.high < 0)


#: ``t_{0.975, df}`` for df = 1..30 (the standard table, six decimals).
_T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
         2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
         2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272)
_Z975 = 1.959963984540054


def t_quantile(n: int) -> float:
    """``t_{0.975, n - 1}``: the half-width of the 95% interval of a mean of ``n >= 2`` values, in standard
    errors. The table above for up to 31 values; beyond, the Cornish-Fisher expansion of the t quantile in
    powers of 1/df (four terms: error < 1e-7 from df = 31 on), so no statistics library is loaded."""
    df = n - 1
    if df < 1:
        raise ValueError("t_quantile: needs at least two values")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    terms = ((z**3 + z) / 4, (5 * z**5 + 16 * z**3 + 3 * z) / 96, (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
             (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160)
    return z + sum(term / df ** (k + 1) for k, term in enumerate(terms))


def t_interval(values: Sequence[float]) -> MeanInterval:
    """The mean of ``values`` and its 95% Student-t interval; a single value is its own (zero-width) interval."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("t_interval: no values")
    mean = float(data.mean())
    if data.size == 1:
        return MeanInterval(mean, mean, mean, 1)
    half = t_quantile(data.size) * float(data.std(ddof=1)) / math.sqrt(data.size)
    return MeanInterval(mean, mean - half, mean + half, int(data.size))


def paired_advantage(a: Sequence[float], b: Sequence[float]) -> MeanInterval:
    """A's mean advantage over B, ``mean(a_k - b_k) / mean(b)``, and its t interval, over paired values (the same
    instance k); relative to B's mean utility so that a margin reads as a share. ``mean(b) = 0`` gives an
    advantage of +inf where A earned something, 0 where neither did."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.size == 0:
        raise ValueError("paired_advantage: a and b must be non-empty and paired")
    scale = float(b.mean())
    if scale <= 0:
        value = math.inf if float(a.mean()) > 0 else 0.0
        return MeanInterval(value, value, value, int(a.size))
    return t_interval((a - b) / scale)


__all__ = ["LEVEL", "MeanInterval", "paired_advantage", "t_interval", "t_quantile"]
