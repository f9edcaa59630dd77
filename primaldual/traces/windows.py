"""The busiest window of a trace: where to cut a week (or any length) out of a VC's months of arrivals.

``busiest_window(records, hours)`` scans windows ``[s, s + hours)`` starting on whole multiples of
``step_hours`` (default 24: windows start at midnight of the trace's clock) and returns the one whose own
arrivals carry the most GPU-time inside it: ``sum_i g_i min(R_i, end - arrival_i)`` over the jobs arriving in
the window, ``R_i`` the running time alone at the requested scale (:func:`primaldual.traces.convert.running_times`).
Jobs arriving before the window are not counted, because the imported window does not hold them either; work past
the window's end is not counted, because it cannot be done inside the window. Ties go to the earliest start.

Search: the load of the windows starting on the steps between two consecutive distinct arrivals never
decreases with the start (no job leaves, the end moves later and may let a job in), so every maximum is at
the last step at or before some arrival. :func:`busiest_window` evaluates those at most ``n`` starts on the
arrivals sorted once, then finds the earliest step of the same load before the winner by bisection: cost
``O(n log n + n k)`` for ``k`` jobs in a window, independent of the number of steps (``--step-hours 1e-9`` costs
what 24 does). :func:`window_loads` lists every step's window, ``O(n S)`` for ``S = span / step_hours`` steps:
the definition, for tests and small ``S`` only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from primaldual.core.errors import InputError
from primaldual.traces.convert import TraceOptions, running_times
from primaldual.traces.throughput import ThroughputTable


@dataclass(frozen=True)
class Window:
    """A window ``[start_hour, start_hour + hours)`` and the GPU-hours its own arrivals bring into it."""

    start_hour: float
    hours: float
    gpu_hours: float
    arrivals: int

    @property
    def mean_gpus(self) -> float:
        """The GPU-hours per hour of the window: the busy GPUs the window's own jobs ask for on average."""
        return self.gpu_hours / self.hours

    @property
    def flag(self) -> str:
        """This window's ``--window START:HOURS``, in plain decimals (never ``1e-09``) that read back the same."""
        return f"{_plain(self.start_hour)}:{_plain(self.hours)}"


def _plain(value: float) -> str:
    return np.format_float_positional(value, trim="-")


def check_lengths(hours: float, step_hours: float) -> None:
    """``--hours`` and ``--step-hours`` in (0, 1e6], or one line naming the flag."""
    for flag, value in (("--hours", hours), ("--step-hours", step_hours)):
        if not (math.isfinite(value) and 0 < value <= 1e6):
            raise InputError(f"{flag}: must be a number in (0, 1e6], got {value}")


def window_loads(records, table: ThroughputTable, hours: float, step_hours: float = 24.0,
                 options: TraceOptions | None = None, source: str = "trace") -> list[Window]:
    """Every candidate window of the module docstring, in order of start."""
    check_lengths(hours, step_hours)
    options = options or TraceOptions()
    timed = running_times(records, table, options.scaling_efficiency, source)
    if not timed:
        return []
    arrival = np.array([t.record.arrival_seconds for t in timed], dtype=float)
    running = np.array([t.running_seconds for t in timed], dtype=float)
    gpus = np.array([t.record.gpus for t in timed], dtype=float)
    last_start = math.floor(arrival.max() / 3600.0 / step_hours)
    windows = []
    for k in range(last_start + 1):
        start, end = k * step_hours * 3600.0, (k * step_hours + hours) * 3600.0
        inside = (arrival >= start) & (arrival < end)
        busy = float(np.sum(gpus[inside] * np.minimum(running[inside], end - arrival[inside])))
        windows.append(Window(k * step_hours, hours, busy / 3600.0, int(inside.sum())))
    return windows


class _Loads:
    """The jobs sorted by arrival, and the load of the window starting on step ``k``."""

    def __init__(self, timed, hours: float, step_hours: float):
        arrival = np.array([t.record.arrival_seconds for t in timed], dtype=float)
        order = np.argsort(arrival, kind="stable")
        self.arrival = arrival[order]
        self.running = np.array([t.running_seconds for t in timed], dtype=float)[order]
        self.gpus = np.array([t.record.gpus for t in timed], dtype=float)[order]
        self.hours, self.step_hours = hours, step_hours

    def at(self, k: int) -> Window:
        """The window starting on step ``k`` (the same arithmetic as :func:`window_loads`)."""
        start, end = k * self.step_hours * 3600.0, (k * self.step_hours + self.hours) * 3600.0
        low, high = np.searchsorted(self.arrival, [start, end], side="left")
        arrival = self.arrival[low:high]
        busy = float(np.sum(self.gpus[low:high] * np.minimum(self.running[low:high], end - arrival)))
        return Window(k * self.step_hours, self.hours, busy / 3600.0, int(high - low))

    def step_of(self, seconds: float) -> int:
        return math.floor(seconds / 3600.0 / self.step_hours)


def busiest_window(records, table: ThroughputTable, hours: float = 168.0, step_hours: float = 24.0,
                   options: TraceOptions | None = None, source: str = "trace") -> Window:
    """The candidate window with the most GPU-hours of its own arrivals (the earliest on a tie), found without
    visiting every step (module docstring, "Search")."""
    check_lengths(hours, step_hours)
    options = options or TraceOptions()
    timed = running_times(records, table, options.scaling_efficiency, source)
    if not timed:
        raise InputError(f"{source}: no jobs, so no window")
    loads = _Loads(timed, hours, step_hours)
    best, previous_arrival = None, None
    for arrival in np.unique(loads.arrival):  # the last step at or before each arrival
        step = loads.step_of(arrival)
        window = loads.at(step)
        if best is None or window.gpu_hours > best[0].gpu_hours:
            best = (window, step, previous_arrival)
        previous_arrival = arrival
    window, high, before = best
    # The load is non-decreasing on the steps after the previous arrival: bisect for the first of the same load.
    low = 0 if before is None else loads.step_of(before) + 1
    while low < high:
        middle = (low + high) // 2
        if loads.at(middle).gpu_hours >= window.gpu_hours:
            high = middle
        else:
            low = middle + 1
    return loads.at(high)
