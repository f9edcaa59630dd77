"""The predictors by name: the table the simulator, the replay, real training and the CLI choose from.

Nothing in :mod:`primaldual.lbbsp.predictors` imports this module: it sits on top of them.
"""

from __future__ import annotations

from primaldual.lbbsp.predictors.point import ArxPredictor, EwmaPredictor, LastValuePredictor, NarxPredictor
from primaldual.lbbsp.predictors.regression import ReadingsRegressionPredictor, StateArxPredictor
from primaldual.lbbsp.predictors.robust import RobustChangesPredictor, RobustPredictor
from primaldual.lbbsp.predictors.select import ValidatedPredictor

PREDICTORS = {
    "last": LastValuePredictor,
    "ewma": EwmaPredictor,
    "arx": ArxPredictor,
    "narx": NarxPredictor,
    "sarx": StateArxPredictor,
    "select": ValidatedPredictor,
    "rreg": ReadingsRegressionPredictor,
    "robust": RobustPredictor,
    "robust_changes": RobustChangesPredictor,
}


def make_predictor(name: str, n_workers: int, seed: int = 0):
    """Factory used by the simulator and the CLI; ``seed`` only matters for NARX's initialisation."""
    if name not in PREDICTORS:
        raise ValueError(f"unknown predictor {name!r}; choose from {sorted(PREDICTORS)}")
    if name == "narx":
        return NarxPredictor(n_workers, seed=seed)
    return PREDICTORS[name](n_workers)
