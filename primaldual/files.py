"""Versioned JSON files for instances and schedules: exact round trips, validation on load.

Loading collects every problem and raises one :class:`InputError` with a message per problem, each naming
the field (``jobs[3].worker_demand.gpu: must be >= 0, got -1``). Nothing is clamped or dropped silently.
Floats are written with ``repr`` precision, so ``load(save(x))`` reproduces every number bit for bit.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from primaldual.errors import InputError
from primaldual.instance import Cluster, Instance, Job
from primaldual.schedule import JobSchedule, Schedule
from primaldual.utility import utility_from_dict, utility_to_dict

INSTANCE_FORMAT = "primaldual.instance"
SCHEDULE_FORMAT = "primaldual.schedule"
VERSION = 1

JOB_INTEGER_FIELDS = ("arrival", "epochs", "chunks", "minibatches_per_chunk")
JOB_POSITIVE_FIELDS = ("compute_seconds", "worker_bandwidth_gbps", "ps_bandwidth_gbps")
JOB_NONNEGATIVE_FIELDS = ("gradient_mb",)


# ----------------------------------------------------------------------------------------------- helpers


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value) -> bool:
    return _is_number(value) and float(value) == int(value)


def _read_json(path: str | Path, what: str) -> Any:
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise InputError(f"{what} file not found", source=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read {what} file: {error.strerror}", source=str(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"malformed JSON at line {error.lineno} column {error.colno}: {error.msg}", source=str(path)
        ) from None


def _check_header(data: Any, expected_format: str) -> list[str]:
    if not isinstance(data, dict):
        return [f"top level: must be a JSON object, got {type(data).__name__}"]
    problems = []
    if data.get("format") != expected_format:
        problems.append(f"format: must be {expected_format!r}, got {data.get('format')!r}")
    if data.get("version") != VERSION:
        problems.append(f"version: this primaldual reads schema version {VERSION}, got {data.get('version')!r}")
    return problems


def write_json(data: Any, path: str | Path) -> None:
    """Write atomically (a temporary file renamed into place), so an interrupted write loses nothing."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n")
    tmp.replace(path)


# ---------------------------------------------------------------------------------------------- instance


def instance_to_dict(instance: Instance) -> dict:
    resources = instance.cluster.resources

    def per_resource(row) -> dict:
        return {r: float(v) for r, v in zip(resources, row)}

    return {
        "format": INSTANCE_FORMAT,
        "version": VERSION,
        "horizon": int(instance.horizon),
        "slot_seconds": float(instance.slot_seconds),
        "meta": dict(instance.meta),
        "cluster": {
            "resources": list(resources),
            "worker_servers": [per_resource(row) for row in instance.cluster.worker_capacity],
            "ps_servers": [per_resource(row) for row in instance.cluster.ps_capacity],
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
            }
            for job in instance.jobs
        ],
    }


def _resource_vector(data: Any, where: str, resources: tuple[str, ...], problems: list[str]) -> np.ndarray:
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
        elif not _is_number(data[name]):
            problems.append(f"{where}.{name}: must be a number, got {data[name]!r}")
        elif data[name] < 0:
            problems.append(f"{where}.{name}: must be >= 0, got {data[name]!r}")
        else:
            vector[r] = float(data[name])
    return vector


def _fits_somewhere(demand: np.ndarray, capacity: np.ndarray) -> bool:
    return bool(capacity.shape[0]) and bool(np.any(np.all(capacity >= demand, axis=1)))


