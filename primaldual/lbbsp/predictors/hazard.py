"""A robust rule whose scenarios are moves of the slowness between workers, weighted by learned hazards ([design]).

In a spike episode one worker is many times slower than the rest, and the episode's slowness sometimes
moves to another worker (the CoV rows of ``primaldual/lbbsp/data/coefficient_variation.csv``; see
``docs/lbbsp-traces.md``). A point predictor keeps the last slow worker slow and pays the whole spike when
it moves. The robust rules of :mod:`.robust` hedge only against moves seen in their last few iterations.

:class:`SwapHazardPredictor` (``hazard``) learns, from the whole past, where the slowness goes. Costs are
divided by their median; an iteration *spikes* when its largest cost exceeds ``spike_ratio``. At every
barrier it ranks the workers by their previous costs and adds one to ``moves[r]``, r being the previous rank
of the worker that is slowest now: one histogram over all barriers, spiking or calm. After a calm iteration it
also counts the barrier, and if the new iteration spikes it records an *onset*: the rank of the new slowest
worker (``onset_ranks``) and the spike's size (``onset_sizes``).

The scenarios for the coming iteration are the last cost vector with the slowest worker's cost swapped with
the rank-r worker's, for every rank r seen (rank 0, no swap, is the last costs themselves), weighted by
``moves``. After a calm iteration, once an onset has been seen (and ``onsets`` is true), it adds onset
scenarios: the rank-r worker's cost raised to the mean onset size, for every onset rank r, with total weight
the onset hazard (onsets / calm barriers) split by ``onset_ranks``; the swap scenarios keep the rest. The
split minimises the expected iteration time over these weighted scenarios (:func:`.robust_lp.robust_shares`):
at most ``2 n`` scenarios, one LP per barrier. It reads only barriers already passed.
"""

from __future__ import annotations

import numpy as np

from primaldual.lbbsp.predictors.robust_lp import FLOOR_SHARE, robust_shares


class SwapHazardPredictor:
    name = "hazard"

    def __init__(self, n_workers: int, spike_ratio: float = 3.0, prior: float = 1.0, onsets: bool = True):
        self.spike_ratio, self.onsets = spike_ratio, onsets
        # Prior: one observation of "the slowest stays slowest", so the first splits are the proportional rule's.
        self.moves = np.zeros(n_workers)
        self.moves[0] = prior
        self.onset_ranks = np.zeros(n_workers)
        self.onset_sizes: list = []
        self.calm_barriers = 0
        self.last = None
        self.shares = None

    def _spiking(self, cost: np.ndarray) -> bool:
        return bool(cost.max() > self.spike_ratio)  # costs are divided by their median

    def _learn(self, cost: np.ndarray) -> None:
        order = np.argsort(-self.last, kind="stable")
        rank = int(np.flatnonzero(order == np.argmax(cost))[0])
        self.moves[rank] += 1.0
        if not self._spiking(self.last):
            self.calm_barriers += 1
            if self._spiking(cost):
                self.onset_ranks[rank] += 1.0
                self.onset_sizes.append(float(cost.max()))

    def _scenarios(self, cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(-cost, kind="stable")
        ranks = np.flatnonzero(self.moves > 0)
        scenarios = np.tile(cost, (ranks.size, 1))
        for row, rank in enumerate(ranks):
            slowest, other = order[0], order[rank]
            scenarios[row, [slowest, other]] = cost[[other, slowest]]
        weights = self.moves[ranks] / self.moves[ranks].sum()
        if not self.onsets or self._spiking(cost) or not self.onset_sizes:
            return scenarios, weights
        hazard = len(self.onset_sizes) / self.calm_barriers
        onset_ranks = np.flatnonzero(self.onset_ranks > 0)
        onsets = np.tile(cost, (onset_ranks.size, 1))
        onsets[np.arange(onset_ranks.size), order[onset_ranks]] = np.maximum(
            cost[order[onset_ranks]], float(np.mean(self.onset_sizes)))
        onset_weights = hazard * self.onset_ranks[onset_ranks] / self.onset_ranks[onset_ranks].sum()
        return np.concatenate([scenarios, onsets]), np.concatenate([(1.0 - hazard) * weights, onset_weights])

    def observe(self, speed, exogenous=None) -> None:
        speed = np.asarray(speed, dtype=float)
        cost = 1.0 / speed
        cost = cost / np.median(cost)
        if self.last is not None:
            self._learn(cost)
        self.last = cost
        scenarios, weights = self._scenarios(cost)
        shares = robust_shares(scenarios, normalise=False, weights=weights)
        self.shares = np.maximum(shares, FLOOR_SHARE) * float(np.sum(speed))

    def predict(self) -> np.ndarray | None:
        return None if self.shares is None else self.shares.copy()
