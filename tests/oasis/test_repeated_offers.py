"""Repeated offers (primaldual/oasis/lr/admission.py, "Repeated offers"): an offer whose key (job, remaining work,
the ledger's token, the floor) was answered before in the slot takes that answer. The ledger's token names its
amounts to the bit, and runs that answer each key once are the runs that make every offer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.files import schedule_to_dict
from primaldual.core.generate import generate
from primaldual.oasis.ledger import Ledger, Reservation
from primaldual.oasis.lr import admission
from primaldual.oasis.lr.state import LrState
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate

INSTANCE = generate("small", 3, jobs=8)

#: One change of a ledger: (kind, job, first, last, workers seed).
CHANGE = st.tuples(st.sampled_from(["add", "remove", "release_before", "release_after"]), st.integers(0, 7),
                   st.integers(0, INSTANCE.horizon - 1), st.integers(0, INSTANCE.horizon - 1), st.integers(0, 3))


def _change(ledger: Ledger, change) -> None:
    kind, job, first, last, seed = change
    first, last = min(first, last), max(first, last)
    held = job in ledger.reservations
    if kind == "add" and not held:
        counts = np.random.default_rng(seed)
        ledger.add(Reservation(job, counts.integers(0, 3, INSTANCE.cluster.n_worker_servers),
                               counts.integers(0, 2, INSTANCE.cluster.n_ps_servers), first, last))
    elif kind == "remove":
        ledger.remove(job)
    elif kind == "release_before" and held:
        ledger.release_before(job, first)
    elif kind == "release_after" and held:
        ledger.release_after(job, last)


@settings(max_examples=60, deadline=None)
@given(start=st.lists(CHANGE, max_size=6), branches=st.lists(st.lists(CHANGE, max_size=5), min_size=2, max_size=5))
def test_one_token_means_the_same_amounts_and_the_same_changes_give_one_token(start, branches):
    """Twins of one ledger, each changed its own way (some the same way): every two with one token hold the same
    amounts to the bit, and twins changed alike share a token."""
    origin = Ledger(INSTANCE)
    for change in start:
        _change(origin, change)
    twins = []
    for changes in branches + branches[:1]:  # the first branch twice: the same changes from the same amounts
        twin = origin.copy()
        for change in changes:
            _change(twin, change)
        twins.append(twin)
    by_token = {}
    for twin in twins:
        amounts = twin.worker_used.tobytes() + twin.ps_used.tobytes()
        assert by_token.setdefault(twin.token, amounts) == amounts
    assert twins[0].token == twins[-1].token


def _run(instance, cost, answer_once: bool, monkeypatch):
    """The schedule, report and number of offers made, answering each key once or making every offer."""
    made = []
    original = admission.offer_answer

    def counted(*arguments):
        made.append(1)
        return original(*arguments)
    with monkeypatch.context() as patch:
        patch.setattr(admission, "offer_answer", counted)
        if not answer_once:  # a key equal to no other: every offer is made
            patch.setattr(admission, "offer_key", lambda state, i, remaining: object())
        run = simulate(instance, make_scheduler("oasis-lr"), restart_cost=cost)
    return schedule_to_dict(run.schedule), run.report, run.metrics.utility, len(made)


@pytest.mark.fast_tier(2)  # the fast tier keeps two of the four runs; CI runs all four (tests/conftest.py)
@pytest.mark.parametrize("preset,seed,jobs", [("small", 3, 60), ("paper", 5, 100)])
@pytest.mark.parametrize("cost", [0.0, 0.1])
def test_answering_each_key_once_changes_no_schedule(preset, seed, jobs, cost, monkeypatch):
    """Runs with the lookahead on (the twins of each batch repeat each other's offers): the same schedule, report
    and utility, with fewer offers made. (Without the ledger's token in the key, the first two are not the same.)"""
    instance = generate(preset, seed, jobs=jobs)
    once = _run(instance, cost, True, monkeypatch)
    every = _run(instance, cost, False, monkeypatch)
    assert once[:3] == every[:3]
    assert once[3] < every[3]


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), cost=st.sampled_from([0.0, 0.1]))
def test_answering_each_key_once_changes_no_schedule_of_any_instance(seed, cost):
    with pytest.MonkeyPatch.context() as monkeypatch:
        instance = generate("small", seed, jobs=40)
        assert _run(instance, cost, True, monkeypatch)[:3] == _run(instance, cost, False, monkeypatch)[:3]


def test_the_answers_of_past_slots_are_dropped():
    state = LrState.start(INSTANCE, make_scheduler("oasis-lr").settings.own)
    state.offers.update({3: {"a": 1}, 5: {"b": 2}, 6: {}})
    admission.forget_offers(state, 5)
    assert sorted(state.offers) == [5, 6]
    assert state.copy().offers is state.offers  # twins share the answers


@pytest.mark.parametrize("changed", [False, True])
def test_an_arrival_that_changes_the_floor_drops_the_answers_keyed_by_the_old_one(changed):
    from primaldual.oasis.learned_floor import PriceFloor

    scheduler = make_scheduler("oasis-lr", lookahead=False)
    scheduler.start(INSTANCE)
    slot, n = int(INSTANCE.arrivals[0]), INSTANCE.cluster.n_resources
    old = scheduler.state.floor.values
    scheduler.state.offers[slot + 1] = {(0, 1, 0, old): "kept"}
    new = PriceFloor(np.full(n, 0.5 if changed else 0.0), np.zeros(n))
    scheduler.learner.update = lambda at: new
    scheduler.on_arrival(slot, [int(i) for i in np.flatnonzero(INSTANCE.arrivals == slot)])
    assert ((0, 1, 0, old) in scheduler.state.offers.get(slot + 1, {})) == (not changed)
    if changed:  # the offers of the arrival are keyed by the new floor
        assert all(key[3] == new.values for answers in scheduler.state.offers.values() for key in answers)
