"""OASiS-LR's lookahead: at each arrival batch, the execution policy chosen by a rollout of the known jobs.

The work-conserving execution (:mod:`primaldual.oasis.lr.execution`) has a few settings that no rule picks
well on every instance: the growth order (present value per resource-time, urgency, present value, or
present value per worker-slot, :mod:`primaldual.oasis.lr.order`) and, under restart costs, which plan of the free capacity a slot runs (the
better of the stable and fresh plans, or always the fresh one). Measured
on design seeds, each one wins on some instances and loses on others by several percent; the spread is
packing, not a trend. So the scheduler looks ahead instead of fixing one.

**The rule** (policy rollout, Bertsekas' sense). When jobs arrive in slot ``t``, after the price floor is
learned and before the pending jobs are offered, the scheduler makes one *twin* of its state per policy of
:data:`POLICIES` (the ledger, remaining work, promises, pending jobs, last placements), sets the policy on
it, and lets the twin run: the offers of slot ``t``, then ``allocate`` slot after slot to the horizon or until
no known job is left, with **no further arrivals** (the scheduler knows nothing about them). A twin's score is
the utility its known jobs would earn, computed as the simulator computes it (completion when the
fractional remaining work reaches 0, restart losses charged by the scheduler's own account). The scheduler
adopts the policy with the highest score (ties: the earlier policy; the scheduler's own settings come first)
and keeps it until the next arrival batch.

**What it guarantees.** Without further arrivals the twin's run *is* the scheduler's run: the same
deterministic code from the same state. So on an instance whose jobs all arrive in one slot, the run earns
exactly the best of the fixed policies (a test checks it, ``tests/oasis/test_oasis_lr_rollout.py``), and at
each arrival batch the adopted policy is the best of them for the jobs known then. Future arrivals can make
the choice wrong; nothing more is claimed. Promises are untouched: a policy only changes how jobs grow into
the capacity the ledger's blocks leave free (blocks run first), and each twin runs the engine's promise
check too.

**Budget.** A rollout costs about ``live jobs x slots left x policies x servers`` (each simulated slot
places every live job on every server). Above ``lookahead_budget`` (a parameter, 20000) the batch keeps the
current policy and is counted as ``skipped``. 20-job ``small`` instances (8 servers, 20 slots) always fit; on
``paper`` (100 servers, 200 slots, dozens of live jobs) nearly every batch is skipped (all of them on seeds
20001-20002), so there ``oasis-lr`` is essentially its policy without lookahead and the runtime target (at most twice OASiS's) holds.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from primaldual.oasis.ledger import WORK_EPSILON
from primaldual.simulation.scheduler import SlotState

#: The execution policies a rollout compares, by name: the settings each one changes. ``own`` is the
#: scheduler's parameters as given; the others change one setting from them.
#: Chosen on design seeds 20-job ``small`` 20040-20199 at F = 0.1: with ``value`` and ``work`` the rollout earned
#: 1.038x RRH on 20040-20119 against 1.016x with ``own``, ``urgency`` and ``fresh`` only; also trying
#: ``discount_rate`` 0 or 0.1, ``plan = "stable"``, ``delta`` 0.1 or 0.4, no immediate blocks, re-offers every slot
#: or a shortest-remaining-work order moved it by 0.2% or less, so they are left out.
POLICIES: dict[str, dict[str, Any]] = {
    "own": {},
    "urgency": {"order": "urgency"},
    "value": {"order": "value"},
    "work": {"order": "work"},
    "fresh": {"plan": "fresh"},  # restart costs only: always the first-fit plan, as RRH
}

#: Settings a policy may change (the scheduler's values of them are its ``own_settings``).
SETTINGS = ("order", "discount_rate", "plan")  # discount_rate: for policies a user adds

#: The state a twin needs its own copy of; everything else (the instance, constants, job tables) is shared.
_STATE = ("pending", "deadlines", "offered", "done", "previous", "work_left", "remaining", "repacks")


class _NoRecord:
    """The twins' dual record: their offers and admissions are hypothetical, so nothing is recorded."""

    def __getattr__(self, name):
        return _ignore


def _ignore(*args, **kwargs) -> None:
    return None


