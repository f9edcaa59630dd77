"""The numbers behind a figure, as a table that is written beside it and can redraw it.

Every figure of :func:`primaldual.views.sweep_figures.plot_records` and ``primaldual reproduce`` is drawn in
two steps: a *data* function turns records into a :class:`FigureData` (the exact numbers the figure plots, one
row per plotted point, bar end or curve vertex), and a *draw* function (:data:`primaldual.views.redraw.DRAWERS`, by kind) draws the table.
:func:`save_figure` writes the figure as PNG and PDF (and SVG where asked) with ``STEM.csv`` beside it, so
``primaldual plot --from-csv STEM.csv`` (:func:`primaldual.views.redraw.figure_from_csv`) regenerates the same figure from the file
alone: the drawing reads nothing else.

The CSV opens with ``# key: value`` lines (the figure's kind, title, caption and axis settings), then a header
and the rows; numbers are written with ``repr`` (round trip exact), an infinite ratio as ``inf``.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from primaldual.core.errors import InputError

#: The first line of every figure CSV.
MAGIC = "# primaldual figure data"
#: Formats a figure is written in by default (the PNG is the one summary.md embeds).
FORMATS = (".png", ".pdf")
#: Formats ``plot --from-csv --out`` accepts.
ALL_FORMATS = (".png", ".pdf", ".svg")


@dataclass(frozen=True)
class FigureData:
    """One figure's numbers: ``kind`` names its draw function, ``meta`` its text (title, caption, axis labels,
    notes), ``columns``/``rows`` the plotted values (strings or floats)."""

    kind: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    meta: Mapping[str, str] = field(default_factory=dict)

    def column(self, name: str, where: Mapping[str, object] | None = None) -> list:
        """The values of column ``name`` over the rows whose columns equal ``where``."""
        index = {c: k for k, c in enumerate(self.columns)}
        conditions = [(index[key], value) for key, value in (where or {}).items()]
        return [row[index[name]] for row in self.rows if all(row[k] == value for k, value in conditions)]

    def distinct(self, name: str, where: Mapping[str, object] | None = None) -> list:
        """The distinct values of column ``name`` (in first-seen order) over the rows matching ``where``."""
        return list(dict.fromkeys(self.column(name, where)))


def _cell(value) -> str:
    if isinstance(value, float):
        return "inf" if value == math.inf else ("-inf" if value == -math.inf else repr(value))
    return str(value)


def write_csv(data: FigureData, path: Path) -> Path:
    """``path``: the meta lines, then the table (:func:`read_csv` reads it back exactly)."""
    buffer = io.StringIO()
    buffer.write(MAGIC + "\n")
    for key, value in {"kind": data.kind, **data.meta}.items():
        buffer.write(f"# {key}: {' '.join(str(value).splitlines())}\n")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(data.columns)
    writer.writerows([[_cell(v) for v in row] for row in data.rows])
    from primaldual.core.output import write_text

    write_text(path, buffer.getvalue(), "--out")
    return path


def _value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_csv(path: str | Path) -> FigureData:
    """A figure's data from a CSV that :func:`write_csv` wrote; a file that is not one is an InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"--from-csv: no such file: {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0] != MAGIC:
        raise InputError(f"{path}: line 1: not a primaldual figure CSV (expected {MAGIC!r})")
    meta, start = {}, 1
    while start < len(lines) and lines[start].startswith("# "):
        key, sep, value = lines[start][2:].partition(": ")
        if not sep:
            raise InputError(f"{path}: line {start + 1}: expected '# key: value'")
        meta[key] = value
        start += 1
    kind = meta.pop("kind", None)
    if not kind:
        raise InputError(f"{path}: no '# kind: ...' line")
    table = list(csv.reader(lines[start:]))
    if not table:
        raise InputError(f"{path}: line {start + 1}: no header row")
    columns = tuple(table[0])
    for number, row in enumerate(table[1:], start=start + 2):
        if len(row) != len(columns):
            raise InputError(f"{path}: line {number}: {len(row)} fields, the header has {len(columns)}")
    rows = tuple(tuple(_value(v) for v in row) for row in table[1:])
    return FigureData(kind, columns, rows, meta)


def write_figure(fig, paths: list[Path]) -> None:
    import matplotlib.pyplot as plt

    from primaldual.core.output import replacing

    try:
        for path in paths:
            # Beside the target, then renamed: an interrupted or failed write leaves no partial figure.
            with replacing(path, "--out") as temporary:
                fig.savefig(temporary, dpi=150 if path.suffix.lower() == ".png" else None, bbox_inches="tight")
    finally:
        plt.close(fig)


def save_figure(data: FigureData, stem: Path, draw, formats: tuple[str, ...] = FORMATS) -> Path:
    """``draw(data)`` (a new matplotlib Figure) written to ``stem`` + each of ``formats``, and ``stem.csv``;
    returns the first format's path. ``draw`` must be the function :data:`primaldual.views.redraw.DRAWERS`
    holds for ``data.kind``, so that the CSV redraws the same figure."""
    from primaldual.views.style import use_agg

    use_agg()
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_name(stem.name + suffix) for suffix in formats]
    write_figure(draw(data), paths)
    write_csv(data, stem.with_name(stem.name + ".csv"))
    return paths[0]


__all__ = ["ALL_FORMATS", "FORMATS", "FigureData", "read_csv", "save_figure", "write_csv", "write_figure"]
