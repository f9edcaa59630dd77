"""OASiS, the online primal-dual scheduler (Algorithm 1, docs/papers.md, OASiS), its certificate, and ``greedy``.

Jobs are taken in arrival order (ties in index order). For each job ``i`` at its arrival, with the prices
frozen, the dual subroutine (:mod:`primaldual.dual.subroutine`) finds the best schedule ``l*`` within the residual
capacity and ``mu_i = max(0, payoff(l*))`` (eq. (21)). OASiS admits ``i`` iff ``mu_i > 0``, commits the whole
schedule irrevocably and raises the prices of what it allocated (:class:`primaldual.oasis.prices.PriceState`).

Per job it records ``mu_i``, the schedule's cost and utility, the primal increase ``Delta P_i = f_i`` and the dual
increase ``Delta D_i = mu_i + sum c (p_new - p_old)`` (the online dual objective is ``sum mu + sum p c``).

**Certificate.** After the run, :mod:`primaldual.oasis.certificate` recomputes every ``mu_i`` at the final prices
and turns them into a certified interval ``[ALG, D]`` for the optimum (see that module).

The prices are a strategy of the loop (:mod:`primaldual.oasis.strategy`): OASiS reads the exponential prices
(``ExponentialPrices``), ``greedy`` none (``ZeroPrices``).

**greedy** is the ablation "the same subroutine with all prices zero": a job is admitted iff it has a
feasible schedule with positive utility, and gets the schedule of highest utility (earliest feasible
completion); among schedules of equal utility it takes the one that holds the fewest resources, measured as
the sum over its workers and PSs of ``sum_r demand^r / capacity_h^r`` (the share of each server it holds),
slot by slot, and the earliest on a further tie. Both schedulers are deterministic bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from primaldual.oasis.certificate import CHECK_TOLERANCE, Certificate, compute_certificate  # noqa: F401 - re-exported
from primaldual.dual.subroutine import DualResult, best_schedule
from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.oasis.decision import JobDecision  # noqa: F401 - re-exported
from primaldual.oasis.result import OasisResult  # noqa: F401 - re-exported
from primaldual.oasis.strategy import ExponentialPrices, PriceStrategy, ZeroPrices
from primaldual.oasis.constants import check_scale
from primaldual.oasis import parameter_specs
from primaldual.oasis.prices import PRICE_RULES, PriceConstants, compute_constants
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.simulation.scheduler import Allocation, OnlineScheduler, SlotState


# --------------------------------------------------------------------------------------------- the engine


def arrival_order(instance: Instance) -> list[int]:
    """Jobs by arrival slot, then by index (docs/architecture.md, Model conventions)."""
    return sorted(range(instance.n_jobs), key=lambda i: (instance.jobs[i].arrival, i))


class OnlineEngine:
    """The state of one run: prices, committed plans and decisions. ``decide(i)`` handles one arrival.

    ``prices`` is the pricing rule (:mod:`primaldual.oasis.strategy`): :class:`ExponentialPrices` for OASiS,
    :class:`ZeroPrices` for the ``greedy`` ablation (module docstring); a bare :class:`PriceConstants` means
    ``ExponentialPrices(constants)``. Shared by :func:`run_oasis`, :func:`run_greedy` and the two scheduler
    classes, so that the batch run and the slot-by-slot run are the same computation.
    """

    def __init__(self, instance: Instance, prices: PriceStrategy | PriceConstants):
        if isinstance(prices, PriceConstants):
            prices = ExponentialPrices(prices)
        self.instance = instance
        self.prices = prices
        self.constants = prices.constants
        self.state = prices.start(instance)
        self.initial_dual = self.state.price_term()
        self.plans: dict[int, JobSchedule] = {}
        self.decisions: dict[int, JobDecision] = {}

    def evaluate(self, i: int) -> DualResult:
        """The subroutine at the current prices and residual capacity (no side effect)."""
        state = self.state
        worker_prices, ps_prices = self.prices.read(state, self.instance.jobs[i].arrival)
        # On several GPU types the search is dearer (proofs/oasis.md section 2b): the cost floor stops it where no
        # later completion can pay. It halves the time; since the rounded programme only bounds a plan's cost from
        # above (a plan is cut and priced where its work is done), where it stops can change the plan it settles
        # on, rarely (1 job of 970 on a whole VC), and every plan stays feasible.
        floor = self.instance.cluster.heterogeneous and self.prices.objective == "payoff"
        return best_schedule(self.instance, i, worker_prices, ps_prices, state.worker_free, state.ps_free,
                             objective=self.prices.objective, cost_floor=floor)

    def decide(self, i: int) -> JobDecision:
        """Algorithm 1 for job ``i``: evaluate, admit iff ``mu_i > 0``, commit, raise prices."""
        if i in self.decisions:
            raise InputError(f"job {i}: already decided (each job arrives once)")
        job = self.instance.jobs[i]
        result = self.evaluate(i)
        price_increase = 0.0
        if result.admit:
            plan = result.schedule
            self.plans[i] = plan
            price_increase = self.prices.commit(self.state, job, plan.workers, plan.parameter_servers)
        decision = JobDecision.of(result, job.arrival, price_increase)
        self.decisions[i] = decision
        return decision

    def schedule(self, scheduler: str) -> Schedule:
        return Schedule(dict(self.plans), meta={"scheduler": scheduler})

    def certificate(self) -> Certificate:
        """Recompute every ``mu_i`` at the final prices (:func:`primaldual.oasis.certificate.compute_certificate`)."""
        if not self.prices.certified:
            raise InputError(f"{self.prices.name} prices give no certificate")
        return compute_certificate(self.instance, self.state, self.decisions, self.initial_dual, self.constants)

    def result(self, scheduler: str) -> OasisResult:
        decisions = tuple(self.decisions[i] for i in sorted(self.decisions))
        worker_prices, ps_prices = self.prices.final_prices(self.state)
        return OasisResult(
            scheduler=scheduler,
            schedule=self.schedule(scheduler),
            decisions=decisions,
            constants=self.constants,
            certificate=self.certificate() if self.prices.certified else None,
            worker_prices=worker_prices,
            ps_prices=ps_prices,
        )


def _constants(instance: Instance, constants: PriceConstants | None, price_scale: float, eta: float,
               rule: str = "share") -> PriceConstants:
    if constants is None:
        return compute_constants(instance, eta=eta, price_scale=price_scale, rule=rule)
    if constants.resources != instance.cluster.resources:
        raise InputError(f"constants: resources {list(constants.resources)} do not match the cluster's "
                         f"{list(instance.cluster.resources)}")
    return constants if price_scale == 1.0 else constants.rescaled(price_scale)


def run_oasis(
    instance: Instance,
    constants: PriceConstants | None = None,
    price_scale: float = 1.0,
    eta: float = 1.0,
    rule: str = "share",
) -> OasisResult:
    """Run OASiS on ``instance`` (all jobs, arrival order) and compute its certificate.

    ``constants`` defaults to :func:`primaldual.oasis.prices.compute_constants` ``(instance, eta, price_scale, rule)``;
    if given, ``price_scale`` multiplies it (and ``eta`` and ``rule`` are ignored)."""
    engine = OnlineEngine(instance, _constants(instance, constants, price_scale, eta, rule))
    for i in arrival_order(instance):
        engine.decide(i)
    return engine.result("oasis")


def run_greedy(instance: Instance) -> OasisResult:
    """Run the ``greedy`` ablation on ``instance`` (module docstring)."""
    engine = OnlineEngine(instance, ZeroPrices())
    for i in arrival_order(instance):
        engine.decide(i)
    return engine.result("greedy")


# ---------------------------------------------------------------------------------- scheduler interface


class _PlanningScheduler(OnlineScheduler):
    """Plans each job at its arrival (``on_arrival``) and plays the plan back slot by slot (``allocate``)."""

    #: GPU types are the dual subroutine's (primaldual/dual/typed.py): each slot of a plan is on one type.
    handles_gpu_types = True

    def start(self, instance: Instance) -> None:
        super().start(instance)
        self._engine = OnlineEngine(instance, self._make_prices(instance))
        self._certificate = None
        self._overruns: dict[int, Allocation] = {}

    def _make_prices(self, instance: Instance) -> PriceStrategy:
        raise NotImplementedError  # pragma: no cover - every concrete scheduler names its prices

    @property
    def engine(self) -> OnlineEngine:
        if not hasattr(self, "_engine"):
            raise InputError(f"scheduler {self.name}: call start(instance) first")
        return self._engine

    def on_arrival(self, slot: int, jobs: list[int]) -> None:
        for i in jobs:
            if self.instance.jobs[i].arrival != slot:
                raise InputError(f"job {i}: arrives in slot {self.instance.jobs[i].arrival}, announced in {slot}")
            self.engine.decide(i)
            self._certificate = None

    def set_restart_cost(self, cost: float) -> None:
        """Take the simulator's restart cost: plans ignore it, and :meth:`_overrun` finishes what a plan left."""
        self.restart_cost = float(cost)

    def allocate(self, slot: int, state: SlotState) -> dict[int, Allocation]:
        out = {}
        for i, plan in self.engine.plans.items():
            if not plan.start <= slot < plan.stop:  # outside the plan's window: nothing (read without a dense view)
                continue
            workers, parameter_servers = plan.slot(slot)
            if workers.any():
                out[i] = Allocation(workers, parameter_servers)
        if getattr(self, "restart_cost", 0.0) > 0:
            self._overrun(slot, state, out)
        return out

    def _overrun(self, slot: int, state: SlotState, out: dict[int, Allocation]) -> None:
        """Admitted jobs whose plan has ended with work left (restart losses) run on, in arrival order, in the
        capacity no plan holds in ``slot``: on their last placement if it fits (no further restart), else as
        many workers as fit. Never triggered without restart costs (a plan covers ``V_i`` exactly)."""
        from primaldual.simulation.placement import FreeCapacity

        engine = self.engine
        free = FreeCapacity(self.instance.cluster)
        free.worker -= engine.state.worker_used[slot]
        free.ps -= engine.state.ps_used[slot]
        for i, plan in engine.plans.items():
            active = plan.active_slots
            if i in out or state.completed[i] or state.remaining_work[i] <= 0 or (active.size and active[-1] >= slot):
                continue
            job = self.instance.jobs[i]
            last = int(active[-1])
            previous = self._overruns.get(i)
            keep = previous if previous is not None else Allocation(*plan.slot(last))
            if free.fits(job, keep):
                free.take(job, keep)
                out[i] = keep
            else:
                workers = free.max_workers(job, int(min(job.chunks, state.remaining_work[i])))
                placed = free.place(job, workers, "first_fit") if workers > 0 else None
                if placed is not None:
                    out[i] = placed
            if i in out:
                self._overruns[i] = out[i]

    def decisions(self) -> list[dict]:
        return [self.engine.decisions[i].to_dict() for i in sorted(self.engine.decisions)]

    def result(self) -> OasisResult:
        """The run so far as an :class:`OasisResult` (same object :func:`run_oasis` returns)."""
        return self.engine.result(self.name)


