"""The progress of a MIP solve over wall-clock time: when each incumbent and bound was reached.

A trace is a tuple of ``(seconds, incumbent, bound)`` points, one each time the solver's incumbent or bound
changed, ``seconds`` counted from an origin the caller picks (the start of the whole solve, so that building,
the child process and every phase count). From it :func:`time_to_gap` reads when a relative gap was first
reached and :func:`gap_at` the gap at a given time, with the gap of
:class:`~primaldual.offline.result.OfflineResult`: ``(bound - incumbent) / |bound|``. ``primaldual bench
offline --against-raw`` compares the traces of the package and of plain ``highspy`` on the same model.

HiGHS reports both values to its MIP interrupt callback, which it calls between nodes and during the root
node's cut loop; reading two numbers there costs little next to a node.
"""

from __future__ import annotations

import math
import time


def record_progress(highs, trace: list, origin: float) -> None:
    """Append ``(time.time() - origin, incumbent, bound)`` to ``trace`` whenever HiGHS's incumbent or bound
    changes during ``highs.run()`` (both as HiGHS reports them; an unknown value is ``None``)."""
    last = [None]

    def observe(event) -> None:
        data = event.data_out
        incumbent, bound = _finite(data.objective_function_value), _finite(data.mip_dual_bound)
        if (incumbent, bound) != last[0]:
            last[0] = (incumbent, bound)
            trace.append((time.time() - origin, incumbent, bound))

    highs.cbMipInterrupt += observe
    highs.cbMipImprovingSolution += observe


def _finite(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def relative_gap(incumbent: float | None, bound: float | None) -> float:
    """``(bound - incumbent) / |bound|``; infinite without both (0 when both are 0)."""
    if incumbent is None or bound is None:
        return math.inf
    if bound == incumbent:
        return 0.0
    return max(0.0, (bound - incumbent) / abs(bound)) if bound != 0 else math.inf


def _running(trace):
    """The trace as ``(seconds, best incumbent so far, best bound so far)``: a phase that reports a weaker
    value than an earlier one does not undo it."""
    best_incumbent = best_bound = None
    for seconds, incumbent, bound in sorted(trace, key=lambda point: point[0]):
        if incumbent is not None and (best_incumbent is None or incumbent > best_incumbent):
            best_incumbent = incumbent
        if bound is not None and (best_bound is None or bound < best_bound):
            best_bound = bound
        yield seconds, best_incumbent, best_bound


def time_to_gap(trace, gap: float) -> float | None:
    """The first time the running gap is at most ``gap`` (None if never)."""
    for seconds, incumbent, bound in _running(trace):
        if relative_gap(incumbent, bound) <= gap:
            return seconds
    return None


def gap_at(trace, seconds: float) -> float:
    """The running gap at ``seconds`` (infinite before the first incumbent and bound)."""
    gap = math.inf
    for at, incumbent, bound in _running(trace):
        if at > seconds:
            break
        gap = relative_gap(incumbent, bound)
    return gap




#: :func:`thin` keeps at most this many points.
MOST_POINTS = 200


def thin(trace, most: int = MOST_POINTS) -> list[list]:
    """The trace as lists ``[seconds, incumbent, bound]`` (JSON-ready), cut to at most ``most`` points: every
    point where the incumbent changes, the last point, and evenly spread bound-only changes. Dropping a bound
    change only makes :func:`time_to_gap` later and :func:`gap_at` larger, never flattering."""
    points = [list(point) for point in trace]
    if len(points) <= most:
        return points
    keep = {0, len(points) - 1} | {k for k in range(1, len(points)) if points[k][1] != points[k - 1][1]}
    rest = [k for k in range(len(points)) if k not in keep]
    room = max(0, most - len(keep))
    if room and rest:
        keep |= {rest[int(q * len(rest) / room)] for q in range(room)}
    return [points[k] for k in sorted(keep)]


__all__ = ["MOST_POINTS", "gap_at", "record_progress", "relative_gap", "thin", "time_to_gap"]
