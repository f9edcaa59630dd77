"""OASiS-LR's lookahead: at each arrival batch, the execution policy chosen by a rollout of the known jobs.

The work-conserving execution (:mod:`primaldual.oasis.lr.execution`) has a few settings that no rule picks
well on every instance: the growth order (present value per resource-time, urgency, present value, or
present value per worker-slot, :mod:`primaldual.oasis.lr.order`) and, under restart costs, which plan of the free capacity a slot runs (the
better of the stable and fresh plans, or always the fresh one). Each one
wins on some instances and loses on others by several percent (``proofs/oasis-lr.md``, Lemma L); the spread
is packing, not a trend. So the scheduler looks ahead instead of fixing one. One more candidate, the
*re-plan* (:mod:`primaldual.oasis.lr.replan`, an option, ``replan=true``), follows the restart-cost
model's LP over the next slots: it changes how wide jobs run, which no order does, and is adopted only when it
wins by :data:`~primaldual.oasis.lr.replan.REPLAN_MARGIN`.

**The rule** (policy rollout, Bertsekas' sense). When jobs arrive in slot ``t``, after the price floor is
learned and before the pending jobs are offered, the scheduler makes one *twin* of its state per policy of
:data:`POLICIES` (:meth:`primaldual.oasis.lr.state.LrState.copy`: the ledger, remaining work, promises, pending
jobs, last placements), sets the policy on it, and lets the twin run: the offers of slot ``t``, then ``allocate`` slot after slot to the horizon or until
no known job is left, with **no further arrivals** (the scheduler knows nothing about them). A twin's score is
the utility its known jobs would earn, computed as the simulator computes it (completion when the
fractional remaining work reaches 0, restart losses charged by the scheduler's own account); the twin records nothing
(:class:`primaldual.oasis.lr.state.NoRecord`). The scheduler
adopts the policy with the highest score (ties: the earlier policy; the scheduler's own settings come first)
and keeps it until the next arrival batch.

**What it guarantees.** Without further arrivals the twin's run *is* the scheduler's run: the same
deterministic code from the same state. So on an instance whose jobs all arrive in one slot, the run earns
exactly the best of the fixed policies (a test checks it, ``tests/oasis/test_oasis_lr_rollout.py``), and at
each arrival batch the adopted policy is the best of them for the jobs known then. Future arrivals can make
the choice wrong; nothing more is claimed. Promises are untouched: a policy only changes how jobs grow into
the capacity the ledger's blocks leave free (blocks run first), and each twin runs the engine's promise
check too.

**A replay, then a forecast** (issue 62). A twin replays the run exactly for at most ``rollout_slots`` slots
past its batch (:data:`ROLLOUT_SLOTS`); where that reaches the horizon the twin *is* the run, re-offers of
the pending tier included, and the guarantee above holds. Where it is cut short, the replay leaves the pending
tier's re-offers to the run (a third to a half of a replayed slot's time) and each policy's score adds a
**fluid forecast** of the jobs still live at the cut (:func:`primaldual.oasis.lr.forecast.tail_value`: blocks
first, then the policy's growth order, jobs as rates sharing the pooled cluster, advanced from completion to
completion). A replay of the first slots decides what a policy does now; the fluid values what it leaves
behind, which is where the policies' scores part (without it a cut rollout scores only the jobs done by the
cut, and a short one ranks the policies badly: ``docs/measurements.md``, "The forecast"). On the project's
design inputs a replay of 32 slots and the fluid earned what the replay to the horizon did, for a third to a
tenth of its time. Nothing is claimed past the replay: the fluid ignores the servers' fragmentation, re-ranking and
later admissions.

**Budget.** A batch is estimated at ``live jobs x (slots replayed + 1) x policies`` *job-slots*
(:func:`rollout_work`; the ``+ 1`` is the fluid's at most one event per live job; machine-independent, so a
schedule does not depend on the machine's speed); a batch over ``lookahead_budget`` job-slots
(:data:`LOOKAHEAD_BUDGET`) keeps the current policy and is counted as ``skipped``. The measured coverage and
cost are in ``docs/measurements.md`` ("The forecast").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from primaldual.oasis.ledger import WORK_EPSILON
from primaldual.oasis.lr.admission import admit_job, offer_pending
from primaldual.oasis.lr.forecast import tail_value
from primaldual.oasis.lr.execution import finish_slot, policy_plan, prepare_slot, same_plan
from primaldual.oasis.lr.replan import REPLAN_CELLS, REPLAN_MARGIN, Guide, replan_cells, replan_guide
from primaldual.oasis.lr.settings import PLAN_ORDER, SETTINGS, LrSettings, Policy  # noqa: F401 - re-exported
from primaldual.oasis.lr.state import JobTables, LookaheadCounts, LrState, NoRecord

#: The execution policies a rollout compares, by name: the settings each one changes (the choice of this set
#: is recorded in ``proofs/oasis-lr.md``, Lemma L). ``own`` is the scheduler's parameters as given; the others
#: change one setting from them.
POLICIES: dict[str, dict[str, Any]] = {
    "own": {},
    "urgency": {"order": "urgency"},
    "value": {"order": "value"},
    "work": {"order": "work"},
    "fresh": {"plan": "fresh"},  # restart costs only: always the first-fit plan, as RRH
}

#: The re-plan policy (:mod:`primaldual.oasis.lr.replan`): compared with :data:`POLICIES` where ``replan`` is on
#: and the batch's guide was solved; it follows the guide, so it is no fixed policy.
REPLAN = "replan"

#: Every policy a lookahead may choose, by name (the counts of :class:`LookaheadCounts`).
CHOICES = (*POLICIES, REPLAN)


def policy(own: Policy, name: str) -> Policy:
    """The policy ``name`` of :data:`CHOICES`, relative to the scheduler's own."""
    return own.changed({"order": PLAN_ORDER} if name == REPLAN else POLICIES[name])


