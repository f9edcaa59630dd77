"""OASiS-LR's speed-ups compute exactly what the plain computations do (issue 10's runtime targets).

Each shortcut is checked against the computation it replaces, float for float: the subroutine without placing
its schedule (``plan=False``), the incremental price cache, the admission's dual increase over the touched slots
only, and the execution's fused first-fit placement. Timings themselves are in ``primaldual bench oasis
--compare-lr`` (and the ``benchmark``-marked test at the end, excluded by default).
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest

from primaldual.core.instance import Cluster, job_with_work
from primaldual.core.utility import Constant
from primaldual.simulation.placement import PS_TABLE_WORKERS, FreeCapacity, ps_needed_table
from primaldual.dual.subroutine import best_schedule, least_prices
from primaldual.core.generate import generate
from primaldual.oasis.lr.price_cache import PriceCache
from primaldual.oasis.engine import OnlineEngine, arrival_order
from primaldual.dual import kernel
from primaldual.oasis.lr import reference as slot_reference
from primaldual.oasis.lr.execution import tables_for
from primaldual.oasis.lr.reference import Growing
from primaldual.oasis.lr.state import JobTables
from primaldual.simulation.scheduler import Allocation
from primaldual.oasis.prices import compute_constants
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate


def test_the_subroutine_without_placements_gives_the_same_answer():
    """``plan=False``: the same mu, payoff, completion and per-slot counts as the placed schedule, job by job
    along an OASiS run (paper preset, 25 jobs), with and without the cost floor."""
    instance = generate("paper", 7, jobs=25)
    engine = OnlineEngine(instance, compute_constants(instance))
    state = engine.state
    for i in arrival_order(instance):
        for floor in (False, True):
            args = (instance, i, state.worker_prices, state.ps_prices, state.worker_free, state.ps_free)
            placed = best_schedule(*args, cost_floor=floor)
            counted = best_schedule(*args, cost_floor=floor, plan=False)
            assert counted.schedule is None and counted.feasible == placed.feasible
            assert (counted.mu, counted.payoff, counted.completion_slot) == \
                (placed.mu, placed.payoff, placed.completion_slot)
            assert np.array_equal(counted.workers_per_slot, placed.workers_per_slot)
            assert np.array_equal(counted.parameter_servers_per_slot, placed.parameter_servers_per_slot)
        engine.decide(i)


@pytest.mark.parametrize("seed,cost", [(0, 0.0), (1, 0.1)])
def test_the_price_cache_and_the_admission_increase_equal_a_fresh_computation(seed, cost):
    """At every offer of an OASiS-LR run (20-job ``small``): the incrementally kept prices, free amounts and
    least prices equal a cache built afresh at that slot, float for float; and every admission's dual increase
    and running maxima, computed over the touched slots only, equal the scan of every slot."""
    instance = generate("small", 40 + seed, jobs=20)
    # eta = 0.25 (a reserve price at the least density, not the default 5x it): many admissions to check.
    scheduler = make_scheduler("oasis-lr", eta=0.25)
    checked = {"offers": 0, "admissions": 0}

    def admit(slot, i):
        prices, free = scheduler.prices(slot), scheduler.free(slot)
        state = scheduler.state
        fresh = PriceCache(state.ledger, scheduler.tables.constants, state.floor, slot)
        fresh_prices, fresh_free = fresh.update(slot)
        for pool in (0, 1):
            assert np.array_equal(prices[pool][slot:], fresh_prices[pool][slot:])
            assert np.array_equal(free[pool][slot:], fresh_free[pool][slot:])
            assert np.array_equal(state.price_cache.least_prices()[pool][slot:],
                                  least_prices(*prices)[pool][slot:])
        checked["offers"] += 1
        return offer(slot, i)

    def see_admission(i, mu, payoff, value, prices, floor, slot, rows=None):
        full = copy.deepcopy(record)
        type(record).see_admission(full, i, mu, payoff, value, prices, floor, slot)
        see(i, mu, payoff, value, prices, floor, slot, rows=rows)
        assert record.admissions[i] == full.admissions[i]
        assert np.array_equal(record.worker_max, full.worker_max) and np.array_equal(record.ps_max, full.ps_max)
        checked["admissions"] += 1

    start = scheduler.start

    def started(inst):
        nonlocal record, see
        start(inst)
        record = scheduler.record
        see = record.see_admission
        record.see_admission = see_admission

    record = see = None
    offer = scheduler._admit
    scheduler._admit = admit
    scheduler.start = started
    simulate(instance, scheduler, restart_cost=cost)
    assert checked["offers"] > 0 and checked["admissions"] > 0


#: The two texts of the slot's loops (:mod:`primaldual.oasis.lr.kernel`): as Python, and compiled.
SLOT_CODES = pytest.mark.parametrize("compiled", [False, True], ids=["reference", "compiled"])


def slot_code(compiled: bool):
    return kernel.compiled(slot_reference) if compiled else slot_reference


def place_most(code, free, job, limit: int, needed: np.ndarray) -> Allocation | None:
    """The loops' first fit of at most ``limit`` workers, taken from ``free``; None if not one worker fits."""
    workers = np.empty(free.worker.shape[0], dtype=np.int64)
    parameter_servers = np.empty(free.ps.shape[0], dtype=np.int64)
    needed = np.asarray(needed, dtype=np.int64)
    if code.place_most(free.worker, free.ps, job.worker_demand, job.ps_demand, limit, needed, workers,
                       parameter_servers) == 0:
        return None
    return Allocation(workers, parameter_servers)


