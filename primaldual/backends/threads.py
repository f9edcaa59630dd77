"""Initialisation of sweep worker processes: one BLAS thread, one OpenMP thread, one solver thread.

Kept free of numpy and of every other heavy import on purpose: the initializer of a spawned worker runs after
this module is imported and before any task is unpickled, so the thread caps below are in the environment
before numpy (and its BLAS) or HiGHS is loaded in that process. Running two solvers that each start a thread
per core on a 2-core machine would only make both slower and their timings meaningless.
"""

from __future__ import annotations

import os

#: Environment variables read by BLAS/OpenMP runtimes when they load.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


def single_thread_environment() -> dict[str, str]:
    return {name: "1" for name in THREAD_VARIABLES}


def initialize_worker() -> None:
    """Pool initializer: one thread per thread pool here; the solver's count is passed explicitly (``Spec.threads``)."""
    os.environ.update(single_thread_environment())


__all__ = ["THREAD_VARIABLES", "initialize_worker", "single_thread_environment"]
