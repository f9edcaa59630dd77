"""Figures from sweep records: kept importable for notebooks and scripts; the code lives in
:mod:`primaldual.views` (:mod:`primaldual.views.sweep_figures`, :mod:`primaldual.views.distribution_figures`,
:mod:`primaldual.views.gantt`, :mod:`primaldual.views.style`)."""

from primaldual.views.style import COLOURS, colour, marker, ordered, use_agg
from primaldual.views.sweep_figures import (
    CAPTIONS, KNOBS, caption_for, find_alpha, plot_ratios, plot_records, plot_utility, scheduler_names,
    utility_table, varied_knobs,
)

__all__ = [
    "CAPTIONS", "COLOURS", "KNOBS", "caption_for", "colour", "find_alpha", "marker", "ordered", "plot_ratios",
    "plot_records", "plot_utility", "scheduler_names", "use_agg", "utility_table", "varied_knobs",
]
