"""Numeric domains of the instance and schedule formats: every number has a finite, documented range.

The ranges (tabulated in ``docs/input-ranges.md``) are generous for any cluster this package can schedule,
and finite so that nothing downstream can overflow an int64, produce a NaN, or allocate unbounded memory:

- capacities are at most 1e9 and positive demands at least 1e-3, so "how many units fit on a server" is at
  most 1e12 (below ``primaldual.simulation.placement.UNBOUNDED`` = 2^40) and a sum over 10^4 servers stays
  below 1e16, far from 2^63 ~ 9.2e18;
- sizes are bounded, and so are their products that the code allocates: per-slot arrays of slots x servers x
  resources (verifier loads, prices), schedules of jobs x slots x servers, and OASiS's dynamic programme over
  slots x work units and work units x workers (``primaldual.dual.reference.search``);
- every value entering the work ``W_i`` is bounded, so ``W_i`` is finite and positive.

:func:`instance_problems` is the one validator of an in-memory instance: :class:`primaldual.core.instance.Instance`
runs its domain part on construction, and the file loader (:mod:`primaldual.core.files`) and the generator
(:mod:`primaldual.core.generate`) run all of it, so a sweep cannot accept an instance that a file would refuse.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_HORIZON = 100_000
MAX_SERVERS = 10_000  # per pool
MAX_RESOURCES = 64
MAX_JOBS = 100_000
MAX_NAME_LENGTH = 1_000
#: slots x (worker + PS servers) x resources: each per-slot load or price array (80 MB of float64 at most).
MAX_SLOT_CELLS = 10**7
#: jobs x slots x (worker + PS servers): once the dense counts of a schedule that admits every job (1e9);
#: schedules keep each job's window now (core/schedule.py), so this bounds the loops that still visit every job in
#: every slot. 1e10 admits a whole seed of the Philly trace (15,255 jobs x 3,005 slots x 126 servers = 5.8e9).
MAX_SCHEDULE_CELLS = 10**10
#: (slots from arrival to horizon) x work units, and work units x most workers: OASiS's tables per job.
MAX_WORK_CELLS = 10**8


class JsonOverflow:
    """A JSON number that no float or sane integer holds (``1e400``, a 5000-digit integer), kept as text so
    that the field it sits in can be named in the message instead of failing inside the JSON parser."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return show(self)


def show(value) -> str:
    """A value as a user reads it: plain numbers (never ``np.float64(1.5)``), huge integers by digit count."""
    if isinstance(value, JsonOverflow):
        digits = value.text.lstrip("-")
        if digits.isdigit():
            return f"an integer of {len(digits)} digits"
        return value.text if len(value.text) <= 40 else value.text[:37] + "..."
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if abs(value) < 10**20:
            return str(value)
        # str() refuses integers of more than 4300 digits; the logarithm counts them without converting.
        return f"an integer of {int(math.log10(abs(value))) + 1} digits"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if value is None:
        return "null"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, (list, tuple, dict)):
        text = repr(value)
        return text if len(text) <= 60 else f"a {'list' if not isinstance(value, dict) else 'object'} of {len(value)}"
    return type(value).__name__


def fmt_number(x: float) -> str:
    """``1e9``, ``1e-6``, ``0.001``, ``100000``: range ends as a reader writes them."""
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    if 1e-3 <= abs(x) < 1e6:
        return f"{x:g}"
    mantissa, exponent = f"{x:e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


