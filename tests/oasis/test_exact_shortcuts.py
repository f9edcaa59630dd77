"""Shortcuts of issue 26 against the plain computations they replace, value for value: the block search's
window minima (a sparse table instead of one neighbour minimum per slot of length); the work cover's one-worker
step, its bands and scalar back-pointers, and the vector early stop (against the dynamic programme and the stop
rule written out in Python floats); the one-unit cheapest fill; step (a)'s pool fills shared between jobs at
the same prices; the fitting counts of all resources at once; OASiS-LR's rankings (present values kept per slot
as arrays, one lexsort); and its plans once the cluster is full (only the jobs with a placement of their own
visited)."""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.core.standalone import FIT_TOLERANCE, fit_counts
from primaldual.dual.slot_costs import PoolFills, cheapest_fill, slot_costs
from primaldual.dual.work_cover import WorkCover
from primaldual.oasis.ledger import WORK_EPSILON, _RunningMinimum
from primaldual.oasis.lr import execution
from primaldual.oasis.lr.order import by_key, present_values
from primaldual.simulation.scheduler import make_scheduler


def _neighbour_minima(counts: np.ndarray, k: int) -> np.ndarray:
    """The plain way: ``k - 1`` steps of the minimum of neighbours."""
    for _ in range(k - 1):
        counts = np.minimum(counts[:-1], counts[1:])
    return counts


@settings(max_examples=200, deadline=None)
@given(n_slots=st.integers(1, 70), servers=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       lengths=st.lists(st.integers(1, 70), min_size=1, max_size=6))
def test_window_minima_are_the_neighbour_minima(n_slots, servers, seed, lengths):
    """For every window length (in any order, as often as asked), both pools' minima over each window equal
    ``k - 1`` steps of neighbour minima."""
    rng = np.random.default_rng(seed)
    worker, ps = rng.integers(0, 9, size=(n_slots, servers)), rng.integers(0, 9, size=(n_slots, servers + 1))
    windows = _RunningMinimum(worker, ps)
    for k in (k for k in lengths if k <= n_slots):
        got = windows.of_length(k)
        assert len(got) == 2
        for counts, minima in zip((worker, ps), got):
            assert np.array_equal(minima, _neighbour_minima(counts, k))


def _plain_cover(cost: list[list[float]], work: int) -> tuple[list[float], list[list[int]]]:
    """Step (b) as written: ``F_s(v) = min over D of F_{s-1}(v - D) + c_s(D)`` in python floats (the same IEEE
    sums), with the first minimising ``D`` per state; returns ``F_s(V)`` per slot and the back-pointers."""
    inf = float("inf")
    row = [0.0] + [inf] * work
    totals, pointers = [], []
    for slot_cost in cost:
        new, back = [], []
        for v in range(work + 1):
            best, choice = inf, 0
            for d in range(min(len(slot_cost) - 1, v) + 1):
                value = row[v - d] + slot_cost[d]
                if value < best:
                    best, choice = value, d
            new.append(best)
            back.append(choice)
        row = new
        totals.append(row[work])
        pointers.append(back)
    return totals, pointers


@st.composite
def cover_cases(draw):
    """Slot costs ``c_s(D)`` for ``D = 0..m`` (``c_s(0) = 0``, non-decreasing, ``+inf`` past what fits), ties
    included (a few distinct prices), and a non-increasing utility."""
    workers = draw(st.sampled_from([1, 1, 2, 3]))
    work = draw(st.integers(1, 9))
    n_slots = draw(st.integers(1, 14))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    prices = rng.choice([0.1, 0.3, 0.7, 1.3], size=(n_slots, workers))
    cost = np.concatenate([np.zeros((n_slots, 1)), np.cumsum(prices, axis=1)], axis=1)
    fits = rng.integers(0, workers + 1, size=n_slots)
    cost[np.arange(workers + 1)[None, :] > fits[:, None]] = np.inf
    if draw(st.booleans()):
        utility = np.sort(rng.uniform(0, 3 * work, size=n_slots))[::-1]
    else:  # nearly flat: later, cheaper completions win, and the path goes through tied states
        utility = 3.0 * work - 1e-3 * np.arange(n_slots)
    return cost, work, utility


def _plain_stop(totals: list[float], utility: np.ndarray, objective: str, floor: float) -> int:
    """The slots the early-stopping pass processes, step (c) and the stop rule slot by slot as written."""
    best_payoff = best_utility = -np.inf
    for s, total in enumerate(totals):
        if total < np.inf:
            best_payoff = max(best_payoff, utility[s] - total)
            best_utility = max(best_utility, utility[s])
        if s + 1 < len(totals):
            if objective == "payoff" and utility[s + 1] - floor <= max(0.0, best_payoff):
                return s + 1
            if objective == "utility" and utility[s + 1] < best_utility:
                return s + 1
    return len(totals)


