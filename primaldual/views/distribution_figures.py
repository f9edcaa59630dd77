"""Figures of the distributions over jobs in sweep records: JCT, finish-time fairness, utility against standalone
utility, and utilisation per scheduler.

The numbers come from :mod:`primaldual.sweep.distributions` (which also gives them to ``--json``); a figure is
drawn only when its data is in the records. Jobs are pooled over the records (seeds) of a group, and every figure
says how many.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from primaldual.evaluation.outcomes import JobOutcomes
from primaldual.sweep.distributions import outcomes_by_scheduler, pooled, utilisation_by_scheduler
from primaldual.sweep.records import Record
from primaldual.views.style import colour, line_width, marker, save, seeds_note

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


def _cdf(ax, values: np.ndarray, total: int, name: str, label: str, end: float) -> None:
    """Step CDF of the finite ``values`` as a share of ``total`` (non-finite values never arrive), drawn flat up
    to ``end`` so that every curve's final level can be read against the others'."""
    finite = np.sort(values[np.isfinite(values)])
    if not finite.size:
        # No completed job: the scheduler still gets its legend entry, saying so, rather than vanishing.
        ax.plot([], [], color=colour(name), linewidth=line_width(name), label=label)
        return
    heights = np.arange(1, finite.size + 1) / max(1, total)
    ax.step(np.concatenate([[finite[0]], finite, [max(end, finite[-1])]]),
            np.concatenate([[0.0], heights, [heights[-1]]]), where="post",
            color=colour(name), linewidth=line_width(name), label=label)


def _largest(outcomes: dict[str, list[JobOutcomes]], field: str) -> float:
    values = np.concatenate([pooled(runs, field) for runs in outcomes.values()])
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else 1.0


def plot_jct_cdf(outcomes: dict[str, list[JobOutcomes]], ax, title: str = ""):
    """JCT CDF per scheduler over all jobs: a job that never completes keeps the curve below 1."""
    end = _largest(outcomes, "jct")
    for name, runs in outcomes.items():
        jct = pooled(runs, "jct")
        done = int(np.isfinite(jct).sum())
        _cdf(ax, jct, jct.size, name, f"{name}: {done}/{jct.size} completed, {seeds_note([len(runs)])}", end)
    ax.set_xlabel("job completion time (slots from arrival to completion)")
    ax.set_ylabel("share of all jobs completed")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"JCT distribution{' (' + title + ')' if title else ''}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return ax


def plot_fairness(outcomes: dict[str, list[JobOutcomes]], ax, title: str = ""):
    """CDF of finish-time fairness (JCT / standalone JCT) over the completed jobs, per scheduler."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    end = _largest(outcomes, "finish_time_fairness")
    for name, runs in outcomes.items():
        fairness = pooled(runs, "finish_time_fairness")
        finite = fairness[np.isfinite(fairness)]
        median = f", median {np.median(finite):.2f}" if finite.size else ""
        _cdf(ax, fairness, finite.size, name, f"{name}: {finite.size} jobs{median}, {seeds_note([len(runs)])}",
             end)
    ax.axvline(1.0, color="0.5", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    # Plain numbers (1, 2, 5) read better than powers of ten for slowdowns of a few x.
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs=()))
    ax.set_xlabel("finish-time fairness: JCT / JCT alone on the empty cluster (log scale, 1 = no slowdown)")
    ax.set_ylabel("share of completed jobs")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"finish-time fairness{' (' + title + ')' if title else ''}", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return ax


def plot_utility_vs_standalone(outcomes: dict[str, list[JobOutcomes]], axes, title: str = ""):
    """One panel per scheduler: each job's utility (y) against its standalone utility (x), and y = x."""
    top = max([float(pooled(runs, "standalone_utility").max(initial=0)) for runs in outcomes.values()] + [1e-9])
    for ax, (name, runs) in zip(axes, outcomes.items()):
        alone, got = pooled(runs, "standalone_utility"), pooled(runs, "utility")
        ax.plot([0, top], [0, top], color="0.5", linestyle=":", linewidth=1)
        ax.scatter(alone, got, s=8, color=colour(name), marker=marker(name), alpha=0.6)
        share = got.sum() / alone.sum() if alone.sum() > 0 else float("nan")
        ax.set_title(f"{name}: {got.size} jobs, {seeds_note([len(runs)])}\nsum utility / sum alone = {share:.2f}",
                     fontsize=8)
        ax.set_xlabel("utility alone on the empty cluster", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("utility achieved")
    for ax in axes[len(outcomes):]:
        ax.set_visible(False)
    return axes


def plot_utilisation(usage: dict[str, dict[str, list[float]]], ax, title: str = ""):
    """Per pool and resource, every instance's mean utilisation per scheduler, and the mean +-1 s.d."""
    keys = sorted({key for values in usage.values() for key in values}, key=lambda k: (k.split("/")[0] != "worker", k))
    names = list(usage)
    width = 0.8 / max(1, len(names))
    rng = np.random.default_rng(0)
    for n, name in enumerate(names):
        for k, key in enumerate(keys):
            values = 100 * np.asarray(usage[name].get(key, []), dtype=float)
            if not values.size:
                continue
            x = k - 0.4 + width * (n + 0.5)
            ax.scatter(x + rng.uniform(-0.25, 0.25, values.size) * width, values, s=8, color=colour(name),
                       marker=marker(name), alpha=0.6, label=name if k == 0 else None)
            spread = values.std(ddof=1) if values.size > 1 else 0.0
            ax.errorbar([x], [values.mean()], yerr=[spread], color="black", marker="_", markersize=8, capsize=2)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([key.replace("ps/", "PS ").replace("worker/", "worker ") for key in keys], fontsize=8)
    ax.set_ylabel("mean utilisation over the horizon (% of pool capacity)")
    ax.set_ylim(0, 105)
    counts = [len(v) for values in usage.values() for v in values.values()]
    ax.set_title(f"utilisation{' (' + title + ')' if title else ''}, {seeds_note(counts)} per scheduler", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return ax


def plot_distributions(records: "list[Record | Mapping]", out_dir: str | Path, stem: str, title: str = "") -> list[Path]:
    """Write the distribution figures when ``records`` carry per-job outcomes; returns their paths."""
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    outcomes, usage = outcomes_by_scheduler(records), utilisation_by_scheduler(records)
    written = []
    if outcomes:
        for suffix, draw in (("jct-cdf", plot_jct_cdf), ("fairness", plot_fairness)):
            fig, ax = plt.subplots(figsize=(8, 4))
            draw(outcomes, ax, title)
            written.append(save(fig, out_dir / f"{stem}-{suffix}.png"))
        columns = min(4, len(outcomes))
        rows = -(-len(outcomes) // columns)
        fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 3.0 * rows), squeeze=False, sharex=True,
                                 sharey=True)
        plot_utility_vs_standalone(outcomes, axes.ravel(), title)
        fig.suptitle(f"utility per job vs alone{' (' + title + ')' if title else ''}", fontsize=10)
        fig.tight_layout()
        written.append(save(fig, out_dir / f"{stem}-utility-vs-standalone.png"))
    # Utilisation is in every record's metrics; it joins the distribution figures, drawn when outcomes are.
    if outcomes and usage:
        fig, ax = plt.subplots(figsize=(9, 4))
        plot_utilisation(usage, ax, title)
        written.append(save(fig, out_dir / f"{stem}-utilisation.png"))
    return written


__all__ = [
    "CAPTIONS", "plot_distributions", "plot_fairness", "plot_jct_cdf", "plot_utilisation",
    "plot_utility_vs_standalone",
]
