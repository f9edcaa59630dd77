"""The offer round's vector calls (issue 26): which pending jobs are due, and the cost-floor screen, one vector
call per round instead of one scalar test per offer.

:meth:`primaldual.dual.cost_floor.JobFloors.cannot_pay` may say True only where the scalar
:func:`primaldual.dual.cost_floor.cannot_pay` does, :class:`primaldual.oasis.lr.state.OfferScreen` must follow
every change of the least prices within a round, and a run with the screen takes exactly the decisions of a
run without it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from oasis_helpers import make_instance, make_job
from primaldual.core.files import schedule_to_dict
from primaldual.core.generate import generate
from primaldual.core.utility import Constant, LinearDecay, Sigmoid
from primaldual.dual.cost_floor import JobFloors, cannot_pay, cost_floor_of, least_prices
from primaldual.oasis.learned_floor import PriceFloor
from primaldual.oasis.ledger import Reservation
from primaldual.oasis.lr.state import LastOffers, OfferScreen
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate


@st.composite
def screened_offers(draw):
    """A few jobs (up to 100 workers, past the floor's PS table), random per-slot prices (some zero) and one
    offer each: the remaining work (0 and past the window included) from a common start slot."""
    horizon = draw(st.integers(1, 12))
    n_jobs = draw(st.integers(1, 8))
    jobs = []
    for _ in range(n_jobs):
        chunks = draw(st.sampled_from([1, 2, 3, 8, 70, 100]))
        utility = draw(st.sampled_from([Constant(9.0), LinearDecay(40.0, 6.0), Sigmoid(30.0, 0.5, 4.0)]))
        jobs.append(make_job(draw(st.integers(0, horizon - 1)), draw(st.integers(1, 40)), chunks,
                             (1.0, draw(st.sampled_from([0.0, 0.5]))), (0.0, 1.0), utility,
                             bandwidth_ratio=draw(st.sampled_from([0.04, 0.25, 0.4, 1.0]))))
    instance = make_instance(jobs, [[100.0, 100.0]] * 2, [[0.0, 100.0]] * 2, horizon)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([0.0, 0.05, 0.5, 3.0]))
    worker_prices = rng.uniform(0, scale, size=(horizon, 2, 2))
    ps_prices = rng.uniform(0, scale, size=(horizon, 2, 2))
    work = [draw(st.integers(0, 45)) for _ in jobs]
    return instance, least_prices(worker_prices, ps_prices), draw(st.integers(0, horizon)), work


@settings(max_examples=300, derandomize=True, deadline=None)
@given(screened_offers())
def test_the_batched_floor_is_the_scalar_test(case):
    """Every True of the vector test is the scalar test's True, and away from a tie (utility within 1e-9 of
    the floor) the two agree: the batch loses nothing either."""
    instance, least, start, work = case
    floors = JobFloors.of(instance.jobs)
    batch = floors.cannot_pay(np.arange(instance.n_jobs), np.array(work), start, instance.horizon, least)
    for i, job in enumerate(instance.jobs):
        scalar = cannot_pay(job, work[i], start, instance.horizon, least)
        assert scalar or not batch[i]
        if batch[i] != scalar:  # only at a tie, where the margin leaves the call to the scalar test
            first = max(start, job.arrival)
            fastest = -(-work[i] // min(job.chunks, work[i])) - 1
            value = float(job.utility(first - job.arrival + fastest))
            assert abs(value - cost_floor_of(job, work[i], least, first)) <= 1e-9 * abs(value)
        event("True" if scalar else "False")


def _priced_state():
    """An OASiS-LR state on one 4-GPU server (and one PS server), 8 slots: job 0 can hold the whole server,
    jobs 1..12 are one-worker jobs worth 1e-3 .. 1e3, so that some of them can pay at the empty cluster's
    prices and not at the full one's."""
    values = np.geomspace(1e-3, 1e3, 12)
    jobs = [make_job(0, 8, 4, (1.0, 0.0), (0.0, 1.0), Constant(50.0))]
    jobs += [make_job(0, 2, 1, (1.0, 0.0), (0.0, 1.0), Constant(float(v))) for v in values]
    instance = make_instance(jobs, [[4.0, 4.0]], [[0.0, 4.0]], 8)
    scheduler = make_scheduler("oasis-lr", learned_floor=False)
    scheduler.start(instance)
    return instance, scheduler.tables, scheduler.state


