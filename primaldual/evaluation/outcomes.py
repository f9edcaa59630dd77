"""Per-job outcomes of a schedule and the cluster's utilisation over time: the numbers behind the distribution
figures and the Gantt view.

Conventions are those of :mod:`primaldual.core.metrics`: a job's completion slot is the last slot with at least one
worker (eq. 8), its JCT is ``completion - arrival + 1`` slots and its utility ``f_i(completion - arrival)``
(eq. 1). A job's *standalone* JCT is the number of slots it needs running alone on the empty cluster as fast as
it can (:func:`primaldual.core.standalone.fastest_standalone_workers`), and its *finish-time fairness* is its JCT
divided by that: 1 means the schedule cost the job nothing, 2 that it took twice as long as alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.core.plural import counted
from primaldual.core.standalone import fastest_standalone_workers, standalone_utilities
from primaldual.core.schedule import Schedule

#: The pools of a cluster, in the order figures list them.
POOLS = ("worker", "ps")


def _frozen(values, dtype) -> np.ndarray:
    out = np.array(values, dtype=dtype)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class JobOutcomes:
    """What happened to every job of an instance under one schedule: arrays over jobs, in job order.

    ``completion`` is the completion slot (-1 if the job did not complete); ``jct``, ``standalone_jct`` and
    ``finish_time_fairness`` are in slots and NaN where undefined (not completed, or unable to run alone);
    ``utility`` is 0 for a job that did not complete; ``admitted`` says whether the job received resources.
    """

    arrival: np.ndarray
    completion: np.ndarray
    jct: np.ndarray
    utility: np.ndarray
    standalone_utility: np.ndarray
    standalone_jct: np.ndarray
    finish_time_fairness: np.ndarray
    admitted: np.ndarray

    #: Field name -> numpy dtype; floats may hold NaN, which ``to_dict`` writes as JSON null.
    DTYPES: ClassVar[dict] = {
        "arrival": np.int64, "completion": np.int64, "jct": float, "utility": float,
        "standalone_utility": float, "standalone_jct": float, "finish_time_fairness": float, "admitted": bool,
    }

    def __post_init__(self):
        lengths = set()
        for item in fields(self):
            array = _frozen(getattr(self, item.name), self.DTYPES[item.name])
            if array.ndim != 1:
                raise ValueError(f"JobOutcomes.{item.name}: expected one value per job, got shape {array.shape}")
            lengths.add(array.shape[0])
            object.__setattr__(self, item.name, array)
        if len(lengths) > 1:
            raise ValueError(f"JobOutcomes: arrays of different lengths {sorted(lengths)}")

    @property
    def n_jobs(self) -> int:
        return int(self.arrival.shape[0])

    @property
    def completed(self) -> np.ndarray:
        """Boolean mask of the jobs that completed."""
        return self.completion >= 0

    @property
    def abandoned(self) -> np.ndarray:
        """Jobs that received resources but did not complete (their resources were wasted)."""
        return self.admitted & ~self.completed

    def to_dict(self) -> dict:
        """Plain JSON lists, one per field; NaN becomes ``None`` (JSON null)."""
        out = {}
        for name, dtype in self.DTYPES.items():
            values = getattr(self, name).tolist()
            if dtype is float:
                values = [None if math.isnan(v) else v for v in values]
            out[name] = values
        return out

    @classmethod
    def from_dict(cls, data) -> "JobOutcomes":
        """Inverse of :meth:`to_dict`; raises :class:`~primaldual.core.errors.InputError` naming a bad field."""
        if not isinstance(data, dict):
            raise InputError(f"outcomes: must be an object, got {type(data).__name__}")
        arrays = {}
        for name, dtype in cls.DTYPES.items():
            values = data.get(name)
            if not isinstance(values, list):
                raise InputError(f"outcomes.{name}: must be a list, got {type(values).__name__}")
            if dtype is float:
                values = [math.nan if v is None else v for v in values]
            try:
                arrays[name] = np.array(values, dtype=dtype)
            except (TypeError, ValueError):
                raise InputError(f"outcomes.{name}: must hold numbers") from None
        try:
            return cls(**arrays)
        except ValueError as error:
            raise InputError(f"outcomes: {error}") from None


def standalone_jct(instance: Instance) -> np.ndarray:
    """Slots each job needs alone on the empty cluster with as many workers as fit (NaN if none fits)."""
    out = np.full(instance.n_jobs, math.nan)
    for i in range(instance.n_jobs):
        workers = fastest_standalone_workers(instance, i)
        if workers > 0:
            out[i] = -(-int(instance.work_units[i]) // workers)
    return out


def job_outcomes(instance: Instance, schedule: Schedule, *, received=None) -> JobOutcomes:
    """Per-job outcomes of ``schedule`` on ``instance``.

    A job is admitted if the schedule has an entry for it, or if it is in ``received`` (the simulator's
    :attr:`~primaldual.simulation.simulator.SimulationResult.received`: jobs that got resources, completed or not; schedule
    files hold completed jobs only, so pass it when you have it to see abandoned jobs).
    """
    n_jobs = instance.n_jobs
    arrival = instance.arrivals.astype(np.int64)
    completion = np.full(n_jobs, -1, dtype=np.int64)
    utility = np.zeros(n_jobs)
    admitted = np.zeros(n_jobs, dtype=bool)
    for i, assignment in schedule.assignments.items():
        if not 0 <= i < n_jobs:
            raise InputError(f"schedule: job {i} is not in the instance ({counted(n_jobs, 'job')})")
        admitted[i] = True
        slot = assignment.completion_slot()
        if slot is not None:
            completion[i] = slot
            utility[i] = float(instance.jobs[i].utility(slot - arrival[i]))
    for i in received or ():
        if not 0 <= int(i) < n_jobs:
            raise InputError(f"received: job {i} is not in the instance ({counted(n_jobs, 'job')})")
        admitted[int(i)] = True
    done = completion >= 0
    jct = np.where(done, completion - arrival + 1, math.nan).astype(float)
    alone = standalone_jct(instance)
    with np.errstate(invalid="ignore"):
        fairness = jct / alone
    return JobOutcomes(
        arrival=arrival, completion=completion, jct=jct, utility=utility,
        standalone_utility=standalone_utilities(instance), standalone_jct=alone,
        finish_time_fairness=fairness, admitted=admitted,
    )


def load_over_time(instance: Instance, schedule: Schedule) -> dict[str, np.ndarray]:
    """Per pool, the load of every resource in every slot, shape (T, R), summed over servers and jobs."""
    horizon, n_resources = instance.horizon, instance.cluster.n_resources
    load = {pool: np.zeros((horizon, n_resources)) for pool in POOLS}
    for i, assignment in schedule.assignments.items():
        job = instance.jobs[i]
        # Counts per slot times the per-unit demand: an outer product (T,) x (R,).
        load["worker"] += np.outer(assignment.workers_per_slot.astype(float), job.worker_demand)
        load["ps"] += np.outer(assignment.parameter_servers_per_slot.astype(float), job.ps_demand)
    return load


def utilisation_over_time(instance: Instance, schedule: Schedule) -> dict[str, np.ndarray]:
    """Share of each pool's capacity in use, per resource per slot: ``{"worker/gpu": array (T,), ...}``.

    Keys are ``pool/resource`` for resources with positive total capacity in that pool (as in
    :func:`primaldual.core.metrics.utilisation`, whose value is the mean over slots of these arrays). Only the jobs in
    ``schedule`` count: a schedule file leaves out abandoned jobs, whose work the simulator's metrics include.
    """
    cluster = instance.cluster
    load = load_over_time(instance, schedule)
    out = {}
    for pool, capacity in (("worker", cluster.worker_capacity), ("ps", cluster.ps_capacity)):
        total = capacity.sum(axis=0)
        for r, resource in enumerate(cluster.resources):
            if total[r] > 0:
                out[f"{pool}/{resource}"] = load[pool][:, r] / total[r]
    return out


__all__ = ["JobOutcomes", "POOLS", "job_outcomes", "load_over_time", "standalone_jct", "utilisation_over_time"]
