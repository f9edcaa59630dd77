"""Figures worth printing: every figure's CSV holds exactly its plotted numbers and redraws it; ratio plots on a
log axis, points below 5 instances, the 2 alpha line only over OASiS; curves at their true x with 95% t intervals;
ten schedulers in ten colour-blind-safe colours and markers."""

from __future__ import annotations

import math

import pytest

from primaldual.cli import main
from primaldual.reproduce.experiments import SCHEDULERS
from primaldual.sweep.statistics import t_interval
from primaldual.views.figure_data import read_csv, save_figure, write_csv
from primaldual.views.style import colour, marker
from primaldual.views.sweep_figures import DODGE, _draw_ratios, draw_ratios, ratio_data, utility_data


def ratio_record(seed: int, ratios: dict[str, float | None]) -> dict:
    return {"key": str(seed), "spec": {"label": "", "preset": "tiny", "seed": seed, "jobs": 4 * (1 + seed % 3)},
            "instance": {},
            "schedulers": {name: {"utility": 0.0 if r is None else 10.0 + seed + len(name),
                                  "parameters": {"alpha": 7.5}} for name, r in ratios.items()},
            "ratios": {name: {"point": r, "lower": r, "upper": None if r is None else r * 1.01}
                       for name, r in ratios.items()}}


def test_fourteen_schedulers_get_fourteen_colours_and_fourteen_markers():
    assert len({colour(n) for n in SCHEDULERS}) == len(SCHEDULERS) == 14
    assert len({marker(n) for n in SCHEDULERS}) == 14


def test_the_csv_round_trips_exactly_and_redraws(tmp_path):
    records = [ratio_record(s, {"oasis": 1.0 + 0.1 * s, "fifo": None if s == 0 else 1.5}) for s in range(6)]
    data = ratio_data(records)
    png = save_figure(data, tmp_path / "r", draw_ratios)
    assert png.read_bytes()[:4] == b"\x89PNG" and (tmp_path / "r.pdf").read_bytes()[:4] == b"%PDF"
    again = read_csv(tmp_path / "r.csv")
    assert again.kind == "ratios" and again.meta == data.meta and again.columns == data.columns
    def same(a, b):
        return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))

    assert len(again.rows) == len(data.rows)
    assert all(all(same(a, b) for a, b in zip(r1, r2)) for r1, r2 in zip(data.rows, again.rows))
    # fifo earned 0 on one instance: an infinite ratio row, not a dropped one.
    assert again.column("value", {"scheduler": "fifo", "role": "unbounded"}) == [math.inf]
    # oasis has 6 instances: a box; fifo's 5 finite ones too; neither would have one below 5.
    assert again.column("value", {"scheduler": "oasis", "role": "median"})
    write_csv(again, tmp_path / "copy.csv")
    assert (tmp_path / "copy.csv").read_text() == (tmp_path / "r.csv").read_text()
    assert main(["plot", "--from-csv", str(tmp_path / "r.csv"), "--out", str(tmp_path / "x.svg")]) == 0
    assert (tmp_path / "x.svg").read_text().lstrip().startswith("<?xml")
    (tmp_path / "r.png").unlink()
    assert main(["plot", "--from-csv", str(tmp_path / "r.csv")]) == 0 and (tmp_path / "r.png").is_file()


def test_bad_figure_csv_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    assert main(["plot", "--from-csv", str(bad)]) == 2
    assert "not a primaldual figure CSV" in capsys.readouterr().err
    assert main(["plot", "--from-csv", str(tmp_path / "missing.csv")]) == 2
    assert main(["plot", "--from-csv", str(bad), "--out", str(tmp_path / "x.jpg")]) == 2


def test_ratio_axis_is_log_points_below_five_and_theory_only_over_oasis():
    import matplotlib.pyplot as plt

    records = [ratio_record(s, {"oasis": 1.0 + 0.05 * s, "rrh": 1.1, "fifo": 60.0 if s else 1.2}) for s in range(3)]
    data = ratio_data(records)
    assert not data.column("value", {"role": "median"})  # 3 instances: points and the mean, no box
    fig, ax = plt.subplots()
    _draw_ratios(ax, data)
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert [label.split(" ")[0] for label in labels] == ["oasis", "fifo", "rrh"] and labels[0] == "oasis (n=3)"
    assert all(t.get_rotation() > 0 for t in ax.get_xticklabels())
    # 2 alpha = 15 lies inside the chart (fifo reaches 60): a segment over oasis's column only, labelled.
    assert any("2 alpha = 15" in t.get_text() for t in ax.texts)
    plt.close(fig)
    low = ratio_data([ratio_record(s, {"oasis": 1.1, "rrh": 1.2}) for s in range(3)])
    fig, ax = plt.subplots()
    _draw_ratios(ax, low)
    assert "lies above the chart" in ax.get_title()
    ticks = ax.get_yticks()
    assert all(b / a >= 1.01 for a, b in zip(ticks, ticks[1:])) and 1.0 in ticks
    plt.close(fig)


def test_utility_points_sit_at_their_true_x_with_t_intervals():
    records = [ratio_record(s, {name: 1.0 for name in SCHEDULERS}) for s in range(9)]
    data = utility_data(records, "jobs")
    xs = sorted(set(data.column("x")))
    span = xs[-1] - xs[0]
    assert xs == [4.0, 8.0, 12.0]
    for row in data.rows:
        assert abs(row[3] - row[2]) <= DODGE * span + 1e-12
    seeds = data.column("value", {"role": "seed", "scheduler": "oasis", "x": 4.0})
    mean_row = [r for r in data.rows if r[0] == "mean" and r[1] == "oasis" and r[2] == 4.0][0]
    interval = t_interval(seeds)
    assert (mean_row[4], mean_row[5], mean_row[6], mean_row[7]) == (interval.mean, interval.low, interval.high, 3)
    assert "95%" in data.meta["caption"] and "3 seeds per point" in data.meta["title"]


@pytest.mark.parametrize("kind", ["cdf", "standalone", "utilisation", "lbbsp", "utility", "trace-cdf"])
def test_every_kind_has_a_drawer(kind):
    from primaldual.views.redraw import DRAWERS

    assert kind in DRAWERS