def candidate_policies(own: Policy, restart_cost: float) -> list[str]:
    """The policies that differ from each other here: the plan matters only under restart costs, and a
    policy equal to the scheduler's own settings is the same as ``own``."""
    seen, out = [], []
    for name, change in POLICIES.items():
        settings = own.changed(change)
        if restart_cost == 0:
            settings = settings.changed({"plan": "best"})
        if settings not in seen:
            seen.append(settings)
            out.append(name)
    return out


#: The default ``lookahead_budget``, in job-slots (:func:`rollout_work`).
LOOKAHEAD_BUDGET = 150_000
#: The default ``rollout_slots``: the slots a twin replays exactly before the fluid forecast takes over. On the
#: design inputs (three Philly VCs of seed 1, their busiest weeks and whole) 32 earned what the replay to the
#: horizon (or, on whole VCs, the 336-slot replay at a budget of 10^6) earned on all six, 8 and 16 lost 1-3% on
#: whole VCs (``docs/measurements.md``, "The forecast").
ROLLOUT_SLOTS = 32


def rollout_end(settings: LrSettings, horizon: int, slot: int) -> int:
    """The slot before which a rollout from ``slot`` stops: the horizon, or ``rollout_slots`` past ``slot``."""
    return min(horizon, slot + settings.rollout_slots)


def rollout_work(live: int, slots: int, policies: int) -> int:
    """``live x (slots + 1) x policies``: each live job per slot replayed and per fluid event, per policy."""
    return live * (slots + 1) * policies


