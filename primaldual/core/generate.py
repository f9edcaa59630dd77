"""Seeded instance generators with three presets: ``tiny``, ``small`` and ``paper``.

Every random number comes from one ``numpy.random.Generator(PCG64(seed))`` drawn in a fixed order, so the same
preset, knobs and seed give the same instance bit for bit on any machine.

How a job is drawn (all ranges are in the preset, see :data:`PRESETS`):

1. ``N`` (chunks, the worker cap), ``E`` (epochs), ``M`` (mini-batches per chunk), gradient size ``e`` (MB),
   worker and PS bandwidth ``b <= B`` (Gbps) are drawn from the preset's ranges (integers uniformly, positive
   reals log-uniformly, since they span orders of magnitude).
2. A target per-chunk time in slots is drawn from ``chunk_slots``; the compute time per mini-batch ``tau`` is
   then set so that ``E M (tau + 2e/b)`` equals it. This is how the shortest durations
   ``ceil(V/N)`` are calibrated to span the preset's range (1-30 slots on ``paper``) while ``E, M, e, b`` keep
   realistic magnitudes. A draw whose ``tau`` would fall below ``min_compute_seconds`` (communication alone
   exceeds the target) is redrawn.
3. Demands per worker and per PS are drawn per resource; on presets with a ``bandwidth`` resource the worker
   and PS bandwidth demands are ``b`` and ``B`` (bandwidth appears in (6) and as a resource: docs/architecture.md,
   Model conventions).
4. The utility is a sigmoid ``g1 / (1 + exp(g2 (d - g3)))`` with weight ``g1`` (log-uniform), decay ``g2`` and
   target ``g3 = (shortest duration - 1) x slack``, so a job is worth most when it finishes near its shortest
   duration and loses value as it waits.

Arrivals: with ``load`` jobs per slot, arrival times are a Poisson process conditioned on the number of jobs
(sorted uniform times over ``jobs / load`` slots), floored to slots. The horizon must leave room for arrivals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from primaldual.core.domains import MAX_HORIZON, MAX_JOBS, MAX_SCHEDULE_CELLS, MAX_SERVERS, fmt_number, show
from primaldual.core.errors import InputError
from primaldual.core.gpu_types import GAVEL_TIME_RATIO, check_type_counts
from primaldual.core.instance import Cluster, Instance, Job, ceil_tolerant
from primaldual.core.plural import by_count, counted
from primaldual.core.utility import Sigmoid

Range = tuple[float, float]


@dataclass(frozen=True)
class Preset:
    """Ranges and knobs of one generator preset. Integer ranges are inclusive."""

    name: str
    jobs: tuple[int, int]
    horizon: tuple[int, int]
    worker_servers: tuple[int, int]
    ps_servers: tuple[int, int]
    load: float  # jobs per slot
    slot_seconds: float
    resources: tuple[str, ...]
    worker_capacity: dict[str, Range]
    ps_capacity: dict[str, Range]
    worker_demand: dict[str, Range]
    ps_demand: dict[str, Range]
    chunks: tuple[int, int]
    epochs: tuple[int, int]
    minibatches_per_chunk: tuple[int, int]
    gradient_mb: Range
    worker_bandwidth_gbps: Range
    ps_bandwidth_gbps: Range
    chunk_slots: Range
    gamma1: Range
    gamma2: Range
    target_slack: Range
    min_compute_seconds: float = 0.01
    integer_resources: tuple[str, ...] = ("gpu", "cpu")
    notes: str = ""
    extra: dict = field(default_factory=dict)


#: The presets side by side, one row per :class:`Preset` field, one column per preset (:data:`PRESET_ORDER`).
#: ``tiny`` is brute-forceable (a test can enumerate every schedule; each job needs 1-4 worker-slots), ``small``
#: is solved to proven optimality by the ILP in seconds, and ``paper`` is the evaluation scale, a [design]
#: reconstruction of the paper's setup (docs/papers.md, OASiS).
PRESET_ORDER = ("tiny", "small", "paper")
_COLUMNS: dict[str, tuple] = {
    "jobs": ((2, 4), (10, 10), (300, 300)),
    "horizon": ((2, 4), (20, 20), (200, 200)),
    "worker_servers": ((1, 2), (4, 4), (50, 50)),
    "ps_servers": ((1, 2), (4, 4), (50, 50)),
    "load": (1.0, 0.6, 2.0),  # jobs per slot
    "slot_seconds": (3600.0, 3600.0, 3600.0),
    "chunks": ((1, 2), (1, 4), (1, 16)),
    "epochs": ((1, 5), (5, 50), (10, 100)),
    "minibatches_per_chunk": ((10, 100), (20, 200), (20, 200)),
    "gradient_mb": ((30.0, 575.0), (30.0, 575.0), (30.0, 575.0)),
    "worker_bandwidth_gbps": ((1.0, 10.0), (1.0, 5.0), (1.0, 5.0)),
    "ps_bandwidth_gbps": ((10.0, 20.0), (5.0, 20.0), (5.0, 20.0)),
    "chunk_slots": ((0.3, 2.0), (1.0, 8.0), (0.8, 30.0)),
    "gamma1": ((1.0, 100.0), (1.0, 100.0), (1.0, 100.0)),
    "gamma2": ((0.5, 3.0), (0.3, 2.0), (0.2, 1.0)),
    "target_slack": ((1.0, 2.0), (1.0, 2.0), (1.0, 2.0)),
    "notes": (
        "2-4 jobs, 2-4 slots, 1-2 servers per pool; every job needs at most 4 worker-slots.",
        "~10 jobs over 20 slots on 4+4 servers of 2 GPUs; shortest durations 1-8 slots; contended.",
        "50 worker servers (8 GPU, 48 vCPU, 256 GB, 40 Gbps) and 50 PS servers; 300 jobs arriving over "
        "150 slots of 1 h; shortest durations 1-30 slots; the GPU demand exceeds capacity at peak.",
    ),
}
#: Per preset, its resources in order, each with the ranges (worker capacity, PS capacity, worker demand, PS
#: demand). Bandwidth demands have no range: a worker demands the job's ``b`` and a PS its ``B`` (step 3 above).
_RESOURCE_RANGES: dict[str, dict[str, tuple]] = {
    "tiny": {"gpu": ((2, 4), (0, 0), (1, 2), (0, 0)), "cpu": ((2, 8), (1, 4), (1, 2), (1, 1))},
    "small": {
        # Two GPUs per worker server: a 4-worker job of 2-GPU workers fills the whole pool, so jobs compete.
        "gpu": ((2, 2), (0, 0), (1, 2), (0, 0)),
        "cpu": ((8, 16), (4, 8), (2, 8), (1, 4)),
        "memory": ((32, 64), (16, 32), (4, 32), (2, 16)),
    },
    "paper": {
        "gpu": ((8, 8), (0, 0), (1, 4), (0, 0)),
        "cpu": ((48, 48), (48, 48), (2, 8), (1, 4)),
        "memory": ((256, 256), (256, 256), (8, 32), (4, 16)),
        "bandwidth": ((40, 40), (40, 40), None, None),
    },
}
_POOL_RANGES = ("worker_capacity", "ps_capacity", "worker_demand", "ps_demand")


def _preset(column: int, name: str) -> Preset:
    """Preset ``name`` read from its column of :data:`_COLUMNS` and its rows of :data:`_RESOURCE_RANGES`."""
    rows = _RESOURCE_RANGES[name]
    pools = {pool: {resource: row[k] for resource, row in rows.items() if row[k] is not None}
             for k, pool in enumerate(_POOL_RANGES)}
    return Preset(name=name, resources=tuple(rows), **pools, **{key: row[column] for key, row in _COLUMNS.items()})


PRESETS: dict[str, Preset] = {name: _preset(column, name) for column, name in enumerate(PRESET_ORDER)}


def _int(rng: np.random.Generator, bounds) -> int:
    return int(rng.integers(int(bounds[0]), int(bounds[1]) + 1))


def _log_uniform(rng: np.random.Generator, bounds: Range) -> float:
    low, high = float(bounds[0]), float(bounds[1])
    if low == high:
        return low
    return float(np.exp(rng.uniform(np.log(low), np.log(high))))


def _resource_value(rng: np.random.Generator, name: str, bounds: Range, integer: bool) -> float:
    if integer:
        return float(_int(rng, bounds))
    return float(round(rng.uniform(*bounds), 3))


def _fitting_ranges(spec: Preset, capacity_scale: float) -> tuple[dict, list[str], list[str]]:
    """The preset's demand and bandwidth ranges cut to what fits on every scaled server.

    Returns ``(ranges, notes, problems)``: ``ranges`` maps ``worker_demand``, ``ps_demand`` (per resource) and
    ``worker_bandwidth_gbps``, ``ps_bandwidth_gbps`` to the ranges to draw from; ``notes`` says which were cut
    (empty when ``capacity_scale >= 1``: the presets' demands fit their smallest servers); ``problems`` names
    each range that nothing fits, which refuses the scale. Cutting a range keeps the number of random draws, so
    every other value of the instance is drawn as before.
    """
    integer = set(spec.integer_resources)
    ranges: dict = {"worker_demand": dict(spec.worker_demand), "ps_demand": dict(spec.ps_demand)}
    notes: list[str] = []
    short: list[tuple[float, str]] = []  # (smallest scale at which this demand fits, what does not fit)

    def cut(low: float, high: float, capacity: float, integral: bool, label: str) -> tuple[float, float]:
        room = math.floor(capacity + 1e-9) if integral else math.floor(capacity * 1000 + 1e-6) / 1000
        if high <= room:
            return low, high
        if room < low:
            short.append((low / (capacity / capacity_scale), f"{label} {capacity:g} < {low:g}"))
            return low, high
        notes.append(f"{label} demand drawn in {low:g}..{room:g} (preset {low:g}..{high:g})")
        return low, room

    for key, capacity, pool in (("worker_demand", spec.worker_capacity, "worker"), ("ps_demand", spec.ps_capacity, "PS")):
        for r in spec.resources:
            if r != "bandwidth":
                ranges[key][r] = cut(*spec.__dict__[key][r], capacity[r][0] * capacity_scale, r in integer, f"{pool} {r}")
    # With a bandwidth resource, a worker demands b and a PS demands B; b and B are swapped so that b <= B, so
    # either draw can land on either side: both ranges must fit both pools.
    bandwidth_room = math.inf
    if "bandwidth" in spec.resources:
        bandwidth_room = min(spec.worker_capacity["bandwidth"][0], spec.ps_capacity["bandwidth"][0]) * capacity_scale
    for key in ("worker_bandwidth_gbps", "ps_bandwidth_gbps"):
        low, high = spec.__dict__[key]
        ranges[key] = cut(low, high, bandwidth_room, False, "bandwidth") if bandwidth_room < math.inf else (low, high)
    problems = []
    if short:
        smallest = math.ceil(max(scale for scale, _ in short) * 1000) / 1000
        problems.append(
            f"--capacity-scale {capacity_scale:g}: some demands of preset {spec.name} fit no server (smallest "
            f"capacity < smallest demand: {'; '.join(text for _, text in short)}); use --capacity-scale >= {smallest:g}")
    return ranges, notes, problems


def _check_knobs(jobs, horizon, load, worker_servers, ps_servers, capacity_scale, seed) -> list[str]:
    problems = []
    for flag, value, most in (("--jobs", jobs, MAX_JOBS), ("--horizon", horizon, MAX_HORIZON),
                              ("--worker-servers", worker_servers, MAX_SERVERS),
                              ("--ps-servers", ps_servers, MAX_SERVERS)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                                  or not 1 <= value <= most):
            problems.append(f"{flag}: must be an integer in 1..{most}, got {show(value)}")
    if load is not None and not (isinstance(load, (int, float, np.number)) and np.isfinite(load) and load > 0):
        problems.append(f"--load: must be a number > 0 (jobs per slot), got {show(load)}")
    if not (isinstance(capacity_scale, (int, float, np.number)) and np.isfinite(capacity_scale)
            and 0 < capacity_scale <= 1e6):
        problems.append(f"--capacity-scale: must be a number in (0, 1e6], got {show(capacity_scale)}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        problems.append(f"--seed: must be an integer >= 0, got {show(seed)}")
    return problems


def _draw_job(rng: np.random.Generator, spec: Preset, ranges: dict, arrival: int, n: int) -> Job:
    """Job ``n`` arriving in ``arrival``, drawn as the module docstring says (the draws' order is fixed)."""
    integer = set(spec.integer_resources)
    while True:
        chunks = _int(rng, spec.chunks)
        epochs = _int(rng, spec.epochs)
        minibatches = _int(rng, spec.minibatches_per_chunk)
        gradient = round(_log_uniform(rng, spec.gradient_mb), 3)
        b = round(_log_uniform(rng, ranges["worker_bandwidth_gbps"]), 3)
        big_b = round(_log_uniform(rng, ranges["ps_bandwidth_gbps"]), 3)
        if b > big_b:
            b, big_b = big_b, b
        chunk_seconds = _log_uniform(rng, spec.chunk_slots) * spec.slot_seconds
        communication = 2.0 * gradient * 8.0 / 1000.0 / b
        compute = chunk_seconds / (epochs * minibatches) - communication
        if compute >= spec.min_compute_seconds:
            break
    compute = round(compute, 4)

    def draw_demand(demand_ranges: dict[str, Range], bandwidth: float) -> np.ndarray:
        return np.array([bandwidth if r == "bandwidth" else _resource_value(rng, r, demand_ranges[r], r in integer)
                         for r in spec.resources])

    worker_demand = draw_demand(ranges["worker_demand"], b)
    ps_demand = draw_demand(ranges["ps_demand"], big_b)
    # Every demand fits on every server: each preset's demand maxima are at most its capacity minima
    # (checked by the tests), and _fitting_ranges cuts them to the scaled capacities; nothing is redrawn.
    work = epochs * chunks * minibatches * (compute + communication) / spec.slot_seconds
    shortest = -(-ceil_tolerant(work) // chunks)
    utility = Sigmoid(
        gamma1=round(_log_uniform(rng, spec.gamma1), 3),
        gamma2=round(float(rng.uniform(*spec.gamma2)), 3),
        gamma3=round((shortest - 1) + shortest * (float(rng.uniform(*spec.target_slack)) - 1.0), 3),
    )
    return Job(arrival=arrival, epochs=epochs, chunks=chunks, minibatches_per_chunk=minibatches,
               compute_seconds=compute, gradient_mb=gradient, worker_bandwidth_gbps=b, ps_bandwidth_gbps=big_b,
               worker_demand=worker_demand, ps_demand=ps_demand, utility=utility, name=f"job{n}")


def _with_type_times(job: Job, types: list[str]) -> Job:
    """``job`` with ``tau_i^g = round(tau_i x ratio_g / ratio_fastest, 4)`` per type: its drawn ``tau_i`` is the
    fastest type's (ratio 1 exactly, so ``compute_seconds`` stays the least, as the format requires)."""
    fastest = min(GAVEL_TIME_RATIO[name] for name in types)
    times = {name: round(job.compute_seconds * (GAVEL_TIME_RATIO[name] / fastest), 4) for name in types}
    return replace(job, compute_seconds_by_type=times)


def _sizes(rng: np.random.Generator, spec: Preset, jobs, horizon, load, worker_servers, ps_servers) -> tuple:
    """Jobs, slots, servers (the knobs, else drawn), the arrival rate and window; refuses what does not fit."""
    n_jobs = jobs if jobs is not None else _int(rng, spec.jobs)
    n_slots = horizon if horizon is not None else _int(rng, spec.horizon)
    n_worker_servers = worker_servers if worker_servers is not None else _int(rng, spec.worker_servers)
    n_ps_servers = ps_servers if ps_servers is not None else _int(rng, spec.ps_servers)
    rate = load if load is not None else spec.load
    if jobs is not None and load is None and jobs != spec.jobs[1]:
        # Keep the preset's contention when only the job count changes: same arrival window.
        rate = spec.load * jobs / spec.jobs[1]
    servers = n_worker_servers + n_ps_servers
    if n_jobs * n_slots * servers > MAX_SCHEDULE_CELLS:
        raise InputError(
            f"--jobs/--horizon/--worker-servers/--ps-servers: {counted(n_jobs, 'job')} x {counted(n_slots, 'slot')} x "
            f"{counted(servers, 'server')} "
            f"must be at most {fmt_number(MAX_SCHEDULE_CELLS)} (docs/input-ranges.md)")
    arrival_window = n_jobs / rate
    if spec.name == "tiny":
        arrival_window = min(arrival_window, n_slots)
    if arrival_window > n_slots:
        raise InputError(
            f"--load: {counted(n_jobs, 'job')} at {rate:g} jobs per slot {by_count(n_jobs, '[arrive|arrives]')} "
            f"over {arrival_window:.1f} slots, longer than the horizon of {counted(n_slots, 'slot')} "
            "(raise --load or --horizon)"
        )
    return n_jobs, n_slots, n_worker_servers, n_ps_servers, rate, arrival_window


def generate(
    preset: str = "small",
    seed: int = 0,
    jobs: int | None = None,
    horizon: int | None = None,
    load: float | None = None,
    worker_servers: int | None = None,
    ps_servers: int | None = None,
    capacity_scale: float = 1.0,
    gpu_types=None,
) -> Instance:
    """Draw an instance from ``preset``; the knobs override the preset's defaults.

    ``gpu_types``: ``[(type, servers), ...]`` (``--gpu-types v100:2,p100:1``) makes a heterogeneous cluster
    (:mod:`primaldual.core.gpu_types`): that many worker servers of each type in the order given, each drawn as
    the preset draws a worker server, so the instance is the one of ``--worker-servers`` (their sum) plus the
    types: each job's drawn ``tau_i`` is its time on the fastest type listed and ``tau_i^g`` scales it by
    :data:`~primaldual.core.gpu_types.GAVEL_TIME_RATIO` (no random number is drawn for the types).

    ``capacity_scale`` multiplies every server capacity (for sweeps over cluster size without changing the
    server count). Below 1, demands that would no longer fit the smallest server are drawn from the part of
    their range that fits, and ``meta["fitted_to_capacity"]`` says which; a scale at which some demand fits no
    server at all is refused (:class:`InputError` naming ``--capacity-scale`` and the smallest scale that works).
    """
    if not isinstance(preset, str) or preset not in PRESETS:
        raise InputError(f"--preset: must be one of {sorted(PRESETS)}, got {show(preset)}")
    spec = PRESETS[preset]
    problems = _check_knobs(jobs, horizon, load, worker_servers, ps_servers, capacity_scale, seed)
    if problems:
        raise InputError(problems)
    if gpu_types is not None:
        if worker_servers is not None:
            raise InputError("--gpu-types: gives the worker servers per type; leave out --worker-servers")
        gpu_types = check_type_counts(gpu_types, "--gpu-types")
        worker_servers = sum(count for _, count in gpu_types)
        if worker_servers > MAX_SERVERS:
            raise InputError(f"--gpu-types: {worker_servers} worker servers in all, more than {MAX_SERVERS}")
    ranges, notes, problems = _fitting_ranges(spec, float(capacity_scale))
    if problems:
        raise InputError(problems)

    rng = np.random.Generator(np.random.PCG64(int(seed)))
    n_jobs, n_slots, n_worker_servers, n_ps_servers, rate, arrival_window = _sizes(
        rng, spec, jobs, horizon, load, worker_servers, ps_servers)

    resources = spec.resources
    integer = set(spec.integer_resources)

    def draw_capacity(ranges: dict[str, Range]) -> list[float]:
        return [_resource_value(rng, r, ranges[r], r in integer) * capacity_scale for r in resources]

    worker_capacity = np.array([draw_capacity(spec.worker_capacity) for _ in range(n_worker_servers)])
    ps_capacity = np.array([draw_capacity(spec.ps_capacity) for _ in range(n_ps_servers)])

    arrivals = np.sort(np.floor(rng.uniform(0.0, arrival_window, size=n_jobs)).astype(int))
    arrivals = np.minimum(arrivals, n_slots - 1)  # only a float edge: uniform() < window <= n_slots

    job_list = [_draw_job(rng, spec, ranges, int(arrival), n) for n, arrival in enumerate(arrivals)]
    worker_types = None
    if gpu_types is not None:
        worker_types = [name for name, count in gpu_types for _ in range(count)]
        job_list = [_with_type_times(job, [name for name, _ in gpu_types]) for job in job_list]
    meta = {
        "generator": "primaldual.generate",
        "preset": preset,
        "seed": int(seed),
        "load": float(rate),
        "capacity_scale": float(capacity_scale),
    }
    if gpu_types is not None:
        meta["gpu_types"] = {name: count for name, count in gpu_types}
        meta["gpu_time_ratio"] = {name: GAVEL_TIME_RATIO[name] for name, _ in gpu_types}
    if notes:
        meta["fitted_to_capacity"] = notes
    # The loader's own check (Instance.validate): a generated instance is one every file loader accepts.
    return Instance(
        cluster=Cluster(resources, worker_capacity, ps_capacity, worker_types),
        jobs=tuple(job_list),
        horizon=int(n_slots),
        slot_seconds=spec.slot_seconds,
        meta=meta,
    ).validate()


__all__ = ["PRESETS", "Preset", "generate", "replace"]
