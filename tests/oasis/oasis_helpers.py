"""Helpers shared by the OASiS tests: hand-built instances and brute-force enumerations.

The brute forces here share no code with :mod:`primaldual.dual.subroutine` or :mod:`primaldual.oasis.engine`: they enumerate
placements server by server with ``itertools`` and check capacities directly.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import strategies as st

from primaldual.core.instance import Cluster, Instance, Job, job_with_work
from primaldual.core.utility import Constant, LinearDecay, Sigmoid, Step


def make_job(
    arrival: int,
    work: int,
    chunks: int,
    worker_demand,
    ps_demand,
    utility,
    bandwidth_ratio: float = 0.5,
    name: str = "",
) -> Job:
    """A job whose work is exactly ``work`` worker-slots (slot_seconds = 1, one epoch, one mini-batch,
    no gradient traffic) and whose PS need is ``Z(D) = ceil(D * bandwidth_ratio)``."""
    return job_with_work(work, chunks, worker_demand, ps_demand, utility, arrival=arrival,
                         worker_bandwidth_gbps=bandwidth_ratio * 10.0, ps_bandwidth_gbps=10.0, name=name)


def make_instance(jobs, worker_capacity, ps_capacity, horizon: int, resources=("gpu", "cpu")) -> Instance:
    return Instance(
        cluster=Cluster(tuple(resources), np.asarray(worker_capacity, float), np.asarray(ps_capacity, float)),
        jobs=tuple(jobs),
        horizon=horizon,
        slot_seconds=1.0,
    )


# ------------------------------------------------------------------------------------ placements by hand


def _placements(count: int, n_servers: int):
    """Every way to put ``count`` identical units on ``n_servers`` servers."""
    for combo in itertools.combinations_with_replacement(range(n_servers), count):
        vector = [0] * n_servers
        for server in combo:
            vector[server] += 1
        yield tuple(vector)


def _fits(vector, demand, free) -> bool:
    """Does ``vector[h]`` units of ``demand`` fit in ``free[h]`` on every server (tolerance as the verifier)?"""
    for h, n in enumerate(vector):
        for r, d in enumerate(demand):
            if n * d > free[h][r] + 1e-9:
                return False
    return True


def slot_options(job: Job, worker_prices, ps_prices, worker_free, ps_free, max_workers: int):
    """For one slot: every feasible (workers vector, PS vector, cost), all PS counts Z(D) <= Z <= D allowed."""
    n_worker_servers, n_ps_servers = len(worker_free), len(ps_free)
    options = [((0,) * n_worker_servers, (0,) * n_ps_servers, 0.0)]
    for d in range(1, max_workers + 1):
        low = math.ceil(d * job.worker_bandwidth_gbps / job.ps_bandwidth_gbps - 1e-9)
        for y in _placements(d, n_worker_servers):
            if not _fits(y, job.worker_demand, worker_free):
                continue
            worker_cost = sum(y[h] * float(np.dot(worker_prices[h], job.worker_demand))
                              for h in range(n_worker_servers))
            for z_total in range(low, d + 1):
                for z in _placements(z_total, n_ps_servers):
                    if not _fits(z, job.ps_demand, ps_free):
                        continue
                    ps_cost = sum(z[k] * float(np.dot(ps_prices[k], job.ps_demand)) for k in range(n_ps_servers))
                    options.append((y, z, worker_cost + ps_cost))
    return options


def cheapest_per_count(instance: Instance, i: int, worker_prices, ps_prices, worker_free, ps_free):
    """For each slot ``a_i..T-1``, the sorted ``(worker count, least cost)`` pairs over every feasible placement.

    A schedule's payoff depends on a slot only through its worker count (completion, work) and its cost, so
    the brute forces below combine these per-slot minima instead of every placement.
    """
    job = instance.jobs[i]
    per_slot = []
    for t in range(job.arrival, instance.horizon):
        cheapest = {}
        for y, _, cost in slot_options(job, worker_prices[t], ps_prices[t], worker_free[t], ps_free[t], job.chunks):
            d = sum(y)
            if d not in cheapest or cost < cheapest[d]:
                cheapest[d] = cost
        per_slot.append(sorted(cheapest.items()))
    return per_slot


def brute_force_best(instance: Instance, i: int, worker_prices, ps_prices, worker_free, ps_free):
    """Enumerate every schedule of job ``i`` (any worker count per slot up to N_i, any over-cover of the work,
    any PS count allowed by (6)-(7), any placement) and return ``(best payoff, best utility at zero prices)``.

    ``worker_prices`` etc. have shape (T, H, R). Returns ``(-inf, -inf)`` if the job has no schedule.
    """
    job = instance.jobs[i]
    work = int(instance.work_units[i])
    per_slot = cheapest_per_count(instance, i, worker_prices, ps_prices, worker_free, ps_free)
    best_payoff = -math.inf
    best_utility = -math.inf
    for choice in itertools.product(*per_slot):
        counts = [d for d, _ in choice]
        if sum(counts) < work:
            continue
        last = max(s for s, d in enumerate(counts) if d > 0)
        value = float(job.utility(last))  # window slot index = duration since arrival
        cost = sum(c for _, c in choice)
        best_payoff = max(best_payoff, value - cost)
        best_utility = max(best_utility, value)
    return best_payoff, best_utility


def brute_force_optimum(instance: Instance) -> float:
    """OPT of problem (1) by exhaustive search over every job's schedules (tiny instances only).

    Each job's candidate schedules: per slot any worker count and placement, the fewest PSs (any placement);
    work covered exactly with the last active slot completing it. These restrictions lose nothing: removing a
    PS above ceil(D b/B) or a worker from the last active slot keeps every constraint and never lowers the
    utility (f is non-increasing). Jobs are then combined by depth-first search with capacity checks.
    """
    cluster = instance.cluster
    horizon = instance.horizon
    H, K, R = cluster.n_worker_servers, cluster.n_ps_servers, cluster.n_resources
    per_job = []
    for i, job in enumerate(instance.jobs):
        work = int(instance.work_units[i])
        slots = list(range(job.arrival, horizon))
        slot_choices = []
        for t in slots:
            choices = [((0,) * H, (0,) * K)]
            for d in range(1, job.chunks + 1):
                z_total = math.ceil(d * job.worker_bandwidth_gbps / job.ps_bandwidth_gbps - 1e-9)
                if z_total > d:
                    continue
                for y in _placements(d, H):
                    if not _fits(y, job.worker_demand, cluster.worker_capacity):
                        continue
                    for z in _placements(z_total, K):
                        if _fits(z, job.ps_demand, cluster.ps_capacity):
                            choices.append((y, z))
            slot_choices.append(choices)
        schedules = []  # (utility, list of (t, y, z))

        def extend(s, covered, chosen):
            if covered == work:
                if chosen:
                    last = chosen[-1][0]
                    schedules.append((float(job.utility(last - job.arrival)), list(chosen)))
                return
            if s == len(slots):
                return
            for y, z in slot_choices[s]:
                d = sum(y)
                if covered + d > work:
                    continue
                if d:
                    chosen.append((slots[s], y, z))
                extend(s + 1, covered + d, chosen)
                if d:
                    chosen.pop()

        extend(0, 0, [])
        schedules.sort(key=lambda item: -item[0])
        per_job.append(schedules)

    worker_load = np.zeros((horizon, H, R))
    ps_load = np.zeros((horizon, K, R))
    best = [0.0]
    upper = [max((u for u, _ in s), default=0.0) for s in per_job]
    suffix = np.concatenate([np.cumsum(upper[::-1])[::-1], [0.0]])

    def search(i, value):
        if value + suffix[i] <= best[0] + 1e-12:
            return
        if i == len(per_job):
            best[0] = max(best[0], value)
            return
        job = instance.jobs[i]
        for utility, assignment in per_job[i]:
            ok = True
            for t, y, z in assignment:
                wl = worker_load[t] + np.outer(y, job.worker_demand)
                pl = ps_load[t] + np.outer(z, job.ps_demand)
                if np.any(wl > cluster.worker_capacity + 1e-9) or np.any(pl > cluster.ps_capacity + 1e-9):
                    ok = False
                    break
            if not ok:
                continue
            for t, y, z in assignment:
                worker_load[t] += np.outer(y, job.worker_demand)
                ps_load[t] += np.outer(z, job.ps_demand)
            search(i + 1, value + utility)
            for t, y, z in assignment:
                worker_load[t] -= np.outer(y, job.worker_demand)
                ps_load[t] -= np.outer(z, job.ps_demand)
        search(i + 1, value)  # reject job i

    search(0, 0.0)
    return best[0]


def small_demand_instance(seed: int, n_jobs: int = 40, horizon: int = 12, capacity: float = 200.0) -> Instance:
    """Few servers with large capacities and many small jobs: the theorem's small-demand assumption holds
    (one job holds at most a few percent of a server) while the jobs together overload the cluster."""
    rng = np.random.default_rng(seed)
    jobs = []
    arrivals = np.sort(rng.integers(0, horizon - 2, size=n_jobs))
    for n, arrival in enumerate(arrivals):
        chunks = int(rng.integers(1, 5))
        work = int(rng.integers(chunks, 4 * chunks + 1))
        utility = Sigmoid(float(rng.uniform(1, 100)), float(rng.uniform(0.3, 2.0)), float(rng.uniform(1, 5)))
        jobs.append(make_job(int(arrival), work, chunks, [1.0, float(rng.integers(1, 4))],
                             [0.0, float(rng.integers(1, 3))], utility, bandwidth_ratio=float(rng.uniform(0.2, 1.0)),
                             name=f"job{n}"))
    # Total worker demand exceeds capacity: 2 servers x capacity GPUs against n_jobs x work GPU-slots.
    return make_instance(jobs, [[capacity, 4 * capacity]] * 2, [[0.0, 4 * capacity]] * 2, horizon)


UTILITIES = (Sigmoid, LinearDecay, Step, Constant)


def unit_jobs_instance(values, gpu_capacity: int = 100, ps_cpu_capacity: float = 1000.0, arrivals=None) -> Instance:
    """One worker server with ``gpu_capacity`` GPUs and one PS server; job ``n`` needs one GPU worker and one
    PS (one CPU) for one slot and is worth ``values[n]`` whenever it completes (a constant utility).

    With ``ps_cpu_capacity >= len(values)`` the PSs never bind, so OPT is the sum of the ``gpu_capacity``
    largest values per slot: the classic online-knapsack worst cases, in closed form.
    """
    arrivals = [0] * len(values) if arrivals is None else list(arrivals)
    jobs = [make_job(a, 1, 1, [1.0, 0.0], [0.0, 1.0], Constant(float(v)), bandwidth_ratio=1.0, name=f"job{n}")
            for n, (a, v) in enumerate(zip(arrivals, values))]
    horizon = max(arrivals) + 1
    return make_instance(jobs, [[float(gpu_capacity), 0.0]], [[0.0, ps_cpu_capacity]], horizon)


def brute_force_lexicographic(instance: Instance, i: int, tie_worker_prices, tie_ps_prices, worker_free, ps_free):
    """``greedy``'s target by enumeration: (highest utility, least tie-break cost among the schedules with that
    utility); ``(-inf, inf)`` if the job has no schedule."""
    job = instance.jobs[i]
    work = int(instance.work_units[i])
    per_slot = cheapest_per_count(instance, i, tie_worker_prices, tie_ps_prices, worker_free, ps_free)
    best = (-math.inf, math.inf)
    for choice in itertools.product(*per_slot):
        counts = [d for d, _ in choice]
        if sum(counts) < work:
            continue
        last = max(s for s, d in enumerate(counts) if d > 0)
        value = float(job.utility(last))
        cost = sum(c for _, c in choice)
        if value > best[0] or (value == best[0] and cost < best[1]):
            best = (value, cost)
    return best


def completion_costs_by_enumeration(instance: Instance, i: int, worker_prices, ps_prices, worker_free, ps_free):
    """``C_i(t)`` for every slot ``t >= a_i``: the least cost of covering the work using slots ``a_i..t`` only."""
    work = int(instance.work_units[i])
    per_slot = cheapest_per_count(instance, i, worker_prices, ps_prices, worker_free, ps_free)
    out = []
    for last in range(len(per_slot)):
        best = math.inf
        for choice in itertools.product(*per_slot[: last + 1]):
            if sum(d for d, _ in choice) >= work:
                best = min(best, sum(c for _, c in choice))
        out.append(best)
    return out


#: The resources of the hand-made and random instances of the lower-price rules' tests.
RESOURCES = ("gpu", "cpu", "mem")


@st.composite
def random_instances(draw):
    n_workers = draw(st.integers(1, 3))
    n_ps = draw(st.integers(1, 2))
    capacity = st.sampled_from([0.0, 1.0, 2.0, 4.0, 8.0])
    worker_capacity = [[draw(capacity) for _ in RESOURCES] for _ in range(n_workers)]
    ps_capacity = [[draw(capacity) for _ in RESOURCES] for _ in range(n_ps)]
    horizon = draw(st.integers(2, 8))
    jobs = []
    for _ in range(draw(st.integers(1, 6))):
        demand = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0])
        value = draw(st.floats(0.1, 100.0))
        utility = draw(st.sampled_from([Constant(value), LinearDecay(value, 6.0), Step(value, 2.0)]))
        jobs.append(make_job(draw(st.integers(0, horizon - 1)), draw(st.integers(1, 12)), draw(st.integers(1, 4)),
                             [draw(demand) for _ in RESOURCES], [draw(demand) for _ in RESOURCES], utility,
                             bandwidth_ratio=draw(st.sampled_from([0.25, 0.5, 1.0]))))
    return make_instance(jobs, worker_capacity, ps_capacity, horizon, resources=RESOURCES)
