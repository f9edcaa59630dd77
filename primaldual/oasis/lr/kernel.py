"""Which text of OASiS-LR's slot a run executes (:mod:`primaldual.oasis.lr.reference`): its plain loops as
Python, or compiled by numba (:func:`primaldual.dual.kernel.compiled`), under the switch the dual subroutine
uses, ``PRIMALDUAL_KERNEL``. The two give the same bytes, so the choice is one of speed only.

Under ``auto`` a run of at most :data:`AUTO_JOB_SLOTS` jobs x slots (every ``small`` instance, the main job
among them) runs the loops as Python unless the process has already loaded a compiled kernel: numba's import
and the load of its disk cache cost a process about half a second, more than such a run spends placing jobs.
Larger runs (``paper``, trace weeks, whole VCs) run compiled.
"""

from __future__ import annotations

import types

from primaldual.core.instance import Instance
from primaldual.dual import kernel
from primaldual.oasis.lr import reference

#: Under ``auto``, the largest run (jobs x slots) whose slots run as Python in a process without numba loaded.
AUTO_JOB_SLOTS = 4000


def functions(instance: Instance) -> types.SimpleNamespace | types.ModuleType:
    """The functions of :mod:`primaldual.oasis.lr.reference` a run on ``instance`` calls (module docstring)."""
    chosen = kernel.mode()
    small = instance.n_jobs * instance.horizon <= AUTO_JOB_SLOTS and not kernel.loaded()
    return reference if chosen == "reference" or (chosen == "auto" and small) else kernel.compiled(reference)


__all__ = ["AUTO_JOB_SLOTS", "functions"]
