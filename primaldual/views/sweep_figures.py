"""Figures from sweep records (matplotlib, Agg backend): ratio distributions and utility-versus-knob curves.

Used by ``primaldual plot``, ``primaldual reproduce`` and the notebooks. Each function takes records (the
dicts of :mod:`primaldual.sweep`, or :class:`~primaldual.sweep.records.Record` values) and an optional axes, and returns the axes, so a notebook can compose them.
Schedulers appear in the order and colours of :mod:`primaldual.views.style`; every figure says how many
instances (seeds) stand behind it and shows every point or its spread; legends sit outside the data.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from primaldual.core.plural import counted
from primaldual.sweep.distributions import ordered
from primaldual.sweep.records import Record, typed
from primaldual.sweep.statistics import t_interval
from primaldual.sweep.summary import ratio_sample, utility_table
from primaldual.views.distribution_figures import CAPTIONS as DISTRIBUTION_CAPTIONS, plot_distributions
from primaldual.views.figure_data import FigureData, save_figure
from primaldual.views.style import colour, line_width, marker, seeds_note, use_agg

#: Knobs that a utility curve can be drawn against, with their axis labels.
KNOBS = {
    "jobs": "number of jobs",
    "capacity_scale": "cluster capacity (x preset)",
    "worker_servers": "worker servers",
    "load": "arrival rate (jobs per slot)",
}
#: One-line captions of the figures :func:`plot_records` writes, by the end of their file name.
CAPTIONS = {
    "ratios": ("OPT/ALG per scheduler on a log axis, one dot per instance (bar: certified interval where OPT is not "
               "proven), diamond: mean over the finite ratios, box (quartiles, whiskers at the extremes) only with "
               "at least 5 instances; a triangle at the top edge: instances where the scheduler earned 0 (OPT/ALG "
               "= inf), counted under its name; 1 = optimal."),
    "utility-vs": ("Total utility per scheduler against the knob: line through the means over seeds, bars the 95% "
                   "Student-t confidence interval of the mean over seeds, small dots every seed; points at their "
                   "true x, shifted sideways by at most 1% of the axis."),
}
#: Added to the utility caption when OPT's band is drawn.
OPT_BAND_NOTE = ("Grey band: OPT's certified interval (column generation: verified schedule below, bound above), "
                 "the means of its ends over seeds.")


def scheduler_names(records: Iterable[Record | Mapping]) -> list[str]:
    """The schedulers in ``records``, in the canonical order (:func:`primaldual.sweep.distributions.ordered`)."""
    return ordered(name for record in typed(records) for name in record.schedulers)


def find_alpha(records: Iterable[Record | Mapping]) -> float | None:
    """OASiS's alpha (proofs/oasis.md section 1) from its recorded parameters or report, if it recorded one."""
    def search(data):
        if isinstance(data, dict):
            for key, value in data.items():
                if key == "alpha" and isinstance(value, (int, float)):
                    return float(value)
                found = search(value)
                if found is not None:
                    return found
        return None

    alphas = []
    for record in typed(records):
        entry = record.schedulers.get("oasis")
        if entry:
            found = search(dict(entry.parameters)) or search(dict(entry.report))
            if found is not None:
                alphas.append(found)
    return max(alphas) if alphas else None


RATIO_COLUMNS = ("role", "scheduler", "index", "value", "lower", "upper")
#: Below this many instances a scheduler's ratios are drawn as points only (a box of 2 points says nothing).
BOX_MINIMUM = 5


def ratio_data(records: "list[Record | Mapping]", title: str | None = None) -> FigureData:
    """The numbers of the OPT/ALG figure: per scheduler one ``instance`` row per instance (point and certified
    interval), one ``unbounded`` row per instance with ALG = 0 < OPT (inf), its ``mean`` over the finite ratios
    (``index``: how many) and, with at least :data:`BOX_MINIMUM` instances, the box (``q1``, ``median``, ``q3``,
    whiskers at the extremes)."""
    records = typed(records)
    rows: list[tuple] = []
    for name in [n for n in scheduler_names(records) if any(n in r.ratios for r in records)]:
        sample = ratio_sample(records, name)
        rows += [("instance", name, k, p, lo, hi) for k, (p, lo, hi) in
                 enumerate(zip(sample.points, sample.lowers, sample.uppers))]
        rows += [("unbounded", name, k, math.inf, math.inf, math.inf) for k in range(sample.unbounded)]
        if not sample.points:
            continue
        points = np.asarray(sample.points, dtype=float)
        rows.append(("mean", name, len(points), float(points.mean()), math.nan, math.nan))
        if len(points) >= BOX_MINIMUM:
            q1, median, q3 = (float(v) for v in np.percentile(points, [25, 50, 75]))
            rows += [(role, name, len(points), value, math.nan, math.nan) for role, value in
                     (("whisker_low", float(points.min())), ("q1", q1), ("median", median), ("q3", q3),
                      ("whisker_high", float(points.max())))]
    alpha = find_alpha(records)
    meta = {"title": title or f"empirical competitive ratio OPT/ALG, {counted(len(records), 'instance')}",
            "caption": CAPTIONS["ratios"]}
    if alpha is not None:
        meta["two_alpha"] = repr(2 * alpha)
    return FigureData("ratios", RATIO_COLUMNS, tuple(rows), meta)