def choose_policy(settings: LrSettings, tables: JobTables, state: LrState, slot: int,
                  counts: LookaheadCounts, name: str = "oasis-lr") -> None:
    """At an arrival batch in ``slot``: roll out every candidate policy and set the best on ``state``
    (module docstring); ``counts`` records the decision, ``name`` names the scheduler in a broken promise."""
    policies = candidate_policies(settings.own, settings.restart_cost)
    instance = tables.instance
    live = len(state.live(instance, slot))
    if len(policies) < 2 or live == 0:
        return
    counts.decisions += 1
    slots = rollout_end(settings, instance.horizon, slot) - slot
    if rollout_work(live, slots, len(policies)) > settings.lookahead_budget:
        counts.skipped += 1
        return
    guide = replan(settings, tables, state, slot, counts)
    candidates = policies + ([REPLAN] if guide is not None else [])
    members = [Member(c, policy(settings.own, c), guide if c == REPLAN else None) for c in candidates]
    scores = rollouts(settings, tables, state.copy(), slot, members, name)
    best, best_score = None, -math.inf
    for candidate, score in zip(candidates, scores):
        # Within rounding, the earlier policy; the re-plan only by a margin (REPLAN_MARGIN says why).
        margin = abs(best_score) * REPLAN_MARGIN if candidate == REPLAN else 0.0
        if score > best_score + margin + 1e-9:
            best, best_score = candidate, score
    state.set_policy(best, policy(settings.own, best))
    state.guide = guide if best == REPLAN else None
    counts.chosen[best] += 1


def replan(settings: LrSettings, tables: JobTables, state: LrState, slot: int,
           counts: LookaheadCounts) -> Guide | None:
    """The batch's re-plan guide where ``replan`` is on and the instance within :data:`REPLAN_CELLS`, counted."""
    if not settings.replan:
        return None
    guide = None
    if replan_cells(tables.instance, settings.replan_horizon) <= REPLAN_CELLS:
        guide = replan_guide(tables, state, slot, settings.restart_cost, settings.replan_horizon,
                             settings.replan_iterations)
    if guide is None:
        counts.replan_skipped += 1
    else:
        counts.replanned += 1
    return guide


class Member(NamedTuple):
    """A policy a rollout runs: its name, its settings, and the re-plan's guide (None for a fixed policy)."""

    name: str
    policy: Policy
    guide: object | None


def rollouts(settings: LrSettings, tables: JobTables, state: LrState, slot: int, members: list[Member],
             name: str = "twin") -> list[float]:
    """Run the twin ``state`` from the offers of ``slot`` without arrivals, to the horizon or for ``rollout_slots``
    slots (:func:`rollout_end`), under each of ``members``' policies; per policy, the utility its known jobs earn
    by then (the simulator's completion rule). ``name`` names the scheduler in a broken promise.

    **Shared prefixes.** A policy reads the state only to plan a slot's growth; the offers and the rest of a
    slot do not depend on it (:func:`primaldual.oasis.lr.execution.prepare_slot`). So twins whose plans have
    been the same so far (the same placements, and the jobs that may complete in the same order) have the same
    state: they are run as one *group* on one state, the slot prepared
    once and planned under each member's policy, and a group splits (the state copied) only where the plans
    differ. Each twin's run is the run it would have alone, step for step, so its score is the same float.
    On a Philly week 45% of the other policies' rolled-out slots are shared this way (``docs/measurements.md``,
    "OASiS-LR's slot compiled")."""
    end = rollout_end(settings, tables.instance.horizon, slot)
    # To the horizon the twin is the run, re-offers included (Lemma L); cut short it is a forecast, and the
    # pending tier's re-offers (a third to a half of a rollout's time) are left to the run.
    reoffer = end == tables.instance.horizon
    run = _Rollouts(settings, tables, members, slot, name, NoRecord(), [0.0] * len(members), reoffer)
    _offer(run, state, slot)
    # Later slots re-offer the pending tier, as the real run does outside arrival slots.
    state.arrival_slots = frozenset(a for a in state.arrival_slots if a <= slot)
    groups = [(state, list(range(len(members))), 0.0)]
    for s in range(slot, end):
        groups = [split for group in groups for split in _step(run, group, s)]
        if not groups:
            break
    for shared, group, score in groups:
        for m in group:
            run.scores[m] = score
            shared.set_policy(members[m].name, members[m].policy)
            shared.guide = members[m].guide
            run.scores[m] += tail_value(settings, tables, shared, end)
    return run.scores


