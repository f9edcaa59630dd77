"""Hypothesis strategy for straggler traces far more variable than the PAI ones, but predictable.

Every trace has persistent structure a causal rule can learn -- unequal machines, random-walk drift,
straggler episodes of at least ``MIN_EPISODE`` iterations with heavy-tailed (Pareto) slowdowns, possibly
on many workers at once -- plus i.i.d. lognormal noise of at most ``MAX_NOISE`` (the PAI traces' level,
~3%). Up to 20 episodes per trace, Pareto shape >= 1.5 (slowdowns capped at 8x). Purely unpredictable variability (one-iteration spikes, large i.i.d. noise) is excluded on purpose:
the clairvoyant oracle profits from it and no rule that decides before the iteration runs can. Denser,
heavier episodes (40 onsets in 62 iterations, Pareto shape ~1) gave a share of 0.43 (docs/lbbsp-traces.md).
"""

import numpy as np
from hypothesis import strategies as st

from primaldual.lbbsp.traces import WorkerTrace

MIN_EPISODE = 5
MAX_NOISE = 0.03


def variable_trace(seed: int, workers: int, iterations: int, heterogeneity: float, drift: float,
                   episodes: int, pareto_shape: float, noise: float) -> WorkerTrace:
    rng = np.random.default_rng(seed)
    log_time = rng.normal(0.0, heterogeneity, size=workers)[None, :].repeat(iterations, axis=0)
    log_time = log_time + np.cumsum(rng.normal(0.0, drift, size=(iterations, workers)), axis=0)
    for _ in range(episodes):
        worker, start = rng.integers(workers), rng.integers(iterations)
        length = MIN_EPISODE + rng.geometric(0.1)
        slowdown = min(1.0 + rng.pareto(pareto_shape), 8.0)
        log_time[start:start + length, worker] += np.log(slowdown)
    log_time += rng.normal(0.0, noise, size=(iterations, workers))
    return WorkerTrace(f"generated:{seed}", np.exp(log_time), np.arange(iterations), np.arange(workers))


@st.composite
def variable_traces(draw):
    return variable_trace(
        seed=draw(st.integers(0, 2**32 - 1)), workers=draw(st.integers(2, 16)), iterations=draw(st.integers(60, 160)),
        heterogeneity=draw(st.floats(0.1, 0.6)), drift=draw(st.floats(0.0, 0.08)),
        episodes=draw(st.integers(0, 20)), pareto_shape=draw(st.floats(1.5, 3.0)),
        noise=draw(st.floats(0.0, MAX_NOISE)))
