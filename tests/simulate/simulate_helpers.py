"""Hand-made instances and small schedulers for the simulator, baseline and compare tests."""

from __future__ import annotations

import numpy as np

from primaldual.core.instance import Cluster, Instance, Job, job_with_work
from primaldual.simulation.scheduler import Allocation, OnlineScheduler
from primaldual.core.utility import Constant, Sigmoid


def make_job(arrival=0, work=4, chunks=2, worker_demand=(1.0, 1.0), ps_demand=(0.0, 1.0), utility=None,
             bandwidth_ratio=0.25, name="") -> Job:
    """A job of exactly ``work`` worker-slots (slot_seconds 1, one epoch and mini-batch, no gradient traffic)
    that needs ``Z(D) = ceil(D * bandwidth_ratio)`` PSs."""
    return job_with_work(work, chunks, worker_demand, ps_demand, utility if utility is not None else Constant(10.0),
                         arrival=arrival, worker_bandwidth_gbps=bandwidth_ratio * 4.0, ps_bandwidth_gbps=4.0,
                         name=name)


def make_instance(jobs, horizon=6, worker_capacity=((4.0, 8.0),), ps_capacity=((0.0, 8.0),),
                  resources=("gpu", "cpu")) -> Instance:
    instance = Instance(
        cluster=Cluster(resources, np.array(worker_capacity, dtype=float), np.array(ps_capacity, dtype=float)),
        jobs=tuple(jobs),
        horizon=horizon,
        slot_seconds=1.0,
    )
    assert all(abs(int(v) - j.chunks * j.compute_seconds) < 1e-6 for v, j in zip(instance.work_units, instance.jobs))
    return instance


class ScriptedScheduler(OnlineScheduler):
    """Returns ``script[slot]`` (a dict job -> (workers, parameter_servers) lists) and records its calls."""

    name = "scripted"

    def __init__(self, script):
        self.script = script

    def start(self, instance):
        super().start(instance)
        self.calls = []

    def on_arrival(self, slot, jobs):
        self.calls.append(("arrival", slot, list(jobs)))

    def on_completion(self, slot, jobs):
        self.calls.append(("completion", slot, list(jobs)))

    def allocate(self, slot, state):
        self.calls.append(("allocate", slot, state.active, tuple(int(x) for x in state.remaining_work)))
        return {i: Allocation(np.asarray(y), np.asarray(z)) for i, (y, z) in self.script.get(slot, {}).items()}


__all__ = ["Constant", "ScriptedScheduler", "Sigmoid", "make_instance", "make_job"]
