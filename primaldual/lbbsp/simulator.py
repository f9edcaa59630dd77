"""BSP cluster simulator comparing batch-sizing methods on the same random streams ([design]).

Iteration t of a method: it proposes integer batches ``x^t`` (checked: sum = X, bounds), each
worker computes for ``T_i^t(x_i^t) * jitter[t, i]`` seconds, then communicates for ``C_i`` seconds;
the barrier releases at ``tau^t = max_i (compute + C_i) + barrier_seconds``. At the barrier the method
*observes* only what a real LB-BSP deployment measures (docs/papers.md, LB-BSP): the batches, each worker's
compute time excluding the barrier wait, and the CPU/memory readings. The oracle is the only method
that is handed the true (jitter-free) time laws of the iteration it is about to run, and it solves
the min-max problem exactly for them -- an upper bound on what any predictor-based rule can do.

Methods (``METHODS``):

* ``bsp``: equal batches ``X / n`` forever (the baseline);
* ``lbbsp_cpu``: the proportional rule on predicted speeds (:mod:`.cpu`, :mod:`.predictors`);
* ``lbbsp_gpu``: the leader/straggler stepper (:mod:`.gpu`);
* ``oracle``: exact min-max allocation on the true laws (:mod:`.exact`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from primaldual.lbbsp.cpu import equal_batches, proportional_batches
from primaldual.lbbsp.exact import solve_exact
from primaldual.lbbsp.gpu import GpuController, GpuStepperConfig
from primaldual.lbbsp.predictors.registry import make_predictor
from primaldual.lbbsp.problem import BatchSizingProblem
from primaldual.lbbsp.scenarios import Scenario, Trace, generate_trace

METHODS = ("bsp", "lbbsp_cpu", "lbbsp_gpu", "oracle")


class BspMethod:
    """Equal batches (clamped to memory caps if the equal share does not fit)."""

    name = "bsp"

    def __init__(self, scenario: Scenario):
        self.batch = equal_batches(scenario.n_workers, scenario.global_batch, scenario.min_batch, scenario.memory_cap)

    def next_batch(self) -> np.ndarray:
        return self.batch.copy()

    def observe(self, batch, compute_seconds, readings) -> None:
        pass


class CpuController:
    """LB-BSP CPU rule: ``x^{t+1}`` proportional to the predicted speeds ``v_hat^{t+1}``.

    Speeds are measured as ``x_i^t / T_i^t`` with ``T`` the compute time excluding the barrier wait
    (docs/papers.md, LB-BSP); until the predictor has data, batches stay equal (docs/papers.md, LB-BSP).
    """

    name = "lbbsp_cpu"

    def __init__(self, scenario: Scenario, predictor: str = "rreg", seed: int = 0):
        self.scenario = scenario
        self.predictor = make_predictor(predictor, scenario.n_workers, seed=seed)
        self.bsp = BspMethod(scenario)

    def next_batch(self) -> np.ndarray:
        predicted = self.predictor.predict()
        if predicted is None:
            return self.bsp.next_batch()
        s = self.scenario
        return proportional_batches(predicted, s.global_batch, s.min_batch, s.memory_cap)

    def observe(self, batch, compute_seconds, readings) -> None:
        self.predictor.observe(np.asarray(batch) / np.asarray(compute_seconds), readings)


class GpuMethod:
    """Adapter of :class:`~primaldual.lbbsp.gpu.GpuController` to the simulator's interface."""

    name = "lbbsp_gpu"

    def __init__(self, scenario: Scenario, config: GpuStepperConfig | None = None):
        config = config or GpuStepperConfig(scenario.global_batch, scenario.memory_cap, scenario.min_batch)
        self.controller = GpuController(config, BspMethod(scenario).batch)

    def next_batch(self) -> np.ndarray:
        return self.controller.next_batch()

    def observe(self, batch, compute_seconds, readings) -> None:
        self.controller.observe(compute_seconds)


class OracleMethod:
    """Knows the true laws of the coming iteration (not its jitter); solves the min-max exactly.

    It minimises ``max_i (T_i(x_i) + C_i)``, the iteration time itself (docs/papers.md, LB-BSP ``include_comm``),
    so it stays the best allocation even in a scenario whose communication times differ per worker.
    """

    name = "oracle"

    def __init__(self, scenario: Scenario, trace: Trace):
        self.scenario = scenario
        self.trace = trace
        self.iteration = 0

    def next_batch(self) -> np.ndarray:
        s = self.scenario
        laws = s.base_laws.scaled(self.trace.slowdown[self.iteration]).shifted(s.communication_seconds)
        return solve_exact(BatchSizingProblem(laws, s.global_batch, s.min_batch, s.memory_cap)).batch

    def observe(self, batch, compute_seconds, readings) -> None:
        self.iteration += 1


