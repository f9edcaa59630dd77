"""The figures of ``primaldual reproduce`` beyond :func:`primaldual.views.sweep_figures.plot_records`: total
utility against the number of jobs with OPT's certified interval drawn as a band (where OPT was computed)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from primaldual.sweep.records import Record, typed


def opt_band(records: list[Record | dict], knob: str = "jobs") -> list[tuple[float, float, float, int]]:
    """Per knob value with an OPT solve: (value, mean low, mean high, instances) of the OPT interval."""
    ends: dict[float, list[tuple[float, float]]] = defaultdict(list)
    for record in typed(records):
        interval = record.opt_interval
        if not record.opt.get("computed") or interval is None or interval.high is None:
            continue
        value = record.spec.get(knob) or record.instance.get(knob)
        ends[value].append((interval.low, interval.high))
    return [(value, float(np.mean([lo for lo, _ in pairs])), float(np.mean([hi for _, hi in pairs])), len(pairs))
            for value, pairs in sorted(ends.items())]


def utility_with_opt_band(records: list[dict], path: Path, title: str, knob: str = "jobs") -> Path | None:
    """The utility curve of :func:`~primaldual.views.sweep_figures.utility_data` with OPT's band, written to
    ``path`` + ``.png``, ``.pdf`` and ``.csv`` (:func:`~primaldual.views.figure_data.save_figure`);
    None when no record of ``records`` computed OPT."""
    band = opt_band(records, knob)
    if not band:
        return None
    from primaldual.views.figure_data import save_figure
    from primaldual.views.sweep_figures import draw_utility, utility_data

    return save_figure(utility_data(records, knob, title, band=band), Path(path), draw_utility)


#: Caption of the figure above (``caption_for`` of the views knows only the figures it draws).
OPT_BAND_CAPTION = ("Total utility per scheduler against the number of jobs, as in the figure without the band "
                    "(bars: 95% Student-t interval over seeds); grey band: OPT's certified interval (column "
                    "generation: verified schedule below, bound above), the means of its ends over seeds.")
