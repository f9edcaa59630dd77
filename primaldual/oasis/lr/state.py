"""The state of one OASiS-LR / OASiS-P run, and the per-run job tables it is read with.

:class:`JobTables` holds what ``start`` computes once per instance and never changes (the price constants, the
standalone utilities, per-job widths and shares); the rollout's twins share it. :class:`LrState` holds
everything a slot changes (the ledger, remaining work, promises, pending jobs, last placements, the current
policy and the price cache); :meth:`LrState.copy` is the twin a rollout runs on, with every mutable part its own.

The dual record (:class:`primaldual.oasis.lr.dual_record.DualRecord`) is not part of the state: a twin's offers
and admissions are hypothetical, so a rollout runs with :class:`NoRecord`, whose methods record nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from primaldual.core.instance import Instance
from primaldual.oasis.constants import PriceConstants
from primaldual.oasis.learned_floor import PriceFloor, zero_floor
from primaldual.oasis.ledger import WORK_EPSILON, Ledger
from primaldual.oasis.lr.price_cache import PriceCache
from primaldual.oasis.lr.kernel import functions as slot_functions
from primaldual.oasis.lr.reference import RunJobs
from primaldual.oasis.lr.settings import Policy
from primaldual.oasis.lr.type_view import TypeView
from primaldual.core.standalone import standalone_utilities
from primaldual.core.utility import UtilityTable
from primaldual.simulation.placement import demand_profiles, dominant_share_unit, ps_needed_table, widest
from primaldual.simulation.scheduler import Allocation


@dataclass(frozen=True, eq=False)
class JobTables:
    """Per-run facts of the instance's jobs (module docstring); arrays are per job, in job order."""

    instance: Instance
    constants: PriceConstants
    #: ``f_i^alone`` (:func:`primaldual.core.standalone.standalone_utilities`).
    standalone: np.ndarray
    #: The most workers job ``i`` can have at once (:func:`primaldual.simulation.placement.widest`).
    fastest_workers: np.ndarray
    #: ``N_i``.
    chunks: np.ndarray
    #: The dominant share of one worker with its PS share (:func:`primaldual.simulation.placement.dominant_share_unit`).
    unit: np.ndarray
    #: Per job, ``Z(D)`` for ``D = 0..min(N_i, PS_TABLE_WORKERS)`` (eq. (6)) as int64: read many times per slot,
    #: computed once, capped (:func:`primaldual.simulation.placement.ps_needed_table`). Gain: 1.13x on a Philly
    #: week, 1.09x on ``paper``, measured before the plan and the offers were compiled
    #: (``examples/cache_ablation.py``, "Z(D) computed per placement").
    ps_needed: tuple[np.ndarray, ...]
    #: Per job, its demands, its demand profile (what decides whether one of its workers fits,
    #: :func:`primaldual.simulation.placement.demand_profiles`, as an index) and ``ps_needed`` as one flat array:
    #: what the compiled plan reads (:class:`primaldual.oasis.lr.reference.RunJobs`).
    run_jobs: RunJobs | None = None
    #: Every job's utility in one table (:class:`primaldual.core.utility.UtilityTable`: the same values as the
    #: jobs' own calls, bit for bit), for ranking a long pending tier in a few vector calls. Gain: 1.11x on a
    #: Philly week and on the whole VC, 0.87x on ``paper`` (``examples/cache_ablation.py``, "utilities per job").
    utilities: UtilityTable | None = None
    #: The text of the slot's loops this run executes (:func:`primaldual.oasis.lr.kernel.functions`).
    code: object = None
    #: Per job offered, its utility from its arrival to the horizon (:meth:`utility_window`).
    windows: dict[int, np.ndarray] = field(default_factory=dict)
    #: The GPU types (:class:`primaldual.oasis.lr.type_view.TypeView`); None on one type.
    types: TypeView | None = None

    def utility_window(self, i: int, slot: int, slots: int) -> np.ndarray:
        """``f_i(slot + s - a_i)`` for ``s = 0..slots - 1``: a view of job ``i``'s values from its arrival to the
        horizon, computed by one vector call when first read, or past the horizon a call of its own. The same
        floats as a call over the window alone (the families' formulas are elementwise,
        :class:`primaldual.core.utility.UtilityTable`). Gain: a whole VC's pending tier is offered again and
        again, 0.47 million windows on the whole 11cb48 VC (seed 1), 56.9 s to 47.9 s there (55.0 s to 52.7 s in
        a second alternation, ``docs/measurements.md``, "Fewer reads per offer"); memory, one float per slot
        from arrival to the horizon per pending job (:meth:`keep_windows` frees the others)."""
        job = self.instance.jobs[i]
        start = slot - job.arrival
        table = self.windows.get(i)
        if table is None:
            durations = np.arange(max(self.instance.horizon - job.arrival, 0))
            table = self.windows[i] = np.asarray(job.utility(durations), dtype=float)
        if 0 <= start and start + slots <= table.shape[0]:
            return table[start:start + max(slots, 0)]
        return np.asarray(job.utility(start + np.arange(max(slots, 0))), dtype=float)

    def keep_windows(self, pending: list[int]) -> None:
        """Free the windows of jobs not in ``pending``, the real run's pending tier after its offers: only a pending
        job is offered again, and a twin's pending tier is a part of the run's (rollouts bring no arrivals). On the
        whole 11cb48 VC (seed 1) the windows' peak falls from 14.0 to 6.6 MiB, the run's from 244 to 236 MiB."""
        kept = set(pending)
        for i in [i for i in self.windows if i not in kept]:
            del self.windows[i]

    def ps_needed_upto(self, i: int, most: int) -> np.ndarray:
        """``Z(D)`` of job ``i`` for ``D = 0..most``: its table, or past the table's cap the full vector call (the
        values the table would hold)."""
        table = self.ps_needed[i]
        if most < table.shape[0]:
            return table[:most + 1]
        return np.asarray(self.instance.jobs[i].min_parameter_servers(np.arange(most + 1)), dtype=np.int64)

    @classmethod
    def of(cls, instance: Instance, constants: PriceConstants) -> "JobTables":
        cluster = instance.cluster
        worker_total, ps_total = cluster.worker_capacity.sum(axis=0), cluster.ps_capacity.sum(axis=0)
        utilities = UtilityTable([job.utility for job in instance.jobs])
        ps_needed = tuple(np.array(ps_needed_table(job), dtype=np.int64) for job in instance.jobs)
        return cls(instance=instance, constants=constants, standalone=standalone_utilities(instance),
                   fastest_workers=widest(instance),
                   chunks=np.array([job.chunks for job in instance.jobs], dtype=np.int64),
                   unit=np.array([dominant_share_unit(job, worker_total, ps_total) for job in instance.jobs]),
                   ps_needed=ps_needed,
                   run_jobs=run_jobs(instance, ps_needed),
                   utilities=utilities,
                   code=slot_functions(instance), types=TypeView.of(instance))