def _log_ticks(ax, low: float, high: float) -> None:
    """Plain-number ticks on a log axis, no two closer than a twelfth of its height: dense where the range is
    narrow (1.0-1.5 must stay readable), sparse over decades."""
    from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullFormatter, NullLocator

    gap = math.log10(high / low) / 12
    candidates = sorted(m * 10.0 ** e for e in range(-2, 5) for m in (1, 1.05, 1.1, 1.2, 1.3, 1.5, 2, 3, 5, 7)
                        if low <= m * 10.0 ** e <= high)
    # Round numbers first (1, 10, 2, 5, ...), each kept only if it keeps its distance from those kept.
    rank = {1: 0, 2: 1, 5: 2, 1.5: 3, 3: 4, 1.2: 5, 7: 6, 1.1: 7, 1.3: 8, 1.05: 9}
    ticks: list[float] = []
    for tick in sorted(candidates, key=lambda t: rank[round(t / 10.0 ** math.floor(math.log10(t) + 1e-9), 2)]):
        if all(abs(math.log10(tick / kept)) >= gap for kept in ticks):
            ticks.append(tick)
    ax.yaxis.set_major_locator(FixedLocator(sorted(ticks)))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_formatter(NullFormatter())


def _draw_ratio_column(ax, data: FigureData, index: int, name: str) -> None:
    where = {"scheduler": name}
    points = data.column("value", {**where, "role": "instance"})
    lowers, uppers = data.column("lower", {**where, "role": "instance"}), data.column("upper", {**where, "role": "instance"})
    rng = np.random.default_rng(index)  # a fixed jitter per column, so a redraw from the CSV is identical
    x = index + rng.uniform(-0.2, 0.2, size=len(points))
    ax.vlines(x, lowers, uppers, color=colour(name), alpha=0.5, linewidth=1)
    ax.scatter(x, points, s=14, color=colour(name), marker=marker(name), alpha=0.8, zorder=3, linewidths=0)
    box = {role: data.column("value", {**where, "role": role}) for role in ("q1", "median", "q3", "whisker_low",
                                                                              "whisker_high")}
    if all(box.values()):
        ax.bxp([{"q1": box["q1"][0], "med": box["median"][0], "q3": box["q3"][0], "whislo": box["whisker_low"][0],
                 "whishi": box["whisker_high"][0], "fliers": []}], positions=[index], widths=0.55, showfliers=False,
               medianprops={"color": "black"}, boxprops={"color": "0.35"}, whiskerprops={"color": "0.35"},
               capprops={"color": "0.35"})
    for mean in data.column("value", {**where, "role": "mean"}):
        ax.scatter([index], [mean], marker="D", color="black", s=22, zorder=4)