@settings(max_examples=300, deadline=None)
@given(case=cover_cases(), objective=st.sampled_from(["payoff", "utility"]), blocks=st.integers(1, 4))
def test_the_work_cover_is_the_plain_dynamic_programme(case, objective, blocks):
    """Fed in blocks, without the early stop: every ``C(s)`` is the plain programme's double, and the rebuilt
    counts of the chosen slot are its back-pointers; with the early stop (and a cost floor), the same slot
    and counts, after exactly the slots the stop rule allows."""
    cost, work, utility = case
    totals, pointers = _plain_cover(cost.tolist(), work)
    finite = [t for t in totals if t < np.inf]
    floor = 0.99 * min(finite) if finite else 0.0  # a lower bound on every completion's cost
    for early_stop in (False, True):
        cover = WorkCover(work, cost.shape[1] - 1, utility, objective, early_stop, floor)
        for part in np.array_split(cost, blocks):
            if not cover.extend(part):
                break
        done = cover.slots_done
        assert done == (_plain_stop(totals, utility, objective, floor) if early_stop else cost.shape[0])
        assert np.array_equal(cover.completion_cost[:done], np.array(totals[:done]))
        if not early_stop:
            full = cover
        elif full.best_slot is not None and (objective == "utility" or full._best_payoff > 0):
            # (with a payoff of at most 0, mu = 0 and the early stop may end before any schedule is found)
            assert cover.best_slot == full.best_slot
            if cover.best_slot is not None:  # the band's choices, or whole rows after leaving it
                assert np.array_equal(cover.workers_per_slot(cover.best_slot),
                                      full.workers_per_slot(full.best_slot))
    if full.best_slot is None:
        assert not np.isfinite(totals).any() or objective == "utility"
        return
    counts, v = [], work
    for s in range(full.best_slot, -1, -1):
        counts.append(pointers[s][v] if s else v)
        v -= counts[-1]
    assert full.workers_per_slot(full.best_slot).tolist() == counts[::-1]


@settings(max_examples=200, deadline=None)
@given(n_servers=st.integers(1, 6), n_slots=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_the_one_unit_fill_is_the_first_unit_of_the_general_fill(n_servers, n_slots, seed):
    """One unit: the same cost row, first server and its cap as the general fill's first unit (ties in price
    and servers without room on purpose)."""
    rng = np.random.default_rng(seed)
    prices = rng.choice([0.5, 1.0, 2.5], size=(n_slots, n_servers))
    caps = rng.integers(0, 3, size=(n_slots, n_servers))
    one, general = cheapest_fill(prices, caps, 1), cheapest_fill(prices, caps, 2)
    assert np.array_equal(one.cost, general.cost[:, :2])
    assert np.array_equal(one.order, general.order[:, :1]) and np.array_equal(one.caps, general.caps[:, :1])
    assert one.order.dtype == general.order.dtype and one.caps.dtype == general.caps.dtype


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
                                                              st.lists(st.integers(0, 19), max_size=4)),
                                                    min_size=1, max_size=4))
def test_present_values_kept_for_the_slot_are_each_job_s_own(seed, rounds):
    """Rankings of overlapping job sets in one slot, the work left of some jobs changing between them: every
    figure is the job's own, computed alone, bit for bit (kept ones included)."""
    instance = generate("small", seed, jobs=20)
    scheduler = make_scheduler("oasis-lr")
    scheduler.start(instance)
    tables, state = scheduler.tables, scheduler.state
    for candidates, changed in rounds:
        for i in changed:
            state.work_left[i] = max(state.work_left[i] - 1.5, 0.0)
        value, density = present_values(tables, state, 3, candidates)
        for m, i in enumerate(candidates):
            assert (value[m], density[m]) == _one_present_value(tables, state, 3, i)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), requests=st.lists(st.tuples(st.integers(0, 19), st.integers(0, 6),
                                                                  st.integers(1, 12)), min_size=1, max_size=8))
def test_shared_pool_fills_are_each_job_s_own_slot_costs(seed, requests):
    """Jobs of a ``paper`` instance (several worker counts and demands) ask for overlapping slot ranges in any
    order: every table from the shared fills equals the job's own ``slot_costs`` over its window, array for
    array (costs, orders, caps)."""
    instance = generate("paper", seed % 50, jobs=20)
    cluster, horizon = instance.cluster, 30
    rng = np.random.default_rng(seed)
    worker_prices = rng.choice([0.5, 1.0, 2.0], size=(horizon,) + cluster.worker_capacity.shape)
    ps_prices = rng.choice([0.5, 1.0, 2.0], size=(horizon,) + cluster.ps_capacity.shape)
    worker_free = cluster.worker_capacity[None] * rng.uniform(0, 1, size=worker_prices.shape)
    ps_free = cluster.ps_capacity[None] * rng.uniform(0, 1, size=ps_prices.shape)
    fills = PoolFills(worker_prices, ps_prices, worker_free, ps_free, 4)
    for i, offset, length in requests:
        job = instance.jobs[i]
        workers = int(min(job.chunks, 1 + i % 5))
        start = 4 + offset
        stop = min(horizon, start + length)
        shared = fills.slot_costs(job, workers, start, stop)
        own = slot_costs(job, workers, worker_prices[start:stop], ps_prices[start:stop], worker_free[start:stop],
                         ps_free[start:stop])
        assert np.array_equal(shared.cost, own.cost) and np.array_equal(shared.ps_needed, own.ps_needed)
        for pool in ("workers", "parameter_servers"):
            mine, theirs = getattr(shared, pool), getattr(own, pool)
            assert np.array_equal(mine.cost, theirs.cost) and np.array_equal(mine.order, theirs.order)
            assert np.array_equal(mine.caps, theirs.caps)


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


