"""The utility a trace job earns (the traces have none): a rule in completion time relative to the job alone.

Notation: ``s_i = ceil(V_i / N_i)`` is the fewest slots job ``i`` finishes in (alone at ``N_i`` workers), so its
best completion duration is ``s_i - 1`` (eq. (1) counts the duration from the arrival slot). The rule's
**target** duration is ``tau_i = ceil(slack * s_i) - 1`` (``slack`` >= 1, default 2: a job keeps its value
until it takes about twice its standalone time), or, for a CSV job with ``deadline_seconds``,
``tau_i = max(0, floor(deadline_seconds / slot_seconds) - 1)`` (it must end by the end of the last slot that
starts before the deadline, counted conservatively from the start of the arrival slot).

The **weight** ``g_i`` is the job's value: ``value_per_gpu_hour x gpus x running hours`` (its GPU-hours at the
requested scale, the trace's own measure of size) times its priority weight, or the CSV's ``value`` if given.

Rules (``--utility NAME[:key=value,...]``; keys ``slack``, ``steepness``, ``value_per_gpu_hour``):

* ``sigmoid`` (default): ``g_i / (1 + exp(gamma2 (d - tau_i)))`` with ``gamma2 = steepness / s_i`` (default
  steepness 5): the decay scales with the job's length, so a 1-slot and a 100-slot job lose the same share of
  value at the same relative delay (about 99% of ``g_i`` at ``d = s_i - 1`` when slack = 2, under 1% at three
  times the standalone time).
* ``step``: ``g_i`` if ``d <= tau_i``, else 0.
* ``linear``: ``g_i (1 - d / (tau_i + 1))``, 0 from ``tau_i + 1`` on.
* ``constant``: ``g_i`` whenever it finishes within the horizon.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from primaldual.core.errors import InputError
from primaldual.core.numerals import echo, read_number
from primaldual.core.utility import Constant, LinearDecay, Sigmoid, Step, Utility

RULES = ("sigmoid", "step", "linear", "constant")


@dataclass(frozen=True)
class UtilityRule:
    """A parsed ``--utility`` value: the family and its parameters (module docstring)."""

    kind: str = "sigmoid"
    slack: float = 2.0
    steepness: float = 5.0
    value_per_gpu_hour: float = 1.0

    def to_meta(self) -> dict:
        return asdict(self)

    def target(self, shortest: int, deadline_slots: int | None) -> int:
        """``tau_i``: the deadline's slots if the job has one, else ``ceil(slack s_i) - 1``."""
        if deadline_slots is not None:
            return deadline_slots
        return max(0, math.ceil(self.slack * shortest - 1e-9) - 1)

    def build(self, weight: float, shortest: int, deadline_slots: int | None) -> Utility:
        tau = self.target(shortest, deadline_slots)
        if self.kind == "sigmoid":
            return Sigmoid(gamma1=weight, gamma2=self.steepness / shortest, gamma3=float(tau))
        if self.kind == "step":
            return Step(value=weight, deadline=float(tau))
        if self.kind == "linear":
            return LinearDecay(value=weight, deadline=float(tau + 1))
        return Constant(value=weight)


_LIMITS = {"slack": (1.0, 1e3), "steepness": (0.0, 1e3), "value_per_gpu_hour": (0.0, 1e6)}
#: The keys each rule reads (module docstring); another key would be ignored, so it is refused.
USED_KEYS = {"sigmoid": ("slack", "steepness", "value_per_gpu_hour"), "step": ("slack", "value_per_gpu_hour"),
             "linear": ("slack", "value_per_gpu_hour"), "constant": ("value_per_gpu_hour",)}


def parse_rule(text: str | UtilityRule | None) -> UtilityRule:
    """``"sigmoid"``, ``"step:slack=1.5"``, ``"sigmoid:slack=3,steepness=2"``: a :class:`UtilityRule`."""
    if text is None:
        return UtilityRule()
    if isinstance(text, UtilityRule):
        return text
    kind, _, rest = str(text).partition(":")
    kind = kind.strip()
    if kind not in RULES:
        raise InputError(f"--utility: must be one of {', '.join(RULES)} (optionally :key=value,...), got {kind!r}")
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, equals, number = part.partition("=")
        key = key.strip()
        if key not in _LIMITS or not equals:
            raise InputError(f"--utility: {echo(part)}: expected key=value with key one of {', '.join(_LIMITS)}")
        if key not in USED_KEYS[kind]:
            raise InputError(f"--utility: {key}: the {kind} rule does not use it (it reads "
                             f"{', '.join(USED_KEYS[kind])})")
        if key in values:
            raise InputError(f"--utility: {key}: given twice; give each key once")
        value = read_number(number)
        if value is None:
            raise InputError(f"--utility: {key}: must be an ASCII decimal number, got {echo(number.strip())}")
        low, high = _LIMITS[key]
        if not (math.isfinite(value) and low <= value <= high):
            raise InputError(f"--utility: {key}: must be a number in [{low:g}, {high:g}], got {number.strip()}")
        values[key] = value
    return UtilityRule(kind=kind, **values)
