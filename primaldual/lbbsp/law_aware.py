"""The law-aware reference on the synthetic-from-CoV traces (``proofs/lbbsp.md`` section 5).

The CoV generator's law is ours (:func:`primaldual.lbbsp.traces.cov_trace`): per-worker AR(1) levels ``z``,
and iteration t's times are a fixed function of ``z[t]`` and the row's target CoV (:func:`.traces.cov_times`).
Given everything up to t - 1, the levels ``z[t - 1]`` are the whole state: ``z[t]`` is Gaussian around
``persistence * z[t - 1]`` and the target is the table's. The *law-aware rule* knows that state, the law and
the row's target CoV for iteration t. ``cov_times`` fits every iteration exactly to its target, so that target
*is* the realised CoV of the coming iteration: one exact statistic of the coming draw, spike onsets included.
The rule is therefore an upper reference, not a rule a real system can run; with ``known_target`` false it
uses the last measured CoV instead and is causal. At each barrier it samples ``samples`` draws of ``z[t]``
from the conditional law, turns them into cost vectors with the generator's own map, and takes the split
minimising the mean iteration time over them (the scenario LP of :mod:`.predictors.robust_lp`, unnormalised, solved exactly by HiGHS), rounded
to integer batches like every other rule. Batches do not change the law, so minimising each iteration's
conditional expectation minimises the expected total: up to the sampling error of the ``samples`` draws
(measured in ``docs/lbbsp-traces.md``) and integer rounding, no rule that knows at most the past levels
``z`` and the targets has a smaller expected mean iteration time.
"""

from __future__ import annotations

import numpy as np

from primaldual.lbbsp.cpu import proportional_batches
from primaldual.lbbsp.predictors.robust_lp import robust_shares
from primaldual.lbbsp.traces import COV_CONCENTRATION, COV_PERSISTENCE, cov_levels, cov_target, cov_times


def law_aware_batches(scenarios_of, iterations: int, global_batch: int) -> np.ndarray:
    """Integer batches (one row per iteration) minimising the mean of ``max_i c[s, i] x_i`` over the cost
    scenarios ``scenarios_of(t)`` (shape (S, n), > 0), which must be drawn from what is known before t."""
    rows = []
    for t in range(iterations):
        shares = robust_shares(scenarios_of(t), normalise=False)
        rows.append(proportional_batches(np.maximum(shares, 1e-12), global_batch))
    return np.array(rows, dtype=np.int64)


def cov_scenarios(previous_levels, target: float, samples: int, rng, workers: int,
                  persistence: float = COV_PERSISTENCE, concentration: float = COV_CONCENTRATION) -> np.ndarray:
    """``samples`` draws of one iteration's times under the CoV law, given the previous levels (``None`` at
    t = 0: the stationary law N(0, 1)) and the iteration's target CoV. Only the past enters: the signature
    has no room for the coming draw."""
    noise = rng.normal(size=(samples, workers))
    if previous_levels is None:
        levels = noise
    else:
        levels = persistence * np.asarray(previous_levels, dtype=float) + np.sqrt(1.0 - persistence ** 2) * noise
    return cov_times(levels, np.full(samples, float(target)), concentration)


def cov_law_aware_batches(levels: np.ndarray, target: np.ndarray, global_batch: int, samples: int = 200,
                          sample_seed: int = 0, known_target: bool = True) -> np.ndarray:
    """The law-aware rule's batches on the CoV trace with AR(1) levels ``levels`` and targets ``target``:
    at iteration t it sees ``levels[t - 1]`` and ``target[t]`` only (module docstring: ``target[t]`` is the
    coming iteration's realised CoV, so this is an upper reference, not a causal rule).

    With ``known_target`` false the rule does not know the row's schedule: it assumes the coming iteration's
    CoV is the last one's, ``target[t - 1]`` (0 at t = 0), which the barrier measured: this variant is causal.
    Its shortfall from the law-aware rule is what knowing *when* the spread changes is worth."""
    if samples < 2:
        raise ValueError(f"samples: need >= 2, got {samples}")
    rng = np.random.default_rng(sample_seed)
    workers = levels.shape[1]

    def scenarios_of(t: int) -> np.ndarray:
        spread = target[t] if known_target else (target[t - 1] if t else 0.0)
        return cov_scenarios(None if t == 0 else levels[t - 1], spread, samples, rng, workers)

    return law_aware_batches(scenarios_of, target.size, global_batch)


def cov_row_levels(job: int, seed: int = 0, workers: int = 10, max_iterations: int | None = None,
                   table=None) -> tuple[np.ndarray, np.ndarray]:
    """``(levels, target)`` behind ``cov_trace(job, workers, seed, max_iterations=...)``: the same draws."""
    target = cov_target(job, table, max_iterations)
    return cov_levels(target.size, workers, COV_PERSISTENCE, np.random.default_rng(seed)), target