@dataclass
class _Rollouts:
    """A batch's rollouts under way: what every step reads, and each policy's score once its group stops."""

    settings: LrSettings
    tables: JobTables
    members: list[Member]
    batch: int
    name: str
    record: NoRecord
    scores: list[float]
    #: Whether later slots re-offer the pending tier, as the run does (only for a rollout to the horizon).
    reoffer: bool


def _offer(run: _Rollouts, state: LrState, slot: int) -> None:
    offer_pending(run.settings, run.tables, state, slot,
                  lambda s, i: admit_job(run.settings, run.tables, state, run.record, s, i))


def _reoffer(run: _Rollouts, state: LrState):
    """What a rolled-out slot outside the batch's offers: the pending tier as the run does, or nothing."""
    return (lambda s: _offer(run, state, s)) if run.reoffer else (lambda s: None)


def _step(run: _Rollouts, group: tuple[LrState, list[int], float], slot: int) -> list[tuple]:
    """One slot of a group ``(state, members, score)``: the groups it becomes (none once no job is left, its
    members' scores then set in ``run.scores``)."""
    shared, members, score = group
    settings, tables, instance = run.settings, run.tables, run.tables.instance
    if not shared.live(instance, run.batch):  # no arrivals after the batch
        for m in members:
            run.scores[m] = score
        return []
    # What the simulator would report as remaining work: the ceiling of the exact figure.
    blocks, free = prepare_slot(settings, tables, shared, slot, np.ceil(shared.work_left - WORK_EPSILON),
                                _reoffer(run, shared), run.name)
    plans: list[tuple[dict, list[int], list[int]]] = []
    for m in members:
        shared.set_policy(run.members[m].name, run.members[m].policy)
        shared.guide = run.members[m].guide
        out = policy_plan(settings, tables, shared, slot, blocks, free)
        # Jobs complete in the plan's order, and that order reaches the score's sum and the ledger's releases
        # (floats): members share a state only if the jobs that may complete come in the same order too.
        ending = [i for i, a in out.items() if float(a.workers.sum()) >= shared.work_left[i] - 1e-9]
        same = next((p for p in plans if p[2] == ending and same_plan(p[0], out)), None)
        if same is None:
            plans.append((out, [m], ending))
        else:
            same[1].append(m)
    states = [shared] + [shared.copy() for _ in plans[1:]]  # before any plan is applied
    out_groups = []
    for twin_state, (out, group, _) in zip(states, plans):
        finish_slot(settings, tables, twin_state, slot, out)
        finished = [i for i in out if i not in twin_state.done and twin_state.work_left[i] <= 1e-9]
        gained = score
        for i in finished:  # one at a time, in the plan's order: the same float as a twin run alone
            gained += float(instance.jobs[i].utility(slot - instance.jobs[i].arrival))
        if finished:
            twin_state.complete(finished)
        out_groups.append((twin_state, group, gained))
    return out_groups


def lookahead_report(counts: LookaheadCounts, settings: LrSettings) -> dict[str, Any]:
    """The ``lookahead`` entry of the scheduler's report."""
    return {"decisions": counts.decisions, "skipped": counts.skipped,
            "chosen": {k: v for k, v in counts.chosen.items() if v}, "budget": settings.lookahead_budget,
            "rollout_slots": settings.rollout_slots,
            **({"replanned": counts.replanned, "replan_skipped": counts.replan_skipped, "replan_cells": REPLAN_CELLS}
               if settings.replan else {})}


__all__ = ["CHOICES", "LOOKAHEAD_BUDGET", "POLICIES", "ROLLOUT_SLOTS", "REPLAN", "SETTINGS", "candidate_policies", "choose_policy", "lookahead_report", "replan",
           "policy", "rollout_end", "rollout_work", "rollouts", "Member"]