def run_jobs(instance: Instance, ps_needed: tuple[np.ndarray, ...]) -> RunJobs:
    """:attr:`JobTables.run_jobs`: per job its demands, its profile's index and its ``Z`` table, as arrays."""
    profiles = demand_profiles(instance)
    index = {profile: k for k, profile in enumerate(dict.fromkeys(profiles))}
    shape = (instance.n_jobs, instance.cluster.n_resources)
    demands = [np.array([getattr(job, name) for job in instance.jobs], dtype=float).reshape(shape)
               for name in ("worker_demand", "ps_demand")]
    return RunJobs(*demands, np.array([index[p] for p in profiles], dtype=np.int64),
                   np.concatenate(ps_needed) if ps_needed else np.zeros(0, dtype=np.int64),
                   np.cumsum([0] + [len(t) for t in ps_needed]).astype(np.int64))


@dataclass(eq=False)
class LastOffers:
    """Per job, the slot of its last offer and its remaining work then (``NEVER`` before any offer), as arrays:
    an offer round decides which of its pending jobs are due in one vector call (:meth:`due`)."""

    slot: np.ndarray
    work: np.ndarray

    #: The slot of "no offer yet": every slot is at least ``reoffer_every`` later (no int64 overflow).
    NEVER = -(2 ** 62)

    @classmethod
    def none(cls, n_jobs: int) -> "LastOffers":
        return cls(np.full(n_jobs, cls.NEVER, dtype=np.int64), np.zeros(n_jobs, dtype=np.int64))

    def copy(self) -> "LastOffers":
        return LastOffers(self.slot.copy(), self.work.copy())

    def due(self, slot: int, jobs: np.ndarray, remaining: np.ndarray, every: int) -> np.ndarray:
        """Whether each of ``jobs`` is due an offer: ``every`` slots on, or ``remaining`` at most 3/4 of then."""
        # int64 against float64 converts the integer exactly, as one job's numpy scalars would.
        return (slot - self.slot[jobs] >= every) | (remaining <= 0.75 * self.work[jobs])

    def record(self, slot: int, jobs: np.ndarray, remaining: np.ndarray) -> None:
        self.slot[jobs] = slot
        self.work[jobs] = remaining


