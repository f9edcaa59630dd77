"""A block's cost adds in index order (primaldual/oasis/lr/reference.py's ``pool_cost``,
primaldual/oasis/lr/admission.py's ``ordered_cost``): the loops, as Python and compiled, and the numpy expression
give the same float, equal to an explicit sum in that order; so a run whose block costs come from the compiled
loops is the run that computes them by numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.dual import kernel
from primaldual.dual.subroutine import unit_prices
from primaldual.oasis.lr import reference
from primaldual.oasis.lr.admission import ordered_cost
from primaldual.simulation.simulator import simulate

COPIES = ("compiled", "python")


def _copy(name: str):
    return reference if name == "python" else kernel.compiled(reference)


def _in_index_order(unit: np.ndarray, counts: np.ndarray) -> float:
    """The hand-written order: each slot's servers from 0.0, then the slots from 0.0, in plain Python floats."""
    total = 0.0
    for row in unit.tolist():
        per_slot = 0.0
        for price, count in zip(row, counts.tolist()):
            per_slot += price * float(count)
        total += per_slot
    return total


@pytest.mark.parametrize("copy", COPIES)
@settings(max_examples=60, deadline=None)
@given(slots=st.integers(1, 160), servers=st.integers(1, 40), resources=st.integers(1, 3),
       first=st.integers(0, 4), seed=st.integers(0, 2 ** 32 - 1))
def test_a_pool_s_cost_is_the_sum_in_index_order_in_every_copy(copy, slots, servers, resources, first, seed):
    """One slot, many, more than numpy's pairwise block of 128 (where numpy's own ``sum`` would differ)."""
    rng = np.random.default_rng(seed)
    prices = rng.uniform(0.1, 5.0, (first + slots + 3, servers, resources)) ** 3
    demand = rng.integers(0, 3, resources).astype(float)
    counts = rng.integers(0, 4, servers)
    last = first + slots - 1
    unit = unit_prices(prices[first:last + 1], demand)
    expected = _in_index_order(unit, counts)
    assert ordered_cost(unit, counts) == expected
    assert _copy(copy).pool_cost(prices, first, last, demand, counts) == expected


def test_index_order_is_not_numpy_s_pairwise_order():
    """The test above can tell orders apart: on values of mixed magnitude numpy's pairwise ``sum`` differs from
    the sum in index order (else it would pass for any order)."""
    values = np.random.default_rng(3).uniform(-1.0, 3.0, 1000) ** 7
    assert ordered_cost(values[None, :], np.ones(1000, dtype=np.int64)) != float(values.sum())


@pytest.mark.fast_tier(1)  # restart cost 0.1 in the slow tier
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