class OasisScheduler(_PlanningScheduler):
    """OASiS behind the :class:`~primaldual.simulation.scheduler.OnlineScheduler` interface (``--scheduler oasis``).

    Parameters: ``price_scale`` (multiplies every price), ``eta`` (the ``L`` scaling; both in [1e-9, 1e9]),
    ``rule`` (the lower prices, per pool and resource unless ``capacity``: ``share``, each resource's share of an
    initial-dual budget, the default; ``budget``, an empty-cluster budget for every job; ``density``, a quarter of
    the least value density; or ``capacity``, one ``L`` in mixed units; see :mod:`primaldual.oasis.prices` and
    proofs/oasis.md sections 7-7c), or explicit ``constants`` (a :class:`PriceConstants`). ``report()`` carries
    the certificate under ``"certificate"``; ``parameters()`` the constants.
    """

    name = "oasis"
    PARAMETER_SPECS = parameter_specs.OASIS
    revision = 2  # what each revision changed: proofs/oasis.md, "Revisions"

    def __init__(self, price_scale: float = 1.0, eta: float = 1.0, constants: PriceConstants | None = None,
                 rule: str = "share"):
        if rule not in PRICE_RULES:
            raise InputError(f"scheduler oasis: rule must be one of {', '.join(PRICE_RULES)}, got {rule!r}")
        self.rule = rule
        self.price_scale = check_scale("scheduler oasis: price_scale", price_scale)
        self.eta = check_scale("scheduler oasis: eta", eta)
        self.constants = constants

    def _make_prices(self, instance: Instance) -> PriceStrategy:
        return ExponentialPrices(_constants(instance, self.constants, self.price_scale, self.eta, self.rule))

    def parameters(self) -> dict[str, Any]:
        out: dict[str, Any] = {"price_scale": self.price_scale, "eta": self.eta, "rule": self.rule}
        if hasattr(self, "_engine"):
            out["constants"] = self._engine.constants.to_dict()
        return out

    def certificate(self) -> Certificate:
        if self._certificate is None:
            self._certificate = self.engine.certificate()
        return self._certificate

    def upper_bounds(self) -> dict[str, float]:
        """Upper bounds on OPT this run proves (the protocol of :mod:`primaldual.evaluation.pipeline`): ``D``, by weak duality."""
        return {"certificate": self.certificate().dual_objective}

    def report(self) -> dict[str, Any]:
        engine = self.engine
        return {
            "certificate": self.certificate().to_dict(),
            "admitted": sum(d.admitted for d in engine.decisions.values()),
            "decisions": self.decisions(),
        }


class GreedyScheduler(_PlanningScheduler):
    """The ``greedy`` ablation: OASiS's subroutine with all prices zero (module docstring)."""

    name = "greedy"

    def _make_prices(self, instance: Instance) -> PriceStrategy:
        return ZeroPrices()

    def parameters(self) -> dict[str, Any]:
        return {"prices": "zero", "tie_break": "fewest server shares, then earliest completion"}

    def report(self) -> dict[str, Any]:
        engine = self.engine
        return {
            "admitted": sum(d.admitted for d in engine.decisions.values()),
            "decisions": self.decisions(),
        }


__all__ = [
    "Certificate",
    "GreedyScheduler",
    "JobDecision",
    "OasisResult",
    "OasisScheduler",
    "OnlineEngine",
    "arrival_order",
    "run_greedy",
    "run_oasis",
]