def make_method(name: str, scenario: Scenario, trace: Trace, predictor: str = "rreg", seed: int = 0):
    if name == "bsp":
        return BspMethod(scenario)
    if name == "lbbsp_cpu":
        return CpuController(scenario, predictor=predictor, seed=seed)
    if name == "lbbsp_gpu":
        return GpuMethod(scenario)
    if name == "oracle":
        return OracleMethod(scenario, trace)
    raise ValueError(f"unknown method {name!r}; choose from {METHODS}")


@dataclass(frozen=True)
class MethodRun:
    """One method's run: per-iteration times (s) and batches, plus aggregates.

    ``decision_seconds`` is the wall-clock time spent in the method's own logic (proposing batches and
    digesting observations), the only wall-clock figure here; everything else is simulated time.
    """

    method: str
    iteration_seconds: np.ndarray
    compute_seconds: np.ndarray
    batches: np.ndarray
    decision_seconds: float

    @property
    def mean_iteration_seconds(self) -> float:
        return float(np.mean(self.iteration_seconds))

    def time_to_samples(self, samples: int, global_batch: int) -> float:
        """Simulated seconds until ``samples`` samples are processed (``inf`` if the run is shorter)."""
        needed = -(-samples // global_batch)
        if needed > len(self.iteration_seconds):
            return float("inf")
        return float(np.sum(self.iteration_seconds[:needed]))

    @property
    def mean_idle_fraction(self) -> float:
        """Mean idle share of the compute phase: ``1 - T_i / max_j T_j`` averaged over workers and
        iterations (the time a worker waits for the straggler, relative to the straggler's compute time)."""
        busy = self.compute_seconds.max(axis=1, keepdims=True)
        return float(np.mean(1.0 - self.compute_seconds / busy))


@dataclass(frozen=True)
class SimulationResult:
    scenario: Scenario
    seed: int
    runs: dict[str, MethodRun] = field(default_factory=dict)
    target_samples: int = 0

    def speedup(self, method: str, baseline: str = "bsp") -> float:
        """Mean iteration time of ``baseline`` divided by that of ``method`` (> 1: faster)."""
        return self.runs[baseline].mean_iteration_seconds / self.runs[method].mean_iteration_seconds

    def summary(self) -> dict:
        """JSON-ready figures (the ``lbbsp simulate --json`` output)."""
        s = self.scenario
        has_bsp = "bsp" in self.runs
        return {
            "scenario": s.name,
            "description": s.description,
            "workers": s.n_workers,
            "iterations": len(next(iter(self.runs.values())).iteration_seconds),
            "global_batch": s.global_batch,
            "seed": self.seed,
            "target_samples": self.target_samples,
            "mean_iteration_seconds": {m: r.mean_iteration_seconds for m, r in self.runs.items()},
            "time_to_samples_seconds": {m: r.time_to_samples(self.target_samples, s.global_batch)
                                        for m, r in self.runs.items()},
            "speedup": {m: self.speedup(m) for m in self.runs} if has_bsp else {},
            "mean_idle_fraction": {m: r.mean_idle_fraction for m, r in self.runs.items()},
            "decision_seconds": {m: r.decision_seconds for m, r in self.runs.items()},
            "final_batch": {m: r.batches[-1].tolist() for m, r in self.runs.items()},
        }


def run_method(method, scenario: Scenario, trace: Trace) -> MethodRun:
    """Run one method through the trace; checks conservation and bounds at every iteration."""
    iterations, n = trace.jitter.shape
    iteration_seconds = np.empty(iterations)
    compute_log = np.empty((iterations, n))
    batches = np.empty((iterations, n), dtype=np.int64)
    decision = 0.0
    for t in range(iterations):
        started = time.perf_counter()
        batch = np.asarray(method.next_batch())
        decision += time.perf_counter() - started
        if (int(batch.sum()) != scenario.global_batch or np.any(batch < scenario.min_batch)
                or np.any(batch > scenario.memory_cap)):
            raise RuntimeError(f"{method.name} proposed an infeasible allocation at iteration {t}: {batch}")
        laws = scenario.base_laws.scaled(trace.slowdown[t])
        compute = laws.seconds(batch) * trace.jitter[t]
        iteration_seconds[t] = np.max(compute + scenario.communication_seconds) + scenario.barrier_seconds
        compute_log[t], batches[t] = compute, batch
        started = time.perf_counter()
        method.observe(batch, compute, trace.readings[t + 1])
        decision += time.perf_counter() - started
    return MethodRun(method.name, iteration_seconds, compute_log, batches, decision)


def simulate(scenario: Scenario, seed: int = 0, methods=METHODS, iterations: int | None = None,
             predictor: str = "rreg", target_samples: int | None = None) -> SimulationResult:
    """Run ``methods`` on one trace drawn from ``seed``; all methods see identical random streams."""
    trace = generate_trace(scenario, seed, iterations)
    runs = {}
    for name in methods:
        method = make_method(name, scenario, trace, predictor=predictor, seed=seed)
        runs[name] = run_method(method, scenario, trace)
    total = trace.jitter.shape[0] * scenario.global_batch
    return SimulationResult(scenario, seed, runs, target_samples=total if target_samples is None else target_samples)
