"""``primaldual plot --from-csv``: a figure redrawn from the CSV written beside it, by the draw function of its
kind (:mod:`primaldual.views.figure_data`)."""

from __future__ import annotations

from pathlib import Path

from primaldual.core.errors import InputError
from primaldual.views.distribution_figures import DRAWERS as DISTRIBUTION_DRAWERS
from primaldual.views.figure_data import ALL_FORMATS, FORMATS, FigureData, write_figure, read_csv
from primaldual.views.lbbsp_figures import DRAWERS as LBBSP_DRAWERS
from primaldual.views.sweep_figures import DRAWERS as SWEEP_DRAWERS
from primaldual.views.trace_figures import DRAWERS as TRACE_DRAWERS

#: kind -> ``draw(data) -> matplotlib Figure``, over every figure module.
DRAWERS = {**SWEEP_DRAWERS, **DISTRIBUTION_DRAWERS, **LBBSP_DRAWERS, **TRACE_DRAWERS}


def draw(data: FigureData):
    """The figure of ``data`` (a new matplotlib Figure); an unknown kind is an InputError."""
    from primaldual.views.style import use_agg

    if data.kind not in DRAWERS:
        raise InputError(f"kind: must be one of {', '.join(DRAWERS)}, got {data.kind!r}")
    use_agg()
    return DRAWERS[data.kind](data)


def figure_from_csv(csv_path: str | Path, out: str | Path | None = None) -> list[Path]:
    """Redraw the figure of ``csv_path`` from that file alone: into ``out`` (its suffix picks the format) or,
    without ``out``, as PNG and PDF beside the CSV (which is left as it is). Returns the files written."""
    data = read_csv(csv_path)
    if out is None:
        stem = Path(csv_path).with_suffix("")
        paths = [stem.with_name(stem.name + suffix) for suffix in FORMATS]
    else:
        paths = [Path(out)]
        if paths[0].suffix.lower() not in ALL_FORMATS:
            raise InputError(f"--out: must end in {', '.join(ALL_FORMATS)}, got {str(out)!r}")
    write_figure(draw(data), paths)
    return paths


__all__ = ["DRAWERS", "draw", "figure_from_csv"]