def _scalar(tables, state, slot, jobs):
    state.prices(tables.constants, slot)
    least = state.price_cache.least_prices()
    return [cannot_pay(tables.instance.jobs[i], int(state.remaining[i]), slot, tables.instance.horizon, least)
            for i in jobs]


def test_the_screen_follows_every_change_of_the_least_prices():
    """A screen built before a block is added, removed, the ledger replaced or the floor raised answers after
    each change as the scalar test does then (each change turns some answers over, so stale flags would
    show), and says False for a job outside its round or another slot."""
    instance, tables, state = _priced_state()
    jobs = list(range(1, instance.n_jobs))
    screen = OfferScreen(1, jobs)
    block = Reservation(0, np.array([4]), np.array([1]), 1, 7)
    seen = []

    def check():
        expected = _scalar(tables, state, 1, jobs)
        assert [screen.cannot_pay(tables, state, 1, i) for i in jobs] == expected
        seen.append(expected)

    check()
    state.ledger.add(block)
    check()
    state.ledger.remove(0)
    check()
    state.ledger = state.ledger.copy()
    state.ledger.add(block)
    check()
    state.ledger.remove(0)
    check()
    state.floor = PriceFloor(np.full(2, 1e3), np.full(2, 1e3))
    check()
    assert all(seen[k] != seen[k + 1] for k in range(len(seen) - 1))
    assert not screen.cannot_pay(tables, state, 2, jobs[0]) and not screen.cannot_pay(tables, state, 1, 0)


def _run(instance, name, cost, shortcuts):
    """A run's schedule, report and every offer's recorded ``mu``; ``shortcuts=False`` takes the screen out
    (every offer then runs the scalar test)."""
    screen = OfferScreen.cannot_pay
    if not shortcuts:
        OfferScreen.cannot_pay = lambda self, tables, state, slot, i: False
    try:
        scheduler = make_scheduler(name, eta=0.25)
        result = simulate(instance, scheduler, restart_cost=cost)
    finally:
        OfferScreen.cannot_pay = screen
    return schedule_to_dict(result.schedule), scheduler.report(), dict(scheduler.record.mu_last)


@settings(max_examples=4, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), name=st.sampled_from(["oasis-lr", "oasis-p"]),
       cost=st.sampled_from([0.0, 0.1]))
def test_a_run_with_the_screen_is_the_run_without_it(seed, name, cost):
    """On random 20-job ``small`` instances (eta 0.25: many admissions, so the prices move within rounds) the
    schedule, the report and every offer's ``mu`` are the same with and without the screen."""
    instance = generate("small", seed, jobs=20)
    assert _run(instance, name, cost, True) == _run(instance, name, cost, False)


@settings(max_examples=200, deadline=None)
@given(offers=st.lists(st.tuples(st.one_of(st.none(), st.tuples(st.integers(0, 50), st.integers(0, 10**6))),
                                 st.integers(0, 10**6)), min_size=1, max_size=12),
       slot=st.integers(0, 60), every=st.integers(1, 5))
def test_which_jobs_are_due_is_the_rule_job_by_job(offers, slot, every):
    """``LastOffers.due`` is, job by job, the rule as written for one job: never offered, or ``every`` slots
    since its last offer, or its remaining work at most three quarters of what it was then."""
    last = LastOffers.none(len(offers))
    for i, (previous, _) in enumerate(offers):
        if previous is not None:
            last.record(previous[0], np.array([i]), np.array([previous[1]]))
    remaining = np.array([left for _, left in offers], dtype=np.int64)
    due = last.due(slot, np.arange(len(offers)), remaining, every)
    for i, (previous, _) in enumerate(offers):
        expected = previous is None or slot - previous[0] >= every or remaining[i] <= 0.75 * previous[1]
        assert bool(due[i]) == expected
