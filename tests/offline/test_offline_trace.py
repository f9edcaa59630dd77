"""The gap trace of a solve: time to a gap, gap at a time, thinning that never flatters, and the HiGHS hook."""

import math

import pytest

from primaldual.core.generate import generate
from primaldual.offline.matrix import build_matrix_model, solve_matrix_model
from primaldual.offline.trace import gap_at, relative_gap, thin, time_to_gap

TRACE = [(1.0, 50.0, None), (2.0, None, 100.0), (3.0, 90.0, 100.0), (4.0, 80.0, 99.8), (5.0, 99.0, 99.5)]


def test_time_to_gap_and_gap_at_read_the_running_best():
    assert relative_gap(None, 10.0) == math.inf and relative_gap(5.0, 5.0) == 0.0
    assert relative_gap(90.0, 100.0) == pytest.approx(0.1)
    # The weaker incumbent reported at 4 s does not undo 90 (a phase may report less than an earlier one).
    assert gap_at(TRACE, 4.5) == pytest.approx((99.8 - 90.0) / 99.8)
    assert gap_at(TRACE, 0.5) == math.inf and gap_at(TRACE, 2.5) == pytest.approx(0.5)
    assert time_to_gap(TRACE, 0.5) == 2.0 and time_to_gap(TRACE, 0.1) == 3.0
    assert time_to_gap(TRACE, 0.01) == 5.0 and time_to_gap(TRACE, 0.001) is None


def test_thinning_keeps_incumbents_and_never_reaches_a_gap_sooner():
    trace = [(0.0, 1.0, None)] + [(0.01 * k, 1.0 + (k % 7 == 0) * k, 1000.0 - k) for k in range(1, 900)]
    thinned = thin(trace, most=50)
    changes = [list(p) for k, p in enumerate(trace) if k == 0 or p[1] != trace[k - 1][1]]
    assert all(point in thinned for point in changes) and len(thinned) <= max(50, len(changes) + 2)
    for gap in (0.9, 0.5, 0.2, 0.1):
        full, cut = time_to_gap(trace, gap), time_to_gap(thinned, gap)
        assert (full is None and cut is None) or (cut is None or cut >= full)
    assert thinned[-1] == list(trace[-1])


def test_highs_reports_its_progress_to_the_trace():
    trace: list = []
    outcome, _ = solve_matrix_model(build_matrix_model(generate("small", 1)), relax=False, time_limit=3,
                                    mip_gap=1e-7, threads=1, trace=trace, trace_origin=0.0)
    assert outcome.has_solution and trace
    bounds = [b for _, _, b in trace if b is not None]
    assert all(b >= outcome.objective - 1e-6 for b in bounds)  # every reported bound is a bound


def test_the_trace_ends_with_the_solves_final_incumbent_and_bound():
    # HiGHS's callbacks stop before the bound update that proves optimality; the trace's last point must hold
    # it, at the time it was known, or a phase's proven bound reaches the trace only when the whole solve ends.
    trace: list = []
    outcome, _ = solve_matrix_model(build_matrix_model(generate("small", 9)), relax=False, time_limit=60,
                                    mip_gap=1e-7, threads=1, trace=trace, trace_origin=0.0)
    assert outcome.status == "optimal"
    assert trace[-1][1:] == (outcome.objective, outcome.bound)
    assert relative_gap(*trace[-1][1:]) <= 1e-6

