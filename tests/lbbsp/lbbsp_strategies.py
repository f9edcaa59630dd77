"""Shared hypothesis strategies and builders for the LB-BSP tests."""

import numpy as np
from hypothesis import strategies as st

from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.lbbsp.time_laws import TimeLaws


def random_gpu_problem(rng: np.random.Generator, n: int, global_batch: int, capped: bool = True) -> BatchSizingProblem:
    """Flat-then-linear laws with random knees and slopes, optional random memory caps."""
    laws = TimeLaws.flat_then_linear(rng.uniform(0.01, 0.3, n), rng.uniform(0.0, 0.05, n),
                                     rng.uniform(0.0005, 0.02, n))
    cap = None
    if capped:
        cap = rng.integers(-(-global_batch // n), global_batch + 1, n)
    return BatchSizingProblem(laws, global_batch, 1, cap)


@st.composite
def gpu_problems(draw, min_workers=2, max_workers=6, max_batch=200):
    n = draw(st.integers(min_workers, max_workers))
    global_batch = draw(st.integers(2 * n, max_batch))
    seed = draw(st.integers(0, 2**32 - 1))
    return random_gpu_problem(np.random.default_rng(seed), n, global_batch, capped=draw(st.booleans()))


speeds = st.lists(st.floats(0.1, 1000.0, allow_nan=False, allow_infinity=False), min_size=1, max_size=12)


def scenario_objective(costs, shares, tail=0.0, normalise=True):
    """Mean (``tail = 0``) or CVaR of ``max_i costs[s, i] shares_i`` over scenario rows, computed directly."""
    if normalise:
        costs = costs / np.median(costs, axis=1, keepdims=True)
    makespans = np.sort(np.max(costs * shares, axis=1))
    if tail == 0.0:
        return makespans.mean()
    # CVaR by its Rockafellar-Uryasev definition, minimised over eta at the scenario values.
    return min(eta + np.maximum(makespans - eta, 0).sum() / ((1 - tail) * len(makespans)) for eta in makespans)
