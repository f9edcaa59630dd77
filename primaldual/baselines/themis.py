"""Themis: finish-time fairness with leases (Mahajan et al., "Themis: Fair and Efficient GPU Cluster
Scheduling", NSDI 2020, sections 3.2-3.3 and 4).

The source's metric is **finish-time fairness** ``rho = T_sh / T_id``: a job's finish time in the shared
cluster over its finish time running alone on ``1/N`` of the cluster (``N`` the contending jobs). Resources are
held in **leases**; when a lease ends, its resources are offered to the ``1 - f`` fraction of jobs with the
worst (largest) ``rho``, ``f`` being the **fairness knob** (``f -> 1``: only the worst job; ``f = 0``: every
job), which bid in a partial-allocation auction; resources left over go to the other jobs, work-conserving.
Gavel's implementation of the metric (``FinishTimeFairnessPolicyWithPerf`` in
https://github.com/stanford-futuredata/gavel/blob/076074c5272fe4df1006dd15ab1950eb97ff0e19/scheduler/policies/finish_time_fairness.py)
computes both times from now: ``T = elapsed + remaining / throughput``, with the isolated throughput that of an
equal (max-min) share.

Reading in this model, at every slot ``t``:

* leases hold a job's placement for ``lease`` slots (default: the paper's 10-minute lease in slots,
  ``max(1, round(600 / slot_seconds))``); a completed job's lease ends at once, and in a job's last slot it
  keeps only the workers its remaining work needs;
* the resources not under lease are offered to the active jobs without a lease. ``rho_i`` is computed for
  every active job as in Gavel: ``T_sh = e_i + R_i / r_i`` with ``e_i = t - a_i`` the slots since arrival and
  ``r_i`` the worker-slots it has received per slot so far (a job that has received nothing has
  ``rho = inf``); ``T_id = e_i + R_i / (w_i / N)``, ``w_i`` its widest allocation on the empty cluster
  (:func:`primaldual.simulation.placement.widest`) and ``N`` the number of active jobs;
* the ``max(1, ceil((1 - f) N))`` jobs of worst ``rho`` (ties: longer wait, then lower index) are served first,
  worst first; then the rest, in arrival order (work-conserving); each takes as many workers as fit, up to
  ``min(N_i, R_i)``, with the PSs eq. (6) needs, and holds them for a lease;
* the partial-allocation auction among the worst jobs (which trades some fairness for packing efficiency) is
  replaced by serving them worst first: the model has no placement-dependent speed for the bids to express,
  so the auction would have only ``rho`` to trade.

Clairvoyant (``rho`` reads the remaining work, as the source's agents report their estimates). Choice in the
baseline's favour: a job that cannot finish by the horizon at its width is not run (``skip_unfinishable``), and
its lease ends.

On a **heterogeneous cluster** it is type-unaware (:mod:`primaldual.simulation.placement`): the fairness ``rho`` reads the remaining work on each
job's fastest type; an auction winner's workers go to the first type with room (capped by the work left on its
slowest type, then trimmed to what its type needs) and its lease keeps those servers.

Parameters: ``fairness`` (f in [0, 1), default 0.8), ``lease`` (null or an integer >= 1, slots),
``placement`` (``first_fit`` default, or ``least_loaded``), ``skip_unfinishable`` (True).

Cost per slot: the ``rho`` of each active job (vectorised), a sort, and one placement search per job served.
"""

from __future__ import annotations

import math

import numpy as np

from primaldual.simulation.parameter_ranges import check_parameters
from primaldual.baselines import parameter_specs
from primaldual.baselines.ordered import job_tables, serve_in_order
from primaldual.simulation.placement import (FreeCapacity, can_finish, check_placement, fit_to_need, most_needed,
                                             need_of, trim)
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState

#: The paper's lease, in seconds (10 minutes).
LEASE_SECONDS = 600.0


def default_lease(slot_seconds: float) -> int:
    """The paper's 10-minute lease in slots of ``slot_seconds``, at least one slot."""
    return max(1, int(round(LEASE_SECONDS / slot_seconds)))


def finish_time_fairness(elapsed, remaining, received, widest, contenders: int) -> np.ndarray:
    """``rho = T_sh / T_id`` per job (arrays aligned): ``T_sh = e + R / (received / e)``, ``T_id = e + R / (w / N)``;
    ``inf`` for a job that has received nothing (or has waited no slot yet) or fits nowhere."""
    elapsed = np.asarray(elapsed, dtype=float)
    remaining = np.asarray(remaining, dtype=float)
    received = np.asarray(received, dtype=float)
    widest = np.asarray(widest, dtype=float)
    rho = np.full(elapsed.shape, np.inf)
    ok = (received > 0) & (elapsed > 0) & (widest > 0)
    shared = elapsed[ok] + remaining[ok] * elapsed[ok] / received[ok]
    alone = elapsed[ok] + remaining[ok] * contenders / widest[ok]
    rho[ok] = shared / alone
    return rho