def _draw_ratios(ax, data: FigureData) -> None:
    """Log-axis OPT/ALG per scheduler from :func:`ratio_data`'s table (labels rotated, counts under names)."""
    names = data.distinct("scheduler")
    finite = [v for v in data.column("value") + data.column("upper") + data.column("lower")
              if isinstance(v, float) and math.isfinite(v) and v > 0]
    low, high = min(finite + [1.0]) / 1.03, max(finite + [1.0]) * 1.08
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    labels = []
    for index, name in enumerate(names):
        _draw_ratio_column(ax, data, index, name)
        n = len(data.column("value", {"scheduler": name, "role": "instance"}))
        unbounded = len(data.column("value", {"scheduler": name, "role": "unbounded"}))
        if unbounded:  # ALG = 0: an infinite ratio, drawn as an arrow at the top edge and counted in the label
            ax.scatter([index], [high], marker="^", s=40, color=colour(name), clip_on=False, zorder=5)
        labels.append(f"{name} (n={n}" + (f", {unbounded} inf)" if unbounded else ")"))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(labels, rotation=35, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.axhline(1.0, color="0.5", linestyle=":", linewidth=1)
    _log_ticks(ax, low, high)
    ax.set_title(data.meta.get("title", ""), fontsize=10)
    _theory_line(ax, data, names, high)
    ax.set_ylabel("OPT / ALG  (log scale, 1 = optimal)")
    ax.grid(axis="y", alpha=0.3)


def _theory_line(ax, data: FigureData, names: list[str], top: float) -> None:
    """OASiS's worst-case bound 2 alpha: a segment over OASiS's column only (it bounds nothing else), or a note
    when it lies above the chart."""
    if "two_alpha" not in data.meta or "oasis" not in names:
        return
    two_alpha, index = float(data.meta["two_alpha"]), names.index("oasis")
    if two_alpha <= top:
        ax.hlines(two_alpha, index - 0.4, index + 0.4, color=colour("oasis"), linestyle="--", linewidth=1)
        ax.text(index + 0.42, two_alpha, f"2 alpha = {two_alpha:.3g}\n(OASiS theory)", va="center", ha="left",
                fontsize=7, color=colour("oasis"))
    else:  # under the title, where no point can be
        ax.set_title(ax.get_title() + f"\nOASiS's bound 2 alpha = {two_alpha:.3g} lies above the chart",
                     fontsize=10)


def draw_ratios(data: FigureData):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(5.0, 0.75 * len(data.distinct("scheduler")) + 2.0), 4.2))
    _draw_ratios(ax, data)
    return fig


def plot_ratios(records: "list[Record | Mapping]", ax=None, title: str | None = None):
    """OPT/ALG per scheduler on a log axis (:func:`ratio_data`): one dot per instance with its certified
    interval, the mean (diamond), a box where there are at least :data:`BOX_MINIMUM` instances; ALG = 0 is an
    arrow at the top edge, counted in the tick label."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4))
    _draw_ratios(ax, ratio_data(records, title))
    return ax


UTILITY_COLUMNS = ("role", "scheduler", "x", "x_drawn", "value", "low", "high", "n")
#: The largest sideways shift of a scheduler's points, as a share of the knob's range: points stay at their x.
DODGE = 0.01


def utility_data(records: "list[Record | Mapping]", knob: str = "jobs", title: str | None = None,
                 band: "list[tuple[float, float, float, int]] | None" = None) -> FigureData:
    """The numbers of a utility curve: per scheduler and knob value every seed (``seed``) and the mean with its
    95% t interval over seeds (``mean``); ``x_drawn`` is ``x`` shifted by at most :data:`DODGE` of the axis.
    ``band``: OPT's certified interval per value ((value, mean low, mean high, instances)), as ``opt_low`` and
    ``opt_high`` rows."""
    table = utility_table(records, knob)
    names = [name for name in scheduler_names(records) if name in table]
    values = sorted({x for name in names for x in table[name]})
    span = (values[-1] - values[0]) if len(values) > 1 else 1.0
    rows: list[tuple] = []
    for index, name in enumerate(names):
        shift = ((index - (len(names) - 1) / 2) / max(1.0, (len(names) - 1) / 2)) * DODGE * span
        for x in sorted(table[name]):
            seeds = [float(v) for v in table[name][x]]
            rows += [("seed", name, float(x), float(x) + shift, v, math.nan, math.nan, 1) for v in seeds]
            interval = t_interval(seeds)
            rows.append(("mean", name, float(x), float(x) + shift, interval.mean, interval.low, interval.high,
                         interval.n))
    for value, low, high, n in band or []:
        rows += [("opt_low", "OPT", float(value), float(value), low, math.nan, math.nan, n),
                 ("opt_high", "OPT", float(value), float(value), high, math.nan, math.nan, n)]
    counts = [row[7] for row in rows if row[0] == "mean"]
    meta = {"title": f"{title or 'total utility vs ' + KNOBS.get(knob, knob)} ({seeds_note(counts)} per point)",
            "xlabel": KNOBS.get(knob, knob), "knob": knob,
            "caption": CAPTIONS["utility-vs"] + (" " + OPT_BAND_NOTE if band else "")}
    return FigureData("utility", UTILITY_COLUMNS, tuple(rows), meta)


def _draw_utility(ax, data: FigureData) -> None:
    for name in [n for n in data.distinct("scheduler") if n != "OPT"]:
        where = {"scheduler": name, "role": "mean"}
        xs, means = data.column("x_drawn", where), data.column("value", where)
        lows, highs = data.column("low", where), data.column("high", where)
        ax.errorbar(xs, means, yerr=[np.subtract(means, lows), np.subtract(highs, means)], color=colour(name),
                    marker=marker(name), markersize=5, linewidth=line_width(name), capsize=2, label=name)
        for x in data.distinct("x_drawn", {"scheduler": name, "role": "seed"}):
            seeds = data.column("value", {"scheduler": name, "role": "seed", "x_drawn": x})
            ax.scatter(np.full(len(seeds), x), seeds, s=6, color=colour(name), alpha=0.35, zorder=1)
    xs = data.column("x", {"role": "opt_low"})
    if xs:
        lows, highs = data.column("value", {"role": "opt_low"}), data.column("value", {"role": "opt_high"})
        ax.fill_between(xs, lows, highs, color=colour("OPT"), alpha=0.15, label="OPT interval (certified)", zorder=0)
        ax.plot(xs, lows, color=colour("OPT"), linewidth=0.9, linestyle="--", label="OPT, lower end")
        ax.plot(xs, highs, color=colour("OPT"), linewidth=0.9, linestyle=":", label="OPT, upper end")
    ax.set_xticks(sorted(set(data.column("x"))))
    ax.set_xlabel(data.meta.get("xlabel", ""))
    ax.set_ylabel("total utility (sum over jobs)")
    ax.set_title(data.meta.get("title", "") + "; bars: 95% t interval", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def draw_utility(data: FigureData):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.2))
    _draw_utility(ax, data)
    return fig


def plot_utility(records: "list[Record | Mapping]", knob: str = "jobs", ax=None, title: str | None = None,
                 band=None):
    """Mean total utility per scheduler against ``knob`` with 95% t intervals over seeds, every seed as a dot,
    each point at its true x (:func:`utility_data`)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4))
    _draw_utility(ax, utility_data(records, knob, title, band))
    return ax


