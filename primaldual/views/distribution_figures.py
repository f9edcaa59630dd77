"""Figures of the distributions over jobs in sweep records: JCT, finish-time fairness, utility against standalone
utility, and utilisation per scheduler.

The numbers come from :mod:`primaldual.sweep.distributions` (which also gives them to ``--json``); a figure is
drawn only when its data is in the records. Jobs are pooled over the records (seeds) of a group, and every figure
says how many.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping

import numpy as np

from primaldual.core.plural import counted
from primaldual.evaluation.outcomes import JobOutcomes
from primaldual.sweep.distributions import outcomes_by_scheduler, pooled, utilisation_by_scheduler
from primaldual.sweep.records import Record
from primaldual.views.figure_data import FigureData, save_figure
from primaldual.views.style import colour, line_width, marker, seeds_note

#: One-line captions, by the end of the figure's file name.
CAPTIONS = {
    "jct-cdf": ("Share of all jobs (completed or not) completed within x slots of arrival, per scheduler; a "
                "curve ends at the scheduler's completion rate."),
    "fairness": ("Finish-time fairness: each completed job's JCT divided by its JCT alone on the empty cluster "
                 "(1 = no slowdown), as a CDF per scheduler."),
    "utility-vs-standalone": ("Each job's utility against its utility alone on the empty cluster, one panel per "
                              "scheduler; points on the diagonal lost nothing to sharing, points at 0 earned "
                              "nothing."),
    "utilisation": ("Mean utilisation per pool and resource, one dot per instance and scheduler, black bar: "
                    "mean +-1 s.d."),
}


CDF_COLUMNS = ("scheduler", "label", "x", "y")


def step_vertices(values: np.ndarray, total: int, end: float) -> tuple[list[float], list[float]]:
    """The vertices of the step CDF of the finite ``values`` as a share of ``total``, flat up to ``end`` so that
    every curve's final level can be read against the others'; no vertex when nothing is finite."""
    finite = np.sort(values[np.isfinite(values)])
    if not finite.size:
        return [], []
    heights = np.arange(1, finite.size + 1) / max(1, total)
    xs = np.concatenate([[finite[0]], finite, [max(end, finite[-1])]])
    ys = np.concatenate([[0.0], heights, [heights[-1]]])
    return [float(v) for v in xs], [float(v) for v in ys]


def _largest(outcomes: dict[str, list[JobOutcomes]], field: str) -> float:
    values = np.concatenate([pooled(runs, field) for runs in outcomes.values()])
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else 1.0


def cdf_data(outcomes: dict[str, list[JobOutcomes]], which: str, title: str = "") -> FigureData:
    """The step vertices of the JCT CDF (``which="jct-cdf"``, share of all jobs) or of the finish-time fairness
    CDF (``"fairness"``, share of completed jobs), per scheduler, with its legend label; a scheduler with no
    completed job keeps one row of NaNs (its legend entry, saying so)."""
    field = "jct" if which == "jct-cdf" else "finish_time_fairness"
    end = _largest(outcomes, field)
    rows: list[tuple] = []
    for name, runs in outcomes.items():
        values = pooled(runs, field)
        finite = values[np.isfinite(values)]
        if which == "jct-cdf":
            label = f"{name}: {finite.size}/{values.size} completed, {seeds_note([len(runs)])}"
            xs, ys = step_vertices(values, values.size, end)
        else:
            median = f", median {np.median(finite):.2f}" if finite.size else ""
            label = f"{name}: {counted(finite.size, 'job')}{median}, {seeds_note([len(runs)])}"
            xs, ys = step_vertices(values, finite.size, end)
        rows += [(name, label, x, y) for x, y in zip(xs, ys)] or [(name, label, math.nan, math.nan)]
    meta = {"which": which, "title": title, "caption": CAPTIONS[which]}
    return FigureData("cdf", CDF_COLUMNS, tuple(rows), meta)


def _fairness_axis(ax) -> None:
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    ax.axvline(1.0, color="0.5", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    # Plain numbers (1, 2, 5) read better than powers of ten for slowdowns of a few x.
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs=()))
    ax.set_xlabel("finish-time fairness: JCT / JCT alone on the empty cluster (log scale, 1 = no slowdown)")
    ax.set_ylabel("share of completed jobs")
    ax.grid(alpha=0.3, which="both")


def _draw_cdf(ax, data: FigureData) -> None:
    jct = data.meta.get("which") == "jct-cdf"
    for name in data.distinct("scheduler"):
        xs, ys = data.column("x", {"scheduler": name}), data.column("y", {"scheduler": name})
        label = data.column("label", {"scheduler": name})[0]
        if not all(math.isfinite(x) for x in xs):
            ax.plot([], [], color=colour(name), linewidth=line_width(name), label=label)
        else:
            ax.step(xs, ys, where="post", color=colour(name), linewidth=line_width(name), label=label)
    title = data.meta.get("title", "")
    if jct:
        ax.set_xlabel("job completion time (slots from arrival to completion)")
        ax.set_ylabel("share of all jobs completed")
        ax.grid(alpha=0.3)
    else:
        _fairness_axis(ax)
    ax.set_ylim(0, 1.02)
    what = "JCT distribution" if jct else "finish-time fairness"
    ax.set_title(f"{what}{' (' + title + ')' if title else ''}", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def plot_jct_cdf(outcomes: dict[str, list[JobOutcomes]], ax, title: str = ""):
    """JCT CDF per scheduler over all jobs: a job that never completes keeps the curve below 1."""
    _draw_cdf(ax, cdf_data(outcomes, "jct-cdf", title))
    return ax


def plot_fairness(outcomes: dict[str, list[JobOutcomes]], ax, title: str = ""):
    """CDF of finish-time fairness (JCT / standalone JCT) over the completed jobs, per scheduler."""
    _draw_cdf(ax, cdf_data(outcomes, "fairness", title))
    return ax


def standalone_data(outcomes: dict[str, list[JobOutcomes]], title: str = "") -> FigureData:
    """Per scheduler and job (pooled over seeds): its utility alone on the empty cluster and the one it got."""
    rows = []
    for name, runs in outcomes.items():
        alone, got = pooled(runs, "standalone_utility"), pooled(runs, "utility")
        rows += [(name, len(runs), float(a), float(g)) for a, g in zip(alone, got)]
    return FigureData("standalone", ("scheduler", "seeds", "alone", "got"), tuple(rows),
                      {"title": title, "caption": CAPTIONS["utility-vs-standalone"]})


def _draw_standalone(axes, data: FigureData) -> None:
    names = data.distinct("scheduler")
    top = max([a for a in data.column("alone") if math.isfinite(a)] + [1e-9])
    for ax, name in zip(axes, names):
        alone, got = np.asarray(data.column("alone", {"scheduler": name})), np.asarray(data.column("got", {"scheduler": name}))
        seeds = int(data.column("seeds", {"scheduler": name})[0])
        ax.plot([0, top], [0, top], color="0.5", linestyle=":", linewidth=1)
        ax.scatter(alone, got, s=8, color=colour(name), marker=marker(name), alpha=0.6)
        share = got.sum() / alone.sum() if alone.sum() > 0 else float("nan")
        ax.set_title(f"{name}: {counted(got.size, 'job')}, {seeds_note([seeds])}\n"
                     f"sum utility / sum alone = {share:.2f}", fontsize=8)
        ax.set_xlabel("utility alone on the empty cluster", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("utility achieved")
    for ax in axes[len(names):]:
        ax.set_visible(False)


def plot_utility_vs_standalone(outcomes: dict[str, list[JobOutcomes]], axes, title: str = ""):
    """One panel per scheduler: each job's utility (y) against its standalone utility (x), and y = x."""
    _draw_standalone(axes, standalone_data(outcomes, title))
    return axes


