"""Shortcuts outside the dual subroutine against the plain computations they replace, value for value: the
block search's window minima (blocks of minima from both sides instead of one neighbour minimum per slot of length); the fitting
counts of all resources at once; OASiS-LR's rankings (present values kept per slot as arrays, one lexsort); and
its compiled plans against the numpy programme they replaced, which visits every job (no profile skipped once
the cluster is full). The subroutine's
kernel against its reference: tests/dual."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.core.standalone import FIT_TOLERANCE, fit_counts
from primaldual.dual import kernel
from primaldual.oasis.ledger import WORK_EPSILON
from primaldual.oasis.lr import reference
from primaldual.oasis.lr import execution
from primaldual.oasis.lr.order import by_key, present_values
from primaldual.simulation.placement import grow
from primaldual.simulation.scheduler import Allocation, make_scheduler


def _neighbour_minima(counts: np.ndarray, k: int) -> np.ndarray:
    """The plain way: ``k - 1`` steps of the minimum of neighbours."""
    for _ in range(k - 1):
        counts = np.minimum(counts[:-1], counts[1:])
    return counts


@settings(max_examples=200, deadline=None)
@given(n_slots=st.integers(1, 70), servers=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       lengths=st.lists(st.integers(1, 70), min_size=1, max_size=6), compiled=st.booleans())
def test_window_minima_are_the_neighbour_minima(n_slots, servers, seed, lengths, compiled):
    """For every window length, the minima over each window (the block search's, as Python and compiled) equal
    ``k - 1`` steps of neighbour minima."""
    code = kernel.compiled(reference) if compiled else reference
    counts = np.random.default_rng(seed).integers(0, 9, size=(n_slots, servers))
    for k in (k for k in lengths if k <= n_slots):
        minima = np.empty_like(counts)
        code.window_minima(counts, k, minima)
        assert np.array_equal(minima[:n_slots - k + 1], _neighbour_minima(counts, k))


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5, -1.0, 1e300]), min_size=0, max_size=12),
       seed=st.integers(0, 2**32 - 1))
def test_by_key_is_the_sort_of_the_pairs(keys, seed):
    """Decreasing key, ties to the lower job: the permutation of Python's sort of ``(-key, job)``."""
    jobs = np.random.default_rng(seed).permutation(len(keys)).tolist()
    expected = [jobs[m] for m in sorted(range(len(jobs)), key=lambda m: (-keys[m], jobs[m]))]
    assert by_key(jobs, np.array(keys)) == expected


def _one_present_value(tables, state, slot, i):
    """Job ``i``'s present value and density computed alone, with its own utility call."""
    job = tables.instance.jobs[i]
    remaining = max(state.work_left[i], 1e-9)
    needed = max(-(-np.ceil(remaining - WORK_EPSILON) // tables.chunks[i]), 1)
    value = np.float64(job.utility(slot + needed - 1 - job.arrival)) / (1.0 + state.policy.discount_rate * needed)
    return value, value / (max(remaining, 1.0) * max(tables.unit[i], 1e-12))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), rounds=st.lists(st.tuples(st.lists(st.integers(0, 19), max_size=12),
                                                              st.lists(st.integers(0, 19), max_size=4),
                                                              st.sampled_from(["own", "urgency", "steep"])),
                                                    min_size=1, max_size=4))
def test_present_values_kept_for_the_slot_are_each_job_s_own(seed, rounds):
    """Rankings of overlapping job sets in one slot, the work left of some jobs changing and the policy switching
    between them (the lookahead's policies share the discount; "steep" has another): every figure is the job's
    own, computed alone under the policy set, bit for bit (kept ones included)."""
    instance = generate("small", seed, jobs=20)
    scheduler = make_scheduler("oasis-lr")
    scheduler.start(instance)
    tables, state = scheduler.tables, scheduler.state
    own = state.policy
    policies = {"own": own, "urgency": own.changed({"order": "urgency"}), "steep": own.changed({"discount_rate": 0.5})}
    for candidates, changed, name in rounds:
        state.set_policy(name, policies[name])
        for i in changed:
            state.work_left[i] = max(state.work_left[i] - 1.5, 0.0)
        value, density = present_values(tables, state, 3, candidates)
        for m, i in enumerate(candidates):
            assert (value[m], density[m]) == _one_present_value(tables, state, 3, i)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(4,), (3, 4), (5, 2, 4)]), limit=st.integers(0, 9))
