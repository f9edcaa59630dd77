"""Versioned JSON files for instances and schedules: exact round trips, validation on load.

Loading collects every problem and raises one :class:`InputError` with a message per problem, each naming
the field and its valid range (``jobs[3].worker_demand.gpu: must be 0 or a number in [0.001, 1e9], got -1``;
the ranges are in ``docs/input-ranges.md``). Nothing is clamped or dropped silently. Unreadable input (not
UTF-8, malformed or too deeply nested JSON, numbers no float holds) is an :class:`InputError` too.
Floats are written with ``repr`` precision, so ``load(save(x))`` reproduces every number bit for bit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from primaldual.core.domains import DEMAND, INSTANCE_FIELDS, JOB_FIELDS, MAX_JOBS, MAX_RESOURCES, MAX_SERVERS, \
    SCHEDULE_COUNT, show
from primaldual.core.errors import InputError
from primaldual.core.file_checks import TYPED_VERSION, VERSION, _check_header, _check_meta, _is_integer, _is_number
from primaldual.core.gpu_types import version_problems
from primaldual.core.fingerprint import check_pair, check_unstamped, stamp
from primaldual.core.instance import Cluster, Instance, Job
from primaldual.core.provenance import provenance
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.strict_json import read_json as _read_json
from primaldual.core.strict_json import unknown_keys
from primaldual.core.utility import utility_from_dict, utility_to_dict

INSTANCE_FORMAT = "primaldual.instance"
SCHEDULE_FORMAT = "primaldual.schedule"


def write_json(data: Any, path: str | Path) -> None:
    """Write atomically (a temporary file renamed into place), so an interrupted write loses nothing."""
    from primaldual.core.output import write_text

    write_text(path, json.dumps(data, indent=1, allow_nan=False) + "\n")


# ---------------------------------------------------------------------------------------------- instance


def instance_to_dict(instance: Instance) -> dict:
    resources = instance.cluster.resources

    def per_resource(row) -> dict:
        return {r: float(v) for r, v in zip(resources, row)}

    cluster = instance.cluster
    # GPU types (issue 64) only where the cluster has them: a homogeneous instance's file, and so its
    # fingerprint, is what it always was.
    types = {} if cluster.gpu_types is None else {"gpu_types": list(cluster.gpu_types),
                                                  "worker_types": list(cluster.worker_types)}
    return {
        "format": INSTANCE_FORMAT,
        "version": VERSION if cluster.gpu_types is None else TYPED_VERSION,
        "horizon": int(instance.horizon),
        "slot_seconds": float(instance.slot_seconds),
        "meta": dict(instance.meta),
        "cluster": {
            "resources": list(resources),
            "worker_servers": [per_resource(row) for row in cluster.worker_capacity],
            "ps_servers": [per_resource(row) for row in cluster.ps_capacity],
            **types,
        },
        "jobs": [
            {
                "name": job.name,
                "arrival": int(job.arrival),
                "epochs": int(job.epochs),
                "chunks": int(job.chunks),
                "minibatches_per_chunk": int(job.minibatches_per_chunk),
                "compute_seconds": float(job.compute_seconds),
                "gradient_mb": float(job.gradient_mb),
                "worker_bandwidth_gbps": float(job.worker_bandwidth_gbps),
                "ps_bandwidth_gbps": float(job.ps_bandwidth_gbps),
                "worker_demand": per_resource(job.worker_demand),
                "ps_demand": per_resource(job.ps_demand),
                "utility": utility_to_dict(job.utility),
                **({} if job.compute_seconds_by_type is None else
                   {"compute_seconds_by_type": {g: float(v) for g, v in job.compute_seconds_by_type}}),
            }
            for job in instance.jobs
        ],
    }


def _resource_vector(data: Any, where: str, resources: tuple[str, ...], domain, problems: list[str]) -> np.ndarray:
    vector = np.zeros(len(resources))
    if not isinstance(data, dict):
        problems.append(f"{where}: must be an object mapping each resource {list(resources)} to a number")
        return vector
    for name in data:
        if name not in resources:
            problems.append(f"{where}.{name}: unknown resource (the cluster declares {list(resources)})")
    for r, name in enumerate(resources):
        if name not in data:
            problems.append(f"{where}.{name}: missing (give every resource, 0 where none is needed)")
            continue
        found = domain.problem(f"{where}.{name}", data[name])
        problems += found
        if not found:
            vector[r] = float(data[name])
    return vector


def _names(data: dict, key: str, where: str, problems: list[str]) -> tuple | None:
    """An optional list of names (``cluster.gpu_types``, ``cluster.worker_types``): None when absent. Which
    names are valid is :mod:`primaldual.core.gpu_types`'s check."""
    if key not in data:
        return None
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        problems.append(f"{where}.{key}: must be a list of type names, got {show(value)}")
        return None
    return tuple(value)


