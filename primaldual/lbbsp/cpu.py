"""LB-BSP's CPU-cluster rule (docs/papers.md, LB-BSP, [design]): batches proportional to predicted speeds.

For linear laws ``T_i(x) = x / v_i`` the min-max optimum of the continuous problem equalises finish
times, ``x_i* = X v_i / sum_j v_j`` (docs/papers.md, LB-BSP). With bounds ``[min_batch, M_i]`` the continuous
optimum is the water-filling ``x_i = clip(lambda v_i, min_batch, M_i)`` with the scalar ``lambda``
chosen so that the sum is X ("clamp violators and re-solve for the rest", [design]). Integer batches
come from largest-remainder rounding (docs/papers.md, LB-BSP), ties to the faster worker and then to the lower
index, so ``sum x_i = X`` holds exactly and the rule is deterministic.
"""

from __future__ import annotations

import numpy as np

from primaldual.core.errors import InputError

# Shares are quantised to this many decimals before rounding, so that speeds that differ only by
# floating-point noise (e.g. after scaling all speeds by a constant) round the same way.
_SHARE_DECIMALS = 9


def _as_bounds(n: int, global_batch: int, min_batch: int, memory_cap) -> tuple[np.ndarray, np.ndarray]:
    lower = np.full(n, float(min_batch))
    upper = np.full(n, float(global_batch)) if memory_cap is None else np.asarray(memory_cap, dtype=float)
    if upper.shape != (n,):
        raise InputError(f"memory_cap: must have one entry per worker ({n}), got shape {upper.shape}")
    if lower.sum() > global_batch or upper.sum() < global_batch or np.any(upper < lower):
        raise InputError(f"global_batch: {global_batch} cannot be split within [min_batch, memory_cap]")
    return lower, upper


def proportional_shares(speed, global_batch: int, min_batch: int = 1, memory_cap=None) -> np.ndarray:
    """Continuous shares ``clip(lambda v_i, min_batch, M_i)`` summing to ``global_batch``.

    ``lambda`` solves the piecewise-linear, non-decreasing equation ``sum_i clip(lambda v_i) = X``
    exactly: the breakpoints ``min_batch / v_i`` and ``M_i / v_i`` are sorted and the segment
    containing X is interpolated.
    """
    speed = np.asarray(speed, dtype=float)
    if speed.ndim != 1 or speed.size == 0 or np.any(~np.isfinite(speed)) or np.any(speed <= 0):
        raise InputError("speed: must be a non-empty vector of finite values > 0")
    lower, upper = _as_bounds(speed.size, global_batch, min_batch, memory_cap)

    def total(scale: float) -> float:
        return float(np.clip(scale * speed, lower, upper).sum())

    breakpoints = np.unique(np.concatenate([lower / speed, upper / speed]))
    # Binary search for the first breakpoint whose total reaches X: O(n log n) overall.
    low, high = 0, len(breakpoints) - 1
    if total(breakpoints[0]) >= global_batch:
        high = 0
    while high - low > 1:
        middle_index = (low + high) // 2
        if total(breakpoints[middle_index]) >= global_batch:
            high = middle_index
        else:
            low = middle_index
    if high == 0:
        scale = breakpoints[0]
    else:
        left, right = breakpoints[high - 1], breakpoints[high]
        middle = 0.5 * (left + right) * speed  # classify at the midpoint: the end points are rounding-fragile
        free = (middle > lower) & (middle < upper)
        rate = float(speed[free].sum())
        scale = left + (global_batch - total(left)) / rate if rate > 0 else right
    shares = np.clip(scale * speed, lower, upper)
    # Put the floating-point residue on the free workers so the shares sum to X exactly.
    free = (shares > lower) & (shares < upper)
    if np.any(free):
        shares[free] *= (global_batch - shares[~free].sum()) / shares[free].sum()
    return shares


def largest_remainder(shares, speed=None, upper=None) -> np.ndarray:
    """Round real ``shares`` (whose sum is an integer) to integers with the same sum.

    Everybody gets ``floor``; the missing units go to the largest remainders, ties to the larger
    ``speed`` (keeps the rule monotone in speed) and then to the lower index (determinism). A worker
    already at its ``upper`` bound never takes a missing unit, even if floating-point noise put its
    share a hair above the bound.
    """
    shares = np.round(np.asarray(shares, dtype=float), _SHARE_DECIMALS)
    target = int(round(float(shares.sum())))
    base = np.floor(shares).astype(np.int64)
    remainder = shares - base
    missing = target - int(base.sum())
    speed = np.zeros_like(shares) if speed is None else np.asarray(speed, dtype=float)
    if upper is not None:
        remainder = np.where(base >= np.asarray(upper), -np.inf, remainder)  # capped workers cannot take +1
    order = np.lexsort((np.arange(shares.size), -speed, -remainder))
    base[order[:missing]] += 1
    return base


def proportional_batches(speed, global_batch: int, min_batch: int = 1, memory_cap=None) -> np.ndarray:
    """LB-BSP CPU rule: integer batches proportional to (predicted) speeds, within bounds, sum = X."""
    shares = proportional_shares(speed, global_batch, min_batch, memory_cap)
    upper = None if memory_cap is None else np.asarray(memory_cap)
    return largest_remainder(shares, speed=speed, upper=upper)


def equal_batches(n_workers: int, global_batch: int, min_batch: int = 1, memory_cap=None) -> np.ndarray:
    """The BSP baseline ``x_0 = X / n`` (largest remainder when n does not divide X)."""
    return proportional_batches(np.ones(n_workers), global_batch, min_batch, memory_cap)
