"""The two other readings of RRH under their own names, so that a figure can show them beside ``rrh``.

:mod:`primaldual.baselines.rrh` names three readings of the source's heuristic (its docstring, "The three
readings, named"); ``rrh`` with its defaults is the present-value, preemptive one. The other two differ only in
parameters, and a sweep spec holds one parameter set per scheduler name, so each gets a name here:

* ``rrh-full-reward`` (:class:`RrhFullReward`): ``risk_weight = 0.8``, the source's full reward;
* ``rrh-nonpreemptive`` (:class:`RrhNonpreemptive`): ``preemptive = False``, a started job keeps its servers.

Both are built-in names of :data:`primaldual.simulation.scheduler.BUILTIN_SCHEDULERS`, loaded from here on first
use, so they are available after ``import primaldual`` and in spawned sweep workers alike.
"""

from __future__ import annotations

import inspect
from typing import Any

from primaldual.baselines.rrh import RrhScheduler

#: Name -> the parameters of :class:`~primaldual.baselines.rrh.RrhScheduler` that make the reading.
READINGS = {
    "rrh-full-reward": {"risk_weight": 0.8},
    "rrh-nonpreemptive": {"preemptive": False},
}


def _reading(name: str, fixed: dict[str, Any]) -> type[RrhScheduler]:
    """A subclass of RRH named ``name`` whose ``fixed`` parameters cannot be changed (that would be another
    reading); its signature shows RRH's parameters with the reading's defaults."""

    class Reading(RrhScheduler):
        __doc__ = f"RRH, {name}: primaldual.baselines.rrh.RrhScheduler with {fixed} (module docstring)."

        def __init__(self, **parameters):
            clash = sorted(set(parameters) & set(fixed))
            if clash:
                raise ValueError(f"{name} fixes {clash}; use rrh with --param to set them")
            super().__init__(**{**fixed, **parameters})

    # What `primaldual schedulers` lists and the --param check reads.
    base = inspect.signature(RrhScheduler.__init__)
    Reading.__init__.__signature__ = base.replace(parameters=[
        q.replace(default=fixed[q.name]) if q.name in fixed else q for q in base.parameters.values()])
    Reading.__name__ = Reading.__qualname__ = "Rrh" + "".join(p.title() for p in name.split("-")[1:])
    Reading.name = name
    return Reading


RrhFullReward = _reading("rrh-full-reward", READINGS["rrh-full-reward"])
RrhNonpreemptive = _reading("rrh-nonpreemptive", READINGS["rrh-nonpreemptive"])

__all__ = ["READINGS", "RrhFullReward", "RrhNonpreemptive"]
