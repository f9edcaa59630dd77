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
from primaldual.core.ranges import FlagRange, problem
from primaldual.simulation.parameter_ranges import PARAMETERS

#: The growth orders of the work-conserving execution (:mod:`primaldual.oasis.lr.order`).
ORDERS = ("density", "urgency", "value", "work")

#: The order of the re-plan policy (:mod:`primaldual.oasis.lr.replan`): set only by the lookahead, with a guide.
PLAN_ORDER = "plan"

#: Plans of the free capacity under restart costs (:mod:`primaldual.oasis.lr.execution`).
PLANS = ("best", "fresh", "stable")

#: The settings a policy may change, in the order ``parameters()`` lists them.
SETTINGS = ("order", "discount_rate", "plan")


def _typed(kind, value):
    """A checked parameter as its kind's type: integers as int, other numbers as float, the rest as given."""
    if isinstance(kind, FlagRange) and value is not None:
        return int(value) if kind.domain.integer else float(value)
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
    rollout_slots: int
    own: Policy
    #: The re-plan policy of the lookahead (:mod:`primaldual.oasis.lr.replan`): on, its window, its LP's limit.
    replan: bool = False
    replan_horizon: int = 24
    replan_iterations: int = 200_000
    #: The simulator's restart cost, told after construction (``set_restart_cost``).
    restart_cost: float = 0.0

    @classmethod
    def checked(cls, provable: bool, **given) -> "LrSettings":
        """The settings of the given parameters, or :class:`InputError` naming the first bad one in the call's
        order (a fixed order: the same call always names the same parameter), against the one table of their
        ranges (:data:`primaldual.simulation.parameter_ranges.PARAMETERS`). ``repack`` and ``lookahead``
        default to on for OASiS-LR and off for the provable OASiS-P; ``order`` to density and
        ``immediate_blocks`` to on."""
        ranges = PARAMETERS["oasis-lr"]
        for name, value in given.items():
            found = problem(name, ranges[name], value)
            if found:
                raise InputError(found)
        v = {name: _typed(ranges[name], value) for name, value in given.items()}
        own = Policy(order=v.pop("order") or "density", discount_rate=v.pop("discount_rate"), plan=v.pop("plan"))
        for name in ("repack", "lookahead"):
            v[name] = (not provable) if v[name] is None else v[name]
        v["immediate_blocks"] = True if v["immediate_blocks"] is None else v["immediate_blocks"]
        return cls(provable=provable, pending_tier=v.pop("pending"), own=own, **v)

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
                "rollout_slots": self.rollout_slots, "replan": self.replan,
                "replan_horizon": self.replan_horizon, "replan_iterations": self.replan_iterations,
                **self.own.to_dict()}


__all__ = ["ORDERS", "PLANS", "PLAN_ORDER", "SETTINGS", "LrSettings", "Policy"]