def worst_first(jobs: np.ndarray, rho: np.ndarray, elapsed: np.ndarray) -> list[int]:
    """``jobs`` by largest ``rho``, then longest wait, then lower index."""
    return [int(jobs[m]) for m in np.lexsort((jobs, -elapsed, -rho))]


def auction_size(fairness: float, contenders: int) -> int:
    """How many of the worst-``rho`` jobs are served first: ``max(1, ceil((1 - f) N))``."""
    return max(1, math.ceil((1.0 - fairness) * contenders - 1e-12))


class ThemisScheduler(OnlineScheduler):
    name = "themis"
    PARAMETER_SPECS = parameter_specs.THEMIS
    handles_gpu_types = True

    def __init__(self, fairness: float = 0.8, lease: int | None = None, placement: str = "first_fit",
                 skip_unfinishable: bool = True):
        # The range table's check and message, also for a Python caller (an integral float is its int).
        given = check_parameters("themis", {"fairness": fairness, "lease": lease})
        self.fairness = float(given["fairness"])
        self.lease = given["lease"]
        self.placement = check_placement(placement)
        self.skip_unfinishable = bool(skip_unfinishable)

    def start(self, instance) -> None:
        self.instance = instance
        self.tables = job_tables(instance)
        self.lease_slots = self.lease if self.lease is not None else default_lease(instance.slot_seconds)
        self.received = np.zeros(instance.n_jobs, dtype=np.int64)
        self.leases: dict[int, tuple[Allocation, int]] = {}  # job -> (allocation, first slot after the lease)
        self.skipped: set[int] = set()
        self.auctions = 0

    def parameters(self) -> dict:
        return {"fairness": self.fairness, "lease": self.lease, "placement": self.placement,
                "skip_unfinishable": self.skip_unfinishable}

    def report(self) -> dict:
        return {"lease_slots": self.lease_slots, "auctions": self.auctions, "skipped": sorted(self.skipped)}

    def on_completion(self, slot: int, jobs: list[int]) -> None:
        for i in jobs:
            self.leases.pop(i, None)

    def _held(self, slot: int, state: SlotState, free: FreeCapacity) -> dict[int, Allocation]:
        """The allocations still under lease (expired ones end), trimmed to the remaining work."""
        jobs = self.instance.jobs
        out = {}
        for i, (allocation, until) in list(self.leases.items()):
            if until <= slot:
                del self.leases[i]
                continue
            most = int(min(self.tables.chunks[i], need_of(self.instance, state, i, allocation)))
            out[i] = trim(jobs[i], allocation, most) if int(allocation.workers.sum()) > most else allocation
            free.take(jobs[i], out[i])
        return out

    def _order(self, slot: int, active: np.ndarray, remaining: np.ndarray, waiting: np.ndarray) -> list[int]:
        """The waiting jobs in serving order: the worst-``rho`` fraction of all active jobs first, then the rest
        in arrival order."""
        elapsed = slot - self.tables.arrival[active]
        rho = finish_time_fairness(elapsed, remaining, self.received[active], self.tables.widest[active],
                                   len(active))
        ranked = worst_first(active, rho, elapsed)
        worst = set(ranked[:auction_size(self.fairness, len(active))])
        first = [i for i in ranked if i in worst and waiting[i]]
        return first + [int(i) for i in active if int(i) not in worst and waiting[int(i)]]

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        active = np.array(state.active, dtype=np.int64)
        remaining = np.asarray(state.remaining_work[active], dtype=np.int64)
        if self.skip_unfinishable and active.size:
            finishable = can_finish(slot, remaining, self.tables.widest[active], self.instance.horizon)
            for i in active[~finishable].tolist():
                self.skipped.add(i)
                self.leases.pop(i, None)
            active, remaining = active[finishable], remaining[finishable]
        free = FreeCapacity(self.instance.cluster)
        out = self._held(slot, state, free)
        waiting = np.ones(self.instance.n_jobs, dtype=bool)
        waiting[list(out)] = False
        if active.size and waiting[active].any():
            self.auctions += 1
            order = self._order(slot, active, remaining, waiting)
            most = remaining if state.remaining_fraction is None else most_needed(self.instance, state)[active]
            limits = dict(zip(active.tolist(), np.minimum(self.tables.chunks[active], most).tolist()))
            won = serve_in_order(self.instance, order, limits, free, self.placement, self.tables.profile)
            for i, allocation in won.items():
                self.leases[i] = (allocation, slot + self.lease_slots)
            out.update(fit_to_need(self.instance, state, won))
        for i, allocation in out.items():
            self.received[i] += int(allocation.workers.sum())
        return out


__all__ = ["LEASE_SECONDS", "ThemisScheduler", "auction_size", "default_lease", "finish_time_fairness",
           "worst_first"]
