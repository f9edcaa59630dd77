"""Small hand-made instances for the foundation tests."""

from __future__ import annotations

import numpy as np

from primaldual.core.instance import Cluster, Instance, Job, job_with_work
from primaldual.core.utility import Constant, Sigmoid


def make_job(
    arrival=0,
    work_slots=4,
    chunks=2,
    worker_demand=(1.0, 1.0),
    ps_demand=(0.0, 1.0),
    b=1.0,
    big_b=2.0,
    utility=None,
    name="",
) -> Job:
    """A job whose work is exactly ``work_slots`` worker-slots with one-hour slots."""
    return job_with_work(work_slots, chunks, worker_demand, ps_demand, utility or Sigmoid(10.0, 1.0, 3.0),
                         arrival=arrival, slot_seconds=3600.0, worker_bandwidth_gbps=b, ps_bandwidth_gbps=big_b,
                         name=name)


def make_instance(jobs, horizon=6, worker_capacity=((2.0, 4.0),), ps_capacity=((0.0, 2.0),)) -> Instance:
    return Instance(
        cluster=Cluster(("gpu", "cpu"), np.array(worker_capacity, dtype=float), np.array(ps_capacity, dtype=float)),
        jobs=tuple(jobs),
        horizon=horizon,
        slot_seconds=3600.0,
    )


__all__ = ["Constant", "Sigmoid", "make_instance", "make_job"]
