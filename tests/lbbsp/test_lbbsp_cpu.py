"""The CPU rule: proportional batches with largest-remainder rounding and water-filling bounds."""

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from lbbsp_strategies import speeds
from primaldual.core.errors import InputError
from primaldual.lbbsp.cpu import equal_batches, largest_remainder, proportional_batches, proportional_shares
from primaldual.lbbsp.exact import solve_exact
from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.lbbsp.scenarios import Scenario, generate_trace
from primaldual.lbbsp.simulator import CpuController, run_method
from primaldual.lbbsp.time_laws import TimeLaws

SETTINGS = settings(derandomize=True, max_examples=80, deadline=None)


@st.composite
def capped_instances(draw):
    v = np.array(draw(st.lists(st.floats(0.1, 100.0), min_size=1, max_size=10)))
    n = len(v)
    min_batch = draw(st.integers(0, 3))
    global_batch = draw(st.integers(max(1, n * min_batch), 400))
    caps = np.array(draw(st.lists(st.integers(min_batch, 400), min_size=n, max_size=n)))
    assume(caps.sum() >= global_batch)
    return v, global_batch, min_batch, caps


@SETTINGS
@given(instance=capped_instances())
def test_conservation_and_bounds(instance):
    v, global_batch, min_batch, caps = instance
    batch = proportional_batches(v, global_batch, min_batch, caps)
    assert batch.dtype.kind == "i"
    assert int(batch.sum()) == global_batch
    assert np.all(batch >= min_batch) and np.all(batch <= caps)


@SETTINGS
@given(instance=capped_instances())
def test_water_filling_is_the_continuous_min_max_optimum(instance):
    # KKT of min max x_i / v_i with box constraints: one common "finish time" lambda for the
    # workers strictly inside their bounds; those at the upper bound finish no later, those at
    # the lower bound no earlier.
    v, global_batch, min_batch, caps = instance
    shares = proportional_shares(v, global_batch, min_batch, caps)
    assert shares.sum() == pytest.approx(global_batch, rel=1e-12)
    ratio = shares / v
    inside = (shares > min_batch + 1e-9) & (shares < caps - 1e-9)
    if inside.any():
        level = ratio[inside]
        assert np.ptp(level) <= 1e-9 * level.max()
        at_cap = shares >= caps - 1e-9
        at_floor = shares <= min_batch + 1e-9
        assert np.all(ratio[at_cap & ~at_floor] <= level.max() * (1 + 1e-9))
        assert np.all(ratio[at_floor & ~at_cap] >= level.min() * (1 - 1e-9))


@SETTINGS
@given(v=speeds, global_batch=st.integers(12, 5000))
def test_closed_form_uncapped(v, global_batch):
    v = np.array(v)
    assume(global_batch >= len(v))
    shares = proportional_shares(v, global_batch, min_batch=0)
    np.testing.assert_allclose(shares, global_batch * v / v.sum(), rtol=1e-9)
    batch = proportional_batches(v, global_batch, min_batch=0)
    assert np.all(np.abs(batch - shares) < 1.0 + 1e-9)  # rounding moves less than one sample


@SETTINGS
@given(v=speeds, global_batch=st.integers(1, 5000), scale=st.floats(1e-3, 1e3))
@example(v=[3.0, 1.0], global_batch=10, scale=3.0)   # shares 7.5 / 2.5: a tie that float noise would break
def test_scale_invariance(v, global_batch, scale):
    v = np.array(v)
    assume(global_batch >= len(v))
    np.testing.assert_array_equal(proportional_batches(v, global_batch), proportional_batches(scale * v, global_batch))


@SETTINGS
@given(v=speeds, global_batch=st.integers(1, 5000), seed=st.integers(0, 1000))
def test_permutation_equivariance(v, global_batch, seed):
    v = np.array(v)
    assume(global_batch >= len(v) and len(np.unique(v)) == len(v))  # ties go to the lower index by design
    permutation = np.random.default_rng(seed).permutation(len(v))
    np.testing.assert_array_equal(proportional_batches(v[permutation], global_batch),
                                  proportional_batches(v, global_batch)[permutation])


