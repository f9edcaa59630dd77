"""Recorded straggler traces: per-worker mini-batch times over iterations ([design] reading of the data).

Two file formats are accepted, told apart by their header line:

* **PAI** (``primaldual/lbbsp/data/job_*_norm.csv``, Alibaba PAI, CC BY 4.0): header
  ``,worker,gpu,time,batch_time_norm``; one row per worker per logged iteration (``time``);
  ``batch_time_norm`` is the mini-batch time at the job's equal batch size.
* **simple** (documented in ``docs/lbbsp-traces.md``): header ``worker,iteration,time``; one row per
  worker per iteration; ``time`` > 0 in any unit.

Workers are numbered by their labels (sorted); iterations are sorted by their labels. An iteration in
which some worker has no row is skipped and counted (``skipped_iterations``; the PAI job 2 log loses
workers in its last 16 iterations). An exact duplicate row is ignored; a second row for the same worker and
iteration with a different time is an error. Every error names the file and line.

Packaged traces are read with :mod:`importlib.resources`; ``pai:job_1`` .. ``pai:job_3`` name them.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from primaldual.core.errors import InputError

PACKAGED = {"pai:job_1": "job_1_norm.csv", "pai:job_2": "job_2_norm.csv", "pai:job_3": "job_3_norm.csv"}
PAI_HEADER = ("", "worker", "gpu", "time", "batch_time_norm")
SIMPLE_HEADER = ("worker", "iteration", "time")


#: Range of a trace time (any unit): a nanosecond to ~30 years in seconds. Within it the derived per-sample
#: speeds ``x0 / (m - a)`` and costs stay finite for every global batch the flags allow, and so do the ratios
#: the robust LPs hold (docs/lbbsp-traces.md, "Cost"); a subnormal, zero or 1e300 time is refused here.
MIN_TIME, MAX_TIME = 1e-9, 1e9
#: Largest ratio of two times of one trace: the scenario LPs (HiGHS) keep coefficients within ~1e-9..1e15 of
#: each other after division by a median, and the proportional rule's breakpoints stay well inside a float.
MAX_TIME_RATIO = 1e12
#: Integer labels (worker, iteration) must be exact in a float64: |label| <= 2^53.
MAX_LABEL = 2 ** 53
#: Workers of one trace, and cells (kept iterations x workers) of its matrix: checked before the matrix is
#: allocated; the replay holds some 40 arrays of this many numbers (about 3 GB at the cap).
MAX_TRACE_WORKERS, MAX_TRACE_CELLS = 1000, 10_000_000


@dataclass(frozen=True)
class WorkerTrace:
    """Mini-batch times ``times[t, i]`` (> 0) of worker i at kept iteration t, all at equal batch size."""

    name: str
    times: np.ndarray
    iterations: np.ndarray
    workers: np.ndarray
    skipped_iterations: int = 0

    def __post_init__(self) -> None:
        times = np.asarray(self.times, dtype=float)
        if times.ndim != 2 or times.shape[0] < 2 or times.shape[1] < 2:
            raise InputError(f"trace {self.name}: needs >= 2 workers and >= 2 complete iterations, "
                             f"got shape {times.shape}")
        if not np.all((times >= MIN_TIME) & (times <= MAX_TIME)):  # NaN fails both comparisons
            raise InputError(f"trace {self.name}: times must be in [1e-9, 1e9], got {times.min():g}..{times.max():g}")
        if times.max() > MAX_TIME_RATIO * times.min():
            raise InputError(f"trace {self.name}: the largest time is more than 1e12 times the smallest")
        times.setflags(write=False)
        object.__setattr__(self, "times", times)

    @property
    def n_workers(self) -> int:
        return self.times.shape[1]

    @property
    def n_iterations(self) -> int:
        return self.times.shape[0]


def _packaged_text(file_name: str) -> str:
    return resources.files("primaldual.lbbsp").joinpath("data", file_name).read_text(encoding="utf-8")


def load_trace(source: str, max_lines: int | None = None) -> WorkerTrace:
    """A packaged trace (``pai:job_1``) or a CSV file in the PAI or the simple format. ``max_lines``: refuse a
    file of more data lines (one per cell in both formats) from its line count, before it is parsed."""
    if source in PACKAGED:
        return parse_trace(_packaged_text(PACKAGED[source]), source)
    if source.startswith("pai:"):
        raise InputError(f"--trace: unknown packaged trace {source!r}; choose from {sorted(PACKAGED)}")
    path = Path(source)
    if not path.is_file():
        raise InputError(f"--trace: {source} is not a file (packaged traces: {', '.join(sorted(PACKAGED))})")
    try:
        raw = path.read_bytes()
        lines = raw.count(b"\n") + (not raw.endswith(b"\n")) - 1  # the header is no cell
        if max_lines is not None and lines > max_lines:
            raise InputError(f"--trace: {source}: {lines:,} data lines; a replay handles at most {max_lines:,} "
                             "cells, one per line (docs/lbbsp-traces.md, \"Cost\"). Replay a part of the trace")
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"--trace: cannot read {source}: {error}") from None
    return parse_trace(text, source)


@dataclass(frozen=True)
class _Columns:
    """Where the three fields sit in one format, and the names the file itself gives them (for messages)."""

    worker: tuple[int, str]
    iteration: tuple[int, str]
    time: tuple[int, str]


FORMATS = {PAI_HEADER: _Columns((1, "worker"), (3, "time"), (4, "batch_time_norm")),
           SIMPLE_HEADER: _Columns((0, "worker"), (1, "iteration"), (2, "time"))}


def _label(text: str, where: str, column: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}: {column} must be a number, got {text!r}") from None
    if not (abs(value) <= MAX_LABEL and value == int(value)):  # NaN fails the comparison
        raise InputError(f"{where}: {column} must be an integer of magnitude <= 2^53, got {text!r}")
    return int(value)


def _time(text: str, where: str, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}: {column} must be a number, got {text!r}") from None
    if not np.isfinite(value):
        raise InputError(f"{where}: {column} must be finite, got {text!r}")
    if value <= 0:
        raise InputError(f"{where}: {column} must be > 0, got {text!r}")
    if not MIN_TIME <= value <= MAX_TIME:
        raise InputError(f"{where}: {column} must be in [1e-9, 1e9] (so that speeds and costs derived from it "
                         f"stay finite; docs/lbbsp-traces.md), got {text!r}")
    return value


def parse_trace(text: str, name: str) -> WorkerTrace:
    """Parse CSV text (either format) into a :class:`WorkerTrace`; errors name ``name:line`` and the file's column.

    One path for both formats: the header picks the columns (:data:`FORMATS`) and every row is held to the
    same rules. The columns are converted by numpy in one pass (docs/measurements.md, LB-BSP); if any row breaks a
    rule, the rows are re-read one by one by :func:`_check_row`, which names the first bad line, so the message
    is the same whichever pass finds it. :func:`_to_matrix` builds the matrix from flat arrays (a sort, no dict
    of rows): O(L log L) time and O(L) memory for L lines, plus the matrix.
    """
    reader = csv.reader(io.StringIO(text))
    header = tuple(cell.strip() for cell in next(reader, ()))
    if not header:
        raise InputError(f"{name}:1: empty trace")
    if header not in FORMATS:
        raise InputError(f"{name}:1: header must be {','.join(SIMPLE_HEADER)!r} or the PAI header "
                         f"{','.join(PAI_HEADER)!r}, got {','.join(header)[:200]!r}")
    columns = FORMATS[header]
    parsed = _fast_columns(text, len(header), columns)
    if parsed is None:  # quotes, carriage returns or a bad row: the csv reader, row by row
        rows = [(line, _check_row(row, f"{name}:{line}", len(header), columns))
                for line, row in enumerate(reader, start=2) if "".join(row).strip()]
        workers, iterations, times = (np.array([values[k] for _, values in rows], dtype=dtype)
                                      for k, dtype in ((0, np.int64), (1, np.int64), (2, float)))
        lines = np.array([line for line, _ in rows], dtype=np.int64)
    else:
        workers, iterations, times, lines = parsed
    return _to_matrix(workers, iterations, times, lines, name, columns)


def _fast_columns(text: str, width: int, columns: _Columns):
    """``(workers, iterations, times, line numbers)`` if every row is valid, else ``None`` (then the csv reader
    checks the rows one by one). Only for text without quotes or carriage returns, where splitting at newlines
    and commas is exactly what the csv reader does; the tests are those of :func:`_check_row`, vectorised."""
    if '"' in text or "\r" in text:
        return None
    numbered = [(line, row) for line, row in enumerate(text.split("\n")[1:], start=2) if row.strip()]
    if not numbered:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)
    cells = ",".join(row for _, row in numbered).split(",")
    if len(cells) != width * len(numbered) or any(row.count(",") != width - 1 for _, row in numbered):
        return None
    try:
        workers, iterations, times = (np.array(cells[column[0]::width], dtype=float)
                                      for column in (columns.worker, columns.iteration, columns.time))
    except ValueError:
        return None
    labels_ok = all(np.all((np.abs(v) <= MAX_LABEL) & (v == np.trunc(v))) for v in (workers, iterations))
    if not (labels_ok and np.all(workers >= 0) and np.all((times >= MIN_TIME) & (times <= MAX_TIME))):
        return None
    lines = np.fromiter((line for line, _ in numbered), dtype=np.int64, count=len(numbered))
    return workers.astype(np.int64), iterations.astype(np.int64), times, lines


def _check_row(row, where: str, width: int, columns: _Columns) -> tuple[int, int, float]:
    """``(worker, iteration, time)`` of one row, checked in order (:class:`InputError` on the first broken rule)."""
    if len(row) != width:
        raise InputError(f"{where}: expected {width} fields, got {len(row)}")
    (w, w_name), (t, t_name), (x, x_name) = columns.worker, columns.iteration, columns.time
    worker = _label(row[w], where, w_name)
    iteration = _label(row[t], where, t_name)
    seconds = _time(row[x], where, x_name)
    if worker < 0:
        raise InputError(f"{where}: {w_name} must be >= 0, got {worker}")
    return worker, iteration, seconds


def _to_matrix(workers, iterations, times, lines, name: str, columns: _Columns) -> WorkerTrace:
    """The (iterations x workers) matrix of the rows; checks duplicates, ratio and size before allocating it."""
    if not times.size:
        raise InputError(f"{name}: no data rows")
    low, high = int(np.argmin(times)), int(np.argmax(times))
    if times[high] > MAX_TIME_RATIO * times[low]:
        later = max(low, high)
        raise InputError(f"{name}:{lines[later]}: {columns.time[1]} {times[later]:g} is more than 1e12 times "
                         f"{times[low + high - later]:g} (line {lines[low + high - later]}): the trace's times must "
                         "stay within a ratio of 1e12 (docs/lbbsp-traces.md)")
    worker_labels, column = np.unique(workers, return_inverse=True)
    iteration_labels, row = np.unique(iterations, return_inverse=True)
    if worker_labels.size > MAX_TRACE_WORKERS:
        raise InputError(f"{name}: {worker_labels.size} workers (distinct {columns.worker[1]} labels), at most "
                         f"{MAX_TRACE_WORKERS} (docs/lbbsp-traces.md)")
    if worker_labels.size * iteration_labels.size > MAX_TRACE_CELLS:
        raise InputError(f"{name}: {iteration_labels.size} iterations x {worker_labels.size} workers, at most "
                         f"{MAX_TRACE_CELLS:,} cells (docs/lbbsp-traces.md)")
    _check_duplicates(row * worker_labels.size + column, times, lines, workers, iterations, name)
    matrix = np.full((iteration_labels.size, worker_labels.size), np.nan)
    matrix[row, column] = times  # exact duplicates write the same value
    complete = ~np.isnan(matrix).any(axis=1)
    return WorkerTrace(name, matrix[complete], iteration_labels[complete], worker_labels, int((~complete).sum()))


def _check_duplicates(cell, times, lines, workers, iterations, name: str) -> None:
    """A second, different time for one (iteration, worker): the first such line in file order is an error."""
    order = np.argsort(cell, kind="stable")  # stable: within a cell, file order
    repeat = np.flatnonzero(cell[order][1:] == cell[order][:-1]) + 1
    if not repeat.size:
        return
    first_of_cell = order[np.searchsorted(cell[order], cell[order][repeat])]
    differs = times[order[repeat]] != times[first_of_cell]
    if np.any(differs):
        second = order[repeat][differs]
        first = first_of_cell[differs]
        k = int(np.argmin(lines[second]))
        s, f = second[k], first[k]
        raise InputError(f"{name}:{lines[s]}: second time {times[s]:g} for worker {workers[s]} at iteration "
                         f"{iterations[s]} (first: {times[f]:g})")


def load_cov_table() -> np.ndarray:
    """The packaged CoV table: shape (100 jobs, iterations); NaN where a job's record ends."""
    rows = list(csv.reader(io.StringIO(_packaged_text("coefficient_variation.csv"))))
    table = np.array([[float(cell) if cell.strip() else np.nan for cell in row[1:]] for row in rows[1:]])
    return table