@settings(max_examples=150, deadline=None)
@given(case=cover_cases(), flat=st.booleans())
def test_a_one_worker_search_past_its_band_replays_whole_rows(case, flat):
    """One worker at a time, early stop on: a search that goes on past the band's last slot (a flat utility
    never stops it) leaves the band and ends with the doubles and counts of the search without early stop."""
    cost, work, utility = case
    cost = cost[:, :2]
    if flat:
        utility = np.full_like(utility, utility[0])
    band = WorkCover(work, 1, utility, "payoff", True)
    plain = WorkCover(work, 1, utility, "payoff", False)
    for cover in (band, plain):
        cover.extend(cost)
    done = band.slots_done
    event("left the band" if band._band is None else "stayed in the band")
    assert np.array_equal(band.completion_cost[:done], plain.completion_cost[:done])
    if plain.best_slot is not None and band.best_slot is not None:
        assert band.best_slot == plain.best_slot
        assert np.array_equal(band.workers_per_slot(band.best_slot), plain.workers_per_slot(band.best_slot))


def _plan_every_job(restart_cost, tables, state, slot, order, free, out, stable):
    """The plan as written before the shortcut: every job of ``order`` visited."""
    no_room: set = set()
    held = execution._held(state, slot, stable)
    for i in order:
        execution._grow(restart_cost, tables, state, slot, i, free, out, stable, no_room, held)
    return out


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), cost=st.sampled_from([0.0, 0.1]), plan=st.sampled_from(["best", "stable"]))
def test_plans_that_skip_jobs_once_the_cluster_is_full_are_the_plans(seed, cost, plan):
    """60 jobs of two demand profiles (as a trace's jobs share a few) on a ``small`` cluster, full most of the
    time, with and without restart costs (stable plans then keep placements and run blocks early): the same
    schedule as visiting every job."""
    from dataclasses import replace

    from primaldual.core.files import schedule_to_dict
    from primaldual.simulation.simulator import simulate

    instance = generate("small", seed, jobs=60)
    models = instance.jobs[:2]
    instance = replace(instance, jobs=[replace(job, worker_demand=models[i % 2].worker_demand,
                                               ps_demand=models[0].ps_demand,
                                               worker_bandwidth_gbps=models[0].worker_bandwidth_gbps,
                                               ps_bandwidth_gbps=models[0].ps_bandwidth_gbps)
                                       for i, job in enumerate(instance.jobs)])
    runs = []
    for planner in (execution.plan_slot, _plan_every_job):
        original = execution.plan_slot
        execution.plan_slot = planner
        try:
            runs.append(schedule_to_dict(simulate(instance, make_scheduler("oasis-lr", plan=plan),
                                                  restart_cost=cost).schedule))
        finally:
            execution.plan_slot = original
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
        plans.append(planner(0.0, scheduler.tables, scheduler.state, 0, [1, 0], free, {0: block}, False))
    assert plans[0].keys() == plans[1].keys() == {0}
    assert int(plans[0][0].workers.sum()) == int(plans[1][0].workers.sum()) == 2  # Z(3) = 2 does not fit


def test_a_tie_on_the_path_keeps_the_earlier_slot_in_the_band_and_in_whole_rows():
    """One worker, 2 worker-slots, slot costs 1, 1, 0.5 (then dear), flat utility until slot 3: the best
    completion is slot 2 (cost 1.5); for its other worker-slot slots 0 and 1 tie at 1.0, and the tie goes to
    the earlier slot (the fewer workers in the later one), with the band (early stop) as with whole rows."""
    cost = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 0.5], [0.0, 9.0]])
    utility = np.array([10.0, 10.0, 10.0, 0.0])
    for early_stop in (True, False):
        cover = WorkCover(2, 1, utility, "payoff", early_stop)
        cover.extend(cost)
        assert cover.best_slot == 2 and cover.completion_cost[2] == 1.5
        assert cover.workers_per_slot(2).tolist() == [1, 0, 1]
        assert (cover._band is not None) == early_stop  # the band served the whole search
