"""The offer round's vector call (issue 26): which pending jobs are due, one vector call per round instead of
one test per job. (The round's cost-floor screen was removed in issue 51: it bought nothing measurable,
``docs/measurements.md``, "What each cache buys".)"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.oasis.lr.state import LastOffers


@settings(max_examples=200, deadline=None)
@given(offers=st.lists(st.tuples(st.one_of(st.none(), st.tuples(st.integers(0, 50), st.integers(0, 10**6))),
                                 st.integers(0, 10**6)), min_size=1, max_size=12),
       slot=st.integers(0, 60), every=st.integers(1, 5))
def test_which_jobs_are_due_is_the_rule_job_by_job(offers, slot, every):
    """``LastOffers.due`` is, job by job, the rule as written for one job: never offered, or ``every`` slots
    since its last offer, or its remaining work at most three quarters of what it was then."""
    last = LastOffers.none(len(offers))
    for i, (previous, _) in enumerate(offers):
        if previous is not None:
            last.record(previous[0], np.array([i]), np.array([previous[1]]))
    remaining = np.array([left for _, left in offers], dtype=np.int64)
    due = last.due(slot, np.arange(len(offers)), remaining, every)
    for i, (previous, _) in enumerate(offers):
        expected = previous is None or slot - previous[0] >= every or remaining[i] <= 0.75 * previous[1]
        assert bool(due[i]) == expected
