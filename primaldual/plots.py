"""Figures from sweep records (matplotlib, Agg backend): ratio distributions and utility-versus-knob curves.

Used by ``primaldual plot``, ``primaldual reproduce`` and the notebooks. Each function takes records (the
dicts of :mod:`primaldual.sweep`) and an optional axes, and returns the axes, so a notebook can compose them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Iterable

import numpy as np

from primaldual.sweep import ratio_sample

#: One colour per scheduler, stable across figures (OASiS first, as in the paper's plots).
COLOURS = {
    "oasis": "#d62728", "greedy": "#ff7f0e", "fifo": "#1f77b4", "drf": "#2ca02c", "rrh": "#9467bd",
    "dorm": "#8c564b",
}
#: Knobs that a utility curve can be drawn against, with their axis labels.
KNOBS = {
    "jobs": "number of jobs",
    "capacity_scale": "cluster capacity (x preset)",
    "worker_servers": "worker servers",
    "load": "arrival rate (jobs per slot)",
}


def use_agg() -> None:
    """Select the file-only backend unless a notebook or the user already chose an interactive one."""
    import matplotlib

    if "inline" not in matplotlib.get_backend().lower():
        matplotlib.use("Agg")


def _colour(name: str, index: int) -> str:
    import matplotlib.pyplot as plt

    return COLOURS.get(name, plt.rcParams["axes.prop_cycle"].by_key()["color"][index % 10])


def scheduler_names(records: Iterable[dict]) -> list[str]:
    names: list[str] = []
    for record in records:
        for name in record.get("schedulers", {}):
            if name not in names:
                names.append(name)
    return names


def find_alpha(records: Iterable[dict]) -> float | None:
    """OASiS's alpha (oasis.md section 5.1) from its recorded parameters or report, if it recorded one."""
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
    for record in records:
        entry = record.get("schedulers", {}).get("oasis")
        if entry:
            found = search(entry.get("parameters")) or search(entry.get("report"))
            if found is not None:
                alphas.append(found)
    return max(alphas) if alphas else None


