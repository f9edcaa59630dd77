"""What the field's baselines (:mod:`.tiresias`, :mod:`.srtf`, :mod:`.optimus`, :mod:`.themis`) share: per-job
tables read once at ``start``, and the two greedy passes that serve jobs in an order each rule decides.

* :func:`serve_in_order` (elastic): each job in turn takes as many workers as fit, up to its limit, with the
  PSs eq. (6) needs; a job that finds no room is passed over and the next one tries (backfilling). This is
  RRH's pass (:mod:`.rrh`), written once here so that RRH itself stays untouched.
* :func:`gang_in_order` (all or nothing): each job in turn takes exactly its gang width or nothing, the way
  Tiresias's simulator starts a job only if all its GPUs fit, then tries the next one.

On a heterogeneous cluster each job's workers go to one GPU type, the first with room (elastic) or the first
where the whole gang fits (:class:`~primaldual.simulation.placement.FreeCapacity`). Both take units only from a :class:`~primaldual.simulation.placement.FreeCapacity` and place them with the
shared rules of :mod:`primaldual.simulation.placement`, so every allocation respects eqs. (3)-(7).
Cost: one placement search per job of the order (a job whose demand profile already found no room in the same
pass is skipped without a search, since free capacity only shrinks within a pass).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.core.standalone import widest_on_empty_cluster
from primaldual.simulation.placement import FreeCapacity, demand_profiles, dominant_share_unit, widest
from primaldual.simulation.scheduler import Allocation


@dataclass(frozen=True)
class JobTables:
    """Per job, read once: ``chunks`` (``N_i``), ``arrival`` (``a_i``), ``gang`` (the most workers it can run
    on the empty cluster, :func:`gang_widths`: never reads the work), ``profile``
    (:func:`~primaldual.simulation.placement.demand_profiles`), ``unit`` (dominant share of one worker with its
    ``b_i / B_i`` PS) and ``widest`` (:func:`~primaldual.simulation.placement.widest`, which also caps at
    ``V_i``; None for a scheduler that must not read the work)."""

    chunks: np.ndarray
    arrival: np.ndarray
    gang: np.ndarray
    profile: list
    unit: np.ndarray
    widest: np.ndarray | None


def job_tables(instance, clairvoyant: bool = True) -> JobTables:
    """The :class:`JobTables` of ``instance``; ``clairvoyant=False`` leaves out ``widest`` (it reads ``V_i``)."""
    cluster = instance.cluster
    worker_total, ps_total = cluster.worker_capacity.sum(axis=0), cluster.ps_capacity.sum(axis=0)
    return JobTables(
        chunks=np.array([job.chunks for job in instance.jobs], dtype=np.int64),
        arrival=np.array([job.arrival for job in instance.jobs], dtype=np.int64),
        gang=gang_widths(instance),
        profile=demand_profiles(instance),
        unit=np.array([dominant_share_unit(job, worker_total, ps_total) for job in instance.jobs]),
        widest=widest(instance) if clairvoyant else None,
    )


def gang_widths(instance) -> np.ndarray:
    """Per job, :func:`primaldual.core.standalone.widest_on_empty_cluster` up to ``N_i``, not ``V_i``: the work
    a non-clairvoyant scheduler may not read."""
    return np.array([widest_on_empty_cluster(instance.cluster, job, int(job.chunks)) for job in instance.jobs],
                    dtype=np.int64)


def serve_in_order(instance, order, limits, free: FreeCapacity, placement: str, profile) -> dict[int, Allocation]:
    """Each job of ``order`` takes as many workers as fit into ``free`` (taken from in place), up to
    ``limits[i]``, with the PSs eq. (6) needs; a job that finds no room is passed over."""
    jobs = instance.jobs
    out: dict[int, Allocation] = {}
    no_room: set = set()
    for i in order:
        most = int(limits[i])
        if most <= 0 or profile[i] in no_room:
            continue
        workers = free.max_workers(jobs[i], most, placement)
        allocation = free.place(jobs[i], workers, placement) if workers > 0 else None
        if allocation is None:
            no_room.add(profile[i])
        else:
            out[i] = allocation
    return out


def gang_in_order(instance, order, widths, free: FreeCapacity, placement: str, profile) -> dict[int, Allocation]:
    """Each job of ``order`` takes exactly ``widths[i]`` workers and their PSs from ``free``, or nothing."""
    jobs = instance.jobs
    out: dict[int, Allocation] = {}
    failed: dict = {}  # profile -> the narrowest width that did not fit (free only shrinks in a pass)
    for i in order:
        width = int(widths[i])
        if width <= 0 or width >= failed.get(profile[i], width + 1):
            continue
        allocation = free.place(jobs[i], width, placement)
        if allocation is None:
            failed[profile[i]] = width
        else:
            out[i] = allocation
    return out


__all__ = ["JobTables", "gang_in_order", "gang_widths", "job_tables", "serve_in_order"]
