"""OASiS-LR and OASiS-P: primal-dual admission with learned prices, a reservation ledger and promises.

Both keep the paper's dual subroutine (:mod:`primaldual.dual.subroutine`) and its exponential prices
(:mod:`primaldual.oasis.prices`, per pool and per resource), and change what an admission commits to. Each
step is stated in full once, in the module that runs it:

1. **Prices** (:mod:`~primaldual.oasis.lr.price_cache`): a cell's price is ``L^r (U^r/L^r)^(reserved / c) +
   floor^r``, the exponential of the amount the ledger holds plus the learned shadow-price floor
   (:mod:`primaldual.oasis.learned_floor`, updated at every arrival batch).
2. **Admission with a promise** (:mod:`~primaldual.oasis.lr.admission`): a job offered the subroutine for its
   remaining work with ``mu > 0`` gets a **deadline** (it keeps ``(1 - delta)`` of its utility at the later of
   the plan's completion and the earliest block's end) and a **reservation** in the ledger (:mod:`primaldual.oasis.ledger`): one fixed
   placement over consecutive slots, as late as possible, ending by the deadline. The deadline is the promise.
3. **Pending tier**: a job with ``mu <= 0`` (or no block that fits) runs best-effort in free capacity and is
   re-offered until it is admitted or can no longer finish.
4. **Work-conserving execution** (:mod:`~primaldual.oasis.lr.execution`): blocks run first, then admitted jobs
   outside their block and pending jobs grow into the free capacity in the policy's order
   (:mod:`~primaldual.oasis.lr.order`).
5. **Lookahead** (OASiS-LR only, :mod:`~primaldual.oasis.lr.rollout`): at each arrival batch the execution
   policy is the best of a rollout of the known jobs, one twin of the state per policy.

**OASiS-LR** (``oasis-lr``) re-packs: when a newcomer with ``mu > 0`` finds no block, every reservation that has
not started is re-placed with the newcomer among them (:func:`~primaldual.oasis.lr.admission.repack`).
**OASiS-P** (``oasis-p``) never moves a reservation (only releases its slots) and admits only if the block's own
payoff at the admission prices is ``>= (1 - delta) mu_i``; this is what its worst-case bound
``OPT <= D_0 + D_floor + D_unplaced + beta ALG`` needs (``proofs/oasis-lr.md``). The terms are reported with
every run (:mod:`~primaldual.oasis.lr.dual_record`, which records the real run only).

**Several GPU types**: each job is pinned to one type the first time it is promised a block or runs, and counts
its work in that type's worker-slots (:mod:`~primaldual.oasis.lr.type_view`); OASiS-P's admission test and dual
record read the relaxed typed ``mu`` (:func:`~primaldual.oasis.lr.admission.typed_bound`), so its bound holds there
(``proofs/oasis-lr.md``, "On several GPU types").

**Promises** are invariants: a promise is broken only if a block stops covering its job's remaining work by
the deadline, which the engine checks every slot (``PromiseBroken``); the simulator counts kept promises
from its own account (``promised_deadlines``).

**Structure.** The scheduler only wires the parts: the parameters are one frozen
:class:`~primaldual.oasis.lr.settings.LrSettings`, the run's mutable state one
:class:`~primaldual.oasis.lr.state.LrState` (with the per-instance :class:`~primaldual.oasis.lr.state.JobTables`),
and the steps above are functions of those; the ledger's block search and the execution's first fit are plain
loops over arrays (:mod:`~primaldual.oasis.lr.reference`, compiled as the dual subroutine is).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from primaldual.core.instance import Instance
from primaldual.oasis import parameter_specs
from primaldual.oasis.constants import compute_constants
from primaldual.oasis.learned_floor import FloorLearner
from primaldual.oasis.ledger import PromiseBroken  # noqa: F401 - re-exported
from primaldual.oasis.lr.admission import admit_job, forget_offers, offer_pending, set_floor
from primaldual.oasis.lr.dual_record import DualRecord, certificate_terms
from primaldual.oasis.lr.execution import allocate_slot
from primaldual.oasis.lr.rollout import CHOICES, LOOKAHEAD_BUDGET, ROLLOUT_SLOTS, choose_policy, lookahead_report
from primaldual.oasis.lr.replan import REPLAN_HORIZON, REPLAN_ITERATIONS
from primaldual.oasis.lr.settings import LrSettings
from primaldual.oasis.lr.state import JobTables, LookaheadCounts, LrState
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState


class OasisLrScheduler(OnlineScheduler):
    """OASiS-LR (module docstring). Each parameter's meaning and range is stated once, in
    :data:`primaldual.oasis.parameter_specs.OASIS_LR` (``primaldual schedulers`` prints them), and checked
    against :data:`primaldual.simulation.parameter_ranges.PARAMETERS`; the defaults are this signature's, and
    how each was chosen is in ``proofs/oasis-lr.md``."""

    name = "oasis-lr"
    provable = False
    PARAMETER_SPECS = parameter_specs.OASIS_LR
    revision = 7  # what each revision changed: proofs/oasis-lr.md, "Revisions"

    def __init__(self, delta: float = 0.2, window: int = 30, eta: float = 0.05, rule: str = "density",
                 learned_floor: bool = True, pending: bool = True, repack: bool | None = None,
                 late: bool = True, discount_rate: float = 0.02, reoffer_every: int = 3,
                 immediate_blocks: bool | None = None, order: str | None = None, plan: str = "best",
                 lookahead: bool | None = None, lookahead_budget: int = LOOKAHEAD_BUDGET,
                 rollout_slots: int = ROLLOUT_SLOTS, replan: bool = False,
                 replan_horizon: int = REPLAN_HORIZON, replan_iterations: int = REPLAN_ITERATIONS):
        self.settings = LrSettings.checked(
            self.provable, delta=delta, window=window, eta=eta, rule=rule, learned_floor=learned_floor,
            pending=pending, repack=repack, late=late, discount_rate=discount_rate, reoffer_every=reoffer_every,
            immediate_blocks=immediate_blocks, order=order, plan=plan, lookahead=lookahead,
            lookahead_budget=lookahead_budget, rollout_slots=rollout_slots, replan=replan,
            replan_horizon=replan_horizon, replan_iterations=replan_iterations)
        self.tables: JobTables | None = None
        self.state: LrState | None = None

    def set_restart_cost(self, cost: float) -> None:
        self.settings = self.settings.with_restart_cost(cost)

    def parameters(self) -> dict[str, Any]:
        out = self.settings.parameters()
        if self.tables is not None:
            out["constants"] = self.tables.constants.to_dict()
        return out

    def start(self, instance: Instance) -> None:
        super().start(instance)
        settings = self.settings
        constants = compute_constants(instance, eta=settings.eta, rule=settings.rule)
        self.tables = JobTables.of(instance, constants)
        # Everything per run is rebuilt: a scheduler may be reused on another instance
        # (primaldual/simulation/scheduler.py), and a reused one starts from its own policy again.
        self.state = LrState.start(instance, settings.own)
        self.learner = FloorLearner(instance, self.tables.standalone, settings.window)
        self.record = DualRecord(instance, constants)
        self.lookahead_counts = LookaheadCounts.empty(CHOICES)

    def promised_deadlines(self) -> dict[int, int]:
        return dict(self.state.deadlines)

    def prices(self, slot: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Cell prices ``(T, H, R)`` and ``(T, K, R)`` current from ``slot`` on (:meth:`LrState.prices`)."""
        return self.state.prices(self.tables.constants, slot)

    def free(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """The ledger's free amounts, current from ``slot`` on (cached with the prices)."""
        return self.state.free(self.tables.constants, slot)

    def on_arrival(self, slot: int, jobs: list[int]) -> None:
        state, settings = self.state, self.settings
        state.pending.extend(jobs)
        if settings.learned_floor:
            set_floor(state, self.learner.update(slot))
            self.record.see_floor(state.floor)
        if settings.lookahead:  # before the offers: the twins make them under their own policy
            choose_policy(settings, self.tables, state, slot, self.lookahead_counts, self.name)
        self._offer(slot)

    def _offer(self, slot: int) -> None:
        # Through the attribute at call time: a bench or a test may wrap ``_admit`` on this object.
        offer_pending(self.settings, self.tables, self.state, slot, self._admit)
        self.tables.keep_windows(self.state.pending)

    def _admit(self, slot: int, i: int) -> bool:
        return admit_job(self.settings, self.tables, self.state, self.record, slot, i)

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        forget_offers(self.state, slot)
        # On several GPU types the remaining fraction, in each job's pinned type's worker-slots (type_view).
        ceiling = state.remaining_work if self.tables.types is None else \
            self.tables.types.ceiling(self.state.pinned, state.remaining_fraction)
        return allocate_slot(self.settings, self.tables, self.state, slot, ceiling, self._offer, self.name)

    def on_completion(self, slot: int, jobs: list[int]) -> None:
        for i in jobs:
            self.record.see_completion(i, slot)
        self.state.complete(jobs)

    def report(self) -> dict[str, Any]:
        settings, state = self.settings, self.state
        terms = certificate_terms(self.record, self.tables.standalone, state.deadlines, settings.delta,
                                  provable=self.provable)
        return {
            "admitted": len(state.deadlines),
            "pending_left": len(state.pending),
            "repacks": {"tried": state.repacks.tried, "succeeded": state.repacks.succeeded},
            "floor": self.learner.highest.to_dict(self.instance.cluster.resources),
            **({"lookahead": lookahead_report(self.lookahead_counts, settings)}
               if settings.lookahead else {}),
            **terms,
        }


class OasisLr(OasisLrScheduler):
    name = "oasis-lr"
    provable = False
    #: Each job pinned to one GPU type (:mod:`primaldual.oasis.lr.type_view`).
    handles_gpu_types = True


class OasisP(OasisLrScheduler):
    """OASiS-P: the provable variant (module docstring); same parameters, ``repack`` and ``lookahead`` default to
    False."""

    name = "oasis-p"
    provable = True
    #: On several GPU types its offers are OASiS-LR's per type, and P2 and P4 read the relaxed typed ``mu``, which
    #: never under-values a job (:func:`primaldual.oasis.lr.admission.typed_bound`; ``proofs/oasis-lr.md``,
    #: "On several GPU types").
    handles_gpu_types = True
    revision = 3  # it does not look ahead by default, which is OASiS-LR's revision 4


__all__ = ["OasisLr", "OasisLrScheduler", "OasisP", "PromiseBroken"]
