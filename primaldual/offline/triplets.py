"""A sparse matrix assembled from whole arrays of coordinate triplets, then compressed by column once.

:mod:`primaldual.offline.matrix` (and the row families of :mod:`primaldual.offline.symmetry` and
:mod:`primaldual.offline.cuts`) append rows with their bounds and terms as numpy arrays, never one by one;
:func:`compress` turns the triplets into the compressed-column arrays that ``highspy``'s ``passModel`` takes.
"""

from __future__ import annotations

import numpy as np


class Triplets:
    """Rows (with bounds) and coordinate terms, collected as whole arrays."""

    def __init__(self):
        self.n_rows = 0
        self.row_lower, self.row_upper, self.rows, self.cols, self.vals = [], [], [], [], []

    def constraints(self, count, lower, upper) -> int:
        """Append ``count`` rows; return the first one's index."""
        first = self.n_rows
        self.n_rows += int(count)
        self.row_lower.append(np.broadcast_to(np.asarray(lower, dtype=float), (int(count),)))
        self.row_upper.append(np.broadcast_to(np.asarray(upper, dtype=float), (int(count),)))
        return first

    def terms(self, rows, cols, values) -> None:
        rows, cols, values = np.broadcast_arrays(np.asarray(rows), np.asarray(cols), np.asarray(values, dtype=float))
        self.rows.append(rows.ravel())
        self.cols.append(cols.ravel())
        self.vals.append(values.ravel())


def cat(parts, dtype=float) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)


def compress(model: Triplets, n_cols: int) -> tuple:
    """Coordinate triplets to compressed sparse columns: one stable sort by column."""
    rows, cols, vals = cat(model.rows, np.int64), cat(model.cols, np.int64), cat(model.vals)
    order = np.argsort(cols, kind="stable")
    starts = np.zeros(n_cols + 1, dtype=np.int32)
    np.cumsum(np.bincount(cols, minlength=n_cols), out=starts[1:])
    return starts, rows[order].astype(np.int32), vals[order]


__all__ = ["Triplets", "cat", "compress"]
