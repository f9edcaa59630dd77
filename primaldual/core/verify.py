"""The independent verifier: is a schedule feasible for problem (1)-(13), and what is it worth?

It reads only the data model (instance and schedule) and shares no code with any scheduler or with the ILP,
so that every component's output is judged by the same, separate check. Each violation names the constraint
(the paper's equation number), the job, the slot, the server and the resource where they apply.

Checked: work (2), worker cap (3), worker- and PS-server capacities (4)-(5), PS bandwidth (6), PSs <= workers
(7), nothing before arrival (9)-(10), integral non-negative counts (12)-(13), array shapes. Recomputed:
completion slots (8) and the total utility (1). On a heterogeneous cluster (:mod:`primaldual.core.gpu_types`),
(2) is ``sum_t sum_h y_iht / W_i^{g(h)} >= 1``, each worker-slot supplying work at its server's type's speed,
and a job's workers in one slot must be of one type (Gavel's rule, kind ``one_type``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from primaldual.core.domains import show
from primaldual.core.instance import Instance
from primaldual.core.metrics import admitted_count
from primaldual.core.schedule import Schedule

#: Absolute slack on capacity sums, so that 0.1 + 0.2 units fit a capacity of 0.3.
CAPACITY_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Violation:
    """One broken constraint. ``equation`` is the paper's number, e.g. ``"(6)"``; ``kind`` a stable key."""

    equation: str
    kind: str
    message: str
    job: int | None = None
    slot: int | None = None
    server: int | None = None
    resource: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class VerificationReport:
    feasible: bool
    utility: float
    violations: tuple[Violation, ...]
    completion_slots: dict[int, int] = field(default_factory=dict)
    job_utilities: dict[int, float] = field(default_factory=dict)
    #: docs/formats.md, "Admitted": the jobs the schedule holds (:func:`primaldual.core.metrics.admitted_count`).
    admitted: int = 0

    @property
    def kinds(self) -> set[str]:
        return {v.kind for v in self.violations}

    def to_dict(self) -> dict:
        return {
            "feasible": self.feasible,
            "utility": self.utility,
            "admitted": self.admitted,
            "completion_slots": {str(i): t for i, t in self.completion_slots.items()},
            "violations": [v.to_dict() for v in self.violations],
        }


def _cell_violations(i: int, pools, counts, start: int, equation: str, kind: str, flagged,
                     message) -> list[Violation]:
    """One :class:`Violation` per (slot, server) cell that ``flagged(array, start)`` marks, for each pool and its
    ``counts`` window (workers, then PSs; row 0 is slot ``start``), in row-major order; ``equation`` names the
    pool's equation field."""
    out = []
    for pool, array in zip(pools, counts):
        for row, s in zip(*np.nonzero(flagged(array, start))):
            t = int(row) + start
            out.append(Violation(getattr(pool, equation), kind, message(pool.units, t, s, array[row, s]), job=i,
                                 slot=t, server=int(s)))
    return out


def verify(instance: Instance, schedule: Schedule) -> VerificationReport:
    """Check ``schedule`` against eqs. (2)-(13) of ``instance``; never raises on an infeasible schedule.

    Each job is checked on its own (:func:`_job_violations`) on its window, the slots from its first to its
    last non-zero count (:mod:`primaldual.core.schedule`), never on a dense (T, H) copy: the cost is
    ``O(sum of window sizes + T (H + K) R)``, the last term for the summed loads. The capacities (4)-(5) are
    checked last, on the loads summed over every well-formed job, so a violation lists every job that shares
    the server.
    """
    pools = instance.pools
    violations: list[Violation] = []
    loads = [np.zeros((instance.horizon, pool.n_servers, instance.cluster.n_resources)) for pool in pools]
    completion_slots: dict[int, int] = {}
    job_utilities: dict[int, float] = {}

    for i, assignment in schedule.assignments.items():
        counts = _counts(instance, i, assignment)
        if isinstance(counts, Violation):
            violations.append(counts)
            continue
        job, (start, y, z) = instance.jobs[i], counts
        violations += _job_violations(instance, i, start, y, z)
        for load, pool, array in zip(loads, pools, (y, z)):
            load[start:start + array.shape[0]] += array[:, :, None] * pool.demand(job)[None, None, :]
        # (8) and (1): completion slot = last slot with a worker; utility f_i(t_hat - a_i).
        active = np.flatnonzero(y.sum(axis=1) > 0)
        if active.size:
            completion = int(active[-1]) + start
            completion_slots[i] = completion
            job_utilities[i] = float(job.utility(completion - job.arrival))
        else:
            job_utilities[i] = 0.0

    violations += _capacity_violations(instance, schedule, loads)
    feasible = not violations
    # The utility is reported for infeasible schedules too: it says what the schedule claims to earn.
    utility = float(sum(job_utilities.values()))
    return VerificationReport(feasible, utility, tuple(violations), completion_slots, job_utilities,
                              admitted=admitted_count(schedule))


