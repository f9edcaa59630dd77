"""The BSP simulator: determinism, honesty of the information given to LB-BSP, sanity of the results."""

from dataclasses import replace

import numpy as np
import pytest

from primaldual.lbbsp.exact import solve_exact
from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.lbbsp.scenarios import Scenario, cpu_scenario, generate_trace, gpu_scenario
from primaldual.lbbsp.simulator import METHODS, BspMethod, OracleMethod, make_method, run_method, simulate
from primaldual.lbbsp.time_laws import TimeLaws


def test_same_seed_same_numbers_and_different_seed_different_numbers():
    first = simulate(cpu_scenario(iterations=60), seed=3).summary()
    second = simulate(cpu_scenario(iterations=60), seed=3).summary()
    other = simulate(cpu_scenario(iterations=60), seed=4).summary()
    first.pop("decision_seconds"), second.pop("decision_seconds"), other.pop("decision_seconds")
    assert first == second
    assert first["mean_iteration_seconds"] != other["mean_iteration_seconds"]


def test_every_method_runs_on_the_same_random_streams():
    # Recompute each method's compute times from its batches and the one trace of the seed: they
    # must match exactly, i.e. no method got its own slow-downs or jitter.
    scenario = cpu_scenario(iterations=40)
    result = simulate(scenario, seed=2)
    trace = generate_trace(scenario, seed=2)
    assert set(result.runs) == set(METHODS)
    for run in result.runs.values():
        for t, batch in enumerate(run.batches):
            expected = scenario.base_laws.scaled(trace.slowdown[t]).seconds(batch) * trace.jitter[t]
            np.testing.assert_array_equal(run.compute_seconds[t], expected)
            assert run.iteration_seconds[t] == np.max(expected + scenario.communication_seconds) + \
                scenario.barrier_seconds


@pytest.mark.parametrize("method", ["lbbsp_cpu", "lbbsp_gpu"])
def test_lbbsp_decisions_use_only_the_past(method):
    # Perturb everything from iteration k on; decisions up to iteration k must not change,
    # because the batch of iteration k is chosen before iteration k runs.
    scenario = cpu_scenario(iterations=80)
    trace = generate_trace(scenario, seed=1)
    k = 50
    rng = np.random.default_rng(99)
    future = replace(trace,
                     slowdown=np.concatenate([trace.slowdown[:k], rng.uniform(1, 4, trace.slowdown[k:].shape)]),
                     jitter=np.concatenate([trace.jitter[:k], rng.uniform(0.5, 2, trace.jitter[k:].shape)]),
                     readings=np.concatenate([trace.readings[:k + 1], rng.uniform(0, 1, trace.readings[k + 1:].shape)]))
    original = run_method(make_method(method, scenario, trace), scenario, trace)
    perturbed = run_method(make_method(method, scenario, future), scenario, future)
    np.testing.assert_array_equal(original.batches[:k + 1], perturbed.batches[:k + 1])


def test_the_oracle_does_see_the_current_iteration():
    # The counterpart of the honesty test: the oracle's batch at k reacts to iteration k's speeds.
    scenario = cpu_scenario(iterations=20)
    trace = generate_trace(scenario, seed=1)
    k = 10
    slowdown = trace.slowdown.copy()
    slowdown[k, 0] *= 3.0
    future = replace(trace, slowdown=slowdown)
    original = run_method(OracleMethod(scenario, trace), scenario, trace)
    perturbed = run_method(OracleMethod(scenario, future), scenario, future)
    assert perturbed.batches[k, 0] < original.batches[k, 0]


def test_the_oracle_minimises_the_whole_iteration_time():
    # Two identical GPUs, the second behind a 0.2 s slower link: the oracle loads the first one more,
    # and its iteration time is the exact min-max of compute + communication.
    laws = TimeLaws.flat_then_linear([0.138, 0.138], 0.010, 0.004)
    scenario = Scenario(name="links", description="same GPUs, different links", base_laws=laws,
                        memory_cap=np.array([192, 192]), global_batch=192,
                        communication_seconds=np.array([0.1, 0.3]), jitter=0.0, iterations=3)
    trace = generate_trace(scenario, 0)
    run = run_method(OracleMethod(scenario, trace), scenario, trace)
    assert run.batches[0, 0] > run.batches[0, 1]
    problem = BatchSizingProblem(laws.shifted(scenario.communication_seconds), 192, 1, scenario.memory_cap)
    assert run.iteration_seconds[0] == pytest.approx(solve_exact(problem).makespan + scenario.barrier_seconds)


class _Cheater(BspMethod):
    name = "cheater"

    def next_batch(self):
        batch = super().next_batch()
        batch[0] += 1
        return batch


def test_infeasible_allocations_are_caught_every_iteration():
    scenario = gpu_scenario(iterations=5)
    with pytest.raises(RuntimeError, match="infeasible"):
        run_method(_Cheater(scenario), scenario, generate_trace(scenario, 0))


@pytest.mark.parametrize("factory", [gpu_scenario, cpu_scenario])
def test_lbbsp_beats_bsp_and_the_oracle_is_best(factory):
    result = simulate(factory(iterations=150), seed=0)
    summary = result.summary()
    speedup = summary["speedup"]
    assert speedup["bsp"] == 1.0
    lbbsp = "lbbsp_gpu" if factory is gpu_scenario else "lbbsp_cpu"
    assert speedup[lbbsp] > 1.1
    assert speedup["oracle"] >= max(speedup.values()) - 1e-3   # up to jitter the oracle is optimal
    assert summary["time_to_samples_seconds"]["bsp"] == pytest.approx(
        150 * summary["mean_iteration_seconds"]["bsp"])
    for run in result.runs.values():
        assert np.all(run.batches.sum(axis=1) == summary["global_batch"])
        assert np.all(run.batches <= result.scenario.memory_cap)


def test_time_to_samples_counts_whole_iterations():
    result = simulate(gpu_scenario(iterations=10), seed=0, methods=("bsp",))
    run = result.runs["bsp"]
    assert run.time_to_samples(768 * 3 + 1, 768) == pytest.approx(run.iteration_seconds[:4].sum())
    assert run.time_to_samples(768 * 11, 768) == float("inf")


def test_gpu_scenario_calibration():
    scenario = gpu_scenario()
    assert scenario.n_workers == 8 and scenario.global_batch == 768
    times = scenario.base_laws.seconds(np.full(8, 96))
    assert 1.5 < times.max() / times.min() < 3.0         # heterogeneous, but plausibly so
    flat = scenario.base_laws.seconds(np.full(8, 4)) == scenario.base_laws.seconds(np.full(8, 8))
    assert flat.all()                                    # flat at small batches