class RolloutSelection:
    """Mixed into :class:`primaldual.oasis.lr.scheduler.OasisLrScheduler`: ``choose_policy(slot)`` (module docstring).
    Expects ``lookahead``, ``lookahead_budget``, ``own_settings`` (the parameters' values of :data:`SETTINGS`)
    and the execution's state."""

    def start_lookahead(self) -> None:
        self.set_policy("own")  # a reused scheduler starts from its own settings again
        self.lookahead_counts = {"decisions": 0, "skipped": 0, "chosen": {name: 0 for name in POLICIES}}

    def candidate_policies(self) -> list[str]:
        """The policies that differ from each other here: the plan matters only under restart costs, and a
        policy equal to the scheduler's own settings is the same as ``own``."""
        seen, out = [], []
        for name, change in POLICIES.items():
            settings = {**self.own_settings, **change}
            if self.restart_cost == 0:
                settings["plan"] = "best"
            if settings not in seen:
                seen.append(settings)
                out.append(name)
        return out

    def choose_policy(self, slot: int) -> None:
        policies = self.candidate_policies()
        live = len(self._live(slot))
        if len(policies) < 2 or live == 0:
            return
        self.lookahead_counts["decisions"] += 1
        cluster = self.instance.cluster
        servers = cluster.n_worker_servers + cluster.n_ps_servers
        if live * (self.instance.horizon - slot) * len(policies) * servers > self.lookahead_budget:
            self.lookahead_counts["skipped"] += 1
            return
        best, best_score = None, -math.inf
        for name in policies:
            score = self.twin(name).rollout(slot)
            if score > best_score + 1e-9:  # within rounding, the earlier policy
                best, best_score = name, score
        self.set_policy(best)
        self.lookahead_counts["chosen"][best] += 1

    def set_policy(self, name: str) -> None:
        for setting, value in {**self.own_settings, **POLICIES[name]}.items():
            setattr(self, setting, value)
        self.policy = name
        self._present = None  # present values depend on the discount

    def twin(self, policy: str) -> "RolloutSelection":
        """A copy of this scheduler's state that can run on without touching it, with ``policy`` set."""
        other = object.__new__(type(self))
        # Only data: a bench may have wrapped this object's methods, and a twin must call its own.
        other.__dict__.update({k: v for k, v in vars(self).items() if not callable(v)})
        for name in _STATE:
            setattr(other, name, copy.deepcopy(getattr(self, name)))
        other.ledger = self.ledger.copy()
        cache = getattr(self, "_price_cache", None)
        if cache is not None and cache.ledger is self.ledger:
            memo = {id(self.ledger): other.ledger, id(self.instance): self.instance,
                    id(self.constants): self.constants, id(cache.floor): cache.floor}
            other._price_cache = copy.deepcopy(cache, memo)
        other.dual = _NoRecord()
        other.learner = None  # no arrivals in a rollout, so nothing to learn
        other.lookahead = False
        other.set_policy(policy)
        return other

    def rollout(self, slot: int) -> float:
        """Run this twin from the offers of ``slot`` to the horizon without arrivals; the utility its known
        jobs earn (the simulator's completion rule)."""
        instance = self.instance
        self._offer(slot)
        self._arrivals = {a for a in self._arrivals if a <= slot}  # later slots re-offer as the real run would
        arrived = instance.arrivals <= slot
        score = 0.0
        for s in range(slot, instance.horizon):
            live = self._live(slot)  # no arrivals after slot
            if not live:
                break
            state = SlotState(s, np.ceil(self.work_left - WORK_EPSILON), arrived, np.zeros(instance.n_jobs, bool),
                              tuple(live), instance.horizon - s)
            out = self.allocate(s, state)
            finished = [i for i in out if i not in self.done and self.work_left[i] <= 1e-9]
            for i in finished:
                score += float(instance.jobs[i].utility(s - instance.jobs[i].arrival))
            if finished:
                self.on_completion(s, finished)
        return score

    def _live(self, slot: int) -> list[int]:
        """Jobs arrived by ``slot``, not completed, with work left."""
        return [i for i in np.flatnonzero((self.instance.arrivals <= slot) & (self.work_left > WORK_EPSILON)).tolist()
                if i not in self.done]

    def lookahead_report(self) -> dict[str, Any]:
        counts = self.lookahead_counts
        return {"decisions": counts["decisions"], "skipped": counts["skipped"],
                "chosen": {k: v for k, v in counts["chosen"].items() if v}, "budget": self.lookahead_budget}


__all__ = ["POLICIES", "SETTINGS", "RolloutSelection"]