def _counts(instance: Instance, i: int, assignment) -> tuple[int, np.ndarray, np.ndarray] | Violation:
    """Job ``i``'s window ``(start, workers (L, H), parameter servers (L, K))`` as float arrays, or the
    violation that makes them unreadable (a job outside the instance, or counts not over (T, H) and (T, K))."""
    if not 0 <= i < instance.n_jobs:
        known = f"0..{instance.n_jobs - 1}" if instance.n_jobs else "it has no jobs"
        return Violation("-", "unknown_job", f"job {i} is not in the instance ({known})", job=i)
    horizon, cluster = instance.horizon, instance.cluster
    start, y, z, dense_y, dense_z = _window(assignment)
    if dense_y != (horizon, cluster.n_worker_servers) or dense_z != (horizon, cluster.n_ps_servers):
        return Violation(
            "-", "shape",
            f"job {i}: workers must be {horizon}x{cluster.n_worker_servers} and parameter_servers "
            f"{horizon}x{cluster.n_ps_servers}, got {dense_y} and {dense_z}",
            job=i,
        )
    return start, y, z


def _window(assignment) -> tuple[int, np.ndarray, np.ndarray, tuple, tuple]:
    """The counts a job's schedule holds, as float arrays, the slot of their first row and the shapes of the
    dense arrays they stand for (a schedule object without windows, e.g. a test's stand-in, or arrays kept as
    given, is read densely from slot 0)."""
    if hasattr(assignment, "window_workers") and not assignment.as_given:
        y = np.asarray(assignment.window_workers, dtype=float)
        z = np.asarray(assignment.window_parameter_servers, dtype=float)
        return assignment.start, y, z, (assignment.horizon, y.shape[1]), (assignment.horizon, z.shape[1])
    y = np.asarray(assignment.workers, dtype=float)
    z = np.asarray(assignment.parameter_servers, dtype=float)
    return 0, y, z, y.shape, z.shape


def _job_violations(instance: Instance, i: int, start: int, y: np.ndarray, z: np.ndarray) -> list[Violation]:
    """The constraints of one job alone on its window (row 0 = slot ``start``): (12)-(13), (9)-(10), (2), (3),
    (6), (7), in that order. Slots outside the window hold only zeros, which break none of them."""
    job, pools = instance.jobs[i], instance.pools
    # (12)-(13): non-negative integers.
    violations = _cell_violations(
        i, pools, (y, z), start, "count_equation", "integrality",
        lambda array, first: ~np.isfinite(array) | (array < 0) | (array != np.round(array)),
        lambda name, t, s, value: f"job {i}: {name} on server {s} in slot {t} must be a non-negative integer, "
                                  f"got {show(value)}")
    # (9)-(10): nothing before arrival.
    violations += _cell_violations(
        i, pools, (y, z), start, "arrival_equation", "before_arrival",
        lambda array, first: array[: max(job.arrival - first, 0)] != 0,
        lambda name, t, s, value: f"job {i}: {name} on server {s} in slot {t}, before its arrival slot "
                                  f"{job.arrival}")
    workers_per_slot = y.sum(axis=1)
    ps_per_slot = z.sum(axis=1)
    if instance.cluster.heterogeneous:
        violations += _type_violations(instance, i, start, y)
    # (2): work.
    elif workers_per_slot.sum() < instance.work_units[i]:
        violations.append(Violation(
            "(2)", "work",
            f"job {i}: {workers_per_slot.sum():g} worker-slots cover less than its work "
            f"W = {instance.work[i]:.6g} (needs {int(instance.work_units[i])})",
            job=i,
        ))
    # (3): at most N_i workers per slot.
    for t in np.flatnonzero(workers_per_slot > job.chunks):
        violations.append(Violation(
            "(3)", "worker_cap",
            f"job {i}: {workers_per_slot[t]:g} workers in slot {t + start}, more than its N = {job.chunks} chunks",
            job=i, slot=int(t) + start,
        ))
    # (6): PS bandwidth covers worker bandwidth.
    lhs = workers_per_slot * job.worker_bandwidth_gbps
    rhs = ps_per_slot * job.ps_bandwidth_gbps
    for t in np.flatnonzero(lhs > rhs * (1 + 1e-9) + CAPACITY_TOLERANCE):
        violations.append(Violation(
            "(6)", "ps_bandwidth",
            f"job {i}: slot {t + start}: {workers_per_slot[t]:g} workers x {job.worker_bandwidth_gbps:g} Gbps "
            f"exceed {ps_per_slot[t]:g} PSs x {job.ps_bandwidth_gbps:g} Gbps",
            job=i, slot=int(t) + start,
        ))
    # (7): no more PSs than workers.
    for t in np.flatnonzero(ps_per_slot > workers_per_slot):
        violations.append(Violation(
            "(7)", "ps_count",
            f"job {i}: slot {t + start}: {ps_per_slot[t]:g} PSs, more than its {workers_per_slot[t]:g} workers",
            job=i, slot=int(t) + start,
        ))
    return violations


