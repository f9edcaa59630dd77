"""Where the tasks of a sweep run: spawned local processes that end with their parent, or a Dask cluster."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Iterator

from primaldual.core.errors import InputError

#: How long to wait for a Dask scheduler given by address before saying it cannot be reached.
CONNECT_SECONDS = 10.0


def initialize_local_worker(parent: int) -> None:
    """Initializer of a local pool worker: end with the sweep's process, and one thread per runtime."""
    from primaldual.backends.processes import exit_with_parent
    from primaldual.backends.threads import initialize_worker

    exit_with_parent(parent)
    initialize_worker()


def local_executor(workers: int | None = None) -> ProcessPoolExecutor:
    """Spawned worker processes, each capped at one BLAS/OpenMP thread (see :mod:`primaldual.backends.threads`), each
    ending soon after the process that started it, however it ended (:mod:`primaldual.backends.processes`).

    Spawn, not fork: a forked child would inherit the parent's already-started BLAS and solver threads and
    locks, and whatever the parent imported; a spawned one starts clean, like a Dask worker.
    """
    workers = workers or os.cpu_count() or 1
    if workers < 1:
        raise InputError(f"--workers: must be >= 1, got {workers}")
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
        initializer=initialize_local_worker, initargs=(os.getpid(),),
    )


@contextmanager
def dask_executor(address: str | None = None, workers: int | None = None) -> Iterator[Executor]:
    """A Dask executor: ``Client(address).get_executor()``, or a local cluster of ``workers`` processes.

    Needs the ``dask`` extra (``pip install primaldual[dask]``). The client (and the local cluster, if this
    function started it) is closed on exit.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - the extra is installed in CI
        raise InputError("--executor dask: needs Dask distributed (pip install 'primaldual[dask]')") from None
    cluster = None
    if address is None:
        from primaldual.backends.threads import single_thread_environment

        # Dask's nanny already caps OMP/MKL/OpenBLAS at one thread per worker process; the extra variables
        # make the cap explicit and cover the other runtimes.
        cluster = LocalCluster(
            n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
            dashboard_address=None, host="127.0.0.1", env=single_thread_environment(),
        )
        client = Client(cluster)
    else:
        try:
            client = Client(address, timeout=CONNECT_SECONDS)
        except (OSError, TimeoutError) as error:
            raise InputError(f"--address: cannot reach a Dask scheduler at {address} within {CONNECT_SECONDS:g} s "
                             f"({type(error).__name__})") from None
    try:
        yield client.get_executor()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


__all__ = ["dask_executor", "initialize_local_worker", "local_executor"]
