"""Cluster scenarios and their random streams (the simulator's inputs), [design] calibration.

A :class:`Scenario` fixes the hardware (dedicated-machine time laws, memory caps, communication
time) and the non-dedicated interference process; :func:`generate_trace` turns it and a seed into a
:class:`Trace` -- every random number of a run, drawn up front, so that all methods are compared on
exactly the same streams.

Interference (CPU scenario, docs/papers.md, LB-BSP: "a worker's computing capability varies with its temporal
resources"): each worker independently alternates between *idle* and *busy* (a co-located job is
running) as a two-state Markov chain stepped once per iteration. A busy episode draws the CPU share
``c ~ U(cpu_load_range)`` taken by the co-located job and its memory share ``m = c * U(memory_ratio_range)``.
The speed factor is ``(1 - c) * (1 - memory_slowdown * max(0, m - memory_threshold))``: CPU contention
slows linearly, memory pressure beyond a threshold costs extra (page-cache/swap effects). A change of
state happens at a uniformly random point *inside* an iteration, so that iteration runs at the
time-weighted mix of the two speeds. The readings ``u = (cpu availability, memory availability)``
are taken at each barrier (instantaneous, with Gaussian noise ``reading_noise``) -- what LB-BSP's
worker reports through ``psutil`` (docs/papers.md, LB-BSP).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.lbbsp.time_laws import TimeLaws


@dataclass(frozen=True)
class Interference:
    """Markov on/off co-located load; probabilities are per iteration."""

    busy_probability: float = 0.01      # idle -> busy: a new co-located job arrives
    idle_probability: float = 0.05      # busy -> idle: mean busy spell 1/0.05 = 20 iterations
    cpu_load_range: tuple[float, float] = (0.2, 0.6)
    memory_ratio_range: tuple[float, float] = (0.3, 0.9)
    memory_threshold: float = 0.25
    memory_slowdown: float = 0.6
    base_memory_use: float = 0.1        # our own training process' share of memory
    reading_noise: float = 0.03


@dataclass(frozen=True)
class Scenario:
    """A simulated BSP cluster.

    ``base_laws`` are the compute-time laws on a dedicated machine; at iteration t the true law of
    worker i is ``base_laws_i(x) * slowdown[t, i]``, and the measured compute time adds a lognormal
    jitter of relative size ``jitter``. Each iteration costs ``max_i(T_i + communication_i)`` plus
    ``barrier_seconds``.
    """

    name: str
    description: str
    base_laws: TimeLaws
    memory_cap: np.ndarray
    global_batch: int
    communication_seconds: np.ndarray
    barrier_seconds: float = 0.005
    jitter: float = 0.02
    min_batch: int = 1
    interference: Interference | None = None
    iterations: int = 300

    @property
    def n_workers(self) -> int:
        return self.base_laws.n_workers


@dataclass(frozen=True)
class Trace:
    """All random streams of one run. Row t of ``slowdown``/``jitter`` is iteration t; row t of
    ``readings`` (shape (iterations + 1, n, 2)) is what the workers report at the barrier *before*
    iteration t (row t + 1 is reported at the barrier that ends iteration t)."""

    slowdown: np.ndarray
    jitter: np.ndarray
    readings: np.ndarray


def _speed_factor(cpu_load, memory_load, interference: Interference):
    return (1.0 - cpu_load) * (1.0 - interference.memory_slowdown
                               * np.maximum(0.0, memory_load - interference.memory_threshold))


def generate_trace(scenario: Scenario, seed: int, iterations: int | None = None) -> Trace:
    """Draw every random number of a run from ``numpy.random.default_rng(seed)``."""
    iterations = scenario.iterations if iterations is None else iterations
    n = scenario.n_workers
    rng = np.random.default_rng(seed)
    if scenario.jitter > 0:
        jitter = rng.lognormal(0.0, scenario.jitter, size=(iterations, n))
    else:
        jitter = np.ones((iterations, n))
    interference = scenario.interference
    if interference is None:
        idle = [1.0, 1.0 - Interference.base_memory_use]  # dedicated machines: only our own process runs
        return Trace(np.ones((iterations, n)), jitter, np.tile(idle, (iterations + 1, n, 1)))
    cpu = np.zeros((iterations + 1, n))     # state at the barrier before iteration t
    memory = np.zeros((iterations + 1, n))
    for t in range(iterations):
        busy = cpu[t] > 0
        arrive = rng.random(n) < interference.busy_probability
        leave = rng.random(n) < interference.idle_probability
        new_cpu = rng.uniform(*interference.cpu_load_range, size=n)
        new_memory = new_cpu * rng.uniform(*interference.memory_ratio_range, size=n)
        cpu[t + 1] = np.where(busy, np.where(leave, 0.0, cpu[t]), np.where(arrive, new_cpu, 0.0))
        memory[t + 1] = np.where(busy, np.where(leave, 0.0, memory[t]), np.where(arrive, new_memory, 0.0))
    switch_point = rng.uniform(0.0, 1.0, size=(iterations, n))
    start = _speed_factor(cpu[:-1], memory[:-1], interference)
    end = _speed_factor(cpu[1:], memory[1:], interference)
    speed = switch_point * start + (1.0 - switch_point) * end   # equals start when nothing changed
    noise = rng.normal(0.0, interference.reading_noise, size=(iterations + 1, n, 2))
    readings = np.stack([1.0 - cpu, 1.0 - interference.base_memory_use - memory], axis=2) + noise
    return Trace(slowdown=1.0 / speed, jitter=jitter, readings=np.clip(readings, 0.0, 1.0))


def gpu_scenario(workers: int = 8, global_batch: int | None = None, iterations: int = 300) -> Scenario:
    """Heterogeneous, dedicated GPU cluster mixing three generations (ResNet-50-like, fp32).

    Per-GPU laws ``T(x) = max(flat, offset + slope * x)`` (docs/papers.md, LB-BSP): flat while the GPU is
    under-utilised (below ~32 samples), then linear. Slopes follow public fp32 ResNet-50 training
    throughputs: V100 ~250 samples/s (4.0 ms/sample), P100 ~155/s (6.5 ms), T4 ~110/s (9.0 ms).
    Memory caps (samples that fit): V100 16 GB 192, P100 12 GB 144, T4 16 GB 192. The cluster
    cycles V100, P100, T4 over the workers (8 workers: 3 V100, 3 P100, 2 T4). Global batch
    defaults to 96 per worker (768 for 8). Communication (push + pull of ~100 MB of gradients through
    a sharded parameter server) 0.10 s per iteration; 2% jitter; no interference.
    """
    kinds = {  # flat seconds, offset seconds, seconds per sample, memory cap
        "V100": (0.138, 0.010, 0.0040, 192),
        "P100": (0.220, 0.012, 0.0065, 144),
        "T4": (0.300, 0.012, 0.0090, 192),
    }
    names = [("V100", "P100", "T4")[i % 3] for i in range(workers)]
    flat, offset, slope, cap = (np.array([kinds[k][j] for k in names]) for j in range(4))
    return Scenario(
        name="gpu",
        description=f"{workers} dedicated GPUs ({', '.join(f'{names.count(k)} {k}' for k in kinds)}), "
                    "piecewise-linear times, memory caps",
        base_laws=TimeLaws.flat_then_linear(flat, offset, slope),
        memory_cap=cap.astype(np.int64),
        global_batch=96 * workers if global_batch is None else global_batch,
        communication_seconds=np.full(workers, 0.10),
        jitter=0.02,
        iterations=iterations,
    )


def cpu_scenario(workers: int = 8, global_batch: int | None = None, iterations: int = 300) -> Scenario:
    """Non-dedicated CPU cluster of two legacy machine types (ResNet-32 on CIFAR-10 with TF on CPU).

    Dedicated speeds: newer 16-vCPU machines 100 samples/s, older ones 75 samples/s (alternating).
    Linear laws ``T(x) = x / speed`` (docs/papers.md, LB-BSP). Global batch 64 per worker (512 for 8); no memory
    limit that binds (cap 8x the equal share). Communication 0.03 s (ResNet-32's ~1.9 MB of
    gradients over 1 Gbps). Co-located jobs arrive as the default :class:`Interference`
    (busy 1/6 of the time on average -- so with 8 workers some worker is busy ~77% of the time --
    spells of 20 iterations, taking 20-60% of the CPU), 3% jitter.
    """
    speed = np.where(np.arange(workers) % 2 == 0, 100.0, 75.0)
    batch = 64 * workers if global_batch is None else global_batch
    return Scenario(
        name="cpu",
        description=f"{workers} non-dedicated CPU workers (two machine types) with Markov co-located load",
        base_laws=TimeLaws.linear(speed),
        memory_cap=np.full(workers, max(1, 8 * batch // workers), dtype=np.int64),
        global_batch=batch,
        communication_seconds=np.full(workers, 0.03),
        jitter=0.03,
        interference=Interference(),
        iterations=iterations,
    )


SCENARIOS = {"gpu": gpu_scenario, "cpu": cpu_scenario}
