"""Per-run metrics of a schedule: utility, admitted, completed, completion times, utilisation, runtime.

Conventions (docs/architecture.md, Model conventions): a job's completion slot is the last slot with at least
one worker (eq. 8); its utility is ``f_i(t_hat_i - a_i)`` (eq. 1); its job completion time (JCT) is
``t_hat_i - a_i + 1`` slots, so a job that completes in its arrival slot has JCT 1.

``admitted`` is the one definition of docs/formats.md ("Admitted"): the jobs the schedule holds,
:func:`admitted_count`, the count ``verify`` reports for the same schedule file. A simulated run's schedule holds
its completed jobs; a job that was given resources and then left unfinished is **abandoned** (not admitted: its
allocation is wasted and not in the schedule), a broken service promise whatever the scheduler (RRH drops started
jobs it can no longer finish; a planning scheduler never does without restart costs). ``started`` counts the jobs
given any resources, ``admitted + abandoned`` for a run; ``unfinished`` is the same count as ``abandoned`` and
``wasted_worker_slots`` says how much work they took. Utilisation counts every allocated resource, wasted or not: it measures
how busy the cluster was, ``sum_t sum_s load / (T sum_s capacity)`` per resource and pool, for resources with
positive capacity in that pool.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule


#: Fields only a simulated run has: left out of the JSON form when None.
_SIMULATOR_ONLY = ("restarts", "restart_lost_worker_slots")


@dataclass(frozen=True, kw_only=True)
class RunMetrics:
    """What one run achieved. ``scheduler_seconds`` is None where no online scheduler ran (e.g. OPT).

    The fields are in the order of the JSON form (:meth:`to_dict`); ``extra`` is spread into it last.
    ``restarts`` (placements that changed, a start included) and ``restart_lost_worker_slots`` (the work they
    cost) are counted by the simulator; they are None, and left out of the JSON form, where no simulator ran.
    """

    utility: float
    admitted: int
    started: int
    completed: int
    unfinished: int = 0
    abandoned: int = 0
    mean_jct: float | None
    jct: dict[int, int]
    completion_slots: dict[int, int]
    job_utilities: dict[int, float]
    utilisation: dict[str, dict[str, float]]
    wasted_worker_slots: int = 0
    scheduler_seconds: float | None = None
    restarts: int | None = None
    restart_lost_worker_slots: float | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready: job indices become string keys, as in the schedule files."""
        out = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "extra":
                out.update(value)
            elif item.name in _SIMULATOR_ONLY and value is None:
                continue
            elif isinstance(value, dict):  # by job (int keys) or by pool (a dict per pool): copied
                out[item.name] = {str(key): dict(v) if isinstance(v, dict) else v for key, v in value.items()}
            else:
                out[item.name] = value
        return out


def utilisation(instance: Instance, worker_load: np.ndarray, ps_load: np.ndarray) -> dict[str, dict[str, float]]:
    """Mean utilisation per resource and pool from loads summed over slots and servers (arrays of shape (R,))."""
    resources = instance.cluster.resources
    out = {}
    for pool, load in zip(instance.pools, (worker_load, ps_load)):
        total = pool.capacity.sum(axis=0) * instance.horizon
        out[pool.name] = {name: float(load[r] / total[r]) for r, name in enumerate(resources) if total[r] > 0}
    return out


def schedule_load(instance: Instance, schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """Worker and PS load of ``schedule`` per resource, summed over slots and servers."""
    loads = tuple(np.zeros(instance.cluster.n_resources) for _ in instance.pools)
    for i, assignment in schedule.assignments.items():
        job = instance.jobs[i]
        for load, pool in zip(loads, instance.pools):
            # The job's window, not a dense (T, .) view: the same non-zero counts (core/schedule).
            window = assignment.window_workers if pool.name == "worker" else assignment.window_parameter_servers
            load += float(window.sum()) * pool.demand(job)
    return loads


def admitted_count(schedule: Schedule) -> int:
    """The number of jobs ``schedule`` holds: its admitted jobs (docs/formats.md), counted here only."""
    return len(schedule.assignments)


def compute_metrics(
    instance: Instance,
    schedule: Schedule,
    *,
    wasted_worker_slots: int = 0,
    worker_load: np.ndarray | None = None,
    ps_load: np.ndarray | None = None,
    scheduler_seconds: float | None = None,
    extra: dict | None = None,
    abandoned: int | None = None,
    restarts: int | None = None,
    restart_lost_worker_slots: float | None = None,
) -> RunMetrics:
    """Metrics of ``schedule`` (completed jobs; a job with no worker in any slot counts as not completed).

    ``admitted`` is :func:`admitted_count`; ``abandoned`` defaults to the admitted jobs that did not complete.
    The simulator passes the jobs it gave resources to that never completed (``abandoned``) and the loads of
    every allocation it applied (wasted ones included).
    """
    completion_slots: dict[int, int] = {}
    job_utilities: dict[int, float] = {}
    jct: dict[int, int] = {}
    for i, assignment in schedule.assignments.items():
        completion = assignment.completion_slot()
        if completion is None:
            continue
        job = instance.jobs[i]
        completion_slots[i] = completion
        job_utilities[i] = float(job.utility(completion - job.arrival))
        jct[i] = completion - job.arrival + 1
    if worker_load is None or ps_load is None:
        worker_load, ps_load = schedule_load(instance, schedule)
    completed = len(completion_slots)
    n_admitted = admitted_count(schedule)
    n_abandoned = (n_admitted - completed) if abandoned is None else int(abandoned)
    return RunMetrics(
        utility=float(sum(job_utilities.values())),
        admitted=n_admitted,
        started=completed + n_abandoned,
        completed=completed,
        completion_slots=completion_slots,
        job_utilities=job_utilities,
        jct=jct,
        mean_jct=float(np.mean(list(jct.values()))) if jct else None,
        utilisation=utilisation(instance, worker_load, ps_load),
        unfinished=n_abandoned,
        wasted_worker_slots=int(wasted_worker_slots),
        scheduler_seconds=scheduler_seconds,
        restarts=restarts,
        restart_lost_worker_slots=restart_lost_worker_slots,
        extra=dict(extra or {}),
        abandoned=n_abandoned,
    )


__all__ = ["RunMetrics", "admitted_count", "compute_metrics", "schedule_load", "utilisation"]
