"""Hand-made heterogeneous instances (issue 64): worker servers of GPU types, each job slower by a ratio per type."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from primaldual.core.instance import Cluster, Instance
from simulate_helpers import make_job


def typed_job(work=4, chunks=2, slower=3.0, **kwargs):
    """A job of ``work`` worker-slots on ``fast`` servers and ``slower x work`` on ``slow`` ones."""
    job = make_job(work=work, chunks=chunks, **kwargs)
    tau = job.compute_seconds
    return replace(job, compute_seconds_by_type=(("fast", tau), ("slow", slower * tau)))


def typed_instance(jobs, types=("fast", "slow"), horizon=8, gpus=4.0) -> Instance:
    """One worker server per entry of ``types`` (each ``gpus`` GPUs, 8 CPUs), one PS server."""
    capacity = np.array([[gpus, 8.0]] * len(types))
    cluster = Cluster(("gpu", "cpu"), capacity, np.array([[0.0, 8.0]]), worker_types=tuple(types),
                      gpu_types=("fast", "slow"))
    return Instance(cluster=cluster, jobs=tuple(jobs), horizon=horizon, slot_seconds=1.0).validate()
