"""The fast exact min-max solver against brute force, the general greedy and the Pyomo/HiGHS model."""

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest
from hypothesis import given, settings

from primaldual.core.errors import InputError
from primaldual.lbbsp.exact import _deadline_counts, continuous_makespan_lower_bound, solve_exact, solve_greedy
from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.lbbsp.time_laws import TimeLaws
from primaldual.lbbsp.reference import reference_model, solve_reference
from primaldual.backends.solvers import solver_available
from lbbsp_strategies import gpu_problems


def brute_force_makespan(problem: BatchSizingProblem) -> float:
    best = np.inf
    ranges = [range(problem.min_batch, int(c) + 1) for c in problem.memory_cap]
    for batch in itertools.product(*ranges):
        if sum(batch) == problem.global_batch:
            best = min(best, problem.makespan(np.array(batch)))
    return best


@settings(derandomize=True, max_examples=60, deadline=None)
@given(problem=gpu_problems(min_workers=1, max_workers=3, max_batch=14))
def test_fast_solver_matches_brute_force(problem):
    solution = solve_exact(problem)
    assert problem.is_feasible(solution.batch)
    assert solution.makespan == pytest.approx(brute_force_makespan(problem), rel=1e-12)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(problem=gpu_problems(min_workers=1, max_workers=8, max_batch=400))
def test_fast_solver_matches_general_greedy(problem):
    fast = solve_exact(problem)
    greedy = solve_greedy(lambda i, x: float(problem.laws.seconds_of_worker(i, x)), problem.n_workers,
                          problem.global_batch, problem.min_batch, problem.memory_cap)
    assert problem.is_feasible(fast.batch) and problem.is_feasible(greedy.batch)
    assert fast.makespan == pytest.approx(greedy.makespan, rel=1e-12)
    assert fast.makespan >= continuous_makespan_lower_bound(problem) * (1 - 1e-12)


def test_greedy_handles_non_convex_monotone_laws_exactly():
    # A step-shaped (non-convex) monotone law: the greedy argument needs monotonicity only.
    def law(i, x):
        return (1.0 + i) * np.ceil(x / 8.0)

    for total in range(3, 30):
        greedy = solve_greedy(law, 3, total)
        brute = min(max(law(i, b[i]) for i in range(3))
                    for b in itertools.product(range(1, total + 1), repeat=3) if sum(b) == total)
        assert greedy.makespan == brute


@settings(derandomize=True, max_examples=30, deadline=None)
@given(problem=gpu_problems(min_workers=1, max_workers=5, max_batch=80))
def test_fast_solver_equals_pyomo_highs_optimum(problem):
    reference = solve_reference(problem, solver="highs")
    assert reference.status == "optimal"
    assert problem.is_feasible(reference.batch)
    fast = solve_exact(problem)
    assert fast.makespan == pytest.approx(reference.makespan, rel=1e-9)
    assert reference.objective == pytest.approx(fast.makespan, abs=1e-6)
    # Sandwiched between HiGHS's proven lower bound and its incumbent.
    assert reference.bound - 1e-9 <= fast.makespan <= reference.makespan + 1e-12


@pytest.mark.parametrize("solver", ["highs", "cbc", "glpk"])
def test_linear_laws_pyomo_and_fast_agree_with_closed_form(solver):
    # Speeds 1:2:3:4 and X = 100 make the proportional split integral: x* = (10, 20, 30, 40), tau* = 10.
    if not solver_available(solver):
        pytest.skip(f"{solver} is not installed")
    problem = BatchSizingProblem(TimeLaws.linear([1.0, 2.0, 3.0, 4.0]), 100)
    fast = solve_exact(problem)
    assert fast.batch.tolist() == [10, 20, 30, 40]
    assert fast.makespan == pytest.approx(10.0)
    reference = solve_reference(problem, solver=solver)
    assert reference.makespan == pytest.approx(10.0)
    assert reference.batch.tolist() == [10, 20, 30, 40]


def test_deadline_counts_never_overshoot_the_deadline():
    # (deadline - a) / b rounds up to exactly 332 here although a + 332 b > deadline: the warm start
    # must step back to 331 or it could hand out a sample the optimum does not allow.
    intercept, slope, deadline = 0.16308749743962686, 0.011989301832952014, 4.143535705979695
    assert np.floor((deadline - intercept) / slope) == 332 and intercept + 332 * slope > deadline
    problem = BatchSizingProblem(TimeLaws([[intercept]], [[slope]]), 400)
    counts = _deadline_counts(problem, deadline)
    assert counts.tolist() == [331]
    assert problem.laws.seconds(counts)[0] <= deadline


def test_model_structure_maps_to_the_formulation():
    problem = BatchSizingProblem(TimeLaws.flat_then_linear([0.1, 0.2, 0.3], 0.0, [0.01, 0.02, 0.03]), 30,
                                 min_batch=2, memory_cap=[20, 15, 10])
    model = reference_model(problem)
    assert len(model.epigraph) == 3 * 2          # one epigraph row per worker and affine piece
    assert model.conservation.upper == 30 and model.conservation.lower == 30
    assert [model.batch[i].bounds for i in range(3)] == [(2, 20), (2, 15), (2, 10)]
    assert all(model.batch[i].domain is pyo.Integers for i in range(3))
    assert model.batch[0].value == 2             # built, not solved


def test_infeasible_problems_are_rejected():
    laws = TimeLaws.linear([1.0, 1.0])
    with pytest.raises(InputError, match="global_batch"):
        BatchSizingProblem(laws, 1)
    with pytest.raises(InputError, match="memory cap"):
        BatchSizingProblem(laws, 10, memory_cap=[4, 4])


def test_model_takes_plain_arrays():
    # The model knows nothing of BatchSizingProblem: lists and scalars give the same optimum as the problem.
    from primaldual.models.batch_sizing import solve_batch_sizing

    result = solve_batch_sizing([[0.0], [0.0], [0.0], [0.0]], [[1.0], [0.5], [1 / 3], [0.25]], 100, 1,
                                [100, 100, 100, 100])
    assert result.status == "optimal"
    assert result.batch.tolist() == [10, 20, 30, 40]
    assert result.makespan == pytest.approx(10.0)