def utilisation_data(usage: dict[str, dict[str, list[float]]], title: str = "") -> FigureData:
    """Per scheduler, pool and resource: each instance's mean utilisation (percent), and their mean and s.d."""
    rows = []
    for name, values in usage.items():
        for key, series in values.items():
            percent = 100 * np.asarray(series, dtype=float)
            if not percent.size:
                continue
            rows += [("instance", name, key, float(v)) for v in percent]
            rows += [("mean", name, key, float(percent.mean())),
                     ("sd", name, key, float(percent.std(ddof=1)) if percent.size > 1 else 0.0)]
    return FigureData("utilisation", ("role", "scheduler", "key", "value"), tuple(rows),
                      {"title": title, "caption": CAPTIONS["utilisation"]})


def _draw_utilisation(ax, data: FigureData) -> None:
    keys = sorted(set(data.column("key")), key=lambda k: (k.split("/")[0] != "worker", k))
    names = data.distinct("scheduler")
    width = 0.8 / max(1, len(names))
    rng = np.random.default_rng(0)
    for n, name in enumerate(names):
        for k, key in enumerate(keys):
            values = data.column("value", {"role": "instance", "scheduler": name, "key": key})
            if not values:
                continue
            x = k - 0.4 + width * (n + 0.5)
            ax.scatter(x + rng.uniform(-0.25, 0.25, len(values)) * width, values, s=8, color=colour(name),
                       marker=marker(name), alpha=0.6, label=name if k == 0 else None)
            mean = data.column("value", {"role": "mean", "scheduler": name, "key": key})[0]
            spread = data.column("value", {"role": "sd", "scheduler": name, "key": key})[0]
            ax.errorbar([x], [mean], yerr=[spread], color="black", marker="_", markersize=8, capsize=2)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([key.replace("ps/", "PS ").replace("worker/", "worker ") for key in keys], fontsize=8)
    ax.set_ylabel("mean utilisation over the horizon (% of pool capacity)")
    ax.set_ylim(0, 105)
    counts = [len(data.column("value", {"role": "instance", "scheduler": n, "key": k})) for n in names for k in keys]
    title = data.meta.get("title", "")
    ax.set_title(f"utilisation{' (' + title + ')' if title else ''}, {seeds_note([c for c in counts if c])} per "
                 "scheduler", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def plot_utilisation(usage: dict[str, dict[str, list[float]]], ax, title: str = ""):
    """Per pool and resource, every instance's mean utilisation per scheduler, and the mean +-1 s.d."""
    _draw_utilisation(ax, utilisation_data(usage, title))
    return ax


def draw_cdf(data: FigureData):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    _draw_cdf(ax, data)
    return fig


def draw_standalone(data: FigureData):
    import matplotlib.pyplot as plt

    count = len(data.distinct("scheduler"))
    columns = max(1, min(4, count))
    rows = max(1, -(-count // columns))
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 3.0 * rows), squeeze=False, sharex=True,
                             sharey=True)
    _draw_standalone(axes.ravel(), data)
    title = data.meta.get("title", "")
    fig.suptitle(f"utility per job vs alone{' (' + title + ')' if title else ''}", fontsize=10)
    fig.tight_layout()
    return fig


def draw_utilisation(data: FigureData):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    _draw_utilisation(ax, data)
    return fig


#: kind -> draw function (:mod:`primaldual.views.figure_data`).
DRAWERS = {"cdf": draw_cdf, "standalone": draw_standalone, "utilisation": draw_utilisation}


def plot_distributions(records: "list[Record | Mapping]", out_dir: str | Path, stem: str, title: str = "") -> list[Path]:
    """Write the distribution figures (PNG, PDF and CSV each) when ``records`` carry per-job outcomes; returns
    the PNGs' paths."""
    out_dir = Path(out_dir)
    outcomes, usage = outcomes_by_scheduler(records), utilisation_by_scheduler(records)
    written = []
    if outcomes:
        for suffix in ("jct-cdf", "fairness"):
            written.append(save_figure(cdf_data(outcomes, suffix, title), out_dir / f"{stem}-{suffix}", draw_cdf))
        written.append(save_figure(standalone_data(outcomes, title), out_dir / f"{stem}-utility-vs-standalone",
                                   draw_standalone))
    # Utilisation is in every record's metrics; it joins the distribution figures, drawn when outcomes are.
    if outcomes and usage:
        written.append(save_figure(utilisation_data(usage, title), out_dir / f"{stem}-utilisation", draw_utilisation))
    return written


__all__ = [
    "CAPTIONS", "DRAWERS", "cdf_data", "draw_cdf", "draw_standalone", "draw_utilisation", "plot_distributions",
    "standalone_data", "step_vertices", "utilisation_data", "plot_fairness", "plot_jct_cdf", "plot_utilisation",
    "plot_utility_vs_standalone",
]
