"""OASiS-LR and OASiS-P: primal-dual admission with learned prices, a reservation ledger and promises.

Both keep the paper's dual subroutine (:mod:`primaldual.dual.subroutine`) and its exponential prices
(:mod:`primaldual.oasis.prices`, per pool and per resource), and change what an admission commits to:

1. **Prices.** A cell's price is ``L^r (U^r/L^r)^(reserved / c) + floor^r``: the exponential of the amount the
   ledger holds, plus the learned shadow-price floor (:mod:`primaldual.oasis.learned_floor`, duals of a pooled
   knapsack LP over the last ``window`` slots' arrivals, updated at every arrival batch).
2. **Admission with a promise.** A job is offered the subroutine for its remaining work from the current slot
   (utility still counted from its arrival); jobs offered in the same slot go densest first (present value
   per resource-time), since they have no order of arrival between them. If ``mu > 0`` it is admitted with
   a **deadline**: the latest slot ``d`` with ``f_i(d - a_i) >= (1 - delta) f_i(c - a_i)``, where ``c`` is the
   later of the plan's completion and the end of the earliest block on an empty cluster (the subroutine plans
   elastic counts without restart costs; a block is one placement and pays one restart), and a
   **reservation** in the ledger (:mod:`primaldual.oasis.ledger`): one fixed placement over a block of consecutive
   slots, as late as possible, ending by ``d``, long enough to cover the remaining work with one restart.
   The deadline is the promise.
3. **Pending tier.** A job with ``mu <= 0`` (or no block that fits) is not dropped: it runs best-effort in
   free capacity and is re-offered every slot, until it is admitted or can no longer finish.
4. **Work-conserving execution** (:mod:`primaldual.oasis.lr.execution`). Each slot runs the reservations
   that cover it (in a job's last slot only the workers that finish it), then admitted jobs outside their
   block and pending jobs grow into the free capacity in order of present value per resource-time; under
   restart costs the slot runs the better of a stable plan (placements kept) and a fresh one. Reservations
   are trimmed by the work done at the end of every slot (a block starts later, or ends earlier once
   running), so the next slot's arrivals see the room.
5. **Lookahead** (OASiS-LR only, :mod:`primaldual.oasis.lr.rollout`). At each arrival batch the execution policy
   (the order of 4, and under restart costs the plan) is chosen by a rollout of the known jobs: one copy of the
   state per policy runs to the horizon without further arrivals, and the best is kept until the next batch.

**OASiS-LR** (``oasis-lr``) re-packs: when a newcomer with ``mu > 0`` finds no block, every reservation that has
not started is re-placed, latest deadline first, each as late as possible before its own deadline, with the
newcomer among them; if any fails the old ledger is kept. Moves cost nothing (a block that has not started
restarts anyway and its budget includes that restart). Two optional rules (off by default: no gain beyond the
spread between seeds, at a cost in time): a promise's block must start after the slot of its offer
(:mod:`primaldual.oasis.lr.admission`), and free capacity goes first to the jobs with the most present value
plus one slot's delay cost per resource-time (:mod:`primaldual.oasis.lr.order`).

**OASiS-P** (``oasis-p``) never moves a reservation (only releases its slots) and admits only if the block's own
payoff at the admission prices is ``>= (1 - delta) mu_i``; this is what its worst-case bound
``OPT <= D_0 + D_floor + D_unplaced + beta ALG`` needs (``proofs/oasis-lr.md``). The terms are reported with
every run.

**Promises** are invariants: a promise is broken only if a block stops covering its job's remaining work by
the deadline, which the engine checks every slot (``PromiseBroken``); the simulator counts kept promises
from its own account (``promised_deadlines``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from primaldual.simulation.placement import can_finish, dominant_share_unit, widest
from primaldual.dual.subroutine import best_schedule, unit_prices
from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.oasis.learned_floor import FloorLearner, zero_floor
from primaldual.oasis.ledger import (
    WORK_EPSILON,
    Ledger,
    PriceCache,
    PromiseBroken,
    Reservation,
    block_length,
    check_number as _check_number,
    latest_deadline,
)
from primaldual.oasis.lr.admission import check_immediate_blocks, first_block_slot
from primaldual.oasis.lr.execution import WorkConservingExecution, check_plan
from primaldual.oasis.lr.order import GrowthOrder, check_order
from primaldual.oasis.lr.dual_record import DualRecord, certificate_terms
from primaldual.oasis.lr.rollout import SETTINGS, RolloutSelection
from primaldual.oasis.prices import PRICE_RULES, compute_constants, standalone_utilities
from primaldual.simulation.scheduler import Allocation, OnlineScheduler


class OasisLrScheduler(RolloutSelection, GrowthOrder, WorkConservingExecution, OnlineScheduler):
    """OASiS-LR (module docstring). Parameters: ``delta`` (deadline slack, 0.2), ``window`` (slots of arrivals
    the floor learns from, 30), ``eta`` (0.05: the reserve price for promises; with the ``density`` rule
    ``L^r`` is the least value density over ``4 eta``, 5x the least density at 0.05: a job whose utility does not
    beat its work at that price, summed over the resources it demands, never gets a promise, even on an empty
    cluster, and runs best-effort in the pending tier; larger eta, more promises and, on 20-job ``small``, less
    utility against RRH: chosen on seeds 2000-2199, disjoint from every reported set, among 0.25, 0.1, 0.05,
    0.02 and ~0, see "Choosing eta" in proofs/oasis-lr.md), ``rule`` (``density``: how the price constants
    are set, :mod:`primaldual.oasis.constants`),
    ``learned_floor`` (True), ``pending`` (True: the pending tier), ``repack`` (True for ``oasis-lr``),
    ``late`` (True: blocks as late as possible; False: as early), ``discount_rate`` (0.02: the execution
    order's risk discount, RRH's), ``reoffer_every`` (3: slots between re-offers of a pending job whose work
    has not fallen by a quarter; 1 re-offers every slot at about 1.5x the runtime on ``paper``),
    ``immediate_blocks`` (True: whether a promise may rest on a block that must start in the slot of the offer;
    :mod:`primaldual.oasis.lr.admission`), ``order`` (``density``; or ``urgency``, ``value``, ``work``: the execution
    order, :mod:`primaldual.oasis.lr.order`), ``plan`` (``best``; or ``fresh``/``stable``: which plan of the free
    capacity a slot runs under restart costs, :mod:`primaldual.oasis.lr.execution`), ``lookahead`` (True for
    ``oasis-lr``, False for ``oasis-p``: choose the execution policy at each arrival batch by a rollout of the
    known jobs, :mod:`primaldual.oasis.lr.rollout`; the three settings before are then where it starts),
    ``lookahead_budget`` (20000: the largest live jobs x slots left x policies x servers for which a batch is rolled out)."""

    name = "oasis-lr"
    provable = False
    # 2: the default eta went from 0.25 to 0.05; 3: a pending job counts as finishable only at the width it can
    # have (baselines.placement.widest), not N_i; 4: the execution policy is chosen by a rollout (lookahead).
    # Earlier records are recomputed (oasis-p inherits 1-3 and stays at 3).
    revision = 4

    def __init__(self, delta: float = 0.2, window: int = 30, eta: float = 0.05, rule: str = "density",
                 learned_floor: bool = True, pending: bool = True, repack: bool | None = None,
                 late: bool = True, discount_rate: float = 0.02, reoffer_every: int = 3,
                 immediate_blocks: bool | None = None, order: str | None = None, plan: str = "best",
                 lookahead: bool | None = None, lookahead_budget: int = 20000):
        self.late = bool(late)
        self.immediate_blocks = check_immediate_blocks(immediate_blocks)
        self.order = check_order(order)
        self.plan = check_plan(plan)
        self.lookahead_budget = _check_number("lookahead_budget", lookahead_budget, 0, 10**12, integer=True)
        self.reoffer_every = _check_number("reoffer_every", reoffer_every, 1, 10**6, integer=True)
        self.discount_rate = _check_number("discount_rate", discount_rate, 0.0, 1e6)
        self.delta = _check_number("delta", delta, 0.0, 0.99)
        self.window = _check_number("window", window, 1, 10**6, integer=True)
        self.eta = _check_number("eta", eta, 1e-9, 1e9)
        if rule not in PRICE_RULES:
            raise InputError(f"rule: must be one of {', '.join(PRICE_RULES)}, got {rule!r}")
        self.rule = rule
        for label, flag in (("learned_floor", learned_floor), ("pending", pending)):
            if not isinstance(flag, bool):
                raise InputError(f"{label}: must be true or false, got {flag!r}")
        self.learned_floor, self.pending_tier = learned_floor, pending
        if lookahead is not None and not isinstance(lookahead, bool):
            raise InputError(f"lookahead: must be true or false, got {lookahead!r}")
        self.lookahead = (not self.provable) if lookahead is None else lookahead
        self.repack = (not self.provable) if repack is None else bool(repack)
        self.restart_cost = 0.0
        self.own_settings = {name: getattr(self, name) for name in SETTINGS}

    def set_restart_cost(self, cost: float) -> None:
        self.restart_cost = float(cost)

    def parameters(self) -> dict[str, Any]:
        out = {"delta": self.delta, "window": self.window, "eta": self.eta, "rule": self.rule,
               "late": self.late, "reoffer_every": self.reoffer_every,
               "learned_floor": self.learned_floor, "pending": self.pending_tier, "repack": self.repack,
               "restart_cost": self.restart_cost, "immediate_blocks": self.immediate_blocks,
               "lookahead": self.lookahead, "lookahead_budget": self.lookahead_budget,
               **self.own_settings}  # not the policy a lookahead has set for now
        if hasattr(self, "constants"):
            out["constants"] = self.constants.to_dict()
        return out

    # ------------------------------------------------------------------------------------------ set-up

    def start(self, instance: Instance) -> None:
        super().start(instance)
        cluster = instance.cluster
        self.constants = compute_constants(instance, eta=self.eta, rule=self.rule)
        self.standalone = standalone_utilities(instance)
        self.ledger = Ledger(instance)
        self.fastest_workers = widest(instance)
        # Per-run caches: a scheduler may be reused on another instance (primaldual/simulation/scheduler.py).
        self._present = None
        self._arrivals = set(int(a) for a in instance.arrivals)
        self.learner = FloorLearner(instance, self.standalone, self.window)
        self.floor = zero_floor(cluster.n_resources)
        self.chunks = np.array([job.chunks for job in instance.jobs], dtype=np.int64)
        self.remaining = np.array(instance.work_units, dtype=np.int64)
        self.work_left = self.remaining.astype(float)  # exact, fractional under restart costs
        worker_total, ps_total = cluster.worker_capacity.sum(axis=0), cluster.ps_capacity.sum(axis=0)
        self.unit = np.array([dominant_share_unit(job, worker_total, ps_total) for job in instance.jobs])
        self.pending: list[int] = []
        self.deadlines: dict[int, int] = {}
        self.offered: dict[int, tuple[int, int]] = {}  # job -> (slot, remaining work) of its last offer
        self.done: set[int] = set()
        self.previous: dict[int, tuple[int, Allocation]] = {}
        self.dual = DualRecord(instance, self.constants)
        self.repacks = [0, 0]  # tried, succeeded
        self.start_lookahead()

    def promised_deadlines(self) -> dict[int, int]:
        return dict(self.deadlines)

    # --------------------------------------------------------------------------------------- prices

    def prices(self, slot: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Cell prices ``(T, H, R)`` and ``(T, K, R)``: exponential of the reserved amounts + floor, current from
        ``slot`` on (:class:`primaldual.oasis.ledger.PriceCache`)."""
        cache = getattr(self, "_price_cache", None)
        if cache is None or not cache.valid(self.ledger, slot):
            cache = self._price_cache = PriceCache(self.ledger, self.constants, self.floor, slot)
        return cache.update(slot, self.floor)[0]

    def free(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """The ledger's free amounts, current from ``slot`` on (cached with the prices)."""
        self.prices(slot)
        return self._price_cache.free

    # ------------------------------------------------------------------------------------------ offers

    def on_arrival(self, slot: int, jobs: list[int]) -> None:
        self.pending.extend(jobs)
        if self.learned_floor:
            self.floor = self.learner.update(slot)
            self.dual.see_floor(self.floor)
        if self.lookahead:
            self.choose_policy(slot)  # before the offers: the twins make them under their own policy
        self._offer(slot)

    def _offer(self, slot: int) -> None:
        """Offer pending jobs, densest first, the subroutine at the current prices: a new job at once, a
        job offered before once ``reoffer_every`` slots have passed or its remaining work fell by a quarter
        (between those, its payoff moves little: prices only fall when reservations are released)."""
        still = []
        if len(self.pending) > 1:
            # Densest first: jobs offered in one slot have no order of arrival between them, and offering by
            # index let a sparse job's block take the slots a denser job of the same batch needed.
            density = self.present_values(slot, self.pending)[1]
            self.pending = [self.pending[m] for m in sorted(range(len(self.pending)),
                                                            key=lambda m: (-density[m], self.pending[m]))]
        for i in self.pending:
            if not can_finish(slot, int(self.remaining[i]), int(self.fastest_workers[i]), self.instance.horizon):
                continue  # can no longer finish: it earns nothing, so it stops competing
            last = self.offered.get(i)
            due = last is None or slot - last[0] >= self.reoffer_every or self.remaining[i] <= 0.75 * last[1]
            if not due or not self._admit(slot, i):
                still.append(i)
            if due:
                self.offered[i] = (slot, int(self.remaining[i]))
        self.pending = still

    def _admit(self, slot: int, i: int) -> bool:
        worker_prices, ps_prices = self.prices(slot)
        worker_free, ps_free = self.free(slot)
        remaining = int(self.remaining[i])
        # The cost floor skips or cuts short the search of a job that cannot pay (mu = 0 exactly): without it,
        # such a job searched to the horizon, which made offers several times slower than OASiS's on paper.
        result = best_schedule(self.instance, i, worker_prices, ps_prices, worker_free, ps_free,
                               work=remaining, start=slot, cost_floor=self._price_cache.least_prices(), plan=False)
        self.dual.see_offer(i, result.mu)
        if not result.admit:
            return False
        job = self.instance.jobs[i]
        # The subroutine plans elastic per-slot counts without restart costs; a block is one fixed placement
        # that pays one restart, so it cannot end before the earliest block on an empty cluster. The promise
        # keeps (1 - delta) of the later of the two completions: from the plan's alone, a fast-decaying job's
        # deadline left no room for any block when F > 0.
        workers = min(int(self.fastest_workers[i]), remaining)
        if workers < 1:
            self.dual.see_unplaced(i)
            return False
        # The earliest block on an empty cluster: the most workers that fit, from now.
        planned = max(result.completion_slot, slot + block_length(remaining, workers, self.restart_cost) - 1)
        deadline = latest_deadline(job, planned, self.instance.horizon, self.delta)
        target = result.mu
        if not self.provable:  # the plan's payoff less what the block's unavoidable delay costs the job
            target -= float(job.utility(result.completion_slot - job.arrival) - job.utility(planned - job.arrival))
        earliest = first_block_slot(self, slot)
        block = self.ledger.find_block(i, remaining, earliest, deadline, self.restart_cost, self.late)
        if block is None and self.repack:
            block = self._repack(slot, i, remaining, deadline, earliest)
        if block is None:
            self.dual.see_unplaced(i)
            return False
        cost = self._block_cost(block, worker_prices, ps_prices)
        payoff = float(job.utility(block.last - job.arrival)) - cost
        if payoff <= 0 or payoff < (1.0 - self.delta) * target:
            # The reservation itself must pay, and keep (1 - delta) of the plan's payoff (OASiS-P's bound needs
            # it, against the subroutine's mu; for OASiS-LR it keeps blocks that the plan's payoff flatters out
            # of the ledger).
            if i in self.ledger.reservations:  # placed by a re-pack: undo only this job's block
                self.ledger.remove(i)
            self.dual.see_unplaced(i)
            return False
        if i not in self.ledger.reservations:  # a successful re-pack already placed it
            self.ledger.add(block)
        self.deadlines[i] = deadline
        prices = self.prices(slot)
        self.dual.see_admission(i, result.mu, payoff, float(job.utility(block.last - job.arrival)), prices,
                                self.floor, slot, rows=self._price_cache.take_touched(slot))
        return True

    def _block_cost(self, block: Reservation, worker_prices: np.ndarray, ps_prices: np.ndarray) -> float:
        job = self.instance.jobs[block.job]
        window = slice(block.first, block.last + 1)
        return float((unit_prices(worker_prices[window], job.worker_demand) @ block.workers).sum()
                     + (unit_prices(ps_prices[window], job.ps_demand) @ block.parameter_servers).sum())

    def _repack(self, slot: int, i: int, remaining: int, deadline: int, earliest: int) -> Reservation | None:
        """Re-place every block that has not started, and job ``i``'s, latest deadline first (module
        docstring); adopt the new ledger only if every one of them fits."""
        self.repacks[0] += 1
        trial = self.ledger.copy()
        movable = [j for j, r in trial.reservations.items() if r.first > slot]
        for j in movable:
            trial.remove(j)
        work = {j: int(self.remaining[j]) for j in movable}
        work[i] = remaining
        limits = {j: self.deadlines[j] for j in movable}
        limits[i] = deadline
        for j in sorted(work, key=lambda j: (-limits[j], j)):
            block = trial.find_block(j, work[j], earliest if j == i else slot, limits[j], self.restart_cost)
            if block is None:
                return None
            trial.add(block)
        self.ledger = trial
        self.repacks[1] += 1
        return trial.reservations[i]

    # -------------------------------------------------------------------------------------- execution

    def on_completion(self, slot: int, jobs: list[int]) -> None:
        for i in jobs:
            self.done.add(i)
            self.ledger.remove(i)
            self.dual.see_completion(i, slot)
        self.pending = [i for i in self.pending if i not in self.done]

    def _arrival_slots(self) -> set[int]:
        return self._arrivals

    def _trim(self, slot: int) -> None:
        """Shrink every block to the remaining work: later start if not started, earlier end if running."""
        for i, r in list(self.ledger.reservations.items()):
            if not self._running(slot, i, r):
                k = block_length(self.remaining[i], r.size, self.restart_cost)
                self.ledger.release_before(i, r.last - k + 1)
            else:
                self.ledger.release_after(i, slot + block_length(self.remaining[i], r.size, 0.0) - 1)

    def _running(self, slot: int, i: int, r: Reservation) -> bool:
        """Whether job ``i``'s block needs no restart from ``slot`` on: it started before ``slot`` (a block
        always runs its placement), or starts now and the job ran with that placement in the slot before."""
        return r.first < slot or (r.first == slot and self._ran_like(slot, i, r))

    def _ran_like(self, slot: int, i: int, r: Reservation) -> bool:
        """Whether job ``i`` ran with ``r``'s placement in the slot before (then no restart is due)."""
        return self._kept(slot, i, Allocation(r.workers, r.parameter_servers))

    def _check_promises(self, slot: int) -> None:
        for i, deadline in self.deadlines.items():
            if i in self.done:
                continue
            r = self.ledger.reservations.get(i)
            need = float(self.remaining[i])
            if need <= WORK_EPSILON:
                continue
            running = r is not None and self._running(slot, i, r)
            if r is None or r.last > deadline or r.supply(slot, self.restart_cost, running) < need - WORK_EPSILON:
                raise PromiseBroken(f"{self.name}: slot {slot}, job {i}: the ledger no longer covers its "
                                    f"{need:g} worker-slots by its deadline {deadline}")

    # ----------------------------------------------------------------------------------------- report

    def report(self) -> dict[str, Any]:
        terms = certificate_terms(self, provable=self.provable)
        return {
            "admitted": len(self.deadlines),
            "pending_left": len(self.pending),
            "repacks": {"tried": self.repacks[0], "succeeded": self.repacks[1]},
            "floor": self.learner.highest.to_dict(self.instance.cluster.resources),
            **({"lookahead": self.lookahead_report()} if self.lookahead else {}),
            **terms,
        }


class OasisLr(OasisLrScheduler):
    name = "oasis-lr"
    provable = False


class OasisP(OasisLrScheduler):
    """OASiS-P: the provable variant (module docstring); same parameters, ``repack`` and ``lookahead`` default to
    False."""

    name = "oasis-p"
    provable = True
    revision = 3  # revision 4 of OASiS-LR is its lookahead, which OASiS-P does not use by default


__all__ = ["OasisLr", "OasisLrScheduler", "OasisP", "PromiseBroken", "latest_deadline"]
