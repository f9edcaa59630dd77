"""How to compute the offline optimum: one validated set of solve options for the CLI, sweeps and the library.

:class:`SolveOptions` is checked once, when it is made, with the same rules everywhere (``compare``,
``ratio`` and its experiment files, :class:`primaldual.sweep.Spec`, :func:`primaldual.evaluation.pipeline.evaluate`),
so a bad option fails before any work starts rather than midway inside a sweep worker. A message names the
field and the command-line flag that sets it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Mapping

from primaldual.core.errors import InputError

#: ``method`` values: the ILP (1)-(13); its LP relaxation; the server-pooled relaxation; column generation;
#: or whatever the offline solver picks for the instance's size.
METHODS = ("ilp", "lp", "pooled", "cg", "auto")

#: The flag of each field, for messages.
FLAGS = {
    "solver": "--solver",
    "time_limit": "--time-limit",
    "mip_gap": "--gap",
    "threads": "--threads",
    "method": "--method",
    "mip_start": "--mip-start",
}


def _problem(field: str, rule: str, value) -> str:
    return f"{FLAGS[field]}: must be {rule}, got {value!r} (field {field})"


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


@dataclass(frozen=True)
class SolveOptions:
    """Options of the offline solve.

    ``time_limit`` seconds (None: no limit) > 0; ``mip_gap`` relative gap in [0, 1) (None: the solver's
    default); ``threads`` solver threads >= 1 (None: the solver's default); ``method`` one of
    :data:`METHODS` (default ``auto``: :func:`primaldual.offline.solve.resolve_method` picks by the instance's size,
    and the result's ``method`` says which ran); ``mip_start``: seed the solver with the best online schedule.
    """

    solver: str = "highs"
    time_limit: float | None = 60.0
    mip_gap: float | None = None
    threads: int | None = 1
    method: str = "auto"
    mip_start: bool = True

    def __post_init__(self):
        problems = []
        if not isinstance(self.solver, str) or not self.solver:
            problems.append(_problem("solver", "a solver name", self.solver))
        if self.time_limit is not None:
            if not _number(self.time_limit) or self.time_limit <= 0:
                problems.append(_problem("time_limit", "> 0 seconds", self.time_limit))
            else:
                object.__setattr__(self, "time_limit", float(self.time_limit))
        if self.mip_gap is not None:
            if not _number(self.mip_gap) or not 0 <= self.mip_gap < 1:
                problems.append(_problem("mip_gap", "a number in [0, 1)", self.mip_gap))
            else:
                object.__setattr__(self, "mip_gap", float(self.mip_gap))
        if self.threads is not None:
            if not _number(self.threads) or int(self.threads) != self.threads or self.threads < 1:
                problems.append(_problem("threads", "an integer >= 1", self.threads))
            else:
                object.__setattr__(self, "threads", int(self.threads))
        if self.method not in METHODS:
            problems.append(_problem("method", f"one of {', '.join(METHODS)}", self.method))
        if not isinstance(self.mip_start, bool):
            problems.append(_problem("mip_start", "true or false", self.mip_start))
        if problems:
            raise InputError(problems)

    def solve_arguments(self) -> dict[str, Any]:
        """Keyword arguments of :func:`primaldual.offline.solve.solve_offline` (without ``start``); ``method`` always,
        so that ``OfflineResult.method`` says which method ``auto`` resolved to."""
        return {"solver": self.solver, "time_limit": self.time_limit, "mip_gap": self.mip_gap,
                "threads": self.threads, "method": self.method}

    def check_available(self) -> None:
        """Raise :class:`InputError` if the solver is unknown or not installed on this machine."""
        from primaldual.backends.solvers import check_solver

        check_solver(self.solver)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SolveOptions":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"solve options: unknown keys {unknown}; known: {sorted(known)}")
        return cls(**data)


def add_solve_arguments(parser, *, restart_cost: bool = True) -> None:
    """The flags of :class:`SolveOptions` (and ``--restart-cost``), shared by ``compare`` and ``ratio``."""
    parser.add_argument("--time-limit", type=float, metavar="S", default=60.0,
                        help="time limit of the offline solve in seconds (default: 60)")
    parser.add_argument("--solver", default="highs", help="backend of the offline solve (default: highs)")
    parser.add_argument("--gap", type=float, metavar="G", help="relative MIP gap in [0, 1) (default: exact)")
    parser.add_argument("--threads", type=int, metavar="N", default=1, help="solver threads (default: 1)")
    parser.add_argument("--method", default="auto", choices=METHODS,
                        help="offline method: the ILP, its LP relaxation, the pooled relaxation, column "
                             "generation, or auto: the ILP where it is expected to finish, column generation "
                             "above (primaldual.offline.solve.AUTO_ILP_PLACEMENTS; default: auto)")
    if restart_cost:
        parser.add_argument("--restart-cost", type=float, metavar="F", default=0.0,
                            help="fraction of a slot's work a job loses in each slot where its placement "
                                 "changed (a start or a resumption counts); in [0, 1), default 0 (the paper's "
                                 "model); OPT is then bounded by the start-cost relaxation (one more "
                                 "worker-slot per job)")


def solve_options_from_args(args) -> SolveOptions:
    """The validated :class:`SolveOptions` of the flags added by :func:`add_solve_arguments`."""
    return SolveOptions(solver=args.solver, time_limit=args.time_limit, mip_gap=args.gap, threads=args.threads,
                        method=args.method)


def check_restart_cost(value) -> float:
    """``--restart-cost``: the simulator's rule (a number in ``[0, 1)``), with the flag named in the message."""
    from primaldual.simulation.simulator import check_restart_cost as simulator_rule

    return simulator_rule(value, "--restart-cost")


__all__ = ["FLAGS", "METHODS", "SolveOptions", "add_solve_arguments", "check_restart_cost",
           "solve_options_from_args"]