# The CoV generator's default law (cov_trace, cov_times); primaldual/lbbsp/law_aware.py conditions on it.
COV_PERSISTENCE, COV_CONCENTRATION = 0.9, 3.0


def cov_trace(job: int, workers: int = 10, seed: int = 0, persistence: float = COV_PERSISTENCE,
              table: np.ndarray | None = None, max_iterations: int | None = None,
              concentration: float = COV_CONCENTRATION) -> WorkerTrace:
    """A synthetic trace whose iteration t has the sample CoV (ddof = 1) of row ``job`` of the CoV table.

    ``times[t, i] = 1 + a_t * u[t, i] ** k_t`` (slowdowns only), ``u[t] = w[t] / max_j w[t, j]``,
    ``w = exp(concentration * z)``, ``z`` a stationary AR(1) level per worker (lag-1 correlation ``persistence``);
    sharpness ``k_t >= 1`` and scale ``a_t`` by bisection (:func:`cov_times`, docs/lbbsp-traces.md, "Synthetic-from-CoV
    mode"). Every target below sqrt(n) is met; ``max_iterations`` keeps only the first iterations."""
    target = cov_target(job, table, max_iterations)
    levels = cov_levels(target.size, workers, persistence, np.random.default_rng(seed))
    times = cov_times(levels, target, concentration)
    return WorkerTrace(f"cov:job_{job:02d}", times, np.arange(target.size), np.arange(workers))