def _type_seconds(job_data: dict, where: str, problems: list[str]) -> dict | None:
    """A job's optional ``compute_seconds_by_type``: an object of type -> seconds in the domain of
    ``compute_seconds`` (a 0, negative or missing time is named here or by the type check)."""
    if "compute_seconds_by_type" not in job_data:
        return None
    value, field = job_data["compute_seconds_by_type"], f"{where}.compute_seconds_by_type"
    if not isinstance(value, dict):
        problems.append(f"{field}: must be an object mapping each gpu type to seconds, got {show(value)}")
        return None
    for name, seconds in value.items():
        problems += JOB_FIELDS["compute_seconds"].problem(f"{field}.{name}", seconds)
    return {name: float(seconds) for name, seconds in value.items() if _is_number(seconds)}


def _parse_cluster(data: dict, problems: list[str]) -> tuple[tuple[str, ...], dict[str, np.ndarray]]:
    cluster_data = data.get("cluster")
    pools = {"worker_servers": np.zeros((0, 0)), "ps_servers": np.zeros((0, 0)), "gpu_types": None,
             "worker_types": None}
    if not isinstance(cluster_data, dict):
        problems.append("cluster: missing or not an object (needs resources, worker_servers, ps_servers)")
        return (), pools
    problems += unknown_keys(cluster_data, "instance.cluster", "cluster")
    raw = cluster_data.get("resources")
    if not isinstance(raw, list) or not raw or not all(isinstance(r, str) and r for r in raw):
        problems.append(f"cluster.resources: must be a non-empty list of names, got {show(raw)}")
        return (), pools
    if len(raw) > MAX_RESOURCES:
        problems.append(f"cluster.resources: at most {MAX_RESOURCES} resources, got {len(raw)}")
        return (), pools
    if len(set(raw)) != len(raw):
        problems.append(f"cluster.resources: names must be unique, got {show(raw)}")
        return (), pools
    resources = tuple(raw)
    for pool in ("worker_servers", "ps_servers"):
        servers = cluster_data.get(pool)
        if not isinstance(servers, list) or not servers or len(servers) > MAX_SERVERS:
            problems.append(f"cluster.{pool}: must be a list of 1..{MAX_SERVERS} servers, got {show(servers)}")
            continue
        pools[pool] = np.array([
            _resource_vector(server, f"cluster.{pool}[{n}]", resources, INSTANCE_FIELDS["capacity"], problems)
            for n, server in enumerate(servers)
        ]).reshape(len(servers), len(resources))
    for key in ("gpu_types", "worker_types"):
        pools[key] = _names(cluster_data, key, "cluster", problems)
    if ("gpu_types" in cluster_data) != ("worker_types" in cluster_data):
        missing = "worker_types" if "gpu_types" in cluster_data else "gpu_types"
        problems.append(f"cluster.{missing}: missing (a heterogeneous cluster gives gpu_types and worker_types)")
    return resources, pools