#: kind -> draw function (:mod:`primaldual.views.figure_data`).
DRAWERS = {"ratios": draw_ratios, "utility": draw_utility}


def varied_knobs(records: "list[Record | Mapping]") -> list[str]:
    """Knobs of :data:`KNOBS` that take more than one value among ``records``."""
    out = []
    for knob in KNOBS:
        values = {record.spec.get(knob) for record in typed(records)}
        if len(values - {None}) > 1:
            out.append(knob)
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "sweep"


def caption_for(path: str | Path) -> str:
    """The one-line caption of a figure written by :func:`plot_records`, from its file name."""
    stem = Path(path).stem
    captions = {**CAPTIONS, **DISTRIBUTION_CAPTIONS}
    # Longest first: "utility-vs-standalone" must not be taken for a "utility-vs" knob curve.
    for suffix, caption in sorted(captions.items(), key=lambda item: -len(item[0])):
        if stem.endswith(suffix) or f"-{suffix}-" in stem:
            return caption
    return ""


def plot_records(records: "list[Record | Mapping]", out_dir: str | Path, prefix: str = "") -> list[Path]:
    """Every figure that fits ``records``, as PNG and PDF files with their CSV (:func:`save_figure`) in
    ``out_dir``; returns the PNGs' paths.

    Records are grouped by (label, preset). A group with an OPT interval gets a ratio plot; a group where a
    knob of :data:`KNOBS` varies gets a utility curve against it; a group whose records carry per-job
    outcomes or utilisation gets the figures of :mod:`primaldual.views.distribution_figures`.
    """
    use_agg()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for record in typed(records):
        groups[(record.label, record.spec["preset"])].append(record)
    written = []
    for (label, preset), group in sorted(groups.items()):
        stem = _slug(f"{prefix}{label + '-' if label else ''}{preset}")
        knobs = varied_knobs(group)
        if any(r.ratios for r in group) and not knobs:
            data = ratio_data(group, f"OPT/ALG on {preset}, {counted(len(group), 'instance')} (diamond: mean)")
            written.append(save_figure(data, out_dir / f"{stem}-ratios", draw_ratios))
        scales = {record.spec.get("capacity_scale", 1.0) for record in group}
        where = preset + (f", capacity x{scales.pop():g}" if len(scales) == 1 and scales != {1.0} else "")
        for knob in knobs:
            data = utility_data(group, knob, f"total utility vs {KNOBS[knob]} ({where})")
            written.append(save_figure(data, out_dir / f"{stem}-utility-vs-{knob}", draw_utility))
        written += plot_distributions(group, out_dir, stem, title=preset)
    return written


__all__ = [
    "BOX_MINIMUM", "CAPTIONS", "DODGE", "DRAWERS", "KNOBS", "OPT_BAND_NOTE", "caption_for", "draw_ratios",
    "draw_utility", "find_alpha", "plot_ratios", "plot_records", "plot_utility", "ratio_data", "scheduler_names",
    "utility_data", "varied_knobs",
]
