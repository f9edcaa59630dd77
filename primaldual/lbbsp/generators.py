"""Generated straggler traces for stress-testing LB-BSP beyond the recorded ones ([design]).

Each generator returns a :class:`~primaldual.lbbsp.traces.WorkerTrace` of mini-batch times at equal batch,
seeded and deterministic; :func:`write_pai` writes any trace in the PAI CSV format that ``lbbsp replay
--trace FILE`` reads (``docs/lbbsp-traces.md``).

* ``amplified``: a recorded trace whose per-worker deviations from the worker's median are scaled by
  ``factor`` in log space (``log m' = log med_i + factor * (log m - log med_i)``; log space keeps times > 0),
  times a persistent per-worker factor ``exp(0.3 g_i)`` drawn from the seed (unequal machines).
* ``persistent``: unequal workers (log-normal speeds, sigma 0.4) with 2% noise.
* ``mid_run``: equal workers; one straggler, 2-5x slower, appears at a random iteration and stays.
* ``several``: three stragglers, each slowed 1.5-6x in episodes of 5-40 iterations (Markov on/off).
* ``iid``: every time independently log-normal (sigma 0.5): no persistence at all, so no causal rule
  can know who will be slow; reported, not part of the criterion (``docs/lbbsp-traces.md``).
"""

from __future__ import annotations

import numpy as np

from primaldual.core.errors import InputError
from primaldual.lbbsp.traces import MAX_TIME, MAX_TIME_RATIO, MIN_TIME, PAI_HEADER, WorkerTrace

KINDS = ("amplified", "persistent", "mid_run", "several", "iid")


def _trace(name: str, times: np.ndarray) -> WorkerTrace:
    return WorkerTrace(name, times, np.arange(times.shape[0]), np.arange(times.shape[1]))


def amplified(trace: WorkerTrace, factor: float, seed: int = 0) -> WorkerTrace:
    """``trace`` with log deviations from each worker's median scaled by ``factor`` (module docstring)."""
    if not (np.isfinite(factor) and factor > 0):
        raise InputError(f"--factor: must be a finite number > 0, got {factor}")
    log_times = np.log(trace.times)
    median = np.median(log_times, axis=0)
    machines = 0.3 * np.random.default_rng(seed).normal(size=trace.n_workers)
    with np.errstate(over="ignore", under="ignore"):  # judged below, naming the flag
        times = np.exp(median + machines + factor * (log_times - median))
    if not np.all((times >= MIN_TIME) & (times <= MAX_TIME)) or times.max() > MAX_TIME_RATIO * times.min():
        raise InputError(f"--factor: {factor:g} amplifies {trace.name} to times outside [1e-9, 1e9] or beyond a "
                         "ratio of 1e12 (docs/lbbsp-traces.md); use a smaller factor")
    return _trace(f"{trace.name}:x{factor:g}:seed{seed}", times)


def generated(kind: str, workers: int = 10, iterations: int = 300, seed: int = 0) -> WorkerTrace:
    """A trace of ``kind`` in :data:`KINDS` other than ``amplified`` (module docstring)."""
    if workers < 2 or iterations < 2:
        raise InputError(f"--workers/--iterations: need >= 2 each, got {workers}, {iterations}")
    rng = np.random.default_rng(seed)
    noise = np.exp(0.02 * rng.normal(size=(iterations, workers)))
    if kind == "persistent":
        times = np.exp(0.4 * rng.normal(size=workers)) * noise
    elif kind == "mid_run":
        times = noise.copy()
        straggler, onset = rng.integers(workers), rng.integers(iterations // 5, 4 * iterations // 5)
        times[onset:, straggler] *= rng.uniform(2.0, 5.0)
    elif kind == "several":
        times = noise.copy()
        for straggler in rng.choice(workers, size=min(3, workers), replace=False):
            on, t = False, 0
            while t < iterations:
                length = int(rng.integers(5, 41))
                if on:
                    times[t:t + length, straggler] *= rng.uniform(1.5, 6.0)
                on, t = not on, t + length
    elif kind == "iid":
        times = np.exp(0.5 * rng.normal(size=(iterations, workers)))
    else:
        raise InputError(f"--kind: must be one of {', '.join(KINDS)}, got {kind!r}")
    return _trace(f"{kind}:seed{seed}", times)


def write_pai(trace: WorkerTrace, path) -> None:
    """Write ``trace`` as a PAI CSV (``,worker,gpu,time,batch_time_norm``; ``gpu`` is written as 100)."""
    lines = [",".join(PAI_HEADER)]
    row = 0
    for t in range(trace.n_iterations):
        for i in range(trace.n_workers):
            lines.append(f"{row},{i},100,{t + 1},{float(trace.times[t, i])!r}")
            row += 1
    from primaldual.core.output import write_text

    write_text(path, "\n".join(lines) + "\n", "--output")
