"""The parameters of an OASiS-LR or OASiS-P run, checked once and frozen.

:class:`LrSettings` holds what the scheduler was built with (what each one means:
:class:`primaldual.oasis.lr.scheduler.OasisLrScheduler`); :class:`Policy` is the part of the execution that the
lookahead (:mod:`primaldual.oasis.lr.rollout`) may change at an arrival batch: the growth order, its risk
discount and, under restart costs, which plan of the free capacity a slot runs. The parts of the scheduler read
these objects and never the scheduler itself.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from primaldual.core.errors import InputError
from primaldual.oasis.constants import PRICE_RULES
from primaldual.oasis.ledger import check_number

#: The growth orders of the work-conserving execution (:mod:`primaldual.oasis.lr.order`).
ORDERS = ("density", "urgency", "value", "work")

#: The order of the re-plan policy (:mod:`primaldual.oasis.lr.replan`): set only by the lookahead, with a guide.
PLAN_ORDER = "plan"

#: Plans of the free capacity under restart costs (:mod:`primaldual.oasis.lr.execution`).
PLANS = ("best", "fresh", "stable")

#: The settings a policy may change, in the order ``parameters()`` lists them.
SETTINGS = ("order", "discount_rate", "plan")


def check_order(value) -> str:
    """The ``order`` parameter: ``density`` when not given."""
    if value is None:
        return "density"
    if value not in ORDERS:
        raise InputError(f"order: must be one of {', '.join(ORDERS)}, got {value!r}")
    return value


def check_plan(value) -> str:
    if value not in PLANS:
        raise InputError(f"plan: must be one of {', '.join(PLANS)}, got {value!r}")
    return value


def check_immediate_blocks(value) -> bool:
    """The ``immediate_blocks`` parameter: True when not given (:mod:`primaldual.oasis.lr.admission`)."""
    if value is None:
        return True
    if not isinstance(value, bool):
        raise InputError(f"immediate_blocks: must be true or false, got {value!r}")
    return value


def _check_flag(label: str, value) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{label}: must be true or false, got {value!r}")
    return value


@dataclass(frozen=True)
class Policy:
    """How the execution ranks and plans the capacity the blocks leave free."""

    order: str = "density"
    discount_rate: float = 0.02
    plan: str = "best"

    def changed(self, change: Mapping[str, Any]) -> "Policy":
        """This policy with the settings of ``change`` (a subset of :data:`SETTINGS`) replaced."""
        return dataclasses.replace(self, **change)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SETTINGS}


@dataclass(frozen=True)
class LrSettings:
    """Every parameter of one OASiS-LR / OASiS-P scheduler, validated (:meth:`checked`)."""

    provable: bool
    delta: float
    window: int
    eta: float
    rule: str
    learned_floor: bool
    pending_tier: bool
    repack: bool
    late: bool
    reoffer_every: int
    immediate_blocks: bool
    lookahead: bool
    lookahead_budget: int
    lookahead_horizon: int
    own: Policy
    #: The re-plan policy of the lookahead (:mod:`primaldual.oasis.lr.replan`): on, its window, its LP's limit.
    replan: bool = False
    replan_horizon: int = 24
    replan_iterations: int = 200_000
    #: The simulator's restart cost, told after construction (``set_restart_cost``).
    restart_cost: float = 0.0

    @classmethod
    def checked(cls, provable: bool, *, delta, window, eta, rule, learned_floor, pending, repack, late,
                discount_rate, reoffer_every, immediate_blocks, order, plan, lookahead,
                lookahead_budget, lookahead_horizon, replan=False, replan_horizon=24,
                replan_iterations=200_000) -> "LrSettings":
        """The settings of the given parameters, or :class:`InputError` naming the first bad one (the checks
        run in a fixed order, so the same call always names the same parameter). ``repack`` and ``lookahead``
        default to on for OASiS-LR and off for the provable OASiS-P."""
        immediate_blocks = check_immediate_blocks(immediate_blocks)
        own_order, own_plan = check_order(order), check_plan(plan)
        lookahead_budget = check_number("lookahead_budget", lookahead_budget, 0, 10**12, integer=True)
        lookahead_horizon = check_number("lookahead_horizon", lookahead_horizon, 0, 10**9, integer=True)
        reoffer_every = check_number("reoffer_every", reoffer_every, 1, 10**6, integer=True)
        discount_rate = check_number("discount_rate", discount_rate, 0.0, 1e6)
        delta = check_number("delta", delta, 0.0, 0.99)
        window = check_number("window", window, 1, 10**6, integer=True)
        eta = check_number("eta", eta, 1e-9, 1e9)
        if rule not in PRICE_RULES:
            raise InputError(f"rule: must be one of {', '.join(PRICE_RULES)}, got {rule!r}")
        learned_floor, pending = _check_flag("learned_floor", learned_floor), _check_flag("pending", pending)
        if lookahead is not None:
            _check_flag("lookahead", lookahead)
        replan = _check_flag("replan", replan)
        replan_horizon = check_number("replan_horizon", replan_horizon, 1, 10**6, integer=True)
        replan_iterations = check_number("replan_iterations", replan_iterations, 1, 10**9, integer=True)
        return cls(provable=provable, delta=delta, window=window, eta=eta, rule=rule,
                   learned_floor=learned_floor, pending_tier=pending,
                   repack=(not provable) if repack is None else bool(repack), late=bool(late),
                   reoffer_every=reoffer_every, immediate_blocks=immediate_blocks,
                   lookahead=(not provable) if lookahead is None else lookahead,
                   lookahead_budget=lookahead_budget, lookahead_horizon=lookahead_horizon,
                   own=Policy(order=own_order, discount_rate=discount_rate, plan=own_plan),
                   replan=replan, replan_horizon=replan_horizon, replan_iterations=replan_iterations)

    def with_restart_cost(self, cost: float) -> "LrSettings":
        return dataclasses.replace(self, restart_cost=float(cost))

    def parameters(self) -> dict[str, Any]:
        """The ``parameters()`` record, in the order the files have always used: the own policy, not the one
        a lookahead has set for now."""
        return {"delta": self.delta, "window": self.window, "eta": self.eta, "rule": self.rule,
                "late": self.late, "reoffer_every": self.reoffer_every,
                "learned_floor": self.learned_floor, "pending": self.pending_tier, "repack": self.repack,
                "restart_cost": self.restart_cost, "immediate_blocks": self.immediate_blocks,
                "lookahead": self.lookahead, "lookahead_budget": self.lookahead_budget,
                "lookahead_horizon": self.lookahead_horizon, "replan": self.replan,
                "replan_horizon": self.replan_horizon, "replan_iterations": self.replan_iterations,
                **self.own.to_dict()}


__all__ = ["ORDERS", "PLANS", "PLAN_ORDER", "SETTINGS", "LrSettings", "Policy", "check_immediate_blocks", "check_order",
           "check_plan"]