def cov_target(job: int, table: np.ndarray | None = None, max_iterations: int | None = None) -> np.ndarray:
    """Row ``job`` of the CoV table (its finite values, the first ``max_iterations`` of them)."""
    table = load_cov_table() if table is None else table
    if not 0 <= job < table.shape[0]:
        raise InputError(f"--cov-job: must be in 0..{table.shape[0] - 1}, got {job}")
    target = table[job][np.isfinite(table[job])][:max_iterations]
    if target.size < 2:
        raise InputError(f"--cov-job: job {job} has fewer than 2 iterations")
    return target


def cov_levels(iterations: int, workers: int, persistence: float, rng) -> np.ndarray:
    """The stationary AR(1) levels ``z`` of :func:`cov_trace` (lag-1 correlation ``persistence``, unit variance)."""
    z = np.empty((iterations, workers))
    z[0] = rng.normal(size=workers)
    innovation = np.sqrt(1.0 - persistence ** 2)
    for t in range(1, iterations):
        z[t] = persistence * z[t - 1] + innovation * rng.normal(size=workers)
    return z


def cov_times(levels: np.ndarray, target: np.ndarray, concentration: float = COV_CONCENTRATION) -> np.ndarray:
    """Times ``1 + a_t u[t] ** k_t`` of :func:`cov_trace` for the levels ``z`` (rows: iterations or samples of
    one iteration) and each row's target CoV: sharpness and scale set by bisection as described there."""
    workers = levels.shape[1]
    log_weight = concentration * (levels - levels.max(axis=1, keepdims=True))   # <= 0, max 0 per iteration
    target = np.minimum(target, np.sqrt(workers) * (1.0 - 1e-9))
    sharpness = np.exp(_bisect(lambda log_k: _cov(np.exp(np.exp(log_k)[:, None] * log_weight)),
                               0.5 * (target + np.sqrt(workers)), 0.0, np.log(1e4), target.size))
    sharpness = np.where(_cov(np.exp(log_weight)) >= 0.5 * (target + np.sqrt(workers)), 1.0, sharpness)
    weight = np.exp(sharpness[:, None] * log_weight)
    log_scale = _bisect(lambda log_a: _cov(1.0 + np.exp(log_a)[:, None] * weight), target, -20.0, 20.0, target.size)
    scale = np.where(target > 0, np.exp(log_scale), 0.0)
    return 1.0 + scale[:, None] * weight


def _cov(times: np.ndarray) -> np.ndarray:
    return times.std(axis=1, ddof=1) / times.mean(axis=1)


def _bisect(function, target: np.ndarray, low: float, high: float, size: int) -> np.ndarray:
    """Per-row bisection for ``function(parameter) = target``, ``function`` increasing in the parameter."""
    low, high = np.full(size, low), np.full(size, high)
    for _ in range(80):
        middle = 0.5 * (low + high)
        below = function(middle) < target
        low, high = np.where(below, middle, low), np.where(below, high, middle)
    return 0.5 * (low + high)


def achieved_cov(trace: WorkerTrace) -> np.ndarray:
    """Per-iteration coefficient of variation (sample standard deviation / mean, as the CoV table) of a trace."""
    return _cov(trace.times)
