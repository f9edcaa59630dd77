"""numpy's own arithmetic, for plain loops that must give numpy's floats: the two BLAS calls through which numpy
computes a matrix-vector product ``A @ x`` of float64 (``cblas_ddot`` when ``A`` has one row, ``cblas_dgemv``
otherwise), and numpy's pairwise summation written as loops (:func:`pairwise_sum`), which
:mod:`primaldual.oasis.lr.reference` lists among its compiled functions.

**Why.** A sum written as a loop is not numpy's ``@``: OpenBLAS adds in its own order, chosen per CPU. On a
Philly week 1,005 of 3,000 block costs differ in the last bits from the loop's sum, and 17 of 108,665 products
from numba's own ``np.dot`` (SciPy's OpenBLAS build). Called in numpy's library with numpy's arguments, none
differ (``docs/measurements.md``, "numpy's floats from compiled loops"), so OASiS-LR's loops can reproduce its
numpy arithmetic bit for bit, which ``tests/golden`` requires.

**How.** The functions are looked up through numpy's extension module, whose handle also searches the BLAS it
links, under the names numpy's wheels give them (``scipy_cblas_*64_``, 64-bit integers). As Python they are
ctypes functions (:data:`ddot`, :data:`dgemv`); the compiled copy of :mod:`primaldual.oasis.lr.reference` calls
them by name (:func:`externals`), which numba can cache. :func:`available` is False where the names are
missing (a numpy built against another BLAS) or where a check on random products finds one float that is
not numpy's own; callers then compute with numpy itself.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

#: ``CblasRowMajor`` and ``CblasNoTrans``, as numpy passes them.
ROW_MAJOR, NO_TRANSPOSE = 101, 111
_NAMES = ("scipy_cblas_ddot64_", "scipy_cblas_dgemv64_")


def _library() -> ctypes.CDLL | None:
    try:
        handle = ctypes.CDLL(np._core._multiarray_umath.__file__)
        for name in _NAMES:
            getattr(handle, name)
    except (AttributeError, OSError):
        return None
    return handle


_HANDLE = _library()
ddot = dgemv = None
if _HANDLE is not None:
    ddot, dgemv = (getattr(_HANDLE, name) for name in _NAMES)
    ddot.restype, dgemv.restype = ctypes.c_double, None
    _i, _p, _d = ctypes.c_int64, ctypes.c_void_p, ctypes.c_double
    ddot.argtypes = [_i, _p, _i, _p, _i]
    dgemv.argtypes = [ctypes.c_int, ctypes.c_int, _i, _i, _d, _p, _i, _p, _i, _d, _p, _i]


def matrix_vector(matrix: np.ndarray, vector: np.ndarray, out: np.ndarray) -> None:
    """``out = matrix @ vector`` (C-contiguous float64), by the call numpy makes."""
    rows, columns = matrix.shape
    if rows == 1:
        out[0] = ddot(columns, matrix.ctypes.data, 1, vector.ctypes.data, 1)
    else:
        dgemv(ROW_MAJOR, NO_TRANSPOSE, rows, columns, 1.0, matrix.ctypes.data, columns, vector.ctypes.data, 1, 0.0,
              out.ctypes.data, 1)


@functools.cache
def available() -> bool:
    """Whether :func:`matrix_vector` is numpy's ``@``, float for float, on 200 random products (module docstring)."""
    if _HANDLE is None:
        return False
    rng = np.random.default_rng(0)
    for rows, columns in rng.integers(1, 70, size=(200, 2)).tolist():
        matrix, vector = rng.uniform(0, 3, (rows, columns)) ** 3, rng.integers(0, 5, columns).astype(float)
        out = np.empty(rows)
        matrix_vector(matrix, vector, out)
        if not np.array_equal(out, matrix @ vector):
            return False
    return True


def externals() -> dict:
    """:data:`ddot` and :data:`dgemv` as numba calls by name, for the compiled copy (the library loaded for
    numba's linker first)."""
    import llvmlite.binding
    from numba import types

    llvmlite.binding.load_library_permanently(np._core._multiarray_umath.__file__)
    i, p, d = types.int64, types.voidptr, types.float64
    return {"ddot": types.ExternalFunction(_NAMES[0], d(i, p, i, p, i)),
            "dgemv": types.ExternalFunction(_NAMES[1], types.void(types.int32, types.int32, i, i, d, p, i, p, i, d,
                                                                  p, i))}


def block_sum(values: np.ndarray, first: int, n: int) -> float:
    """numpy's sum of ``values[first:first + n]``, ``n <= 128`` (:func:`pairwise_sum`)."""
    if n < 8:
        total = 0.0
        for i in range(first, first + n):
            total += values[i]
        return total
    partial = values[first:first + 8].copy()
    i = 8
    while i < n - n % 8:
        for j in range(8):
            partial[j] += values[first + i + j]
        i += 8
    total = ((partial[0] + partial[1]) + (partial[2] + partial[3])) + \
        ((partial[4] + partial[5]) + (partial[6] + partial[7]))
    while i < n:
        total += values[first + i]
        i += 1
    return total


def pairwise_sum(values: np.ndarray, first: int, n: int) -> float:
    """``values[first:first + n].sum()`` as numpy adds a contiguous float64 array, float for float
    (``numpy/_core/src/umath/loops_utils.h.src``): up to 128 values by :func:`block_sum` (eight running sums),
    more as the sum of two halves, the first a multiple of 8. The halves are walked with a stack (numba's
    cache does not link a recursive copy): a part is split on its first visit and its halves' sums added on
    its second."""
    if n <= 128:
        return block_sum(values, first, n)
    starts, sizes = np.empty(128, dtype=np.int64), np.empty(128, dtype=np.int64)
    split, sums = np.zeros(128, dtype=np.bool_), np.empty(128)
    top, done = 0, 0
    starts[0], sizes[0] = first, n
    while top >= 0:
        size = sizes[top]
        if size <= 128:
            sums[done] = block_sum(values, starts[top], size)
            done += 1
            top -= 1
        elif not split[top]:
            split[top] = True
            half = size // 2 - (size // 2) % 8
            starts[top + 1], sizes[top + 1], split[top + 1] = starts[top] + half, size - half, False
            starts[top + 2], sizes[top + 2], split[top + 2] = starts[top], half, False
            top += 2  # the first half on top: summed first
        else:
            sums[done - 2] = sums[done - 2] + sums[done - 1]
            done -= 1
            top -= 1
    return sums[0]


__all__ = ["available", "block_sum", "ddot", "dgemv", "externals", "matrix_vector", "pairwise_sum"]