def test_fit_counts_are_the_least_over_resources_one_at_a_time(seed, shape, limit):
    """All demanded resources at once: the counts of the loop over them, one resource at a time (zero demands
    ignored, no demand at all gives ``limit``, zero free amounts give 0)."""
    rng = np.random.default_rng(seed)
    free = rng.choice([0.0, 0.3, 1.0, 2.5, 7.0], size=shape)
    demand = rng.choice([0.0, 0.1, 1.0, 2.5], size=shape[-1])
    counts = None
    for r in np.flatnonzero(demand > 0):
        fit = np.floor((free[..., r] + FIT_TOLERANCE) / demand[r])
        counts = fit if counts is None else np.minimum(counts, fit)
    expected = np.full(shape[:-1], limit) if counts is None else np.minimum(np.maximum(counts, 0), limit)
    got = fit_counts(free, demand, limit)
    assert got.dtype == np.int64 and np.array_equal(got, expected.astype(np.int64))


def _plan_every_job(settings, tables, state, slot, order, free, blocks, stable):
    """The plan as the numpy programme the compiled loops replaced (:mod:`primaldual.simulation.placement`'s
    first fit and ``grow``), every job of ``order`` visited (no profile skipped once it found no room): with the
    re-plan's caps, a capped pass, then the jobs still without workers."""
    out, restart_cost = dict(blocks), settings.restart_cost
    guided = state.policy.order == execution.PLAN_ORDER and state.guide is not None
    caps = state.guide.caps(slot) if guided else None

    def grow_one(i, caps):
        job = tables.instance.jobs[i]
        left = float(state.work_left[i]) / ((1.0 - restart_cost) if restart_cost > 0 else 1.0)
        most = int(min(tables.chunks[i], max(math.ceil(left - WORK_EPSILON), 0)))
        most = most if caps is None else min(most, caps.get(i, 0))
        if most < 1:
            return
        if i in out:
            out[i] = grow(free, job, out[i], most, "first_fit")
            return
        previous = state.previous.get(i)
        if stable and previous is not None and previous[0] == slot - 1 and free.fits(job, previous[1]):
            free.take(job, previous[1])
            kept = float(previous[1].workers.sum())
            if kept < state.work_left[i] - WORK_EPSILON:
                grown = grow(free.copy(), job, previous[1], most, "first_fit")
                if float(grown.workers.sum()) * (1.0 - restart_cost) > kept + WORK_EPSILON:
                    out[i] = grow(free, job, previous[1], most, "first_fit")
                    return
            out[i] = previous[1]
            return
        reserved = state.ledger.reservations.get(i)
        if stable and reserved is not None and free.fits(job, Allocation(reserved.workers, reserved.parameter_servers)):
            out[i] = Allocation(reserved.workers.copy(), reserved.parameter_servers.copy())
            free.take(job, out[i])
            return
        workers = free.max_workers(job, most)
        if workers > 0:
            out[i] = free.place(job, workers, "first_fit")

    if caps is not None:
        for i in order:
            grow_one(i, caps)
        order = [i for i in order if i not in out]
    for i in order:
        grow_one(i, None)
    return out


def _runs_with_both_planners(instance, cost, **parameters):
    from primaldual.core.files import schedule_to_dict
    from primaldual.simulation.simulator import simulate

    runs = []
    for planner in (execution.plan_slot, _plan_every_job):
        original = execution.plan_slot
        execution.plan_slot = planner
        try:
            runs.append(schedule_to_dict(simulate(instance, make_scheduler("oasis-lr", **parameters),
                                                  restart_cost=cost).schedule))
        finally:
            execution.plan_slot = original
    return runs


@pytest.mark.parametrize("cost,plan", [(0.0, "best"), (0.1, "best"), (0.1, "stable")])
def test_the_compiled_plans_are_the_numpy_programme_s(cost, plan):
    """A 30-job ``paper`` run (lookahead on: every policy's plans) gives the same schedule with the compiled
    plan as with the numpy programme it replaced, with and without restart costs."""
    instance = generate("paper", 11, jobs=30)
    runs = _runs_with_both_planners(instance, cost, plan=plan)
    assert runs[0] == runs[1]


@pytest.mark.slow  # 15-20 s: twenty 60-job oasis-lr runs; the hand case below stays in the fast tier
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), cost=st.sampled_from([0.0, 0.1]), plan=st.sampled_from(["best", "stable"]),
       replan=st.booleans())