def instance_from_dict(data: Any) -> Instance:
    """Validate and build an :class:`Instance`; raises :class:`InputError` listing every problem."""
    problems = _check_header(data, INSTANCE_FORMAT)
    if problems and not isinstance(data, dict):
        raise InputError(problems)

    horizon = data.get("horizon")
    if not _is_integer(horizon) or horizon < 1:
        problems.append(f"horizon: must be an integer >= 1 (number of slots), got {horizon!r}")
        horizon = None
    slot_seconds = data.get("slot_seconds")
    if not _is_number(slot_seconds) or slot_seconds <= 0:
        problems.append(f"slot_seconds: must be a number > 0, got {slot_seconds!r}")
        slot_seconds = None
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        problems.append(f"meta: must be an object, got {type(meta).__name__}")
        meta = {}

    cluster_data = data.get("cluster")
    resources: tuple[str, ...] = ()
    worker_capacity = np.zeros((0, 0))
    ps_capacity = np.zeros((0, 0))
    if not isinstance(cluster_data, dict):
        problems.append("cluster: missing or not an object (needs resources, worker_servers, ps_servers)")
    else:
        raw_resources = cluster_data.get("resources")
        if (
            not isinstance(raw_resources, list)
            or not raw_resources
            or not all(isinstance(r, str) and r for r in raw_resources)
        ):
            problems.append(f"cluster.resources: must be a non-empty list of names, got {raw_resources!r}")
        elif len(set(raw_resources)) != len(raw_resources):
            problems.append(f"cluster.resources: names must be unique, got {raw_resources!r}")
        else:
            resources = tuple(raw_resources)
        pools = {}
        for pool in ("worker_servers", "ps_servers"):
            servers = cluster_data.get(pool)
            if not isinstance(servers, list) or not servers:
                problems.append(f"cluster.{pool}: must be a non-empty list of servers, got {servers!r}")
                pools[pool] = np.zeros((0, len(resources)))
                continue
            pools[pool] = np.array(
                [_resource_vector(s, f"cluster.{pool}[{n}]", resources, problems) for n, s in enumerate(servers)]
            ).reshape(len(servers), len(resources))
        worker_capacity, ps_capacity = pools["worker_servers"], pools["ps_servers"]

    jobs_data = data.get("jobs")
    jobs = []
    if not isinstance(jobs_data, list):
        problems.append(f"jobs: must be a list of jobs, got {type(jobs_data).__name__}")
        jobs_data = []
    for n, job_data in enumerate(jobs_data):
        where = f"jobs[{n}]"
        if not isinstance(job_data, dict):
            problems.append(f"{where}: must be an object, got {type(job_data).__name__}")
            continue
        before = len(problems)
        known = set(JOB_INTEGER_FIELDS + JOB_POSITIVE_FIELDS + JOB_NONNEGATIVE_FIELDS) | {
            "name", "worker_demand", "ps_demand", "utility"
        }
        for name in job_data:
            if name not in known:
                problems.append(f"{where}.{name}: unknown field")
        for name in JOB_INTEGER_FIELDS:
            value = job_data.get(name)
            lowest = 0 if name == "arrival" else 1
            if name not in job_data:
                problems.append(f"{where}.{name}: missing")
            elif not _is_integer(value) or value < lowest:
                problems.append(f"{where}.{name}: must be an integer >= {lowest}, got {value!r}")
        for name in JOB_POSITIVE_FIELDS + JOB_NONNEGATIVE_FIELDS:
            value = job_data.get(name)
            strict = name in JOB_POSITIVE_FIELDS
            if name not in job_data:
                problems.append(f"{where}.{name}: missing")
            elif not _is_number(value) or value < 0 or (strict and value == 0):
                problems.append(f"{where}.{name}: must be a number {'>' if strict else '>='} 0, got {value!r}")
        name_value = job_data.get("name", "")
        if not isinstance(name_value, str):
            problems.append(f"{where}.name: must be a string, got {name_value!r}")
        if horizon is not None and _is_integer(job_data.get("arrival")) and job_data["arrival"] >= horizon:
            problems.append(
                f"{where}.arrival: must be a slot in 0..{horizon - 1} (the horizon is {horizon}), "
                f"got {job_data['arrival']}"
            )
        b, big_b = job_data.get("worker_bandwidth_gbps"), job_data.get("ps_bandwidth_gbps")
        if _is_number(b) and _is_number(big_b) and b > 0 and big_b > 0 and b > big_b:
            problems.append(
                f"{where}.worker_bandwidth_gbps: must be <= ps_bandwidth_gbps ({big_b}), got {b} "
                "(otherwise eqs. (6)-(7) admit no PS count)"
            )
        worker_demand = ps_demand = None
        if resources:
            for field_name, capacity in (("worker_demand", worker_capacity), ("ps_demand", ps_capacity)):
                if field_name not in job_data:
                    problems.append(f"{where}.{field_name}: missing")
                    continue
                count = len(problems)
                vector = _resource_vector(job_data[field_name], f"{where}.{field_name}", resources, problems)
                if len(problems) == count and capacity.shape[0] and not _fits_somewhere(vector, capacity):
                    pool = "worker" if field_name == "worker_demand" else "PS"
                    problems.append(
                        f"{where}.{field_name}: fits on no {pool} server "
                        f"(demand {dict(zip(resources, vector.tolist()))} exceeds every server's capacity)"
                    )
                if field_name == "worker_demand":
                    worker_demand = vector
                else:
                    ps_demand = vector
        utility = None
        if "utility" not in job_data:
            problems.append(f"{where}.utility: missing")
        else:
            try:
                utility = utility_from_dict(job_data["utility"], f"{where}.utility")
            except InputError as error:
                problems.extend(error.problems)
        if len(problems) == before:
            jobs.append(
                Job(
                    arrival=int(job_data["arrival"]),
                    epochs=int(job_data["epochs"]),
                    chunks=int(job_data["chunks"]),
                    minibatches_per_chunk=int(job_data["minibatches_per_chunk"]),
                    compute_seconds=float(job_data["compute_seconds"]),
                    gradient_mb=float(job_data["gradient_mb"]),
                    worker_bandwidth_gbps=float(b),
                    ps_bandwidth_gbps=float(big_b),
                    worker_demand=worker_demand,
                    ps_demand=ps_demand,
                    utility=utility,
                    name=name_value,
                )
            )
    if problems:
        raise InputError(problems)
    instance = Instance(
        cluster=Cluster(resources, worker_capacity, ps_capacity),
        jobs=tuple(jobs),
        horizon=int(horizon),
        slot_seconds=float(slot_seconds),
        meta=meta,
    )
    for i in range(instance.n_jobs):
        if instance.work_units[i] < 1:
            problems.append(f"jobs[{i}]: has no work (epochs x chunks x minibatches x time per minibatch is 0)")
    if problems:
        raise InputError(problems)
    return instance


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
        entry = {"job": int(i)}
        for key, array in (("workers", assignment.workers), ("parameter_servers", assignment.parameter_servers)):
            slots, servers = np.nonzero(array)
            entry[key] = [[int(t), int(s), _count_to_json(array[t, s])] for t, s in zip(slots, servers)]
        jobs.append(entry)
    return {"format": SCHEDULE_FORMAT, "version": VERSION, "meta": dict(schedule.meta), "jobs": jobs}


