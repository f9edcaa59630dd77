"""How to compute the offline optimum: one validated set of solve options for the CLI, sweeps and the library.

:class:`SolveOptions` is checked once, when it is made, with the same rules everywhere (``compare``,
``ratio`` and its experiment files, :class:`primaldual.sweep.Spec`, :func:`primaldual.evaluation.pipeline.evaluate`),
so a bad option fails before any work starts rather than midway inside a sweep worker. A message names the
field and the command-line flag that sets it. What an option means for a given instance (which method
``auto`` picks, which builder) is decided at solve time by :mod:`primaldual.offline.methods`, and what each
method does by its entry in :mod:`primaldual.offline.methods`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields
from typing import Any, Mapping

import numpy as np

from primaldual.core.errors import InputError
from primaldual.core.jsonable import fields_of
from primaldual.core.schedule import Schedule

#: The method names, one constant each: the ILP (1)-(13); its LP relaxation; the server-pooled relaxation;
#: column generation; or whatever the offline solver picks for the instance's size. Only this module spells
#: them; what each does is its entry in :data:`primaldual.offline.methods.METHOD_TABLE`.
ILP, LP, POOLED, CG, AUTO = "ilp", "lp", "pooled", "cg", "auto"

#: ``method`` values.
METHODS = (ILP, LP, POOLED, CG, AUTO)

#: ``formulation`` values of the ILP and its LP relaxation (:mod:`primaldual.models.offline`).
FORMULATIONS = ("strong", "weak")

#: ``builder`` values: who assembles the ILP/LP (:func:`primaldual.offline.methods.resolve_builder`).
BUILDERS = ("auto", "pyomo", "matrix")

#: Smallest ``memory_limit`` in bytes: below it not even the interpreter and numpy load.
MIN_MEMORY_BYTES = 2**26

#: The flag of each field, for messages (a field without a flag is named by itself).
FLAGS = {
    "solver": "--solver",
    "time_limit": "--time-limit",
    "mip_gap": "--gap",
    "threads": "--threads",
    "method": "--method",
    "mip_start": "--mip-start",
    "formulation": "--formulation",
    "builder": "--builder",
    "memory_limit": "--memory-limit",
}


def _problem(field: str, rule: str, value) -> str:
    return f"{FLAGS.get(field, field)}: must be {rule}, got {value!r} (field {field})"


def _number(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))
            and math.isfinite(value))


def _optional_number(options, field: str, rule: str, accept, convert) -> str | None:
    """Check an optional numeric field; store it converted (``float``, ``int``) when it passes."""
    value = getattr(options, field)
    if value is None:
        return None
    if not _number(value) or not accept(value):
        return _problem(field, rule, value)
    object.__setattr__(options, field, convert(value))
    return None


@dataclass(frozen=True)
class SolveOptions:
    """Every option of the offline solve, checked once when the options are made.

    ``solver`` a backend name (:data:`primaldual.backends.solvers.SOLVERS`); ``time_limit`` seconds > 0 on the
    whole solve, building included (None: no limit); ``mip_gap`` relative gap in [0, 1) (None: the solver's
    default, an exact search for HiGHS); ``threads`` solver threads >= 1 (None: the solver's default);
    ``method`` one of :data:`METHODS` (``auto``: :func:`primaldual.offline.methods.resolve_method` picks by the
    instance's size, and the result's ``method`` says which ran); ``formulation`` of the ILP/LP
    (:data:`FORMULATIONS`); ``builder`` (:data:`BUILDERS`); ``grace`` seconds past ``time_limit`` before the
    solver process is killed (None: :func:`primaldual.offline.solve.default_grace`); ``memory_limit`` bytes the
    solver process may use (None: :func:`primaldual.offline.child.default_memory_limit` when it runs in a
    child); ``pooled_first`` solve the pooled ILP first and place it on servers, ``online_start`` start the ILP
    from the best online seed (both None: on for the large HiGHS strong ILP,
    :func:`primaldual.offline.methods.large_ilp_plan`). ``symmetry`` orders identical servers by load in each slot
    on the matrix path (:mod:`primaldual.offline.symmetry`: the same optimum, without the copies that permute
    identical servers); ``work_cuts`` replaces the strong cut there by the shifted cumulative-work cuts of
    :mod:`primaldual.offline.cuts` (the same integer points, a tighter LP). ``mip_start`` is the evaluation's choice: seed the solve with the best schedule of the
    schedulers it compared.

    The defaults are those of ``compare --opt`` and sweeps; :data:`EXACT` is the exact ILP without limits.
    """

    solver: str = "highs"
    time_limit: float | None = 60.0
    mip_gap: float | None = None
    threads: int | None = 1
    method: str = AUTO
    mip_start: bool = True
    formulation: str = "strong"
    builder: str = "auto"
    grace: float | None = None
    memory_limit: int | None = None
    pooled_first: bool | None = None
    online_start: bool | None = None
    symmetry: bool = True
    work_cuts: bool = True

    def __post_init__(self):
        problems = [problem for problem in (
            None if isinstance(self.solver, str) and self.solver else _problem("solver", "a solver name", self.solver),
            _optional_number(self, "time_limit", "> 0 seconds", lambda v: v > 0, float),
            _optional_number(self, "mip_gap", "a number in [0, 1)", lambda v: 0 <= v < 1, float),
            _optional_number(self, "threads", "an integer >= 1", lambda v: int(v) == v and v >= 1, int),
            _optional_number(self, "grace", "a number of seconds >= 0", lambda v: v >= 0, float),
            _optional_number(self, "memory_limit", "a number of bytes >= 64 MiB",
                             lambda v: v >= MIN_MEMORY_BYTES, int),
            _choice(self, "method", METHODS), _choice(self, "formulation", FORMULATIONS),
            _choice(self, "builder", BUILDERS),
            None if isinstance(self.mip_start, bool) else _problem("mip_start", "true or false", self.mip_start),
            *(None if isinstance(value, bool) else _problem(name, "true or false", value)
              for name, value in (("symmetry", self.symmetry), ("work_cuts", self.work_cuts))),
            *(None if value is None or isinstance(value, bool) else _problem(name, "True, False or None", value)
              for name, value in (("pooled_first", self.pooled_first), ("online_start", self.online_start))),
        ) if problem is not None]
        if problems:
            raise InputError(problems)

    def check_available(self) -> None:
        """Raise :class:`InputError` if the solver is unknown or not installed on this machine."""
        from primaldual.backends.solvers import check_solver

        check_solver(self.solver)

    def replace(self, **changes) -> "SolveOptions":
        """These options with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return fields_of(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SolveOptions":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"solve options: unknown keys {unknown}; known: {sorted(known)}")
        return cls(**data)


def _choice(options, field: str, choices: tuple[str, ...]) -> str | None:
    value = getattr(options, field)
    return None if value in choices else _problem(field, f"one of {', '.join(choices)}", value)


#: The exact ILP in this process, without a time limit, with the solver's own thread count: what
#: :func:`primaldual.offline.solve.solve_offline` solves when it is given no options.
EXACT = SolveOptions(time_limit=None, threads=None, method=ILP)


__all__ = ["AUTO", "BUILDERS", "CG", "EXACT", "FLAGS", "FORMULATIONS", "ILP", "LP", "METHODS", "POOLED", "OnlineSeed",
           "SolveOptions", "best_seed"]


@dataclass(frozen=True, eq=False)
class OnlineSeed:
    """A verified online schedule handed to the solve: ``utility`` is the verifier's value of ``schedule`` on
    the instance being solved, ``certified_bound`` an upper bound on OPT that comes with it (OASiS's dual
    objective), if any. Column generation adds every seed's jobs as columns, in the order given, and starts
    from the best; the ILP's online start is the best seed, ties going to the lowest ``start_rank``."""

    name: str
    schedule: Schedule
    utility: float
    certified_bound: float | None = None
    start_rank: int = 0


def best_seed(seeds, key=lambda seed: 0) -> OnlineSeed | None:
    """The seed of highest utility; among equal ones the first by ``key`` (then by position)."""
    best = None
    for seed in sorted(seeds, key=key):
        if best is None or seed.utility > best.utility:
            best = seed
    return best
