"""The typed hand-offs of an offline solve: what crosses a module (and often a process) boundary.

An offline solve is a pipeline of three stages that may not share a process:

1. the **work** (build and solve the ILP or a relaxation, or run column generation) runs in a spawned child
   under a wall-clock and a memory limit (:mod:`primaldual.offline.child`), or in the caller's process; it
   streams **progress events** while it runs and ends with an **answer**, a :class:`RawSolve` for every
   method (column generation turns its :class:`ColumnGenerationRun` into one, :meth:`ColumnGenerationRun.to_raw`);
2. the **child** wraps what the parent learnt into a :class:`ChildOutcome`: the answer if there is one, else
   why there is none (killed at the limit, out of memory, an error) and the last events it received, so a
   killed solve still keeps its best schedule and bound;
3. the **certificate** (:func:`primaldual.offline.certify.certify`) turns a :class:`ChildOutcome` into an
   :class:`~primaldual.offline.result.OfflineResult`: it re-verifies every schedule and caps every bound.

Everything here is a frozen dataclass of plain data (numbers, strings, numpy arrays, tuples): it pickles by
value through the child's pipe, and a stage cannot change what an earlier stage said. The events are one
small class per kind, so that a consumer dispatches on the type rather than on a string key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Union

import numpy as np

from primaldual.backends.outcome import SolveOutcome

#: Per admitted job, its (T, H) worker counts and (T, K) PS counts: a schedule as plain arrays.
Assignments = dict[int, tuple[np.ndarray, np.ndarray]]


# ------------------------------------------------------------------------------------------ progress events


@dataclass(frozen=True)
class Built:
    """The model is built: its size, how long building took and the objective's floor slack
    (:func:`primaldual.models.offline_parts.floored_utilities`), which every bound on OPT must add."""

    build_seconds: float
    n_variables: int
    n_constraints: int
    objective_slack: float


@dataclass(frozen=True)
class Solving:
    """The backend is about to run (the model is translated)."""


@dataclass(frozen=True, eq=False)
class Incumbent:
    """A better schedule was found; ``bound`` is the solver's best bound at that moment (None if unknown).
    ``origin`` is who made it: ``"solver"`` (the work's own search), else the online schedule it starts from
    (``"online:NAME"``), which a killed solve returns as its start, not as the solver's."""

    assignments: Assignments
    objective: float
    bound: float | None
    origin: str = "solver"


@dataclass(frozen=True)
class BoundImproved:
    """A better certified upper bound on OPT (column generation), and where it comes from."""

    bound: float
    source: str


@dataclass(frozen=True)
class Phase:
    """What the work does now; the name completes "the time limit ran out while ..."."""

    name: str


@dataclass(frozen=True)
class ProgressLine:
    """One line of text for the user (a column-generation round)."""

    line: str


Event = Union[Built, Solving, Incumbent, BoundImproved, Phase, ProgressLine]

#: What the work calls with each event (None: nobody listens).
Notify = Callable[[Event], None]


def ignore(event: Event) -> None:
    """A :data:`Notify` that listens to nothing."""


# ------------------------------------------------------------------------------------------------ answers


@dataclass(frozen=True, eq=False)
class RawSolve:
    """What any method's work returns, before it is certified: model size, the solver's word, an unverified schedule.

    ``outcome`` is the solver's word (``status`` ``"optimal"`` means the work ran to its end; its ``bound`` is
    the work's bound on the model, +inf or None if it has none); ``assignments`` the schedule read from the
    solver's values (None for a relaxation or without a solution), not yet verified. ``builder`` names who
    built the model (``"pyomo"``, ``"matrix"``, ``"pooled+placement"``; None for column generation, which
    builds no single model); ``notes`` and ``details`` are what the work adds to the result's message and
    details."""

    built: Built
    outcome: SolveOutcome
    assignments: Assignments | None
    builder: str | None
    notes: tuple[str, ...] = ()
    details: dict = field(default_factory=dict)


class Stop(Enum):
    """Why column generation stopped generating columns."""

    BOUND_MET = "the master's LP value meets the best bound"
    NO_ENTERING_COLUMN = "no column prices out at the master's own duals: the master LP is optimal"
    TIME_SPENT = "the column-generation share of the time is spent"
    LP_STOPPED = "the master LP stopped before it was solved"
    PRICING_STOPPED = "a pricing round did not complete in time"
    NO_TYPED_COLUMN = ("no column of the typed pricing (progress rounded down) prices out at the master's duals: "
                       "the master LP may still be below the LP optimum (gpu types)")

    @property
    def converged(self) -> bool:
        """Whether the master's LP value is the LP optimum of (14)-(18) (it meets a certified bound)."""
        return self in (Stop.BOUND_MET, Stop.NO_ENTERING_COLUMN)


@dataclass(frozen=True, eq=False)
class ColumnGenerationRun:
    """Column generation's own answer: its best bound and schedule, why it stopped, sizes and seconds per phase.

    Returned by :func:`primaldual.offline.price_and_branch.column_generation_solve`; the solver process hands
    the certificate :meth:`to_raw` of it. ``bound`` is the best certified bound (+inf if neither a seed nor a
    round gave one), ``lp_value`` the master's last LP value (None if none was solved),
    ``assignments``/``objective`` the best schedule and its utility, ``seeds`` the utility per seeding
    scheduler, ``stop`` why column generation ended and ``mip_status`` what price-and-branch did; the rest are
    sizes and seconds per phase. ``bound_source`` names where the best bound comes from, ``incumbent_origin``
    who made the best schedule (``online:NAME``, the greedy start, price-and-branch), ``round_bounds`` every
    complete pricing round's Lagrangian bound."""

    bound: float
    lp_value: float | None
    assignments: Assignments
    objective: float
    rounds: int
    columns: int
    rows: int
    stop: Stop
    seeds: dict
    seed_seconds: float
    pooled_seconds: float
    cg_seconds: float
    mip_seconds: float
    mip_status: str
    bound_source: str = "none"
    round_bounds: tuple[float, ...] = ()
    incumbent_origin: str = "empty"

    @property
    def converged(self) -> bool:
        return self.stop.converged

    def details(self) -> dict:
        """The run as the result's ``details`` (the keys of ``primaldual solve --json``)."""
        return {"rounds": self.rounds, "columns": self.columns, "rows": self.rows, "converged": self.converged,
                "lp_value": self.lp_value, "seeds": self.seeds, "seed_seconds": self.seed_seconds,
                "pooled_seconds": self.pooled_seconds, "cg_seconds": self.cg_seconds,
                "mip_seconds": self.mip_seconds, "mip_status": self.mip_status, "bound_source": self.bound_source,
                "incumbent_origin": self.incumbent_origin, "round_bounds": list(self.round_bounds)}

    def to_raw(self) -> RawSolve:
        """The run as the record every method hands the certificate: the master's columns and rows as the
        model's size, seeding as its build, the best bound and schedule as the solver's word (``"optimal"``:
        the run ended by itself; whether its schedule is optimal is the bound's to say)."""
        converged = self.converged
        outcome = SolveOutcome(
            termination="converged" if converged else "", has_solution=bool(self.assignments), objective=None,
            bound=self.bound, seconds=self.pooled_seconds + self.cg_seconds + self.mip_seconds, solver="highs",
            version="", status="optimal")
        summary = (f"column generation: {self.rounds} rounds, {self.columns} columns, "
                   f"{'converged' if converged else 'stopped at the time limit'}; price-and-branch {self.mip_status}")
        if self.incumbent_origin.startswith(("dive", "ruin")):  # the search before price-and-branch (issue 64)
            summary += f"; lower end from the {self.incumbent_origin}"
        return RawSolve(Built(self.seed_seconds, self.columns, self.rows, 0.0), outcome, self.assignments or None,
                        builder=None, notes=(summary,), details=self.details())


@dataclass(frozen=True, eq=False)
class ChildOutcome:
    """How the work ended, seen from the parent.

    ``answer`` is the work's answer when it finished; otherwise exactly one of ``killed`` (past the time
    limit and its grace), ``memory`` (past the memory cap: the message) and ``error`` (the message) says why
    not, ``phase`` what the work was doing then, and ``built``, ``incumbent`` and ``bound`` are the last such
    events it sent (kept with an answer too). ``elapsed`` is the parent's wall time for the whole run."""

    answer: RawSolve | None = None
    killed: bool = False
    memory: str | None = None
    error: str | None = None
    phase: str = "solving"
    elapsed: float = 0.0
    built: Built | None = None
    incumbent: Incumbent | None = None
    bound: BoundImproved | None = None


__all__ = ["Assignments", "BoundImproved", "Built", "ChildOutcome", "ColumnGenerationRun", "Event", "Incumbent",
           "Notify", "Phase", "ProgressLine", "RawSolve", "Solving", "Stop", "ignore"]
