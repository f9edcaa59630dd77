"""Scheduler order and colours, distribution numbers and figures, and the sweep figures' honesty rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from primaldual.core.generate import generate
from primaldual.simulation.simulator import simulate
from primaldual.sweep import distributions as numbers
from primaldual.sweep.distributions import ORDER, ordered
from primaldual.views import distribution_figures as figures
from primaldual.evaluation.outcomes import JobOutcomes, job_outcomes
from primaldual.views.style import COLOURS, colour, marker, seeds_note
from primaldual.views.sweep_figures import caption_for, plot_ratios, plot_records, plot_utility

NAN = math.nan


def test_canonical_order_and_fixed_colours():
    assert ordered(["rrh", "zeta", "OPT", "oasis", "greedy", "alpha", "rrh"]) == [
        "oasis", "greedy", "rrh", "alpha", "zeta", "OPT"]
    assert len({COLOURS[name] for name in ORDER}) == len(ORDER)
    # A name outside the table keeps its colour whatever else is drawn, and never takes a table colour.
    assert colour("my-scheduler") == colour("my-scheduler")
    assert colour("my-scheduler") not in COLOURS.values()
    assert marker("oasis") != marker("greedy")
    assert seeds_note([5, 5]) == "5 seeds" and seeds_note([3, 5, 4]) == "3-5 seeds" and seeds_note([1]) == "1 seed"


def outcomes(jct, standalone_jct, utility, standalone_utility, admitted=None) -> JobOutcomes:
    jct = np.array(jct, dtype=float)
    arrival = np.zeros(len(jct), dtype=int)
    completion = np.where(np.isnan(jct), -1, jct - 1).astype(int)
    return JobOutcomes(arrival, completion, jct, utility, standalone_utility, standalone_jct,
                       jct / np.array(standalone_jct, dtype=float),
                       admitted if admitted is not None else ~np.isnan(jct))


def record(label: str, **entries) -> dict:
    return {"key": label, "spec": {"label": label, "preset": "tiny"}, "instance": {},
            "schedulers": {name: {"utility": float(o.utility.sum()), "outcomes": o.to_dict(),
                                  "metrics": {"utilisation": {"worker": {"gpu": u}}}}
                           for name, (o, u) in entries.items()}}


def test_distribution_summary_numbers():
    first = outcomes([1, 2, NAN], [1, 1, 2], [4.0, 2.0, 0.0], [4.0, 4.0, 0.0])
    second = outcomes([3, 4], [3, 2], [1.0, 3.0], [2.0, 3.0], admitted=np.array([True, True]))
    records = [record("a", fifo=(first, 0.5), oasis=(first, 0.25)), record("b", fifo=(second, 0.7))]
    summary = numbers.distribution_summary(records)
    assert list(summary["schedulers"]) == ["oasis", "fifo"]
    fifo = summary["schedulers"]["fifo"]
    assert (fifo["records"], fifo["jobs"], fifo["completed"], fifo["abandoned"]) == (2, 5, 4, 0)
    assert fifo["jct_slots"]["n"] == 4 and fifo["jct_slots"]["mean"] == 2.5 and fifo["jct_slots"]["p50"] == 2.5
    # Fairness 1/1, 2/1, 3/3, 4/2: median 1.5, mean 1.5.
    assert fifo["finish_time_fairness"]["p50"] == 1.5 and fifo["finish_time_fairness"]["mean"] == 1.5
    # Utility shares over jobs that earn something alone: 1, 0.5, 0.5, 1.
    assert fifo["utility_share_of_standalone"] == pytest.approx(
        {"n": 4, "mean": 0.75, "p10": 0.5, "p25": 0.5, "p50": 0.75, "p75": 1.0, "p90": 1.0})
    assert fifo["utilisation"]["worker/gpu"]["mean"] == pytest.approx(0.6)
    assert summary["schedulers"]["oasis"]["utilisation"]["worker/gpu"]["n"] == 1
    assert numbers.quantiles([])["mean"] is None


def test_abandoned_jobs_count():
    abandoned = outcomes([1, NAN], [1, 1], [1.0, 0.0], [1.0, 1.0], admitted=np.array([True, True]))
    summary = numbers.distribution_summary([record("a", rrh=(abandoned, 0.1))])
    assert summary["schedulers"]["rrh"]["abandoned"] == 1


def test_records_without_outcomes_draw_no_distribution(tmp_path):
    plain = {"key": "k", "spec": {"label": "", "preset": "tiny"}, "instance": {},
             "schedulers": {"fifo": {"utility": 1.0, "metrics": {"utilisation": {"worker": {"gpu": 0.5}}}}}}
    assert figures.plot_distributions([plain], tmp_path, "x") == []
    assert numbers.distribution_summary([plain])["schedulers"]["fifo"].keys() == {"utilisation"}


@pytest.fixture(scope="module")
def simulated_records():
    records = []
    for seed in range(3):
        instance = generate("small", seed=seed, jobs=6)
        entries = {}
        for name in ("rrh", "fifo", "oasis", "greedy"):
            result = simulate(instance, name)
            entries[name] = {"utility": result.utility, "metrics": result.metrics.to_dict(),
                             "outcomes": job_outcomes(instance, result.schedule, received=result.received).to_dict()}
        records.append({"key": str(seed), "spec": {"label": "d", "preset": "small", "seed": seed},
                        "instance": {}, "schedulers": entries})
    return records


def test_distribution_figures_render(simulated_records, tmp_path):
    import matplotlib.pyplot as plt

    written = plot_records(simulated_records, tmp_path)
    assert [p.name for p in written] == [
        "d-small-jct-cdf.png", "d-small-fairness.png", "d-small-utility-vs-standalone.png", "d-small-utilisation.png"]
    assert all(p.stat().st_size > 1000 for p in written)
    assert all(caption_for(p) == figures.CAPTIONS[p.stem.removeprefix("d-small-")] for p in written)
    by_name = numbers.outcomes_by_scheduler(simulated_records)
    fig, ax = plt.subplots()
    figures.plot_jct_cdf(by_name, ax)
    # One curve per scheduler, in the canonical order, each label with its seed count.
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [label.split(":")[0] for label in labels] == ["oasis", "greedy", "fifo", "rrh"]
    assert all("3 seeds" in label for label in labels)
    assert [line.get_color() for line in ax.get_lines()] == [colour(n) for n in ("oasis", "greedy", "fifo", "rrh")]
    plt.close(fig)
    fig, axes = plt.subplots(2, 3)
    figures.plot_utility_vs_standalone(by_name, axes.ravel())
    assert sum(ax.get_visible() for ax in axes.ravel()) == 4
    plt.close(fig)


def ratio_record(seed: int, ratios: dict[str, float]) -> dict:
    return {"key": str(seed), "spec": {"label": "", "preset": "tiny", "seed": seed}, "instance": {},
            "schedulers": {name: {"utility": 1.0, "parameters": {"alpha": 1.5}} for name in ratios},
            "ratios": {name: {"point": r, "lower": r, "upper": r} for name, r in ratios.items()}}


def test_ratio_plot_order_and_no_legend_over_points():
    import matplotlib.pyplot as plt

    records = [ratio_record(s, {"rrh": 1.1, "greedy": 1.2 + s, "oasis": 1.0}) for s in range(4)]
    fig, ax = plt.subplots()
    plot_ratios(records, ax=ax)
    assert [t.get_text().split(" ")[0] for t in ax.get_xticklabels()] == ["oasis", "greedy", "rrh"]
    assert ax.get_legend() is None  # the theory line is labelled beside the axes, not in a box over the points
    assert any("2 alpha = 3" in t.get_text() for t in ax.texts)
    plt.close(fig)


def test_utility_curve_shows_seeds_and_error_bars():
    import matplotlib.pyplot as plt

    records = []
    for jobs in (4, 8):
        for seed in range(3):
            record = ratio_record(seed, {"fifo": 1.0, "oasis": 1.0})
            record["spec"]["jobs"] = jobs
            for name, entry in record["schedulers"].items():
                entry["utility"] = jobs + seed + (name == "oasis")
            records.append(record)
    fig, ax = plt.subplots()
    plot_utility(records, "jobs", ax=ax)
    assert "3 seeds per point" in ax.get_title()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["oasis", "fifo"]
    # Every seed is a dot: 2 schedulers x 2 knob values x 3 seeds.
    dots = sum(len(c.get_offsets()) for c in ax.collections if c.get_offsets().ndim == 2 and len(c.get_offsets()) == 3)
    assert dots == 12
    plt.close(fig)


def test_a_scheduler_that_completes_nothing_keeps_its_legend_entry():
    import matplotlib.pyplot as plt

    nothing = outcomes([NAN, NAN], [1, 1], [0.0, 0.0], [1.0, 1.0])
    some = outcomes([1, 2], [1, 1], [1.0, 1.0], [1.0, 1.0])
    fig, ax = plt.subplots()
    figures.plot_jct_cdf({"oasis": [some], "fifo": [nothing]}, ax)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["oasis: 2/2 completed, 1 seed", "fifo: 0/2 completed, 1 seed"]
    plt.close(fig)
