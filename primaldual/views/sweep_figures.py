"""Figures from sweep records (matplotlib, Agg backend): ratio distributions and utility-versus-knob curves.

Used by ``primaldual plot``, ``primaldual reproduce`` and the notebooks. Each function takes records (the
dicts of :mod:`primaldual.sweep`, or :class:`~primaldual.sweep.records.Record` values) and an optional axes, and returns the axes, so a notebook can compose them.
Schedulers appear in the order and colours of :mod:`primaldual.views.style`; every figure says how many
instances (seeds) stand behind it and shows every point or its spread; legends sit outside the data.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from primaldual.sweep.distributions import ordered
from primaldual.sweep.records import Record, typed
from primaldual.sweep.summary import ratio_sample, utility_table
from primaldual.views.distribution_figures import CAPTIONS as DISTRIBUTION_CAPTIONS, plot_distributions
from primaldual.views.style import COLOURS, colour, line_width, marker, save, seeds_note, use_agg

#: Knobs that a utility curve can be drawn against, with their axis labels.
KNOBS = {
    "jobs": "number of jobs",
    "capacity_scale": "cluster capacity (x preset)",
    "worker_servers": "worker servers",
    "load": "arrival rate (jobs per slot)",
}
#: One-line captions of the figures :func:`plot_records` writes, by the end of their file name.
CAPTIONS = {
    "ratios": ("OPT/ALG per scheduler, one dot per instance (bar: certified interval where OPT is not proven), "
               "box: quartiles, diamond: mean; 1 = optimal."),
    "utility-vs": ("Total utility per scheduler against the knob: line through the means over seeds, error bars "
                   "one standard deviation, small dots every seed."),
}


def scheduler_names(records: Iterable[Record | Mapping]) -> list[str]:
    """Every scheduler that appears in ``records``, in the canonical order
    (:func:`primaldual.sweep.distributions.ordered`)."""
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


def _theory_line(ax, records: "list[Record | Mapping]") -> None:
    """OASiS's worst-case bound 2 alpha, labelled on the line itself (a legend box would hide points)."""
    alpha = find_alpha(records)
    if alpha is None:
        return
    top = ax.get_ylim()[1]
    if alpha <= top:
        ax.axhline(2 * alpha, color=COLOURS["oasis"], linestyle="--", linewidth=1)
        ax.text(1.0, 2 * alpha, f" 2 alpha = {2 * alpha:.3g}\n (OASiS theory)", transform=ax.get_yaxis_transform(),
                va="center", ha="left", fontsize=7, color=COLOURS["oasis"], clip_on=False)
    else:
        ax.text(1.0, 1.0, f" theory: OPT/OASiS\n <= 2 alpha = {2 * alpha:.3g}\n (off the chart)",
                transform=ax.transAxes, va="top", ha="left", fontsize=7, color=COLOURS["oasis"])


def plot_ratios(records: "list[Record | Mapping]", ax=None, title: str | None = None, show_theory: bool = True):
    """Distribution of OPT/ALG per scheduler: one dot per instance (jittered), a box, the certified interval.

    A dot is the ratio against the best OPT known; a vertical bar spans the instance's certified interval where
    it is not a point. ALG = 0 with OPT > 0 (unbounded ratio) is counted in the tick label.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4))
    records = typed(records)
    names = [n for n in scheduler_names(records) if any(n in r.ratios for r in records)]
    rng = np.random.default_rng(0)
    labels = []
    for index, name in enumerate(names):
        sample = ratio_sample(records, name)
        points, lowers, uppers, unbounded = sample.points, sample.lowers, sample.uppers, sample.unbounded
        if points:
            x = index + rng.uniform(-0.18, 0.18, size=len(points))
            ax.vlines(x, lowers, uppers, color=colour(name), alpha=0.35, linewidth=1)
            ax.scatter(x, points, s=10, color=colour(name), alpha=0.8, zorder=3)
            ax.boxplot([points], positions=[index], widths=0.5, showfliers=False,
                       medianprops={"color": "black"}, boxprops={"color": "0.3"})
            ax.scatter([index], [np.mean(points)], marker="D", color="black", s=18, zorder=4)
        labels.append(f"{name}\nn={len(points)}" + (f"\n{unbounded}x ALG=0" if unbounded else ""))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(labels)
    ax.axhline(1.0, color="0.5", linestyle=":", linewidth=1)
    ax.set_ylabel("OPT / ALG  (1 = optimal)")
    if show_theory:
        _theory_line(ax, records)
    ax.set_title(title or f"empirical competitive ratio, {len(records)} instances (diamond: mean)")
    ax.grid(axis="y", alpha=0.3)
    return ax


def plot_utility(records: "list[Record | Mapping]", knob: str = "jobs", ax=None, title: str | None = None):
    """Mean total utility per scheduler against ``knob``: error bars one standard deviation over seeds, and
    every seed as a small dot beside its mean (offset per scheduler so that no point hides another)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4))
    table = utility_table(records, knob)
    names = [name for name in scheduler_names(records) if name in table]
    values = sorted({x for name in names for x in table[name]})
    step = min(np.diff(values)) if len(values) > 1 else 1.0
    counts = []
    for index, name in enumerate(names):
        xs = sorted(table[name])
        seeds = [np.asarray(table[name][x], dtype=float) for x in xs]
        counts += [len(s) for s in seeds]
        # Spread the schedulers over a quarter of the gap between knob values.
        shift = (index - (len(names) - 1) / 2) * 0.25 * step / max(1, len(names))
        means = [s.mean() for s in seeds]
        errors = [s.std(ddof=1) if len(s) > 1 else 0.0 for s in seeds]
        ax.errorbar(np.asarray(xs) + shift, means, yerr=errors, color=colour(name), marker=marker(name),
                    markersize=4, linewidth=line_width(name), capsize=2, label=name)
        for x, s in zip(xs, seeds):
            ax.scatter(np.full(len(s), x + shift), s, s=6, color=colour(name), alpha=0.35, zorder=1)
    ax.set_xlabel(KNOBS.get(knob, knob))
    ax.set_ylabel("total utility (sum over jobs)")
    note = seeds_note(counts) + " per point"
    ax.set_title(f"{title or 'total utility vs ' + KNOBS.get(knob, knob)} ({note}; bars: +-1 s.d.)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return ax


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
    """Every figure that fits ``records``, as PNG files in ``out_dir``; returns their paths.

    Records are grouped by (label, preset). A group with an OPT interval gets a ratio plot; a group where a
    knob of :data:`KNOBS` varies gets a utility curve against it; a group whose records carry per-job
    outcomes or utilisation gets the figures of :mod:`primaldual.views.distribution_figures`.
    """
    use_agg()
    import matplotlib.pyplot as plt

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
            fig, ax = plt.subplots(figsize=(8, 4))
            plot_ratios(group, ax=ax, title=f"OPT/ALG on {preset}, {len(group)} instances (diamond: mean)")
            written.append(save(fig, out_dir / f"{stem}-ratios.png"))
        for knob in knobs:
            fig, ax = plt.subplots(figsize=(8, 4))
            plot_utility(group, knob, ax=ax, title=f"total utility vs {KNOBS[knob]} ({preset})")
            written.append(save(fig, out_dir / f"{stem}-utility-vs-{knob}.png"))
        written += plot_distributions(group, out_dir, stem, title=preset)
    return written


__all__ = [
    "CAPTIONS", "KNOBS", "caption_for", "find_alpha", "plot_ratios", "plot_records", "plot_utility",
    "scheduler_names", "varied_knobs",
]