@SETTINGS
@given(v=speeds, global_batch=st.integers(1, 5000))
def test_monotone_in_speed(v, global_batch):
    v = np.array(v)
    assume(global_batch >= len(v))
    batch = proportional_batches(v, global_batch)
    for i in range(len(v)):
        for j in range(len(v)):
            if v[i] > v[j]:
                assert batch[i] >= batch[j]
            elif v[i] == v[j]:
                assert abs(int(batch[i]) - int(batch[j])) <= 1  # equal speeds: only the rounding tie-break differs


@SETTINGS
@given(v=speeds, global_batch=st.integers(1, 3000))
def test_near_optimal_against_exact_integer_optimum(v, global_batch):
    # Digest 5.4.2: rounding costs at most one per-sample time of the slowest worker.
    v = np.array(v)
    assume(global_batch >= len(v))
    problem = BatchSizingProblem(TimeLaws.linear(v), global_batch)
    batch = proportional_batches(v, global_batch)
    optimum = solve_exact(problem).makespan
    assert problem.makespan(batch) <= optimum + np.max(1.0 / v) + 1e-9
    assert optimum >= global_batch / v.sum() * (1 - 1e-12)


@SETTINGS
@given(v=st.lists(st.floats(1.0, 100.0), min_size=2, max_size=10), global_batch=st.integers(50, 5000),
       error=st.floats(0.0, 0.5), seed=st.integers(0, 1000))
def test_bounded_relative_prediction_error(v, global_batch, error, seed):
    # Digest 5.3: with v_hat_i = v_i (1 + e_i), |e_i| <= e, the makespan is within (1+e)/(1-e) of tau*.
    v = np.array(v)
    relative = np.random.default_rng(seed).uniform(-error, error, len(v))
    predicted = v * (1.0 + relative)
    ratio_bound = (1.0 + error) / (1.0 - error)
    optimum = global_batch / v.sum()
    shares = proportional_shares(predicted, global_batch, min_batch=0)
    assert np.max(shares / v) <= ratio_bound * optimum * (1 + 1e-9)
    batch = proportional_batches(predicted, global_batch, min_batch=0)
    # integers: plus at most one sample's time on the slowest worker
    assert np.max(batch / v) <= ratio_bound * optimum + np.max(1.0 / v) + 1e-9


def _static_scenario(speed, global_batch, iterations=6):
    speed = np.asarray(speed, dtype=float)
    return Scenario(name="static", description="static linear laws", base_laws=TimeLaws.linear(speed),
                    memory_cap=np.full(len(speed), global_batch), global_batch=global_batch,
                    communication_seconds=np.zeros(len(speed)), barrier_seconds=0.0, jitter=0.0,
                    iterations=iterations)


@pytest.mark.parametrize("predictor", ["last", "ewma", "arx", "narx", "sarx", "select", "rreg"])
def test_perfect_prediction_reaches_the_optimum_in_one_step(predictor):
    # Static speeds 1:2:3:4 (X = 100 splits integrally): after one observed iteration, every
    # predictor's estimate is the true speed, and the rule lands on the exact optimum and stays.
    scenario = _static_scenario([10.0, 20.0, 30.0, 40.0], 100)
    run = run_method(CpuController(scenario, predictor=predictor), scenario, generate_trace(scenario, 0))
    assert run.batches[0].tolist() == [25, 25, 25, 25]
    optimum = solve_exact(BatchSizingProblem(scenario.base_laws, 100)).makespan
    for t in range(1, len(run.batches)):
        assert run.batches[t].tolist() == [10, 20, 30, 40]
        assert run.compute_seconds[t].max() == pytest.approx(optimum)


def test_largest_remainder_ties_and_sum():
    assert largest_remainder([1.5, 1.5, 1.0]).tolist() == [2, 1, 1]                  # tie -> lower index
    assert largest_remainder([1.5, 1.5, 1.0], speed=[1, 2, 1]).tolist() == [1, 2, 1]  # tie -> faster
    assert equal_batches(3, 10).tolist() == [4, 3, 3]
    # A share pushed past its cap (by floating-point noise in real use) must not round up beyond it.
    assert largest_remainder([3.6, 1.2, 1.2], upper=[3, 5, 5]).tolist() == [3, 2, 1]


def test_bad_speeds_and_infeasible_bounds_raise_input_error():
    with pytest.raises(InputError):
        proportional_batches([1.0, 0.0], 10)
    with pytest.raises(InputError):
        proportional_batches([1.0, 1.0], 10, memory_cap=[3, 3])
