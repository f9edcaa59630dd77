"""The ledger's kept unit counts (``Ledger.unit_counts``) are the counts computed afresh after any sequence of
reservations, releases and copies: the cache find_block reads can never serve a stale slot."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.oasis.ledger import _NO_LIMIT, Ledger
from primaldual.oasis.prices import fit_counts


def _fresh(ledger: Ledger, pool: int, demand: np.ndarray) -> np.ndarray:
    capacity, used = (ledger.worker_capacity, ledger.worker_used) if pool == 0 else (ledger.ps_capacity,
                                                                                     ledger.ps_used)
    return fit_counts(capacity[None] - used, demand, _NO_LIMIT)


def _assert_counts_fresh(ledger: Ledger, instance) -> None:
    every = slice(0, instance.horizon)
    for job in instance.jobs:
        for pool, demand in ((0, job.worker_demand), (1, job.ps_demand)):
            np.testing.assert_array_equal(ledger.unit_counts(pool, demand, every), _fresh(ledger, pool, demand))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), steps=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10**6)),
                                                   min_size=1, max_size=12))
def test_kept_counts_equal_fresh_counts_after_any_changes(seed, steps):
    instance = generate("tiny", seed)
    ledger = Ledger(instance)
    _assert_counts_fresh(ledger, instance)  # fills the cache before any change
    twin = None
    for kind, pick in steps:
        i = pick % instance.n_jobs
        job = instance.jobs[i]
        if kind == 0 and i not in ledger.reservations:
            block = ledger.find_block(i, float(instance.work_units[i]), job.arrival, instance.horizon - 1, 0.0)
            if block is not None:
                ledger.add(block)
        elif kind == 1 and ledger.reservations:
            ledger.remove(sorted(ledger.reservations)[pick % len(ledger.reservations)])
        elif kind == 2 and ledger.reservations:
            held = ledger.reservations[sorted(ledger.reservations)[pick % len(ledger.reservations)]]
            ledger.release_before(held.job, held.first + 1 + pick % (held.last - held.first + 1))
        elif kind == 3:
            twin = ledger.copy()  # changed below; the original's counts must not see it
            for j in range(instance.n_jobs):
                if j not in twin.reservations:
                    block = twin.find_block(j, float(instance.work_units[j]), 0, instance.horizon - 1, 0.0)
                    if block is not None:
                        twin.add(block)
        _assert_counts_fresh(ledger, instance)
        if twin is not None:
            _assert_counts_fresh(twin, instance)


def test_the_kept_counts_are_bounded_and_an_evicted_demand_is_recomputed():
    """More shared demand vectors than the cache holds: the ledger keeps the counts of the ``KEPT_DEMANDS`` used
    last only (memory bounded by slots x servers x that), a demand asked for again after its eviction gets
    fresh counts after changes it did not see, and a job's own demand vector is never kept."""
    from dataclasses import replace

    from primaldual.oasis.ledger import KEPT_DEMANDS

    base = generate("small", 3, jobs=3 * KEPT_DEMANDS)
    # Pairs of jobs share a demand vector (only shared ones are kept), more pairs than the cache holds.
    instance = replace(base, jobs=[replace(job, worker_demand=base.jobs[i - i % 2].worker_demand)
                                   for i, job in enumerate(base.jobs)])
    assert len({job.worker_demand.tobytes() for job in instance.jobs}) > KEPT_DEMANDS
    ledger = Ledger(instance)
    _assert_counts_fresh(ledger, instance)
    assert len(ledger._counts) <= KEPT_DEMANDS
    for i, job in enumerate(instance.jobs[:8]):
        block = ledger.find_block(i, float(instance.work_units[i]), job.arrival, instance.horizon - 1, 0.0)
        if block is not None:
            ledger.add(block)
    _assert_counts_fresh(ledger, instance)
    assert len(ledger._counts) <= KEPT_DEMANDS
    own = generate("small", 3, jobs=4)  # every job its own demand vector
    ledger = Ledger(own)
    _assert_counts_fresh(ledger, own)
    assert not any(pool == 0 for pool, _ in ledger._counts)  # no worker demand vector is shared