def _type_violations(instance: Instance, i: int, start: int, y: np.ndarray) -> list[Violation]:
    """Heterogeneous clusters: one type per slot (Gavel's rule), then (2) at each type's speed,
    ``sum_t sum_h y_iht / W_i^{g(h)} >= 1`` up to a relative 1e-9 (floating noise in ``W``). O(L H)."""
    types, index = instance.cluster.gpu_types, instance.cluster.worker_type_index
    # Per slot and type, the job's workers on servers of that type: shape (L, G).
    per_type = np.stack([y[:, index == g].sum(axis=1) for g in range(len(types))], axis=1)
    violations = []
    for t in np.flatnonzero((per_type > 0).sum(axis=1) > 1):
        used = ", ".join(f"{per_type[t, g]:g} {types[g]}" for g in np.flatnonzero(per_type[t] > 0))
        violations.append(Violation(
            "(2)", "one_type",
            f"job {i}: workers of more than one gpu type in slot {t + start} ({used}); a job's workers in one "
            "slot are of one type", job=i, slot=int(t) + start))
    work = instance.work_by_type[i]
    done = float((per_type.sum(axis=0) / work).sum())  # the fraction of the job the schedule does
    if done < 1.0 - 1e-9:
        given = ", ".join(f"{per_type[:, g].sum():g} on {types[g]} (W = {work[g]:.6g})" for g in range(len(types))
                          if per_type[:, g].sum() > 0) or "none"
        violations.append(Violation(
            "(2)", "work",
            f"job {i}: worker-slots {given} do {done:.6g} of its work at each type's speed (needs 1)", job=i))
    return violations


def _capacity_violations(instance: Instance, schedule: Schedule, loads: list[np.ndarray]) -> list[Violation]:
    """(4)-(5): per server, slot and resource, the summed load within capacity; each violation names the jobs
    with units on the server in that slot."""
    violations = []
    resources = instance.cluster.resources
    for pool, load in zip(instance.pools, loads):
        capacity = pool.capacity
        over = load > capacity[None, :, :] + CAPACITY_TOLERANCE
        for t, s, r in zip(*np.nonzero(over)):
            users = sorted(i for i, a in schedule.assignments.items() if _uses(instance, i, a, pool, t, s))
            violations.append(Violation(
                pool.capacity_equation, f"{pool.name}_capacity",
                f"slot {t}: {pool.server} server {s} {resources[r]}: jobs {users} use "
                f"{load[t, s, r]:g}, capacity {capacity[s, r]:g}",
                slot=int(t), server=int(s), resource=resources[r],
            ))
    return violations


def _uses(instance: Instance, i: int, assignment, pool, t: int, s: int) -> bool:
    """Whether well-formed job ``i`` has units of ``pool`` on server ``s`` in slot ``t`` (read on its window)."""
    counts = _counts(instance, i, assignment)
    if isinstance(counts, Violation):
        return False
    start, window = counts[0], counts[1 if pool.name == "worker" else 2]
    return start <= t < start + window.shape[0] and window[t - start, s] != 0
