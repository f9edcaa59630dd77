"""Utility functions of completion duration (docs/architecture.md, Model conventions).

A job's utility is ``f_i(t_hat_i - a_i)``, eq. (1), where the duration is counted in slots from the arrival
slot (a job that completes in its arrival slot has duration 0). Every family here is non-increasing in the
duration, vectorised over numpy arrays, and serialisable to a small JSON object (``to_dict``/``from_dict``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from primaldual.core.domains import UTILITY_FIELDS, show
from primaldual.core.errors import InputError


def _as_array(duration):
    return np.asarray(duration, dtype=float)


@dataclass(frozen=True)
class UtilityFamily:
    """What every family shares: its JSON ``kind`` and the check of its parameters against their domains."""

    kind: ClassVar[str]

    def check(self, where: str) -> list[str]:
        """Every parameter against its domain (primaldual/core/domains.py: finite, bounded, so no utility is NaN)."""
        problems = []
        for name, domain in UTILITY_FIELDS[self.kind].items():
            problems += domain.problem(f"{where}.{name}", getattr(self, name))
        return problems


@dataclass(frozen=True)
class Sigmoid(UtilityFamily):
    """``gamma1 / (1 + exp(gamma2 (d - gamma3)))``, the CORA-style utility (the default family).

    ``gamma1`` is the job's weight, ``gamma2 >= 0`` how sharply value decays, ``gamma3`` the target duration.
    """

    gamma1: float
    gamma2: float
    gamma3: float
    kind: ClassVar[str] = "sigmoid"

    def __call__(self, duration):
        d = _as_array(duration)
        # logaddexp keeps exp() from overflowing for steep, late completions.
        return self.gamma1 * np.exp(-np.logaddexp(0.0, self.gamma2 * (d - self.gamma3)))


@dataclass(frozen=True)
class DeadlineUtility(UtilityFamily):
    """A family worth at most ``value``, and nothing once the duration passes ``deadline`` slots."""

    value: float
    deadline: float


@dataclass(frozen=True)
class LinearDecay(DeadlineUtility):
    """``value * max(0, 1 - d / deadline)``: falls linearly from ``value`` at d = 0 to 0 at the deadline."""

    kind: ClassVar[str] = "linear"

    def __call__(self, duration):
        return self.value * np.clip(1.0 - _as_array(duration) / self.deadline, 0.0, 1.0)


@dataclass(frozen=True)
class Step(DeadlineUtility):
    """``value`` if the duration is at most ``deadline`` slots, else 0."""

    kind: ClassVar[str] = "step"

    def __call__(self, duration):
        return np.where(_as_array(duration) <= self.deadline, self.value, 0.0)


@dataclass(frozen=True)
class Constant(UtilityFamily):
    """``value`` whatever the duration (a job that only needs to finish within the horizon)."""

    value: float
    kind: ClassVar[str] = "constant"

    def __call__(self, duration):
        return np.full(np.shape(duration), float(self.value)) if np.ndim(duration) else float(self.value)


UTILITY_KINDS: dict[str, type] = {cls.kind: cls for cls in (Sigmoid, LinearDecay, Step, Constant)}
Utility = Sigmoid | LinearDecay | Step | Constant


def utility_to_dict(utility: Utility) -> dict[str, Any]:
    values = {f.name: float(getattr(utility, f.name)) for f in fields(utility)}
    return {"kind": utility.kind, **values}


def utility_from_dict(data: Any, where: str = "utility") -> Utility:
    """Parse and validate a utility object; raises :class:`InputError` naming each bad field."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: must be an object like {{'kind': 'sigmoid', ...}}, got {type(data).__name__}")
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in UTILITY_KINDS:
        raise InputError(f"{where}.kind: must be one of {sorted(UTILITY_KINDS)}, got {show(kind)}")
    cls = UTILITY_KINDS[kind]
    domain_of = UTILITY_FIELDS[kind]
    expected = [f.name for f in fields(cls)]
    problems = []
    values = {}
    for name in expected:
        if name not in data:
            problems.append(f"{where}.{name}: missing (a {kind} utility needs {', '.join(expected)})")
            continue
        found = domain_of[name].problem(f"{where}.{name}", data[name])
        problems += found
        if not found:
            values[name] = float(data[name])
    for name in data:
        if name not in expected and name != "kind":
            from primaldual.core.strict_json import close_match

            problems.append(f"{where}.{name}: unknown field for a {kind} utility{close_match(name, expected)} "
                            f"(expected {', '.join(expected)})")
    if problems:
        raise InputError(problems)
    return cls(**values)


class UtilityTable:
    """Many jobs' utilities evaluated in one numpy call per family: each family's parameters as arrays over the
    jobs, so that ``table.at(jobs, durations)[m] == utilities[jobs[m]](durations[m])`` bit for bit (the
    families' formulas are elementwise, and the same IEEE operations run on the same operands). Building it
    costs one pass over the jobs; an evaluation costs a few vector operations per family present among
    ``jobs`` instead of a Python call per job, which is what a scheduler ranking thousands of waiting jobs
    every slot needs."""

    def __init__(self, utilities):
        self.kind = np.array([type(u).kind for u in utilities], dtype=object)
        self.families = {}
        for cls in UTILITY_KINDS.values():
            if any(type(u) is cls for u in utilities):  # a family's arrays hold 0 for the other jobs
                self.families[cls.kind] = {f.name: np.array([float(getattr(u, f.name)) if type(u) is cls else 0.0
                                                             for u in utilities]) for f in fields(cls)}

    def at(self, jobs: np.ndarray, durations: np.ndarray) -> np.ndarray:
        """``f_{jobs[m]}(durations[m])`` for every ``m``. A table of one family (every generated or imported
        instance) needs no masks: the same operands in one call (measured with 4c6ee6b's other changes,
        :meth:`primaldual.oasis.lr.price_cache.PriceCache._refresh`)."""
        durations = np.asarray(durations, dtype=float)
        if len(self.families) == 1:
            (kind, arrays), = self.families.items()
            return np.asarray(_family_at(kind, arrays, jobs, durations), dtype=float)
        out = np.empty(len(jobs))
        kinds = self.kind[jobs]
        for kind, arrays in self.families.items():
            mask = kinds == kind
            if mask.any():
                out[mask] = _family_at(kind, arrays, jobs[mask], durations[mask])
        return out


def _family_at(kind: str, arrays: dict, jobs: np.ndarray, durations: np.ndarray):
    """One family's values for ``jobs`` at ``durations`` (:meth:`UtilityTable.at`)."""
    params = {name: array[jobs] for name, array in arrays.items()}
    # Constant's own call keeps a scalar value; the others' formulas broadcast over arrays.
    return params["value"] if kind == Constant.kind else UTILITY_KINDS[kind](**params)(durations)


def utilities_at(table: UtilityTable, jobs: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """:meth:`UtilityTable.at`, as a function."""
    return table.at(np.asarray(jobs, dtype=np.int64), np.asarray(durations))