def _parse_job(job_data: Any, where: str, resources: tuple[str, ...], problems: list[str]) -> Job | None:
    """One job, or None after appending its problems (each field checked against its domain)."""
    if not isinstance(job_data, dict):
        problems.append(f"{where}: must be an object, got {type(job_data).__name__}")
        return None
    before = len(problems)
    problems += unknown_keys(job_data, "instance.jobs[]", where)
    for name, domain in JOB_FIELDS.items():
        if name not in job_data:
            problems.append(f"{where}.{name}: missing")
        else:
            problems += domain.problem(f"{where}.{name}", job_data[name])
    name_value = job_data.get("name", "")
    if not isinstance(name_value, str):
        problems.append(f"{where}.name: must be a string, got {show(name_value)}")
    demands = {}
    for field_name in ("worker_demand", "ps_demand"):
        if field_name not in job_data:
            problems.append(f"{where}.{field_name}: missing")
        elif resources:
            demands[field_name] = _resource_vector(job_data[field_name], f"{where}.{field_name}", resources,
                                                   DEMAND, problems)
    by_type = _type_seconds(job_data, where, problems)
    utility = None
    if "utility" not in job_data:
        problems.append(f"{where}.utility: missing")
    else:
        try:
            utility = utility_from_dict(job_data["utility"], f"{where}.utility")
        except InputError as error:
            problems.extend(error.problems)
    if len(problems) > before or not resources:
        return None
    return Job(
        **{name: (int if domain.integer else float)(job_data[name]) for name, domain in JOB_FIELDS.items()},
        worker_demand=demands["worker_demand"], ps_demand=demands["ps_demand"], utility=utility, name=name_value,
        compute_seconds_by_type=by_type,
    )


def instance_from_dict(data: Any) -> Instance:
    """Validate and build an :class:`Instance`; raises :class:`InputError` listing every problem.

    Every number is checked against its domain (:mod:`primaldual.core.domains`, ``docs/input-ranges.md``) before
    anything is computed from it; then the built instance passes :meth:`Instance.validate`, the same check
    the generator's instances pass.
    """
    problems = _check_header(data, INSTANCE_FORMAT, (VERSION, TYPED_VERSION))
    if problems and not isinstance(data, dict):
        raise InputError(problems)
    problems += version_problems(data, VERSION, TYPED_VERSION)
    problems += unknown_keys(data, "instance")
    for name in ("horizon", "slot_seconds"):
        problems += INSTANCE_FIELDS[name].problem(name, data.get(name))
    meta = _check_meta(data, problems)
    resources, pools = _parse_cluster(data, problems)
    jobs_data = data.get("jobs")
    if not isinstance(jobs_data, list) or len(jobs_data) > MAX_JOBS:
        problems.append(f"jobs: must be a list of at most {MAX_JOBS} jobs, got {show(jobs_data)}")
        jobs_data = []
    jobs = [_parse_job(job_data, f"jobs[{n}]", resources, problems) for n, job_data in enumerate(jobs_data)]
    if problems:
        raise InputError(problems)
    instance = Instance(
        cluster=Cluster(resources, pools["worker_servers"], pools["ps_servers"], pools["worker_types"],
                        pools["gpu_types"]),
        jobs=tuple(jobs),
        horizon=int(data["horizon"]),
        slot_seconds=float(data["slot_seconds"]),
        meta=meta,
    )
    return instance.validate()


def load_instance(path: str | Path) -> Instance:
    data = _read_json(path, "instance")
    try:
        return instance_from_dict(data)
    except InputError as error:
        raise InputError(error.problems, source=str(path)) from None


def save_instance(instance: Instance, path: str | Path) -> None:
    write_json(instance_to_dict(instance), path)


# ---------------------------------------------------------------------------------------------- schedule


def _count_to_json(value):
    return int(value) if float(value) == int(value) else float(value)


def schedule_to_dict(schedule: Schedule) -> dict:
    """Sparse: per admitted job, ``[slot, server, count]`` triples for the non-zero counts."""
    jobs = []
    for i, assignment in schedule.assignments.items():
        entry, offset = {"job": int(i)}, 0 if assignment.as_given else assignment.start  # the window, not dense
        for key, array in (("workers", assignment.window_workers),
                           ("parameter_servers", assignment.window_parameter_servers)):
            slots, servers = np.nonzero(array)
            entry[key] = [[int(t) + offset, int(s), _count_to_json(array[t, s])] for t, s in zip(slots, servers)]
        jobs.append(entry)
    return {"format": SCHEDULE_FORMAT, "version": VERSION, "meta": dict(schedule.meta), "jobs": jobs}


