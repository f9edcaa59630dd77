"""numpy's floats from plain loops (primaldual/oasis/lr/blas.py, the block cost of primaldual/oasis/lr/reference.py):
numpy's pairwise sum, numpy's BLAS call and a block's cost, as Python and compiled, equal numpy's own expressions
bit for bit, and a run whose block costs come from the compiled loops is the run that computes them by numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.dual import kernel
from primaldual.dual.subroutine import unit_prices
from primaldual.oasis.lr import blas, reference
from primaldual.simulation.simulator import simulate

COPIES = ("compiled", "python")


def _copy(name: str):
    return reference if name == "python" else kernel.compiled(reference)


def test_numpy_s_blas_is_found_and_agrees_with_numpy():
    """The project's wheels (numpy from PyPI) name their BLAS as :mod:`blas` expects; if a build did not, the
    block cost would be numpy's own and this would be the one test to say so."""
    assert blas.available()


@pytest.mark.parametrize("copy", COPIES)
@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 700), first=st.integers(0, 3), seed=st.integers(0, 2 ** 32 - 1))
def test_pairwise_sum_is_numpy_s_sum(copy, n, first, seed):
    values = np.random.default_rng(seed).uniform(-1.0, 3.0, first + n + 2) ** 5
    assert _copy(copy).pairwise_sum(values, first, n) == values[first:first + n].sum()


@pytest.mark.parametrize("copy", COPIES)
@settings(max_examples=60, deadline=None)
@given(slots=st.integers(1, 160), servers=st.integers(1, 40), resources=st.integers(1, 3),
       first=st.integers(0, 4), seed=st.integers(0, 2 ** 32 - 1))
def test_a_pool_s_cost_is_numpy_s_float(copy, slots, servers, resources, first, seed):
    """One slot (numpy's dot), many (its matrix-vector product), more than 128 (its pairwise halves)."""
    rng = np.random.default_rng(seed)
    prices = rng.uniform(0.1, 5.0, (first + slots + 3, servers, resources)) ** 3
    demand = rng.integers(0, 3, resources).astype(float)
    counts = rng.integers(0, 4, servers)
    last = first + slots - 1
    expected = float((unit_prices(prices[first:last + 1], demand) @ counts).sum())
    assert _copy(copy).pool_cost(prices, first, last, demand, counts) == expected


@pytest.mark.parametrize("restart_cost", [0.0, 0.1])
def test_a_compiled_run_is_the_run_whose_block_costs_numpy_computes(restart_cost):
    """Under ``compiled`` every block cost comes from the loops, under ``reference`` from numpy: the same run."""
    instance = generate("paper", 5, jobs=24)
    runs = []
    for mode in ("compiled", "reference"):
        with kernel.using(mode):
            runs.append(simulate(instance, "oasis-lr", restart_cost=restart_cost))
    assert runs[0].promises.made > 0  # blocks were costed
    assert runs[0].utility == runs[1].utility
    assert runs[0].schedule.same_allocation(runs[1].schedule)
