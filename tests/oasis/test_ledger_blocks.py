"""The ledger's block search (:func:`primaldual.oasis.lr.blocks.find_block`, as Python and compiled) is the
brute force of its definition after any sequence of reservations, releases and copies: every start and every
worker count tried, each window's units counted slot by slot."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.core.standalone import fit_counts
from primaldual.dual import kernel
from primaldual.oasis.ledger import WORK_EPSILON, Ledger, block_length
from primaldual.oasis.lr import reference


def _most_room_first(caps: np.ndarray, count: int) -> list[int]:
    out, left = [0] * caps.shape[0], count
    for s in sorted(range(caps.shape[0]), key=lambda s: (-caps[s], s)):
        out[s] = int(min(caps[s], left))
        left -= out[s]
    return out


def _brute_block(ledger: Ledger, i: int, remaining: float, earliest: int, deadline: int, restart_cost: float,
                 late: bool):
    """``(first, last, workers, PSs)`` of the block the definition chooses, or None."""
    instance = ledger.instance
    job = instance.jobs[i]
    deadline = min(deadline, instance.horizon - 1)
    most = int(min(job.chunks, math.ceil(remaining - WORK_EPSILON)))
    best = None  # (key, first, k, workers, worker caps, PSs, PS caps)
    for workers in range(most, 0, -1):
        needed = int(job.min_parameter_servers(workers))
        k = block_length(remaining, workers, restart_cost)
        if needed > workers:
            continue
        for first in range(earliest, deadline - k + 2):
            rows = slice(first, first + k)
            worker_caps = fit_counts(ledger.worker_capacity[None] - ledger.worker_used[rows], job.worker_demand,
                                     workers).min(axis=0)
            ps_caps = fit_counts(ledger.ps_capacity[None] - ledger.ps_used[rows], job.ps_demand,
                                 max(needed, 1)).min(axis=0)
            if worker_caps.sum() < workers or ps_caps.sum() < needed:
                continue
            key = first if late else -(first + k)
            if best is None or key > best[0]:
                best = (key, first, k, workers, worker_caps, needed, ps_caps)
    if best is None:
        return None
    _, first, k, workers, worker_caps, needed, ps_caps = best
    return first, first + k - 1, _most_room_first(worker_caps, workers), _most_room_first(ps_caps, needed)


def _as_tuple(block):
    return None if block is None else (block.first, block.last, block.workers.tolist(),
                                       block.parameter_servers.tolist())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), compiled=st.booleans(),
       steps=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10**6)), min_size=1, max_size=10))
def test_find_block_is_the_brute_force_after_any_changes(seed, compiled, steps):
    instance = generate("tiny" if seed % 2 else "small", seed)
    code = kernel.compiled(reference) if compiled else reference
    ledger = Ledger(instance, code)
    for kind, pick in steps:
        i = pick % instance.n_jobs
        job = instance.jobs[i]
        remaining = float(1 + pick % (2 * int(instance.work_units[i]) + 1)) + (0.25 if pick % 3 == 0 else 0.0)
        earliest = (pick // 7) % instance.horizon
        restart_cost, late = (0.0, 0.1, 0.5)[pick % 3], bool(pick % 4)
        block = ledger.find_block(i, remaining, earliest, instance.horizon - 1 - pick % 3, restart_cost, late)
        assert _as_tuple(block) == _brute_block(ledger, i, remaining, earliest, instance.horizon - 1 - pick % 3,
                                                restart_cost, late)
        if kind == 0 and block is not None and i not in ledger.reservations:
            ledger.add(block)
        elif kind == 1 and ledger.reservations:
            ledger.remove(sorted(ledger.reservations)[pick % len(ledger.reservations)])
        elif kind == 2 and ledger.reservations:
            held = ledger.reservations[sorted(ledger.reservations)[pick % len(ledger.reservations)]]
            ledger.release_before(held.job, held.first + 1 + pick % (held.last - held.first + 1))
        elif kind == 3:
            ledger = ledger.copy()
        del job


def test_a_block_that_cannot_fit_is_none():
    instance = generate("tiny", 1)
    ledger = Ledger(instance)
    assert ledger.find_block(0, 5.0, 3, 2, 0.0) is None  # deadline before the earliest slot
    assert ledger.find_block(0, 0.0, 0, instance.horizon - 1, 0.0) is None  # no work left