def _parse_triples(triples: Any, where: str, horizon: int, size: int, problems: list[str]) -> dict | None:
    """``[slot, server, count]`` triples -> ``{(slot, server): count}`` (:meth:`JobSchedule.from_cells`);
    counts within :data:`SCHEDULE_COUNT`."""
    if not isinstance(triples, list):
        problems.append(f"{where}: must be a list of [slot, server, count], got {show(triples)}")
        return None
    array: dict[tuple[int, int], Any] = {}
    seen = set()
    for m, triple in enumerate(triples):
        at = f"{where}[{m}]"
        if not (isinstance(triple, list) and len(triple) == 3):
            problems.append(f"{at}: must be [slot, server, count], got {show(triple)}")
            continue
        slot, server, count = triple
        if not _is_integer(slot) or not 0 <= slot < horizon:
            problems.append(f"{at}: slot must be an integer in 0..{horizon - 1}, got {show(slot)}")
        elif not _is_integer(server) or not 0 <= server < size:
            problems.append(f"{at}: server must be an integer in 0..{size - 1}, got {show(server)}")
        elif (slot, server) in seen:
            problems.append(f"{at}: slot {int(slot)} server {int(server)} is listed twice")
        elif SCHEDULE_COUNT.contains(count):
            seen.add((slot, server))
            array[int(slot), int(server)] = count
        else:
            problems.append(f"{at}: count must be {SCHEDULE_COUNT.describe()}, got {show(count)}")
    return array


def schedule_from_dict(data: Any, instance: Instance) -> Schedule:
    """Validate the file's structure against ``instance`` and build a :class:`Schedule`.

    Indices (job, slot, server) must exist in the instance. Counts may be any number in
    :data:`~primaldual.core.domains.SCHEDULE_COUNT`: whether they are non-negative integers is a feasibility
    question for :func:`primaldual.core.verify.verify`, not a parse error.
    """
    problems = _check_header(data, SCHEDULE_FORMAT)
    if problems and not isinstance(data, dict):
        raise InputError(problems)
    problems += unknown_keys(data, "schedule")
    meta = _check_meta(data, problems)
    jobs_data = data.get("jobs")
    if not isinstance(jobs_data, list):
        problems.append(f"jobs: must be a list, got {type(jobs_data).__name__}")
        jobs_data = []
    sizes = {"workers": instance.cluster.n_worker_servers, "parameter_servers": instance.cluster.n_ps_servers}
    indices = f"in 0..{instance.n_jobs - 1}" if instance.n_jobs else "(the instance has no jobs)"
    assignments = {}
    for n, entry in enumerate(jobs_data):
        where = f"jobs[{n}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be an object with job, workers, parameter_servers")
            continue
        problems += unknown_keys(entry, "schedule.jobs[]", where)
        job = entry.get("job")
        if not _is_integer(job) or not 0 <= job < instance.n_jobs:
            problems.append(f"{where}.job: must be a job index {indices}, got {show(job)}")
            continue
        if int(job) in assignments:
            problems.append(f"{where}.job: job {int(job)} appears twice")
            continue
        arrays = [_parse_triples(entry.get(key), f"{where}.{key}", instance.horizon, size, problems)
                  for key, size in sizes.items()]
        if all(array is not None for array in arrays):
            assignments[int(job)] = JobSchedule.from_cells(*arrays, *sizes.values(), instance.horizon)
    if problems:
        raise InputError(problems)
    return Schedule(assignments, meta=meta)


def load_schedule(path: str | Path, instance: Instance) -> Schedule:
    """Read a schedule of ``instance``; one of another instance is refused first (:mod:`primaldual.core.fingerprint`)."""
    data, instance_data = _read_json(path, "schedule"), instance_to_dict(instance)
    check_pair(data, instance_data, str(path))
    try:
        schedule = schedule_from_dict(data, instance)
    except InputError as error:
        raise InputError(error.problems, source=str(path)) from None
    check_unstamped(data, instance_data, str(path))
    return schedule


def save_schedule(schedule: Schedule, path: str | Path, instance: Instance | None = None) -> None:
    """Write ``schedule`` with this process's provenance and, given its ``instance``, the instance's fingerprint."""
    data = {**schedule_to_dict(schedule), "provenance": provenance()}
    write_json(data if instance is None else stamp(data, instance_to_dict(instance)), path)