@dataclass(frozen=True)
class Domain:
    """``low <= value <= high`` (``low < value`` if ``low_open``); ``integer``: a whole number;
    ``zero_or_low``: 0, or ``low <= value <= high`` (a demand is 0 or at least ``low``)."""

    low: float
    high: float
    integer: bool = False
    low_open: bool = False
    zero_or_low: bool = False

    def describe(self) -> str:
        if self.integer:
            return f"an integer in {fmt_number(self.low)}..{fmt_number(self.high)}"
        if self.zero_or_low:
            return f"0 or a number in [{fmt_number(self.low)}, {fmt_number(self.high)}]"
        return f"a number in {'(' if self.low_open else '['}{fmt_number(self.low)}, {fmt_number(self.high)}]"

    def contains(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            return False
        if isinstance(value, (int, np.integer)):
            value = int(value)  # compared exactly: a 400-digit int never goes through float()
        elif not math.isfinite(value):
            return False
        elif self.integer and value != int(value):
            return False
        if self.zero_or_low and value == 0:
            return True
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high

    def problem(self, where: str, value) -> list[str]:
        """``[]`` if ``value`` is in the domain, else one message naming ``where`` and the range."""
        if self.contains(value):
            return []
        return [f"{where}: must be {self.describe()}, got {show(value)}"]


INSTANCE_FIELDS: dict[str, Domain] = {
    "horizon": Domain(1, MAX_HORIZON, integer=True),
    "slot_seconds": Domain(1e-6, 1e9),
    "capacity": Domain(0, 1e9),
}
JOB_FIELDS: dict[str, Domain] = {
    "arrival": Domain(0, MAX_HORIZON - 1, integer=True),
    "epochs": Domain(1, 1e9, integer=True),
    "chunks": Domain(1, 1e9, integer=True),
    "minibatches_per_chunk": Domain(1, 1e9, integer=True),
    "compute_seconds": Domain(1e-9, 1e9),
    "gradient_mb": Domain(0, 1e9),
    "worker_bandwidth_gbps": Domain(1e-6, 1e6),
    "ps_bandwidth_gbps": Domain(1e-6, 1e6),
}
DEMAND = Domain(1e-3, 1e9, zero_or_low=True)
UTILITY_FIELDS: dict[str, dict[str, Domain]] = {
    "sigmoid": {"gamma1": Domain(0, 1e12), "gamma2": Domain(0, 1e6), "gamma3": Domain(-1e9, 1e9)},
    "linear": {"value": Domain(0, 1e12), "deadline": Domain(0, 1e9, low_open=True)},
    "step": {"value": Domain(0, 1e12), "deadline": Domain(0, 1e9)},
    "constant": {"value": Domain(0, 1e12)},
}
#: A schedule's count: the verifier judges sign and integrality (eqs. (12)-(13)); beyond this magnitude a
#: count is malformed input (no server holds 10^9 units of anything).
SCHEDULE_COUNT = Domain(-1e9, 1e9)


# ---------------------------------------------------------------------------------- in-memory validation


def _cluster_problems(cluster) -> list[str]:
    problems = []
    if not 1 <= len(cluster.resources) <= MAX_RESOURCES:
        problems += [f"cluster.resources: must list 1..{MAX_RESOURCES} names, got {len(cluster.resources)}"]
    for pool, capacity in (("worker_servers", cluster.worker_capacity), ("ps_servers", cluster.ps_capacity)):
        if not 1 <= capacity.shape[0] <= MAX_SERVERS:
            problems.append(f"cluster.{pool}: must list 1..{MAX_SERVERS} servers, got {capacity.shape[0]}")
        bad = ~(np.isfinite(capacity) & (capacity >= 0) & (capacity <= INSTANCE_FIELDS["capacity"].high))
        for s, r in zip(*np.nonzero(bad)):
            problems += INSTANCE_FIELDS["capacity"].problem(
                f"cluster.{pool}[{s}].{cluster.resources[r]}", capacity[s, r])
    return problems


def _job_domain_problems(job, where: str, resources, demands_ok: bool) -> list[str]:
    problems = []
    for name, domain in JOB_FIELDS.items():
        value = getattr(job, name)
        if not domain.contains(value):  # the message (an f-string per field) only when it is needed
            problems += domain.problem(f"{where}.{name}", value)
    for name in ("worker_demand", "ps_demand"):
        vector = getattr(job, name)
        if vector.shape != (len(resources),):
            problems.append(f"{where}.{name}: must hold one value per resource {list(resources)}, got {vector.shape}")
        elif not demands_ok:
            for r, value in enumerate(vector):
                problems += DEMAND.problem(f"{where}.{name}.{resources[r]}", value)
    if not isinstance(job.name, str) or len(job.name) > MAX_NAME_LENGTH:
        problems.append(f"{where}.name: must be a string of at most {MAX_NAME_LENGTH} characters")
    kind = getattr(job.utility, "kind", None)
    if kind not in UTILITY_FIELDS:
        problems.append(f"{where}.utility: must be one of {sorted(UTILITY_FIELDS)}, got {show(job.utility)}")
    else:
        for name, domain in UTILITY_FIELDS[kind].items():
            if not domain.contains(getattr(job.utility, name)):
                problems += domain.problem(f"{where}.utility.{name}", getattr(job.utility, name))
    return problems


def _demands_ok(jobs, n_resources: int) -> np.ndarray:
    """Per job, whether both demand vectors are in :data:`DEMAND` (checked for all jobs at once)."""
    ok = np.ones(len(jobs), dtype=bool)
    for name in ("worker_demand", "ps_demand"):
        rows = [getattr(job, name) for job in jobs]
        shaped = np.array([row.shape == (n_resources,) for row in rows], dtype=bool)
        matrix = np.array([row if good else np.zeros(n_resources) for row, good in zip(rows, shaped)])
        matrix = matrix.reshape(len(jobs), n_resources)
        inside = np.isfinite(matrix) & ((matrix == 0) | ((matrix >= DEMAND.low) & (matrix <= DEMAND.high)))
        ok &= shaped & inside.all(axis=1)
    return ok


def _work_problems(instance, i: int, job, where: str) -> list[str]:
    # Only called on in-range fields, so the product below is finite (at most ~1e50) and positive.
    work = job.epochs * job.chunks * job.minibatches_per_chunk * job.minibatch_seconds / instance.slot_seconds
    slots = instance.horizon - job.arrival
    units = math.ceil(work) if work <= MAX_WORK_CELLS else math.inf
    if slots * units > MAX_WORK_CELLS or units * min(units, job.chunks) > MAX_WORK_CELLS:
        return [
            f"{where}: work W = {work:.4g} worker-slots is too large: (slots from arrival to the horizon = {slots}) x "
            f"W and W x min(chunks, W) must each be at most {fmt_number(MAX_WORK_CELLS)} (see docs/input-ranges.md)"
        ]
    return []


def instance_problems(instance, domain: bool = True, consistency: bool = True) -> list[str]:
    """Every problem of ``instance``, each naming its field as the file format does (``jobs[3].epochs: ...``).

    ``domain``: ranges, sizes and their products, finite positive work (``Instance``'s own checks). ``consistency``
    (only once the domain holds): arrivals before the horizon, ``b_i <= B_i`` (eqs. (6)-(7)), a server per demand."""
    problems = _domain_problems(instance) if domain else []
    if consistency and not problems:
        problems = _consistency_problems(instance)
    return problems


def _domain_problems(instance) -> list[str]:
    problems = INSTANCE_FIELDS["horizon"].problem("horizon", instance.horizon)
    problems += INSTANCE_FIELDS["slot_seconds"].problem("slot_seconds", instance.slot_seconds)
    problems += _cluster_problems(instance.cluster)
    if len(instance.jobs) > MAX_JOBS:
        problems.append(f"jobs: at most {MAX_JOBS} jobs, got {len(instance.jobs)}")
    if problems:
        return problems  # the sizes below are meaningless (or unbounded) until these hold
    cluster = instance.cluster
    servers = cluster.n_worker_servers + cluster.n_ps_servers
    if instance.horizon * servers * cluster.n_resources > MAX_SLOT_CELLS:
        problems.append(
            f"horizon: {instance.horizon} slots x {servers} servers x {cluster.n_resources} resources must be at "
            f"most {fmt_number(MAX_SLOT_CELLS)} (see docs/input-ranges.md)")
    if len(instance.jobs) * instance.horizon * servers > MAX_SCHEDULE_CELLS:
        problems.append(
            f"jobs: {len(instance.jobs)} jobs x {instance.horizon} slots x {servers} servers must be at most "
            f"{fmt_number(MAX_SCHEDULE_CELLS)} (see docs/input-ranges.md)")
    demands_ok = _demands_ok(instance.jobs, cluster.n_resources)
    for i, job in enumerate(instance.jobs):
        job_problems = _job_domain_problems(job, f"jobs[{i}]", cluster.resources, bool(demands_ok[i]))
        problems += job_problems or _work_problems(instance, i, job, f"jobs[{i}]")
    return problems


def _fits(demands: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Per job, whether its demand (row of ``demands``) fits on some server (row of ``capacity``).

    Vectorised over blocks of jobs so that the (jobs, servers, resources) comparison stays ~1e6 cells."""
    out = np.zeros(demands.shape[0], dtype=bool)
    block = max(1, 1_000_000 // max(1, capacity.size))
    for start in range(0, demands.shape[0], block):
        chunk = demands[start:start + block]
        out[start:start + block] = np.all(capacity[None, :, :] >= chunk[:, None, :], axis=2).any(axis=1)
    return out


def _consistency_problems(instance) -> list[str]:
    cluster = instance.cluster
    fits = {
        name: _fits(np.array([getattr(j, name) for j in instance.jobs]).reshape(-1, cluster.n_resources), capacity)
        for name, capacity in (("worker_demand", cluster.worker_capacity), ("ps_demand", cluster.ps_capacity))
    }
    problems = []
    for i, job in enumerate(instance.jobs):
        where = f"jobs[{i}]"
        if job.arrival >= instance.horizon:
            problems.append(f"{where}.arrival: must be a slot in 0..{instance.horizon - 1} (the horizon is "
                            f"{instance.horizon}), got {job.arrival}")
        if job.worker_bandwidth_gbps > job.ps_bandwidth_gbps:
            problems.append(
                f"{where}.worker_bandwidth_gbps: must be <= ps_bandwidth_gbps ({show(job.ps_bandwidth_gbps)}), "
                f"got {show(job.worker_bandwidth_gbps)} (otherwise eqs. (6)-(7) admit no PS count)")
        for name, pool in (("worker_demand", "worker"), ("ps_demand", "PS")):
            if not fits[name][i]:
                shown = ", ".join(f"{r}: {show(v)}" for r, v in zip(cluster.resources, getattr(job, name)))
                problems.append(f"{where}.{name}: fits on no {pool} server (demand {{{shown}}} exceeds every "
                                "server's capacity)")
    return problems
