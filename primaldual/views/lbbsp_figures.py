"""The LB-BSP figure of ``primaldual reproduce``: mean iteration time per method and scenario over seeds.

:func:`lbbsp_data` reads the benchmark's runs (``{seed: primaldual.lbbsp.bench.run_benchmark(...).to_dict()}``)
into the figure's table: every seed's mean iteration time per method, and per method the mean with its 95% t interval
over seeds and the mean speedup over BSP (the label on each bar).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from primaldual.core.plural import counted
from primaldual.sweep.statistics import t_interval
from primaldual.views.figure_data import FigureData

COLUMNS = ("role", "scenario", "method", "seed", "seconds", "low", "high", "speedup", "workers")
#: Bar colours by method position (BSP grey first).
BAR_COLOURS = ("0.6", "#332288", "#117733", "#882255", "#DDCC77")
CAPTION = ("LB-BSP: mean iteration time per method (simulated), bars the mean over seeds with its 95% Student-t "
           "interval, dots every seed; label: the mean speedup over BSP.")


def lbbsp_data(lbbsp: Mapping[str, Any]) -> FigureData:
    rows: list[tuple] = []
    scenarios = sorted({name for run in lbbsp.values() for name in run["scenarios"]})
    for scenario in scenarios:
        runs = {seed: run["scenarios"][scenario] for seed, run in lbbsp.items() if scenario in run["scenarios"]}
        first = next(iter(runs.values()))
        for method in first["mean_iteration_seconds"]:
            seconds = [float(r["mean_iteration_seconds"][method]) for r in runs.values()]
            rows += [("seed", scenario, method, seed, value, math.nan, math.nan, math.nan, first["workers"])
                     for seed, value in zip(runs, seconds)]
            interval = t_interval(seconds)
            speedup = float(np.mean([r["speedup"][method] for r in runs.values()]))
            rows.append(("mean", scenario, method, len(seconds), interval.mean, interval.low, interval.high, speedup,
                         first["workers"]))
    return FigureData("lbbsp", COLUMNS, tuple(rows), {"title": "LB-BSP iteration time", "caption": CAPTION})


def draw_lbbsp(data: FigureData):
    import matplotlib.pyplot as plt

    scenarios = data.distinct("scenario")
    fig, axes = plt.subplots(1, len(scenarios), figsize=(6 * len(scenarios), 3.8), squeeze=False)
    for ax, scenario in zip(axes[0], scenarios):
        where = {"role": "mean", "scenario": scenario}
        methods = data.column("method", where)
        means, lows, highs = data.column("seconds", where), data.column("low", where), data.column("high", where)
        bars = ax.bar(methods, means, yerr=[np.subtract(means, lows), np.subtract(highs, means)], capsize=3,
                      color=[BAR_COLOURS[k % len(BAR_COLOURS)] for k in range(len(methods))])
        for k, method in enumerate(methods):
            seeds = data.column("seconds", {"role": "seed", "scenario": scenario, "method": method})
            ax.scatter(np.full(len(seeds), k), seeds, s=8, color="black", zorder=3)
        for bar, speedup, high in zip(bars, data.column("speedup", where), highs):
            # Above the interval's top, so that the label never sits on the error bar.
            ax.annotate(f"x{speedup:.2f}", (bar.get_x() + bar.get_width() / 2, max(high, bar.get_height())),
                        xytext=(0, 3), textcoords="offset points", ha="center", va="bottom", fontsize=8)
        seeds = int(data.column("seed", where)[0])
        workers = int(data.column("workers", where)[0])
        ax.set_ylabel("mean iteration time (s, simulated)")
        ax.set_title(f"{scenario}: {counted(workers, 'worker')}, {counted(seeds, 'seed')} (label: speedup vs BSP; "
                     "bars: 95% t interval)",
                     fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


#: kind -> draw function (:mod:`primaldual.views.figure_data`).
DRAWERS = {"lbbsp": draw_lbbsp}

__all__ = ["CAPTION", "DRAWERS", "draw_lbbsp", "lbbsp_data"]