def plot_ratios(records: list[dict], ax=None, title: str | None = None, show_theory: bool = True):
    """Distribution of OPT/ALG per scheduler: one dot per instance (jittered), a box, the certified interval.

    A dot is the ratio against the best OPT known; a vertical bar spans the instance's certified interval where
    it is not a point. ALG = 0 with OPT > 0 (unbounded ratio) is counted in the tick label.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    names = [n for n in scheduler_names(records) if any(n in r.get("ratios", {}) for r in records)]
    rng = np.random.default_rng(0)
    labels = []
    for index, name in enumerate(names):
        sample = ratio_sample(records, name)
        points, lowers, uppers, unbounded = sample.points, sample.lowers, sample.uppers, sample.unbounded
        colour = _colour(name, index)
        if points:
            x = index + rng.uniform(-0.18, 0.18, size=len(points))
            ax.vlines(x, lowers, uppers, color=colour, alpha=0.35, linewidth=1)
            ax.scatter(x, points, s=10, color=colour, alpha=0.8, zorder=3)
            ax.boxplot([points], positions=[index], widths=0.5, showfliers=False,
                       medianprops={"color": "black"}, boxprops={"color": "0.3"})
            ax.scatter([index], [np.mean(points)], marker="D", color="black", s=18, zorder=4)
        labels.append(f"{name}\nn={len(points)}" + (f"\n{unbounded}x ALG=0" if unbounded else ""))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(labels)
    ax.axhline(1.0, color="0.5", linestyle=":", linewidth=1)
    ax.set_ylabel("OPT / ALG  (1 = optimal)")
    alpha = find_alpha(records) if show_theory else None
    if alpha is not None:
        top = ax.get_ylim()[1]
        if 2 * alpha <= 2 * top:
            ax.axhline(2 * alpha, color="#d62728", linestyle="--", linewidth=1,
                       label=f"2 alpha = {2 * alpha:.2f} (theory, largest over the instances)")
            ax.legend(loc="upper left", fontsize=8)
        else:
            ax.text(0.01, 0.97, f"theory: OPT/OASiS <= 2 alpha = {2 * alpha:.3g} (off the chart)",
                    transform=ax.transAxes, va="top", fontsize=8, color="#d62728")
    ax.set_title(title or "empirical competitive ratio (diamond: mean)")
    ax.grid(axis="y", alpha=0.3)
    return ax


def utility_table(records: list[dict], knob: str) -> dict[str, dict[float, list[float]]]:
    """``{scheduler: {knob value: [total utility per seed]}}``."""
    table: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        value = record["spec"].get(knob)
        if value is None:
            value = record["instance"].get(knob)
        if value is None:
            continue
        for name, entry in record["schedulers"].items():
            table[name][value].append(entry["utility"])
    return table


def plot_utility(records: list[dict], knob: str = "jobs", ax=None, title: str | None = None):
    """Mean total utility (with min-max band over seeds) per scheduler against ``knob``."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    table = utility_table(records, knob)
    for index, name in enumerate(scheduler_names(records)):
        if name not in table:
            continue
        xs = sorted(table[name])
        means = [np.mean(table[name][x]) for x in xs]
        colour = _colour(name, index)
        ax.plot(xs, means, marker="o", color=colour, label=name, linewidth=2 if name == "oasis" else 1.2)
        if any(len(table[name][x]) > 1 for x in xs):
            ax.fill_between(xs, [min(table[name][x]) for x in xs], [max(table[name][x]) for x in xs],
                            color=colour, alpha=0.12)
    ax.set_xlabel(KNOBS.get(knob, knob))
    ax.set_ylabel("total utility")
    ax.set_title(title or f"total utility vs {KNOBS.get(knob, knob)}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def varied_knobs(records: list[dict]) -> list[str]:
    """Knobs of :data:`KNOBS` that take more than one value among ``records``."""
    out = []
    for knob in KNOBS:
        values = {record["spec"].get(knob) for record in records}
        if len(values - {None}) > 1:
            out.append(knob)
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "sweep"


def plot_records(records: list[dict], out_dir: str | Path, prefix: str = "") -> list[Path]:
    """Every figure that fits ``records``, as PNG files in ``out_dir``; returns their paths.

    Records are grouped by (label, preset). A group with an OPT interval gets a ratio plot; a group where a
    knob of :data:`KNOBS` varies gets a utility curve against it.
    """
    use_agg()
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for record in records:
        groups[(record["spec"].get("label", ""), record["spec"]["preset"])].append(record)
    written = []
    for (label, preset), group in sorted(groups.items()):
        stem = _slug(f"{prefix}{label + '-' if label else ''}{preset}")
        has_interval = any(r.get("ratios") for r in group)
        knobs = varied_knobs(group)
        if has_interval and not knobs:
            fig, ax = plt.subplots(figsize=(7, 4))
            plot_ratios(group, ax=ax, title=f"OPT/ALG on {preset} ({len(group)} instances)")
            path = out_dir / f"{stem}-ratios.png"
            fig.tight_layout()
            fig.savefig(path, dpi=110)
            plt.close(fig)
            written.append(path)
        for knob in knobs:
            fig, ax = plt.subplots(figsize=(7, 4))
            plot_utility(group, knob, ax=ax, title=f"total utility vs {KNOBS[knob]} ({preset})")
            path = out_dir / f"{stem}-utility-vs-{knob}.png"
            fig.tight_layout()
            fig.savefig(path, dpi=110)
            plt.close(fig)
            written.append(path)
    return written


__all__ = [
    "COLOURS", "KNOBS", "find_alpha", "plot_ratios", "plot_records", "plot_utility", "scheduler_names",
    "use_agg", "utility_table", "varied_knobs",
]
