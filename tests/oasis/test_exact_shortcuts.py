"""Shortcuts of issue 26 against the plain computations they replace, value for value: the block search's
window minima (a sparse table instead of one neighbour minimum per slot of length)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.oasis.ledger import _RunningMinimum


def _neighbour_minima(counts: np.ndarray, k: int) -> np.ndarray:
    """The plain way: ``k - 1`` steps of the minimum of neighbours."""
    for _ in range(k - 1):
        counts = np.minimum(counts[:-1], counts[1:])
    return counts


@settings(max_examples=200, deadline=None)
@given(n_slots=st.integers(1, 70), servers=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       lengths=st.lists(st.integers(1, 70), min_size=1, max_size=6))
def test_window_minima_are_the_neighbour_minima(n_slots, servers, seed, lengths):
    """For every window length (in any order, as often as asked), both pools' minima over each window equal
    ``k - 1`` steps of neighbour minima."""
    rng = np.random.default_rng(seed)
    worker, ps = rng.integers(0, 9, size=(n_slots, servers)), rng.integers(0, 9, size=(n_slots, servers + 1))
    windows = _RunningMinimum(worker, ps)
    for k in (k for k in lengths if k <= n_slots):
        got = windows.of_length(k)
        assert len(got) == 2
        for counts, minima in zip((worker, ps), got):
            assert np.array_equal(minima, _neighbour_minima(counts, k))