def test_plans_that_skip_jobs_once_the_cluster_is_full_are_the_plans(seed, cost, plan, replan):
    """60 jobs of two demand profiles (as a trace's jobs share a few) on a ``small`` cluster, full most of the
    time, with and without restart costs (stable plans then keep placements and run blocks early): the same
    schedule as visiting every job with the numpy programme."""
    from dataclasses import replace

    # With the re-plan, 30 jobs: 60 are over its size (REPLAN_CELLS) and it would not run.
    instance = generate("small", seed, jobs=30 if replan else 60)
    models = instance.jobs[:2]
    instance = replace(instance, jobs=[replace(job, worker_demand=models[i % 2].worker_demand,
                                               ps_demand=models[0].ps_demand,
                                               worker_bandwidth_gbps=models[0].worker_bandwidth_gbps,
                                               ps_bandwidth_gbps=models[0].ps_bandwidth_gbps)
                                       for i, job in enumerate(instance.jobs)])
    runs = _runs_with_both_planners(instance, cost, plan=plan, replan=replan)
    assert runs[0] == runs[1]


def test_a_running_block_still_grows_after_every_profile_found_no_room():
    """The one case the skip must keep: the PS pool is full, so no job of the (single) profile can start, but
    job 0's running block can grow from one worker to two without another PS (``Z(2) = Z(1) = 1``). Job 1
    finds no room first; the plan still grows job 0, as visiting every job does."""
    from oasis_helpers import make_instance, make_job
    from primaldual.core.utility import Constant
    from primaldual.simulation.placement import FreeCapacity
    from primaldual.simulation.scheduler import Allocation

    jobs = [make_job(0, 8, 4, (1.0, 0.0), (0.0, 1.0), Constant(5.0), bandwidth_ratio=0.4) for _ in range(2)]
    instance = make_instance(jobs, [[4.0, 4.0]], [[0.0, 1.0]], 6)
    scheduler = make_scheduler("oasis-lr")
    scheduler.start(instance)
    plans = []
    for planner in (execution.plan_slot, _plan_every_job):
        free = FreeCapacity(instance.cluster)
        block = Allocation(np.array([1]), np.array([1]))
        free.take(jobs[0], block)
        plans.append(planner(scheduler.settings, scheduler.tables, scheduler.state, 0, [1, 0], free, {0: block}, False))
    assert plans[0].keys() == plans[1].keys() == {0}
    assert int(plans[0][0].workers.sum()) == int(plans[1][0].workers.sum()) == 2  # Z(3) = 2 does not fit


def _urgency_by_each_job(tables, state, restart_cost, slot, candidates):
    """The urgency keys with one utility call per job (the loop the vector calls replaced)."""
    instance, jobs = tables.instance, np.asarray(candidates, dtype=np.int64)
    remaining = np.maximum(state.work_left[jobs], 1e-9)
    running = np.array([state.previous.get(i, (-2,))[0] == slot - 1 for i in candidates], dtype=bool)
    needed = np.maximum(np.ceil(remaining / tables.chunks[jobs] + np.where(running, 0.0, restart_cost)
                                - WORK_EPSILON), 1).astype(np.int64)
    completion = slot + needed - 1
    now, later = np.empty(len(candidates)), np.empty(len(candidates))
    for m, i in enumerate(candidates):
        job = instance.jobs[i]
        now[m], later[m] = np.asarray(job.utility(np.array([completion[m], completion[m] + 1]) - job.arrival))
    now[completion >= instance.horizon] = 0.0
    later[completion + 1 >= instance.horizon] = 0.0
    key = now / (1.0 + state.policy.discount_rate * needed) + (now - later)
    return key / (np.maximum(remaining, 1.0) * np.maximum(tables.unit[jobs], 1e-12))


@pytest.mark.parametrize("cost", [0.0, 0.1])
def test_urgency_keys_are_each_job_s_own_utility_calls(monkeypatch, cost):
    """Every urgency ranking of a ``paper`` run's rollouts (the lookahead tries the urgency order) gives the keys
    of one utility call per job, float for float."""
    from primaldual.oasis.lr import order
    from primaldual.simulation.simulator import simulate

    checked = []
    vector = order.urgency_keys

    def both(settings, tables, state, slot, candidates):
        keys = vector(settings, tables, state, slot, candidates)
        assert np.array_equal(keys, _urgency_by_each_job(tables, state, settings.restart_cost, slot, candidates))
        checked.append(len(candidates))
        return keys

    monkeypatch.setattr(order, "urgency_keys", both)
    simulate(generate("paper", 12, jobs=30), make_scheduler("oasis-lr"), restart_cost=cost)
    assert len(checked) > 10 and max(checked) > 3
