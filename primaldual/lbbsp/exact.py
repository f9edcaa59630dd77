"""Fast exact solver of the min-max batch-sizing problem (docs/papers.md, LB-BSP, [design]).

Two solvers, both exact:

* :func:`solve_greedy` -- the textbook rule "give the next sample to whoever finishes earliest with it",
  starting from ``min_batch`` everywhere. Exact for *any* non-decreasing separable laws: if the greedy
  ever created a time above the optimum tau*, every worker would already hold at least as many samples
  as the largest count it can take within tau* (monotonicity), so the total would already be >= X.
  It accepts any callable law and is the slow, general reference.
* :func:`solve_exact` -- the same greedy, warm-started by water-filling: bisection on a deadline tau
  finds an allocation ``x0_i = clip(floor(T_i^{-1}(tau)), min_batch, M_i)`` with ``sum x0 < X``, which
  forces ``tau < tau*``, hence ``T_i(x0_i) <= tau*`` for every worker; the greedy argument above then
  still applies from ``x0``, and only ``X - sum x0`` (typically < n) greedy steps remain. This plays
  the role of "water-filling with rounding", with the rounding done greedily so that it is exact.

Ties go to the lowest worker index, so results are deterministic.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Callable

import numpy as np

from primaldual.lbbsp.problem import BatchSizingProblem


@dataclass(frozen=True)
class ExactSolution:
    """An optimal allocation ``batch`` and its ``makespan`` (= max_i T_i(batch_i))."""

    batch: np.ndarray
    makespan: float


def solve_greedy(
    seconds_of_worker: Callable[[int, int], float],
    n_workers: int,
    global_batch: int,
    min_batch: int = 1,
    memory_cap=None,
) -> ExactSolution:
    """Exact min-max allocation for arbitrary non-decreasing laws ``seconds_of_worker(i, x)``.

    O((X - n * min_batch) log n) law evaluations; meant as a reference, not for the hot loop.
    """
    cap = np.full(n_workers, global_batch, dtype=np.int64) if memory_cap is None else np.asarray(memory_cap, np.int64)
    batch = np.full(n_workers, min_batch, dtype=np.int64)
    if n_workers * min_batch > global_batch or cap.sum() < global_batch:
        raise ValueError("infeasible batch-sizing instance")
    batch = _fill_greedily(seconds_of_worker, batch, cap, global_batch - n_workers * min_batch)
    makespan = max(float(seconds_of_worker(i, int(batch[i]))) for i in range(n_workers))
    return ExactSolution(batch=batch, makespan=makespan)


def _fill_greedily(seconds_of_worker, batch: np.ndarray, cap: np.ndarray, samples: int) -> np.ndarray:
    """Hand out ``samples`` more samples one at a time, each to the worker that finishes earliest with it.

    Only the worker that just received a sample changes its next finish time, so a heap keyed on
    (time, index) makes each step O(log n) instead of an O(n) rescan; the index in the key sends ties
    to the lowest worker index. ``batch`` is updated in place and returned.
    """
    heap = [(float(seconds_of_worker(i, int(batch[i]) + 1)), i) for i in range(batch.size) if batch[i] < cap[i]]
    heapq.heapify(heap)
    for _ in range(samples):
        _, worker = heapq.heappop(heap)
        batch[worker] += 1
        if batch[worker] < cap[worker]:
            heapq.heappush(heap, (float(seconds_of_worker(worker, int(batch[worker]) + 1)), worker))
    return batch


def _deadline_counts(problem: BatchSizingProblem, deadline: float) -> np.ndarray:
    """Per worker, the largest integer batch in [min_batch, M_i] finishing within ``deadline``
    (clamped at ``min_batch`` when even that does not)."""
    raw = problem.laws.max_batch_within(deadline)
    counts = np.clip(np.floor(np.nan_to_num(raw, posinf=2.0**62, neginf=-1.0)), problem.min_batch,
                     problem.memory_cap).astype(np.int64)
    # floor() of a quotient can land one above the true count by rounding; the warm-start proof
    # needs T_i(x0_i) <= deadline, so step back where the law disagrees.
    over = (problem.laws.seconds(counts) > deadline) & (counts > problem.min_batch)
    counts[over] -= 1
    return counts


def solve_exact(problem: BatchSizingProblem) -> ExactSolution:
    """Optimal integer allocation for the max-of-affine laws of ``problem`` (see module docstring)."""
    laws, target = problem.laws, problem.global_batch
    lower = problem.lower
    if int(lower.sum()) == target:
        return ExactSolution(batch=lower, makespan=problem.makespan(lower))
    start = lower
    low = float(np.min(laws.seconds(lower)))
    high = float(np.max(laws.seconds(problem.memory_cap)))
    # Bisection keeps the invariant sum(counts(low)) < X (so low < tau*); stop once few samples remain.
    for _ in range(100):
        middle = 0.5 * (low + high)
        if not low < middle < high:
            break
        counts = _deadline_counts(problem, middle)
        total = int(counts.sum())
        if total < target:
            low, start = middle, counts
            if target - total <= problem.n_workers:
                break
        else:
            high = middle
    batch = _fill_greedily(laws.seconds_of_worker, start.copy(), problem.memory_cap, target - int(start.sum()))
    return ExactSolution(batch=batch, makespan=problem.makespan(batch))


def continuous_makespan_lower_bound(problem: BatchSizingProblem) -> float:
    """Smallest deadline whose real-valued counts sum to X: a lower bound on the integer optimum."""
    def total(deadline: float) -> float:
        return float(np.sum(np.clip(problem.laws.max_batch_within(deadline), problem.min_batch, problem.memory_cap)))

    low = float(np.min(problem.laws.seconds(problem.lower)))
    high = float(np.max(problem.laws.seconds(problem.memory_cap)))
    for _ in range(200):
        middle = 0.5 * (low + high)
        if not low < middle < high:
            break
        if total(middle) < problem.global_batch:
            low = middle
        else:
            high = middle
    return high
