"""DRF's progressive filling remembers failed bundles (primaldual.baselines.drf): the same pops, the same
placements and the same free capacity, bit for bit, as the one-attempt-per-pop loop it replaced (copied here as
the reference), on random instances, job subsets, worker limits and partly used clusters."""

from __future__ import annotations

import heapq

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from simulate_helpers import make_instance, make_job

from primaldual.baselines.drf import _share, progressive_filling
from primaldual.core.generate import generate
from primaldual.simulation.placement import FreeCapacity, place_units
from primaldual.simulation.scheduler import Allocation


def reference_filling(instance, jobs, limits, free, placement="first_fit"):
    """The loop before failed bundles were remembered: one placement attempt per heap pop."""
    cluster = instance.cluster
    worker_total = cluster.worker_capacity.sum(axis=0)
    ps_total = cluster.ps_capacity.sum(axis=0)
    y, z = {}, {}
    count = {i: 0 for i in jobs}
    heap = [(0.0, i) for i in jobs if limits.get(i, 0) > 0]
    heapq.heapify(heap)
    no_room = set()
    while heap:
        _, i = heapq.heappop(heap)
        job = instance.jobs[i]
        key = job.worker_demand.tobytes()
        if key in no_room:
            continue
        worker = place_units(free.worker, job.worker_demand, 1, placement)
        if worker is None:
            no_room.add(key)
            continue
        extra = int(job.min_parameter_servers(count[i] + 1)) - int(job.min_parameter_servers(count[i]))
        ps = place_units(free.ps, job.ps_demand, extra, placement)
        if ps is None:
            free.worker += worker[:, None] * job.worker_demand[None, :]
            continue
        y[i] = y.get(i, np.zeros(cluster.n_worker_servers, dtype=np.int64)) + worker
        z[i] = z.get(i, np.zeros(cluster.n_ps_servers, dtype=np.int64)) + ps
        count[i] += 1
        if count[i] < limits[i]:
            heapq.heappush(heap, (_share(job, count[i], int(z[i].sum()), worker_total, ps_total), i))
    return {i: Allocation(y[i], z[i]) for i in jobs if count[i] > 0}


def assert_same_filling(got, expected, free, expected_free) -> None:
    """The same jobs, workers and PSs on the same servers, and the same free capacity, bit for bit (give-backs
    included)."""
    assert got.keys() == expected.keys()
    for i in expected:
        assert np.array_equal(got[i].workers, expected[i].workers)
        assert np.array_equal(got[i].parameter_servers, expected[i].parameter_servers)
    assert np.array_equal(free.worker, expected_free.worker)
    assert np.array_equal(free.ps, expected_free.ps)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    jobs=st.integers(5, 40),
    servers=st.integers(1, 4),
    scale=st.sampled_from([0.5, 0.75, 1.0]),
    used=st.floats(0.0, 0.9),
    placement=st.sampled_from(["first_fit", "least_loaded"]),
)
def test_remembered_failures_change_no_pop_and_no_placement(seed, jobs, servers, scale, used, placement):
    instance = generate("small", seed, jobs=jobs, worker_servers=servers, ps_servers=servers, capacity_scale=scale)
    rng = np.random.default_rng(seed)
    chosen = sorted(int(i) for i in rng.choice(instance.n_jobs, size=rng.integers(1, instance.n_jobs + 1),
                                               replace=False))
    limits = {i: int(rng.integers(0, instance.jobs[i].chunks + 1)) for i in chosen}
    free = FreeCapacity(instance.cluster)
    free.worker *= 1.0 - used * rng.random(free.worker.shape)  # a cluster partly taken by running jobs
    free.ps *= 1.0 - used * rng.random(free.ps.shape)
    expected_free = free.copy()
    expected = reference_filling(instance, chosen, limits, expected_free, placement)
    assert_same_filling(progressive_filling(instance, chosen, limits, free, placement), expected, free,
                        expected_free)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    jobs=st.integers(4, 30),
    ps_room=st.floats(0.5, 6.0),
    ratio=st.sampled_from([0.25, 0.5, 1.0]),
    placement=st.sampled_from(["first_fit", "least_loaded"]),
)
def test_many_alike_jobs_short_of_parameter_servers(seed, jobs, ps_room, ratio, placement):
    """Trace-like queues: few demand profiles and scarce PS room, so most pops fail on their PSs and the
    remembered failures are what answers them (the case the memory is for)."""
    rng = np.random.default_rng(seed)
    profiles = [((1.0, 1.0), (0.0, 1.0)), ((1.0, 2.0), (0.0, 1.5))]
    made = [make_job(chunks=int(rng.integers(1, 5)), work=8, worker_demand=profiles[p][0],
                     ps_demand=profiles[p][1], bandwidth_ratio=ratio)
            for p in rng.integers(0, len(profiles), size=jobs)]
    instance = make_instance(made, worker_capacity=((4.0, 8.0), (3.0, 6.0)),
                             ps_capacity=((0.0, ps_room), (0.0, ps_room / 2)))
    chosen = list(range(jobs))
    limits = {i: instance.jobs[i].chunks for i in chosen}
    expected_free, free = FreeCapacity(instance.cluster), FreeCapacity(instance.cluster)
    expected = reference_filling(instance, chosen, limits, expected_free, placement)
    assert_same_filling(progressive_filling(instance, chosen, limits, free, placement), expected, free,
                        expected_free)