@dataclass(eq=False)
class PresentValues:
    """Per job, the present value and density computed in slot ``slot`` and the work left they were computed
    for (NaN: not computed), as arrays: a job's figures change only with its work left, so a slot ranks its
    jobs again without recomputing them. Gain: 1.06x on a Philly week, 1.02x on ``paper``
    (``examples/cache_ablation.py``, "present values every call")."""

    slot: int
    work: np.ndarray
    value: np.ndarray
    density: np.ndarray

    @classmethod
    def empty(cls, slot: int, n_jobs: int) -> "PresentValues":
        return cls(slot, np.full(n_jobs, np.nan), np.zeros(n_jobs), np.zeros(n_jobs))


@dataclass
class RepackCounts:
    """Re-packs tried and re-packs that placed every block."""

    tried: int = 0
    succeeded: int = 0


@dataclass(eq=False)
class LrState:
    """What one run changes slot by slot (module docstring)."""

    ledger: Ledger
    floor: PriceFloor
    #: Exact remaining work per job (fractional under restart costs), and its ceiling as integers.
    work_left: np.ndarray
    remaining: np.ndarray
    pending: list[int]
    deadlines: dict[int, int]
    #: Per job, the slot and remaining work of its last offer.
    offered: LastOffers
    done: set[int]
    #: job -> (slot, allocation) of the last slot it ran.
    previous: dict[int, tuple[int, Allocation]]
    repacks: RepackCounts
    #: The slots in which jobs arrive (offers happen in ``on_arrival`` there, in ``allocate`` elsewhere).
    arrival_slots: frozenset[int]
    policy: Policy
    policy_name: str = "own"
    price_cache: PriceCache | None = None
    #: Present values kept for the slot (:func:`primaldual.oasis.lr.order.present_values`).
    present: PresentValues | None = None
    #: The re-plan's guide while its policy is set (:mod:`primaldual.oasis.lr.replan`; frozen, shared by twins).
    guide: object | None = None
    #: Per slot, the answers of the offers made, by key (:func:`primaldual.oasis.lr.admission.offer_key`):
    #: shared by the run and its twins, whose ledgers are one lineage (:attr:`Ledger.token`).
    offers: dict[int, dict] = field(default_factory=dict)
    #: On several GPU types, each job's pinned type, -1 before it is pinned (:mod:`primaldual.oasis.lr.type_view`);
    #: None on one type.
    pinned: np.ndarray | None = None

    @classmethod
    def start(cls, instance: Instance, own: Policy) -> "LrState":
        remaining = np.array(instance.work_units, dtype=np.int64)
        typed = instance.cluster.worker_types is not None
        return cls(ledger=Ledger(instance), floor=zero_floor(instance.cluster.n_resources),
                   work_left=remaining.astype(float), remaining=remaining, pending=[], deadlines={},
                   offered=LastOffers.none(instance.n_jobs),
                   done=set(), previous={}, repacks=RepackCounts(),
                   arrival_slots=frozenset(int(a) for a in instance.arrivals), policy=own,
                   pinned=np.full(instance.n_jobs, -1, dtype=np.int64) if typed else None)

    def copy(self) -> "LrState":
        """A twin: the same state, every mutable part copied (allocations and reservations are frozen
        values and shared). The price cache is copied onto the twin's ledger, so the twin's prices are the
        same floats without recomputing them; a cache of an older ledger is dropped (it would be rebuilt)."""
        ledger = self.ledger.copy()
        cache = self.price_cache
        return replace(self, ledger=ledger, work_left=self.work_left.copy(), remaining=self.remaining.copy(),
                       pending=list(self.pending), deadlines=dict(self.deadlines), offered=self.offered.copy(),
                       done=set(self.done), previous=dict(self.previous),
                       repacks=replace(self.repacks),
                       pinned=None if self.pinned is None else self.pinned.copy(),
                       price_cache=cache.copy_onto(ledger) if cache is not None and cache.ledger is self.ledger
                       else None,
                       present=None)

    def set_policy(self, name: str, policy: Policy) -> None:
        self.present = None  # present values depend on the policy's discount
        self.policy_name, self.policy = name, policy

    # ------------------------------------------------------------------------------------------ prices

    def prices(self, constants: PriceConstants, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """Cell prices ``(T, H, R)`` and ``(T, K, R)``: exponential of the reserved amounts + floor, current from
        ``slot`` on (:class:`primaldual.oasis.lr.price_cache.PriceCache`; a new one when the ledger was replaced)."""
        cache = self.price_cache
        if cache is None or not cache.valid(self.ledger, slot):
            cache = self.price_cache = PriceCache(self.ledger, constants, self.floor, slot)
        return cache.update(slot, self.floor)[0]

    def free(self, constants: PriceConstants, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """The ledger's free amounts, current from ``slot`` on (cached with the prices)."""
        self.prices(constants, slot)
        return self.price_cache.free

    # ---------------------------------------------------------------------------------------- progress

    def kept(self, slot: int, i: int, allocation: Allocation) -> bool:
        """Whether job ``i`` ran with ``allocation``'s placement in the slot before (no restart is due)."""
        previous = self.previous.get(i)
        return previous is not None and previous[0] == slot - 1 and previous[1].same_placement(allocation)

    def complete(self, jobs: list[int]) -> None:
        """Jobs ``jobs`` finished: their blocks are released and they leave the pending tier."""
        for i in jobs:
            self.done.add(i)
            self.ledger.remove(i)
        self.pending = [i for i in self.pending if i not in self.done]

    def live(self, instance: Instance, slot: int) -> list[int]:
        """Jobs arrived by ``slot``, not completed, with work left."""
        return [i for i in np.flatnonzero((instance.arrivals <= slot) & (self.work_left > WORK_EPSILON)).tolist()
                if i not in self.done]


@dataclass
class LookaheadCounts:
    """The lookahead's decisions of a run: batches considered, skipped over the budget, and wins per policy."""

    decisions: int
    skipped: int
    chosen: dict[str, int]
    #: Rolled-out batches with a re-plan guide, and those where the re-plan was on but had none (the instance
    #: over its size, or the LP without an optimum within its iterations).
    replanned: int = 0
    replan_skipped: int = 0

    @classmethod
    def empty(cls, policies) -> "LookaheadCounts":
        return cls(0, 0, {name: 0 for name in policies})

    def copy(self) -> "LookaheadCounts":
        return LookaheadCounts(self.decisions, self.skipped, dict(self.chosen), self.replanned, self.replan_skipped)


class Recorder(Protocol):
    """What admission tells the dual side of a run (:class:`primaldual.oasis.lr.dual_record.DualRecord`)."""

    def see_offer(self, i: int, mu: float) -> None: ...

    def see_unplaced(self, i: int) -> None: ...

    def see_admission(self, i: int, mu: float, payoff: float, value: float, prices, floor, slot: int,
                      rows: np.ndarray | None = None) -> None: ...


class NoRecord:
    """The recorder of a rollout's twin: its offers and admissions are hypothetical, so nothing is kept."""

    def see_offer(self, i: int, mu: float) -> None:
        pass

    def see_unplaced(self, i: int) -> None:
        pass

    def see_admission(self, i: int, mu: float, payoff: float, value: float, prices, floor, slot: int,
                      rows: np.ndarray | None = None) -> None:
        pass


__all__ = ["JobTables", "run_jobs", "LastOffers", "LookaheadCounts", "LrState", "NoRecord", "PresentValues",
           "Recorder", "RepackCounts"]
