"""The busiest window of a trace: where to cut a week (or any length) out of a VC's months of arrivals.

``busiest_window(records, hours)`` scans windows ``[s, s + hours)`` starting on whole multiples of
``step_hours`` (default 24: windows start at midnight of the trace's clock) and returns the one whose own
arrivals carry the most GPU-time inside it: ``sum_i g_i min(R_i, end - arrival_i)`` over the jobs arriving in
the window, ``R_i`` the running time alone at the requested scale (:func:`primaldual.traces.convert.running_times`).
Jobs arriving before the window are not counted, because the imported window does not hold them either; work past
the window's end is not counted, because it cannot be done inside the window. Ties go to the earliest start.

Cost: one pass over the jobs per candidate start, ``O(n S)`` for ``S = span / step_hours`` candidates (a few
milliseconds for a 2,000-job VC at one-day steps).
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
        """The ``--window START:HOURS`` value of this window."""
        return f"{self.start_hour:g}:{self.hours:g}"


def window_loads(records, table: ThroughputTable, hours: float, step_hours: float = 24.0,
                 options: TraceOptions | None = None, source: str = "trace") -> list[Window]:
    """Every candidate window of the module docstring, in order of start."""
    for flag, value in (("--hours", hours), ("--step-hours", step_hours)):
        if not (math.isfinite(value) and 0 < value <= 1e6):
            raise InputError(f"{flag}: must be a number in (0, 1e6], got {value}")
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


def busiest_window(records, table: ThroughputTable, hours: float = 168.0, step_hours: float = 24.0,
                   options: TraceOptions | None = None, source: str = "trace") -> Window:
    """The candidate window with the most GPU-hours of its own arrivals (the earliest on a tie)."""
    windows = window_loads(records, table, hours, step_hours, options, source)
    if not windows:
        raise InputError(f"{source}: no jobs, so no window")
    return max(windows, key=lambda w: (w.gpu_hours, -w.start_hour))
