"""The trace CDF figure of ``reproduce``: its table is the empirical CDF by hand, it is written as PNG, PDF and
CSV, the drawn curves are the CSV's numbers, and ``plot --from-csv`` redraws it from the CSV alone."""

from __future__ import annotations

import math

import numpy as np

from primaldual.cli import main
from primaldual.views.figure_data import read_csv, save_figure
from primaldual.views.redraw import DRAWERS
from primaldual.views.style import colour
from primaldual.views.trace_figures import TraceSamples, draw_trace_cdf, stem, trace_cdf_data

SAMPLES = TraceSamples(
    restart_cost=0.1, cases=2,
    jct={"fifo": np.array([4.0, 1.0, 2.0, 2.0]), "oasis": np.array([1.0, 8.0]), "rrh": np.zeros(0)},
    slowdown={"fifo": np.array([1.0, 1.5, 3.0, 1.0]), "oasis": np.array([1.0, 2.0]), "rrh": np.zeros(0)})


def same(a, b) -> bool:
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def test_the_table_is_the_empirical_cdf_by_hand():
    data = trace_cdf_data(SAMPLES)
    assert data.kind == "trace-cdf" and "trace-cdf" in DRAWERS and stem(0.1) == "traces-cdf-restart-0.1"
    # Canonical order (oasis first), one legend entry per scheduler with its jobs and both medians.
    assert data.distinct("scheduler", {"panel": "jct"}) == ["oasis", "fifo", "rrh"]
    where = {"panel": "jct", "scheduler": "fifo"}
    # Sorted 1, 2, 2, 4: a rise of 1/4 at each, from 0 at the smallest, flat to the panel's largest JCT (8).
    assert data.column("x", where) == [1.0, 1.0, 2.0, 2.0, 4.0, 8.0]
    assert data.column("y", where) == [0.0, 0.25, 0.5, 0.75, 1.0, 1.0]
    assert set(data.column("label", {"scheduler": "fifo"})) == {"fifo: 4 jobs, median JCT 2, median slowdown 1.25"}
    assert data.column("y", {"panel": "slowdown", "scheduler": "oasis"}) == [0.0, 0.5, 1.0, 1.0]
    # A scheduler that completed nothing keeps its legend entry, saying so.
    empty = data.column("x", {"panel": "slowdown", "scheduler": "rrh"})
    assert len(empty) == 1 and math.isnan(empty[0])
    assert data.column("label", {"panel": "slowdown", "scheduler": "rrh"}) == ["rrh: 0 jobs, no JCT, no slowdown"]
    assert "restart cost 0.1" in data.meta["caption"] and "2 cases" in data.meta["caption"]
    assert "log scale" in data.meta["caption"] and data.meta["title"] == "Philly traces, restart cost 0.1: 2 cases"


def test_one_completed_job_reads_1_job():
    one = TraceSamples(restart_cost=0.0, cases=1, jct={"fifo": np.array([3.0])}, slowdown={"fifo": np.array([1.5])})
    assert set(trace_cdf_data(one).column("label")) == {"fifo: 1 job, median JCT 3, median slowdown 1.5"}


def test_the_figure_is_written_as_png_pdf_csv_and_redrawn_from_the_csv(tmp_path):
    data = trace_cdf_data(SAMPLES)
    png = save_figure(data, tmp_path / stem(0.1), draw_trace_cdf)
    assert png.name == "traces-cdf-restart-0.1.png" and png.read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "traces-cdf-restart-0.1.pdf").read_bytes()[:4] == b"%PDF"
    again = read_csv(tmp_path / "traces-cdf-restart-0.1.csv")
    assert again.kind == data.kind and again.columns == data.columns and again.meta == data.meta
    assert len(again.rows) == len(data.rows)
    assert all(all(same(a, b) for a, b in zip(r1, r2)) for r1, r2 in zip(data.rows, again.rows))
    # The drawn curves are exactly the CSV's numbers, in the scheduler's colour, on log x axes.
    fig = draw_trace_cdf(again)
    try:
        left, right = fig.axes
        assert left.get_xscale() == right.get_xscale() == "log"
        fifo = next(line for line in left.get_lines() if line.get_label().startswith("fifo"))
        assert list(fifo.get_xdata()) == again.column("x", {"panel": "jct", "scheduler": "fifo"})
        assert list(fifo.get_ydata()) == again.column("y", {"panel": "jct", "scheduler": "fifo"})
        assert fifo.get_color() == colour("fifo")
        assert [t.get_text() for t in right.get_legend().get_texts()] == [
            "oasis: 2 jobs, median JCT 4.5, median slowdown 1.5", "fifo: 4 jobs, median JCT 2, median slowdown 1.25",
            "rrh: 0 jobs, no JCT, no slowdown"]
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    for suffix in (".png", ".pdf"):
        (tmp_path / f"traces-cdf-restart-0.1{suffix}").unlink()
    assert main(["plot", "--from-csv", str(tmp_path / "traces-cdf-restart-0.1.csv")]) == 0
    assert (tmp_path / "traces-cdf-restart-0.1.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "traces-cdf-restart-0.1.pdf").read_bytes()[:4] == b"%PDF"
    assert main(["plot", "--from-csv", str(tmp_path / "traces-cdf-restart-0.1.csv"), "--out",
                 str(tmp_path / "x.svg")]) == 0
    assert (tmp_path / "x.svg").read_text().lstrip().startswith("<?xml")