@SLOT_CODES
def test_place_most_is_max_workers_then_first_fit(compiled):
    """The execution's placement loops (:func:`primaldual.oasis.lr.reference.place_most`, as Python and
    compiled) equal ``FreeCapacity.max_workers`` then ``place(..., "first_fit")``, the array programme of
    :mod:`primaldual.simulation.placement`: the same allocation and the same free amounts after it, bit for
    bit, on random partly used clusters."""
    code = slot_code(compiled)
    instance = generate("paper", 3, jobs=30)
    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(60):
        free = FreeCapacity(instance.cluster)
        free.worker *= rng.uniform(0, 1, free.worker.shape)
        free.ps *= rng.uniform(0, 1, free.ps.shape)
        for job in instance.jobs:
            limit = int(rng.integers(1, job.chunks + 1))
            reference = free.copy()
            workers = reference.max_workers(job, limit)
            expected = reference.place(job, workers, "first_fit") if workers > 0 else None
            got = place_most(code, free, job, limit, job.min_parameter_servers(np.arange(job.chunks + 1)))
            assert (got is None) == (expected is None)
            if got is not None:
                assert np.array_equal(got.workers, expected.workers)
                assert np.array_equal(got.parameter_servers, expected.parameter_servers)
                compared += 1
            assert np.array_equal(free.worker, reference.worker) and np.array_equal(free.ps, reference.ps)
    assert compared > 100



@SLOT_CODES
def test_place_most_reads_past_the_capped_table_as_a_full_one(compiled):
    """With ``Z(D)`` tabulated only up to ``PS_TABLE_WORKERS`` (:func:`ps_needed_table`), a plan whose job may
    grow past the cap reads the full table (:func:`primaldual.oasis.lr.execution.tables_for`): the same
    allocation and the same free amounts as the array programme, where the PS room stops the count above, at or
    below the cap."""
    code = slot_code(compiled)
    rng = np.random.default_rng(1)
    cluster = Cluster(("gpu", "cpu"), np.array([[3e3, 1e4], [2e3, 1e4]]), np.array([[1e3, 1e4], [1.5e3, 1e4]]))
    compared = beyond = 0
    for _ in range(40):
        ratio = float(rng.choice([0.1, 0.5, 0.9, 1.0]))
        job = job_with_work(6000, 6000, (0.5, 1.0), (float(rng.uniform(0.1, 1.0)), 0.5), Constant(1.0),
                            worker_bandwidth_gbps=ratio, ps_bandwidth_gbps=1.0)
        capped = np.array(ps_needed_table(job), dtype=np.int64)
        full = job.min_parameter_servers(np.arange(job.chunks + 1))
        assert len(capped) == PS_TABLE_WORKERS + 1
        free = FreeCapacity(cluster)
        free.worker *= rng.uniform(0.5, 1, free.worker.shape)
        free.ps *= rng.uniform(0.2, 1, free.ps.shape)
        reference = free.copy()
        limit = int(rng.integers(PS_TABLE_WORKERS - 100, job.chunks + 1))
        workers = reference.max_workers(job, limit)
        expected = reference.place(job, workers, "first_fit") if workers > 0 else None
        tables = JobTables.of(replace(generate("small", 0, jobs=1), cluster=cluster, jobs=(job,)), None)
        growing = Growing(np.array([0]), np.array([limit]), *([None] * 12))
        run = tables_for(tables, growing)
        needed = run.ps_needed[run.ps_start[0]:run.ps_start[1]]
        assert np.array_equal(needed, full[:limit + 1]) and (run is tables.run_jobs) == (limit <= PS_TABLE_WORKERS)
        got = place_most(code, free, job, limit, needed)
        assert np.array_equal(full[:len(capped)], capped)
        assert (got is None) == (expected is None)
        if got is not None:
            assert np.array_equal(got.workers, expected.workers)
            assert np.array_equal(got.parameter_servers, expected.parameter_servers)
            compared += 1
            beyond += int(got.workers.sum()) > PS_TABLE_WORKERS
        assert np.array_equal(free.worker, reference.worker) and np.array_equal(free.ps, reference.ps)
    assert compared > 30 and beyond > 5

@pytest.mark.benchmark
def test_oasis_lr_against_oasis_on_a_paper_instance():
    """``bench oasis --compare-lr``'s figures on one fresh ``paper`` instance (printed; no time is asserted):
    the runs are deterministic and every job gets one decision time."""
    from primaldual.evaluation.bench.oasis_lr_speed import compare_lr

    figures = compare_lr([500], repetitions=3).to_dict()
    (row,) = figures["instances"]
    print({key: value for key, value in row.items() if isinstance(value, (int, float))})
    assert row["jobs"] == 300 and np.isfinite(row["wall_ratio_median"]) and np.isfinite(row["decision_ms_median"])


@pytest.mark.parametrize("name", ["oasis-lr", "oasis-p"])
@pytest.mark.parametrize("restart_cost", [0.0, 0.1])
def test_a_reused_scheduler_gives_the_fresh_scheduler_s_results(name, restart_cost):
    """A scheduler may be reused on another instance (primaldual/simulation/scheduler.py): its per-run caches (present
    values, arrival slots, prices) are rebuilt by ``start``. Running small seed 0 first, then seed 104, gives
    seed 104's fresh run; before the fix, the cached arrival slots of seed 0 gave 22.94 instead of 23.55."""
    first, second = generate("small", 0), generate("small", 104, jobs=6)
    reused = make_scheduler(name)
    simulate(first, reused)
    again = simulate(second, reused, restart_cost=restart_cost)
    fresh = simulate(second, make_scheduler(name), restart_cost=restart_cost)
    assert again.utility == fresh.utility
    assert again.metrics.completion_slots == fresh.metrics.completion_slots
    assert again.promises == fresh.promises
