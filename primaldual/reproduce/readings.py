"""The two other readings of RRH under their own names, so that a figure can show them beside ``rrh``.

:mod:`primaldual.baselines.rrh` names three readings of the source's heuristic (its docstring, "The three
readings, named"); ``rrh`` with its defaults is the present-value, preemptive one. The other two differ only in
parameters, and a sweep spec holds one parameter set per scheduler name, so each gets a name here:

* ``rrh-full-reward``: ``risk_weight = 0.8``, the source's full reward (present value against opportunity cost);
* ``rrh-nonpreemptive``: ``preemptive = False``, a started job keeps its servers to completion.

Spawned sweep workers do not import this module by themselves: :func:`run_task` (the sweep task of
``primaldual reproduce`` and the notebooks) lives here, so unpickling it in a worker registers the names there.
"""

from __future__ import annotations

import inspect
from typing import Any

from primaldual.baselines.rrh import RrhScheduler
from primaldual.simulation.scheduler import available_schedulers, register_scheduler

#: Name -> the parameters of :class:`~primaldual.baselines.rrh.RrhScheduler` that make the reading.
READINGS = {
    "rrh-full-reward": {"risk_weight": 0.8},
    "rrh-nonpreemptive": {"preemptive": False},
}


def _reading(name: str, fixed: dict[str, Any]):
    class Reading(RrhScheduler):
        __doc__ = f"RRH, {name}: primaldual.baselines.rrh.RrhScheduler with {fixed} (module docstring)."

        def __init__(self, **parameters):
            clash = sorted(set(parameters) & set(fixed))
            if clash:  # the reading is defined by these values; another value would be another reading
                raise ValueError(f"{name} fixes {clash}; use rrh with --param to set them")
            super().__init__(**{**fixed, **parameters})

    # RRH's parameters with the reading's values as defaults: what `primaldual schedulers` lists and the --param
    # check reads (setting a fixed one is refused above, naming the reading).
    base = inspect.signature(RrhScheduler.__init__)
    Reading.__init__.__signature__ = base.replace(parameters=[
        q.replace(default=fixed[q.name]) if q.name in fixed else q for q in base.parameters.values()])
    Reading.__name__ = Reading.__qualname__ = "Rrh" + "".join(p.title() for p in name.split("-")[1:])
    Reading.name = name
    return Reading


for _name, _fixed in READINGS.items():
    if _name not in available_schedulers():  # a second import (a notebook's reload) must not register twice
        _class = register_scheduler(_name)(_reading(_name, _fixed))
        globals()[_class.__name__] = _class


def run_task(spec):
    """:func:`primaldual.sweep.task.run`, importable by workers together with the names above."""
    from primaldual.sweep.task import run

    return run(spec)


__all__ = ["READINGS", "run_task"]