def schedule_from_dict(data: Any, instance: Instance) -> Schedule:
    """Validate the file's structure against ``instance`` and build a :class:`Schedule`.

    Indices (job, slot, server) must exist in the instance. Counts may be any finite number: whether they are
    non-negative integers is a feasibility question for :func:`primaldual.verify.verify`, not a parse error.
    """
    problems = _check_header(data, SCHEDULE_FORMAT)
    if problems and not isinstance(data, dict):
        raise InputError(problems)
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        problems.append(f"meta: must be an object, got {type(meta).__name__}")
        meta = {}
    jobs_data = data.get("jobs")
    if not isinstance(jobs_data, list):
        problems.append(f"jobs: must be a list, got {type(jobs_data).__name__}")
        jobs_data = []
    horizon = instance.horizon
    sizes = {"workers": instance.cluster.n_worker_servers, "parameter_servers": instance.cluster.n_ps_servers}
    assignments = {}
    for n, entry in enumerate(jobs_data):
        where = f"jobs[{n}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be an object with job, workers, parameter_servers")
            continue
        for name in entry:
            if name not in ("job", "workers", "parameter_servers"):
                problems.append(f"{where}.{name}: unknown field")
        job = entry.get("job")
        if not _is_integer(job) or not 0 <= job < instance.n_jobs:
            problems.append(f"{where}.job: must be a job index in 0..{instance.n_jobs - 1}, got {job!r}")
            continue
        job = int(job)
        if job in assignments:
            problems.append(f"{where}.job: job {job} appears twice")
            continue
        arrays = {}
        for key, size in sizes.items():
            array = np.zeros((horizon, size))
            triples = entry.get(key)
            if not isinstance(triples, list):
                problems.append(f"{where}.{key}: must be a list of [slot, server, count], got {triples!r}")
                continue
            seen = set()
            for m, triple in enumerate(triples):
                at = f"{where}.{key}[{m}]"
                if not (isinstance(triple, list) and len(triple) == 3 and all(_is_number(v) for v in triple)):
                    problems.append(f"{at}: must be [slot, server, count] numbers, got {triple!r}")
                    continue
                slot, server, count = triple
                if not _is_integer(slot) or not 0 <= slot < horizon:
                    problems.append(f"{at}: slot must be in 0..{horizon - 1}, got {slot!r}")
                    continue
                if not _is_integer(server) or not 0 <= server < size:
                    problems.append(f"{at}: server must be in 0..{size - 1}, got {server!r}")
                    continue
                if (slot, server) in seen:
                    problems.append(f"{at}: slot {int(slot)} server {int(server)} is listed twice")
                    continue
                seen.add((slot, server))
                array[int(slot), int(server)] = count
            arrays[key] = array
        if len(arrays) == 2:
            assignments[job] = JobSchedule(arrays["workers"], arrays["parameter_servers"])
    if problems:
        raise InputError(problems)
    return Schedule(assignments, meta=meta)


def load_schedule(path: str | Path, instance: Instance) -> Schedule:
    data = _read_json(path, "schedule")
    try:
        return schedule_from_dict(data, instance)
    except InputError as error:
        raise InputError(error.problems, source=str(path)) from None


def save_schedule(schedule: Schedule, path: str | Path) -> None:
    write_json(schedule_to_dict(schedule), path)
