"""Gavel's policies (issue 64): the LPs' solutions keep their constraints and match hand-computed and brute-force
optima; the round-based mechanism follows X; the aware form beats the agnostic one where types differ."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.baselines.gavel_lp import FTF_TOLERANCE, GavelProblem, finish_time_fair, max_min
from primaldual.core.errors import InputError
from primaldual.core.verify import verify
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate
from hetero_helpers import typed_instance, typed_job


def two_by_two(rate_a=(1.0, 0.5), rate_b=(1.0, 1.0)):
    """Jobs A and B of one GPU each; types fast and slow of one GPU each."""
    return GavelProblem(rate=np.array([rate_a, rate_b]), allowed=np.ones((2, 2), bool), width=np.ones(2),
                        gpus=np.ones(2), capacity=np.ones(2))


def feasible(problem, X, tol=1e-7):
    assert (X >= -tol).all() and (X <= problem.allowed + tol).all()
    assert (X.sum(axis=1) <= 1 + tol).all()
    assert ((problem.gpus[:, None] * X).sum(axis=0) <= problem.capacity + tol).all()


def test_aware_max_min_by_hand():
    # norm_A = (1 + 0.5) / 2 = 0.75, so A's speeds are 4/3 (fast) and 2/3 (slow); B's are 1 and 1. The max-min
    # value is 1 (B cannot exceed 1: one unit of time at speed 1); with it held, the sum is largest with A all on
    # fast (4/3) and B all on slow: X = [[1, 0], [0, 1]].
    problem = two_by_two()
    X = max_min(problem, aware=True)
    feasible(problem, X)
    assert X == pytest.approx(np.array([[1.0, 0.0], [0.0, 1.0]]), abs=1e-7)


def test_agnostic_max_min_shares_time_and_reads_no_speed():
    problem = two_by_two()
    X = max_min(problem, aware=False)
    feasible(problem, X)
    assert X.sum(axis=1) == pytest.approx([1.0, 1.0], abs=1e-7)  # each job all the time, on either type
    assert max_min(two_by_two(rate_a=(1.0, 0.1)), aware=False).sum(axis=1) == pytest.approx([1.0, 1.0], abs=1e-7)


def test_ftf_by_hand():
    # At t = 0 with the whole of each job left, rho_m = iso_m / thr_m; iso_A = 0.75, iso_B = 1 (the equal share:
    # half of each type). B cannot beat rho = 1, so the optimum is 1 and the most efficient such X puts A on fast.
    problem = two_by_two()
    X = finish_time_fair(problem, np.zeros(2), np.ones(2))
    feasible(problem, X)
    assert X == pytest.approx(np.array([[1.0, 0.0], [0.0, 1.0]]), abs=1e-6)


def _rho(problem, X, elapsed, left):
    """The largest ``rho_m`` of each allocation in ``X`` (shape (..., 2, 2))."""
    iso = (problem.rate * problem.equal_share()).sum(axis=1)
    thr = (problem.rate * X).sum(axis=-1)
    with np.errstate(divide="ignore"):
        return ((elapsed + left / thr) / (elapsed + left / iso)).max(axis=-1)


def _grid(step=0.05):
    """Every X on a grid of ``step`` keeping the 2 x 2 constraints, shape (N, 2, 2)."""
    values = np.arange(0, 1 + 1e-9, step)
    X = np.array(list(itertools.product(values, repeat=4))).reshape(-1, 2, 2)
    return X[(X.sum(axis=2) <= 1 + 1e-9).all(axis=1) & (X.sum(axis=1) <= 1 + 1e-9).all(axis=1)]


rates = st.floats(0.05, 2.0)


@settings(derandomize=True, max_examples=15, deadline=None)
@given(ra=st.tuples(rates, rates), rb=st.tuples(rates, rates), elapsed=st.tuples(st.floats(0, 5), st.floats(0, 5)),
       left=st.tuples(st.floats(0.1, 1), st.floats(0.1, 1)))
def test_both_lps_against_a_grid_brute_force(ra, rb, elapsed, left):
    problem = two_by_two(ra, rb)
    elapsed, left = np.array(elapsed), np.array(left)
    grid = _grid()
    speed = problem.rate / problem.norm()[:, None]
    best_min = float((speed * grid).sum(axis=2).min(axis=1).max())
    X = max_min(problem, aware=True)
    feasible(problem, X)
    assert float((speed * X).sum(axis=1).min()) >= best_min - 1e-6  # the LP is at least as good as any grid point
    best_rho = float(_rho(problem, grid, elapsed, left).min())
    Y = finish_time_fair(problem, elapsed, left)
    feasible(problem, Y)
    assert _rho(problem, Y, elapsed, left) <= best_rho * (1 + 2 * FTF_TOLERANCE) + 1e-9


def test_gangs_only_on_types_that_hold_them():
    problem = GavelProblem(rate=np.array([[1.0, 0.0], [1.0, 0.5]]), allowed=np.array([[True, False], [True, True]]),
                           width=np.array([4.0, 1.0]), gpus=np.array([4.0, 1.0]), capacity=np.array([4.0, 2.0]))
    for X in (max_min(problem, aware=True), max_min(problem, aware=False),
              finish_time_fair(problem, np.zeros(2), np.ones(2))):
        feasible(problem, X)
        assert X[0, 1] == 0.0


def test_the_round_follows_x_and_the_aware_form_finishes_sooner():
    # Two 1-worker jobs, a fast and a slow server of one GPU each. Job 0 is 4x slower on slow, job 1 the same on
    # both: gavel-las puts job 0 on fast, job 1 on slow, both every round.
    jobs = [typed_job(work=4, chunks=1, slower=4.0, worker_demand=(1.0, 1.0)),
            typed_job(work=4, chunks=1, slower=1.0, worker_demand=(1.0, 1.0))]
    instance = typed_instance(jobs, types=("fast", "slow"), horizon=20, gpus=1.0)
    aware = simulate(instance, "gavel-las")
    assert verify(instance, aware.schedule).feasible
    assert aware.metrics.completion_slots == {0: 3, 1: 3}
    assert sum(aware.metrics.jct.values()) <= sum(simulate(instance, "las").metrics.jct.values())


def test_bad_parameters_are_one_line():
    with pytest.raises(InputError, match="placement"):
        make_scheduler("gavel-las", placement="best_fit")
    with pytest.raises(InputError, match="unknown parameter"):
        make_scheduler("gavel-ftf", fairness=0.5)


def test_on_a_contended_heterogeneous_trace_week_the_aware_form_has_the_lower_mean_jct():
    # Gavel's headline comparison (OSDI 2020, section 7), in this simulator: philly:0/7f04ca's busiest week on
    # 5 V100, 5 P100 and 5 K80 servers (120 GPUs). Mean JCT over the jobs each completes, and over the jobs both
    # complete; every schedule verifies.
    from primaldual.traces import TraceOptions, import_trace

    options = TraceOptions(window=(1032, 168), gpu_types=(("v100", 5), ("p100", 5), ("k80", 5)))
    instance = import_trace("philly:0/7f04ca", options)
    runs = {name: simulate(instance, name) for name in ("las", "gavel-las")}
    for run in runs.values():
        assert verify(instance, run.schedule).feasible
    jct = {name: run.metrics.jct for name, run in runs.items()}
    both = set(jct["las"]) & set(jct["gavel-las"])
    assert np.mean(list(jct["gavel-las"].values())) < np.mean(list(jct["las"].values()))
    assert np.mean([jct["gavel-las"][i] for i in both]) < np.mean([jct["las"][i] for i in both])
    assert runs["gavel-las"].completed >= runs["las"].completed


def test_they_run_by_name_from_a_fresh_process_and_leave_the_default_list_alone():
    import json
    import subprocess
    import sys

    code = ("import json; from primaldual.simulation.scheduler import available_schedulers, make_scheduler; "
            "names = [make_scheduler(n).name for n in ('las', 'gavel-las', 'gavel-ftf')]; "
            "print(json.dumps([names, [n for n in available_schedulers() if 'las' in n or 'ftf' in n]]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [["las", "gavel-las", "gavel-ftf"], []]
