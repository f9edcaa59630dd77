"""The trace figure of ``primaldual reproduce``: per restart cost, the CDFs of the completed jobs' JCT and
slowdown per scheduler on real arrivals (Philly VCs), jobs pooled over the trace cases.

The numbers come from the reproduce layer (:func:`primaldual.reproduce.trace_report.trace_samples` reads its
records into :class:`TraceSamples`); :func:`trace_cdf_data` turns them into the figure's table, one row per
step vertex (:func:`primaldual.views.distribution_figures.step_vertices`: a curve starts at 0 at its smallest
value, rises by ``1/n`` at each of its ``n`` sorted values, and runs flat to the panel's largest value so that
every curve's end can be read against the others'), and :func:`draw_trace_cdf` draws that table alone, so
``primaldual plot --from-csv traces-cdf-restart-C.csv`` redraws the figure. Cost: sorting, ``O(n log n)`` per
scheduler and panel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from primaldual.core.plural import counted
from primaldual.sweep.distributions import ordered
from primaldual.views.distribution_figures import step_vertices
from primaldual.views.figure_data import FigureData
from primaldual.views.style import colour, line_width

COLUMNS = ("panel", "scheduler", "label", "x", "y")
#: The two panels, left to right: the field of :class:`TraceSamples` and its x-axis label.
PANELS = (
    ("jct", "JCT: slots from arrival to completion (log scale)"),
    ("slowdown", "slowdown: JCT / JCT alone on the empty cluster (log scale, 1 = no slowdown)"),
)
CAPTION = ("Philly traces at restart cost {cost}: step CDFs of the completed jobs' JCT (left) and slowdown (JCT over "
           "the job's standalone JCT, right) per scheduler, jobs pooled over the {cases} cases of the trace table; "
           "y: share of that scheduler's completed jobs, x on a log scale; legend: completed jobs and both medians.")


@dataclass(frozen=True)
class TraceSamples:
    """The completed jobs' JCTs (slots) and slowdowns per scheduler at one restart cost, pooled over ``cases``
    trace cases; a scheduler that completed no job has empty arrays."""

    restart_cost: float
    cases: int
    jct: Mapping[str, np.ndarray] = field(default_factory=dict)
    slowdown: Mapping[str, np.ndarray] = field(default_factory=dict)


def stem(restart_cost: float) -> str:
    """The figure's file stem under ``figures/`` (``traces-cdf-restart-0``, ``traces-cdf-restart-0.1``)."""
    return f"traces-cdf-restart-{restart_cost:g}"


def _labels(samples: TraceSamples) -> dict[str, str]:
    """Per scheduler, its legend entry: its completed jobs and both panels' medians."""
    labels = {}
    for name in ordered(samples.jct):
        parts = [f"{name}: {counted(_finite(samples.jct[name]).size, 'job')}"]
        for panel, short in (("jct", "JCT"), ("slowdown", "slowdown")):
            values = _finite(getattr(samples, panel).get(name, ()))
            parts.append(f"median {short} {np.median(values):.3g}" if values.size else f"no {short}")
        labels[name] = ", ".join(parts)
    return labels


def _finite(values) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return values[np.isfinite(values)]


def trace_cdf_data(samples: TraceSamples) -> FigureData:
    """The step vertices of both panels, per scheduler (canonical order), each row with the scheduler's legend
    entry; a scheduler with no finite value in a panel keeps one row of NaNs there (its legend entry)."""
    rows: list[tuple] = []
    labels = _labels(samples)
    for panel, _ in PANELS:
        finite = {name: _finite(getattr(samples, panel).get(name, ())) for name in labels}
        end = max((float(v.max()) for v in finite.values() if v.size), default=1.0)
        for name, label in labels.items():
            xs, ys = step_vertices(finite[name], finite[name].size, end)
            rows += [(panel, name, label, x, y) for x, y in zip(xs, ys)] or [(panel, name, label, math.nan, math.nan)]
    cost = f"{samples.restart_cost:g}"
    meta = {"title": f"Philly traces, restart cost {cost}: {samples.cases} cases", "restart_cost": cost,
            "cases": str(samples.cases), "caption": CAPTION.format(cost=cost, cases=samples.cases)}
    return FigureData("trace-cdf", COLUMNS, tuple(rows), meta)


def _log_axis(ax, xlabel: str) -> None:
    from matplotlib.ticker import LogFormatter

    ax.set_xscale("log")
    # Plain numbers (2, 3, 50, 1000) read better than powers of ten; a short range labels its minor ticks too.
    ax.xaxis.set_major_formatter(LogFormatter())
    ax.xaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))
    ax.tick_params(axis="x", which="minor", labelsize=7)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel("share of completed jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3, which="both")


def draw_trace_cdf(data: FigureData):
    """The figure of :func:`trace_cdf_data`'s table (a new matplotlib Figure): the two panels side by side, one
    legend for both on the right."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(PANELS), figsize=(13, 4.2))
    for ax, (panel, xlabel) in zip(axes, PANELS):
        for name in data.distinct("scheduler", {"panel": panel}):
            where = {"panel": panel, "scheduler": name}
            xs, ys = data.column("x", where), data.column("y", where)
            label = data.column("label", where)[0]
            if not all(math.isfinite(x) for x in xs):
                ax.plot([], [], color=colour(name), linewidth=line_width(name), label=label)
            else:
                ax.step(xs, ys, where="post", color=colour(name), linewidth=line_width(name), label=label)
        _log_axis(ax, xlabel)
    axes[-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(data.meta.get("title", ""), fontsize=10)
    fig.tight_layout()
    return fig


#: kind -> draw function (:mod:`primaldual.views.figure_data`).
DRAWERS = {"trace-cdf": draw_trace_cdf}

__all__ = ["CAPTION", "COLUMNS", "DRAWERS", "PANELS", "TraceSamples", "draw_trace_cdf", "stem", "trace_cdf_data"]
