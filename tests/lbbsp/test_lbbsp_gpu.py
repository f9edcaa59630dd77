"""The GPU leader/straggler stepper: conservation, caps, convergence, quality, re-convergence."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lbbsp_strategies import gpu_problems, random_gpu_problem
from primaldual.lbbsp.cpu import equal_batches
from primaldual.lbbsp.exact import solve_exact
from primaldual.lbbsp.gpu import GpuController, GpuStepperConfig, adjust, initial_state
from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.lbbsp.time_laws import TimeLaws

TERMINAL = {"frozen", "no_leader", "balanced", "no_room"}
# Documented tolerance (primaldual.lbbsp.gpu): for n > 2 the final makespan is within this many
# per-sample steps (steepest slope of any worker) of the exact optimum (observed: < 1).
MULTI_WORKER_STEPS = 1.5


def run_to_rest(problem: BatchSizingProblem, config: GpuStepperConfig, limit: int = 2000):
    """Feed exact (noise-free) times until the stepper rests; return the state and the step sizes."""
    state = initial_state(config, equal_batches(problem.n_workers, problem.global_batch, problem.min_batch,
                                                problem.memory_cap))
    step_sizes = [state.step_size]
    for count in range(limit):
        state, decision = adjust(state, problem.laws.seconds(state.batch)[None, :], config)
        assert problem.is_feasible(state.batch), decision   # conservation and bounds after every step
        step_sizes.append(state.step_size)
        if decision.action in TERMINAL:
            return state, step_sizes, count + 1
    raise AssertionError(f"the stepper did not come to rest in {limit} adjustments")


def config_for(problem, **overrides):
    return GpuStepperConfig(problem.global_batch, problem.memory_cap, problem.min_batch,
                            **{"dead_band": 0.0, **overrides})


@settings(derandomize=True, max_examples=60, deadline=None)
@given(problem=gpu_problems(min_workers=2, max_workers=8, max_batch=300), initial_step=st.integers(1, 40))
def test_static_laws_step_never_grows_and_stepper_stops(problem, initial_step):
    config = config_for(problem, initial_step_size=initial_step)
    state, step_sizes, _ = run_to_rest(problem, config)
    assert all(b <= a for a, b in zip(step_sizes, step_sizes[1:]))
    # At rest it stays at rest: further windows never move a sample.
    for _ in range(10):
        state, decision = adjust(state, problem.laws.seconds(state.batch)[None, :], config)
        assert decision.moved == 0 and decision.action in TERMINAL | {"froze"}


@settings(derandomize=True, max_examples=80, deadline=None)
@given(problem=gpu_problems(min_workers=2, max_workers=2, max_batch=400), initial_step=st.integers(1, 60))
def test_two_workers_end_within_one_per_sample_step_of_optimum(problem, initial_step):
    state, _, _ = run_to_rest(problem, config_for(problem, initial_step_size=initial_step))
    optimum = solve_exact(problem).makespan
    assert problem.makespan(state.batch) <= optimum + problem.laws.marginal_seconds().max() + 1e-12


@settings(derandomize=True, max_examples=60, deadline=None)
@given(problem=gpu_problems(min_workers=3, max_workers=8, max_batch=400))
def test_more_workers_end_within_documented_tolerance(problem):
    state, _, _ = run_to_rest(problem, config_for(problem))
    optimum = solve_exact(problem).makespan
    slack = MULTI_WORKER_STEPS * problem.laws.marginal_seconds().max()
    assert problem.makespan(state.batch) <= optimum + slack + 1e-12


def test_dead_band_leaves_a_balanced_cluster_alone():
    laws = TimeLaws.linear([100.0, 100.0, 102.0, 99.0])
    problem = BatchSizingProblem(laws, 400)
    config = GpuStepperConfig(400, problem.memory_cap, dead_band=0.03)
    state = initial_state(config, [100, 100, 100, 100])
    for _ in range(5):
        state, decision = adjust(state, laws.seconds(state.batch)[None, :], config)
        assert decision.action == "balanced" and state.batch.tolist() == [100, 100, 100, 100]


def test_leader_needs_memory_headroom():
    # Worker 0 is by far the fastest but sits at its memory cap: samples must go to worker 1.
    laws = TimeLaws.linear([1000.0, 200.0, 50.0])
    config = GpuStepperConfig(300, np.array([100, 300, 300]), initial_step_size=10, dead_band=0.0)
    state = initial_state(config, [100, 100, 100])
    state, decision = adjust(state, laws.seconds(state.batch)[None, :], config)
    assert (decision.straggler, decision.leader, decision.moved) == (2, 1, 10)
    assert state.batch.tolist() == [100, 110, 90]


def test_oscillation_halves_the_step_and_widens_the_window():
    laws = TimeLaws.linear([100.0, 90.0])
    config = GpuStepperConfig(200, np.array([200, 200]), initial_step_size=16, initial_window=3, dead_band=0.0)
    state = initial_state(config, [100, 100])
    state, first = adjust(state, laws.seconds(state.batch)[None, :], config)   # 1 -> 0 by 16: overshoots
    assert first.moved == 16 and state.batch.tolist() == [116, 84]
    state, second = adjust(state, laws.seconds(state.batch)[None, :], config)  # reversal
    assert second.oscillation and state.step_size == 8 and state.window == 6
    assert state.batch.tolist() == [108, 92]


def _controller_makespan_after(controller, laws, iterations):
    for _ in range(iterations):
        batch = controller.next_batch()
        controller.observe(laws.seconds(batch))
    return float(np.max(laws.seconds(controller.next_batch())))


@pytest.mark.parametrize("seed", range(6))
def test_reconverges_after_a_step_change_in_one_worker(seed):
    rng = np.random.default_rng(seed)
    problem = random_gpu_problem(rng, 6, 600, capped=False)
    config = GpuStepperConfig(600, problem.memory_cap, dead_band=0.0)
    controller = GpuController(config, equal_batches(6, 600))
    _controller_makespan_after(controller, problem.laws, 2000)
    assert controller.state.frozen or controller.adjustments[-1].action in TERMINAL
    # A co-located job makes the currently fastest worker 2.5x slower.
    slowdown = np.ones(6)
    slowdown[int(np.argmin(problem.laws.seconds(controller.next_batch())))] = 2.5
    changed = BatchSizingProblem(problem.laws.scaled(slowdown), 600)
    before = len(controller.adjustments)
    makespan = _controller_makespan_after(controller, changed.laws, 4000)
    assert any(a.reset for a in controller.adjustments[before:])
    optimum = solve_exact(changed).makespan
    assert makespan <= optimum + MULTI_WORKER_STEPS * changed.laws.marginal_seconds().max() + 1e-12
    assert controller.adjustments[-1].action in TERMINAL
