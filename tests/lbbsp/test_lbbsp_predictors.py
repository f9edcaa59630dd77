"""Speed predictors: warm-up behaviour, learning the exogenous relation, determinism."""

import numpy as np
import pytest

from primaldual.lbbsp.predictors.point import ArxPredictor, EwmaPredictor, LastValuePredictor, NarxPredictor
from primaldual.lbbsp.predictors.registry import PREDICTORS, make_predictor


def availability_driven_run(predictors, iterations=300, warmup=100, seed=0):
    """Speed during iteration t = base * availability read at the barrier before t; the availability
    jumps at random. Only a model that uses the exogenous reading can foresee the jumps."""
    rng = np.random.default_rng(seed)
    base = np.array([50.0, 80.0, 120.0, 200.0])
    availability = np.ones(4)
    errors = {name: [] for name in predictors}
    for t in range(iterations):
        speed = base * availability
        for name, predictor in predictors.items():
            if t >= warmup:
                errors[name].append(np.abs(predictor.predict() / speed - 1.0))
        new = np.where(rng.random(4) < 0.1, rng.uniform(0.3, 1.0, 4), availability)
        readings = np.stack([new, np.full(4, 0.5)], axis=1)
        for predictor in predictors.values():
            predictor.observe(speed, readings)
        availability = new
    return {name: float(np.mean(e)) for name, e in errors.items()}


def test_learned_models_use_the_exogenous_inputs():
    errors = availability_driven_run({
        "last": LastValuePredictor(4), "ewma": EwmaPredictor(4), "arx": ArxPredictor(4),
        "narx": NarxPredictor(4, seed=0)})
    # log v^{t+1} = log base + log u^t is exactly linear in ARX's log features
    assert errors["arx"] < 1e-3
    assert errors["narx"] < 0.25 * errors["last"]
    assert errors["last"] > 0.02 and errors["ewma"] > 0.02


@pytest.mark.parametrize("name", sorted(PREDICTORS))
def test_static_speeds_are_predicted(name):
    predictor = make_predictor(name, 3, seed=1)
    assert predictor.predict() is None            # no data: caller keeps equal batches
    speed = np.array([10.0, 20.0, 35.0])
    for _ in range(40):
        predictor.observe(speed, np.tile([0.9, 0.8], (3, 1)))
    np.testing.assert_allclose(predictor.predict(), speed, rtol=1e-2)


def test_narx_is_deterministic_given_the_seed():
    runs = []
    for _ in range(2):
        predictor = NarxPredictor(2, seed=5)
        rng = np.random.default_rng(3)
        for _ in range(60):
            predictor.observe(rng.uniform(10, 20, 2), rng.uniform(0, 1, (2, 2)))
        runs.append(predictor.predict())
    np.testing.assert_array_equal(runs[0], runs[1])


def test_window_is_sliding():
    predictor = ArxPredictor(1, history=30)
    for t in range(200):
        predictor.observe(np.array([1.0 + t]), np.array([[0.5, 0.5]]))
    assert len(predictor.speeds) <= 30 + 3
