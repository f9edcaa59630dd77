"""``select``: an online choice among a bank of predictors by their past makespan ([design]).

:class:`ValidatedPredictor` runs a bank (last value, EWMA 0.5 and 0.2, ``sarx`` of :mod:`.regression`, and the
scenario-robust rules of :mod:`.robust`: over the last 5 measured cost vectors, around the last value
with its last 10 relative changes, around ``sarx`` with its last 40 relative errors, the learned moves and
onsets of the slowness of :mod:`.hazard`, and the equal split)
and at each barrier uses the member whose predictions would have given the smallest total *makespan*
over the last ``window`` iterations. For the linear law the makespan of an allocation proportional to a
prediction ``p``, on observed speeds ``v``, is ``max_i (p_i / v_i) / sum_j p_j`` times the global batch
(docs/papers.md, LB-BSP: only relative errors matter), so it is the criterion the CPU rule pays for,
computable from what the barrier measured. Absolute makespans weigh a long iteration more, as the mean
iteration time does. A level shift or a random walk makes ``last`` win; stationary noise makes the
smoothers win; workers that spike in some iterations make the robust rules win; spike episodes whose
slow worker moves make ``hazard`` win; i.i.d. noise makes the equal split win (proofs/lbbsp.md section 2).
Cost per barrier: every member's own update plus O(n) per member for its score.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from primaldual.lbbsp.predictors.hazard import SwapHazardPredictor
from primaldual.lbbsp.predictors.point import EqualPredictor, EwmaPredictor, LastValuePredictor
from primaldual.lbbsp.predictors.regression import StateArxPredictor
from primaldual.lbbsp.predictors.robust import RobustAroundPredictor, RobustChangesPredictor, RobustPredictor


def makespan_ratio(predicted: np.ndarray, speed: np.ndarray) -> float:
    """Makespan of the allocation proportional to ``predicted`` over the optimum, on true ``speed``."""
    return float(np.max(predicted / speed) * speed.sum() / predicted.sum())


class ValidatedPredictor:
    name = "select"

    def __init__(self, n_workers: int, window: int = 40, robust: bool = True, absolute: bool = True):
        self.members = [LastValuePredictor(n_workers), EwmaPredictor(n_workers, 0.5),
                        EwmaPredictor(n_workers, 0.2), StateArxPredictor(n_workers)]
        if robust:
            self.members += [RobustPredictor(n_workers, 5), RobustChangesPredictor(n_workers, 10),
                             RobustAroundPredictor(n_workers, StateArxPredictor(n_workers), 40),
                             SwapHazardPredictor(n_workers), EqualPredictor(n_workers)]
        self.absolute = absolute
        self.scores = [deque(maxlen=window) for _ in self.members]
        self.predictions = [None] * len(self.members)
        self.chosen = 1  # EWMA 0.5 until there is a score to compare

    def observe(self, speed, exogenous=None) -> None:
        speed = np.asarray(speed, dtype=float)
        for index, member in enumerate(self.members):
            if self.predictions[index] is not None:
                ratio = makespan_ratio(self.predictions[index], speed)
                # The optimum's makespan is proportional to 1 / sum(speed): scoring absolute makespans
                # weighs each past iteration by its length, as the mean iteration time does.
                self.scores[index].append(ratio / speed.sum() if self.absolute else ratio)
            member.observe(speed, exogenous)
            self.predictions[index] = member.predict()
        if all(self.scores):
            # Ties go to the earlier (simpler) member: np.argmin returns the first minimum.
            self.chosen = int(np.argmin([np.mean(s) for s in self.scores]))

    def predict(self) -> np.ndarray | None:
        chosen = self.predictions[self.chosen]
        return None if chosen is None else chosen.copy()
