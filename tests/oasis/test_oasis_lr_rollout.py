"""OASiS-LR's lookahead (primaldual/oasis/lr/rollout.py): Lemma L of proofs/oasis-lr.md and the plumbing around it."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.oasis.lr.order import rerank
from primaldual.oasis.lr import rollout as module
from primaldual.oasis.lr.rollout import POLICIES
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate
from primaldual.core.verify import verify

from oasis_helpers import random_instances


def _one_batch(instance, slot: int):
    """``instance`` with every job arriving in ``slot``."""
    return dataclasses.replace(instance, jobs=tuple(dataclasses.replace(job, arrival=slot) for job in instance.jobs))


def _fixed(instance, cost: float, **extra) -> list[float]:
    return [simulate(instance, make_scheduler("oasis-lr", lookahead=False, **change, **extra),
                     restart_cost=cost).utility for change in POLICIES.values()]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=random_instances(), cost=st.sampled_from([0.0, 0.1, 0.3]), data=st.data())
def test_one_arrival_batch_earns_exactly_the_best_fixed_policy(instance, cost, data):
    """Lemma L: with every job arriving in one slot the rollout's twin runs are the run itself, so the
    lookahead earns exactly the best of the fixed policies; promises and the verifier as everywhere."""
    instance = _one_batch(instance, data.draw(st.integers(0, instance.horizon - 1)))
    # The fixed policies only: the re-plan follows a guide, no fixed policy (test_oasis_lr_replan.py).
    # Rolled out to the horizon: the replay, not the forecast (Lemma L holds where the twin is the run).
    result = simulate(instance, make_scheduler("oasis-lr", replan=False, rollout_slots=10 ** 6), restart_cost=cost)
    assert result.utility == pytest.approx(max(_fixed(instance, cost)), rel=1e-12, abs=1e-8)
    assert result.promises["broken"] == 0
    assert verify(instance, result.schedule).feasible


@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.parametrize("cost", [0.0, 0.1])
def test_one_arrival_batch_on_generated_instances(seed, cost):
    """Lemma L on 12-job ``small`` instances, where the fixed policies differ from one another."""
    instance = _one_batch(generate("small", seed, jobs=12), 1)
    result = simulate(instance, make_scheduler("oasis-lr", replan=False, rollout_slots=10 ** 6), restart_cost=cost)
    fixed = _fixed(instance, cost)
    assert result.utility == pytest.approx(max(fixed), rel=1e-12, abs=1e-8)
    report = result.report["lookahead"]
    assert report["decisions"] == 1 and report["skipped"] == 0 and sum(report["chosen"].values()) == 1
    assert fixed[list(POLICIES).index(next(iter(report["chosen"])))] == pytest.approx(max(fixed), rel=1e-12, abs=1e-8)


def test_a_zero_budget_skips_every_rollout_and_is_the_fixed_policy():
    instance = generate("small", 5, jobs=20)
    for cost in (0.0, 0.1):
        skipped = simulate(instance, make_scheduler("oasis-lr", lookahead_budget=0), restart_cost=cost)
        off = simulate(instance, make_scheduler("oasis-lr", lookahead=False), restart_cost=cost)
        assert skipped.utility == off.utility
        assert skipped.report["lookahead"]["skipped"] == skipped.report["lookahead"]["decisions"] > 0
        assert "lookahead" not in off.report


def test_rollouts_within_rollout_slots_are_unchanged_and_longer_ones_are_cut():
    """``rollout_slots`` at least the horizon: every rollout runs to the horizon (the same run as any larger
    value); below it, the batches are still rolled out (none skipped), each twin stopped ``rollout_slots``
    past its batch, and the schedule verifies."""
    instance = generate("small", 5, jobs=20)
    fits = simulate(instance, make_scheduler("oasis-lr", rollout_slots=instance.horizon), restart_cost=0.1)
    wide = simulate(instance, make_scheduler("oasis-lr", rollout_slots=10 ** 6), restart_cost=0.1)
    assert fits.utility == wide.utility and fits.schedule.same_allocation(wide.schedule)
    assert fits.lookahead.skipped == 0 and fits.lookahead.rollout_slots == instance.horizon
    short = simulate(instance, make_scheduler("oasis-lr", rollout_slots=2), restart_cost=0.1)
    assert short.lookahead.skipped == 0 and short.lookahead.rolled_out == short.lookahead.decisions > 0
    assert verify(instance, short.schedule).feasible


def test_a_rollout_stops_rollout_slots_past_its_batch():
    """The twin simulates slots ``[t, t + rollout_slots)`` and no more: counted by the execution it runs."""
    from primaldual.oasis.lr import rollout as module

    instance = generate("small", 5, jobs=20)
    scheduler = make_scheduler("oasis-lr", rollout_slots=3)
    runs: list[list[int]] = []
    original_rollouts, original_prepare = module.rollouts, module.prepare_slot

    def rollouts(settings, tables, state, slot, *rest):
        runs.append([slot])
        return original_rollouts(settings, tables, state, slot, *rest)

    def prepare(settings, tables, state, slot, *rest):
        runs[-1].append(slot)  # once per group of twins and slot
        return original_prepare(settings, tables, state, slot, *rest)

    module.rollouts, module.prepare_slot = rollouts, prepare
    try:
        simulate(instance, scheduler, restart_cost=0.0)
    finally:
        module.rollouts, module.prepare_slot = original_rollouts, original_prepare
    slots_of = [(t, sorted(set(slots))) for t, *slots in runs]
    assert runs and all(slots == list(range(t, t + len(slots))) for t, slots in slots_of)
    assert max(len(slots) for _, slots in slots_of) == 3


def test_the_lookahead_counts_reach_the_result_and_the_command_line(capsys):
    """Typed on the result (:class:`ReportedLookahead`), in ``compare``'s rows and footer, and in ``run``'s text."""
    from primaldual.cli import main

    instance = generate("small", 5, jobs=20)
    result = simulate(instance, make_scheduler("oasis-lr", lookahead_budget=0))
    assert result.lookahead.skipped == result.lookahead.decisions > 0 and result.lookahead.rolled_out == 0
    assert result.lookahead.budget == 0
    assert simulate(instance, make_scheduler("rrh")).lookahead is None
    assert main(["compare", "--preset", "small", "--seed", "5", "--jobs", "20", "--schedulers", "rrh,oasis-lr",
                 "--param", "oasis-lr.lookahead_budget=0", "--no-progress"]) == 0
    decisions = result.lookahead.decisions
    footer = f"oasis-lr looked ahead at 0 of {decisions} arrival batches ({decisions} skipped over the budget of 0 job-slots"
    assert footer in capsys.readouterr().out
    assert main(["compare", "--preset", "small", "--seed", "5", "--jobs", "20", "--schedulers", "rrh,oasis-lr",
                 "--json", "--no-progress"]) == 0
    rows = {row["scheduler"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["rrh"]["lookahead"] is None and rows["oasis-lr"]["lookahead"]["decisions"] == decisions


def test_oasis_p_does_not_look_ahead_by_default_and_oasis_lr_does():
    assert make_scheduler("oasis-p").settings.lookahead is False
    assert make_scheduler("oasis-lr").settings.lookahead is True


def test_a_reused_scheduler_starts_from_its_own_settings():
    """A run may leave another policy set; the next run on the same object starts from the parameters."""
    scheduler = make_scheduler("oasis-lr")
    first, second = generate("small", 7, jobs=20), generate("small", 8, jobs=20)
    simulate(first, scheduler, restart_cost=0.1)
    again = simulate(second, scheduler, restart_cost=0.1)
    fresh = simulate(second, make_scheduler("oasis-lr"), restart_cost=0.1)
    assert again.utility == fresh.utility
    assert again.parameters["order"] == "density" and again.parameters["discount_rate"] == 0.02


def test_twins_leave_the_scheduler_alone_and_call_their_own_methods():
    """A twin's rollout changes nothing in the scheduler it was made from, and does not go through methods a
    bench wrapped on that object."""
    instance = generate("small", 9, jobs=20)
    scheduler = make_scheduler("oasis-lr")
    scheduler.set_restart_cost(0.1)
    scheduler.start(instance)
    arrivals = sorted(set(instance.arrivals.tolist()))
    scheduler.on_arrival(arrivals[0], [i for i in range(instance.n_jobs) if instance.arrivals[i] == arrivals[0]])
    calls = []
    scheduler.allocate = lambda *args: calls.append(args)
    state = scheduler.state
    before = (state.work_left.copy(), dict(state.deadlines), list(state.pending),
              dict(state.ledger.reservations), state.ledger.worker_used.copy())
    member = module.Member("urgency", module.policy(scheduler.settings.own, "urgency"), None)
    other = _twin_of(state, member)
    module.rollouts(scheduler.settings, scheduler.tables, other, arrivals[0], [member])
    assert not calls
    assert np.array_equal(before[0], state.work_left) and before[1] == state.deadlines
    assert before[2] == state.pending and before[3] == state.ledger.reservations
    assert np.array_equal(before[4], state.ledger.worker_used)
    assert state.policy.order == "density" and other.policy.order == "urgency"


@pytest.mark.parametrize("bad, field", [(dict(plan="late"), "plan"), (dict(lookahead="yes"), "lookahead"),
                                        (dict(lookahead_budget=-1), "lookahead_budget"),
                                        (dict(lookahead_budget=1.5), "lookahead_budget"),
                                        (dict(rollout_slots=0), "rollout_slots"),
                                        (dict(rollout_slots=2.5), "rollout_slots"),
                                        (dict(rollout_slots=10 ** 7), "rollout_slots")])
def test_bad_lookahead_parameters_are_named(bad, field):
    """By the registry and by the class itself (a direct Python caller), naming the parameter."""
    from primaldual.oasis.lr.scheduler import OasisLrScheduler

    with pytest.raises(InputError, match=field):
        make_scheduler("oasis-lr", **bad)
    with pytest.raises(InputError, match=field):
        OasisLrScheduler(**bad)


def test_fixed_plans_differ_only_under_restart_costs():
    instance = generate("small", 4, jobs=20)
    free = {plan: simulate(instance, make_scheduler("oasis-lr", lookahead=False, plan=plan)).utility
            for plan in ("best", "fresh", "stable")}
    assert len(set(free.values())) == 1
    costly = {}
    for plan in ("best", "fresh", "stable"):
        result = simulate(instance, make_scheduler("oasis-lr", lookahead=False, plan=plan), restart_cost=0.1)
        assert result.promises["broken"] == 0 and verify(instance, result.schedule).feasible
        costly[plan] = result.utility
    assert len(set(costly.values())) > 1  # on this instance the stable plan alone earns less


@pytest.mark.parametrize("order, expected", [("density", [0, 1, 2]), ("value", [1, 2, 0]),
                                             ("work", [0, 2, 1])])
def test_value_and_work_orders_by_hand(order, expected):
    """``value``: present value, largest first (30, 20, 10); ``work``: present value per remaining worker-slot
    (10, 3, 10: jobs 0 and 2 tie and the lower index goes first); ``density`` keeps the order it is given."""
    # The density order's output for three jobs: order 0, 1, 2 and their present values.
    values = {0: 10.0, 1: 30.0, 2: 20.0}
    ranked = rerank(order, [0, 1, 2], values, np.array([1.0, 10.0, 2.0]))
    assert ranked == expected and values == {0: 10.0, 1: 30.0, 2: 20.0}


def test_bench_trace_rows_carry_the_lookahead_counts():
    from primaldual.evaluation.bench.trace import ChildRun, _looked
    from primaldual.simulation.simulator import ReportedLookahead

    counts = ReportedLookahead(decisions=41, skipped=34, budget=150000, rollout_slots=336)
    row = ChildRun("oasis-lr", seconds=1.0, peak_mib=2.0, run_mib=1.0, utility=3.0, feasible=True, completed=4,
                   lookahead=counts)
    assert row.to_dict()["lookahead"] == {"decisions": 41, "skipped": 34, "budget": 150000, "rollout_slots": 336}
    assert "lookahead" not in ChildRun("rrh", seconds=1.0, peak_mib=2.0, run_mib=1.0, utility=3.0, feasible=True,
                                       completed=4).to_dict()
    assert _looked(counts) == "7 of 41 batches" and _looked(None) == "-"
    compared = ChildRun("rrh", seconds=1.0, peak_mib=2.0, run_mib=1.0, utility=3.0, feasible=True, completed=4,
                        compared=True, seconds_vs_rrh=1.0, peak_vs_rrh=1.0).to_dict()
    assert list(compared) == ["scheduler", "seconds", "peak_mib", "run_mib", "utility", "feasible", "completed",
                              "seconds_vs_rrh", "peak_vs_rrh"]


def test_bench_trace_weeks_are_the_busiest_windows_trace_busiest_finds(capsys):
    """``bench trace --weeks`` runs each VC's busiest week, the instance ``trace busiest`` + ``trace import
    --window`` give; ``--weeks`` with ``--quick`` is refused (exit 2, naming the flag), not ignored."""
    import json

    from primaldual.cli import main
    from primaldual.core.files import instance_to_dict
    from primaldual.evaluation.bench.trace import busiest_week
    from primaldual.traces import TraceOptions, import_trace

    assert main(["trace", "busiest", "philly:0/b436b2", "--json"]) == 0
    window = json.loads(capsys.readouterr().out)
    name, week = busiest_week("philly:0/b436b2")
    assert name == f"philly:0/b436b2 week {window['window']}"
    imported = import_trace("philly:0/b436b2", TraceOptions(window=(window["start_hour"], window["hours"])))
    assert instance_to_dict(week) == instance_to_dict(imported)
    assert main(["bench", "trace", "--weeks", "--quick", "--schedulers", "rrh"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--weeks" in err[0]


@pytest.mark.fast_tier(2)
@pytest.mark.parametrize("seed, cost, replan", [(5, 0.0, False), (11, 0.0, True), (9, 0.1, False), (3, 0.1, True)])
def test_rollouts_in_step_score_each_twin_as_its_run_alone(seed, cost, replan):
    """The shared prefixes of :func:`rollouts` are exact: at every arrival batch of a run, each policy's score
    is the float its twin earns rolled out alone (:func:`rollouts` of it alone, on its own copy)."""
    from primaldual.oasis.lr import rollout as module

    instance = generate("small", seed, jobs=16)
    scheduler = make_scheduler("oasis-lr", replan=replan)
    checked, original = [], module.rollouts

    def both(settings, tables, state, slot, members, name="twin"):
        alone = [original(settings, tables, _twin_of(state, member), slot, [member], name)[0] for member in members]
        in_step = original(settings, tables, state, slot, members, name)
        checked.append(len(members))
        assert in_step == alone
        return in_step

    module.rollouts = both
    try:
        simulate(instance, scheduler, restart_cost=cost)
    finally:
        module.rollouts = original
    assert checked and max(checked) >= 3


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=random_instances(), cost=st.sampled_from([0.0, 0.1, 0.3]))
def test_rollouts_in_step_are_the_twins_alone_on_random_instances(instance, cost):
    """The same equality on random instances (any cluster, demands and utilities), at every batch rolled out."""
    from primaldual.oasis.lr import rollout as module

    checked, original = [], module.rollouts

    def both(settings, tables, state, slot, members, name="twin"):
        alone = [original(settings, tables, _twin_of(state, member), slot, [member], name)[0] for member in members]
        in_step = original(settings, tables, state, slot, members, name)
        checked.append(in_step == alone)
        return in_step

    module.rollouts = both
    try:
        simulate(instance, make_scheduler("oasis-lr"), restart_cost=cost)
    finally:
        module.rollouts = original
    assert checked and all(checked)


def _twin_of(state, member):
    other = state.copy()
    other.set_policy(member.name, member.policy)
    other.guide = member.guide
    return other

