"""A hand-made instance and schedule whose outcomes are computed by hand in the tests."""

from __future__ import annotations

import numpy as np

from primaldual.core.instance import Cluster, Instance, job_with_work
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.utility import LinearDecay

HORIZON = 6


def hand_instance() -> Instance:
    """One worker server (gpu 2, cpu 4), one PS server (cpu 2); a PS serves two workers (b = 1, B = 2)."""
    utility = LinearDecay(10.0, 10.0)  # f(d) = 10 - d

    def job(work, chunks, arrival):
        return job_with_work(work, chunks, (1.0, 1.0), (0.0, 1.0), utility, arrival=arrival,
                             worker_bandwidth_gbps=1.0, ps_bandwidth_gbps=2.0)

    cluster = Cluster(("gpu", "cpu"), np.array([[2.0, 4.0]]), np.array([[0.0, 2.0]]))
    return Instance(cluster, (job(4, 2, 0), job(2, 1, 1), job(6, 3, 0)), HORIZON, 1.0)


def slots(pairs, width=1):
    """A (T, width) count array with ``count`` in column 0 at each ``slot``."""
    array = np.zeros((HORIZON, width), dtype=np.int64)
    for slot, count in pairs:
        array[slot, 0] = count
    return array


def hand_schedule() -> Schedule:
    """Job 0 runs 2 workers in slots 0-1; job 1 runs 1 worker in slots 2 and 4; job 2 never runs."""
    return Schedule({
        0: JobSchedule(slots([(0, 2), (1, 2)]), slots([(0, 1), (1, 1)])),
        1: JobSchedule(slots([(2, 1), (4, 1)]), slots([(2, 1), (4, 1)])),
    })
